// The object editor's starting object (editor.js load, follow): the
// subject's, read from the server or the one the lab would create, and
// again when a lesson moves the subject (a student's own on a class
// session), unless the editor holds text that is not that starting one.
// The page is a few stand-in elements: the editor reads and writes only
// their value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import './setup.mjs';
import { KINDS } from '../static/js/clients.js';
import { mountEditor } from '../static/js/editor.js';
import { itemPath, lookupResource } from '../static/js/kube.js';

function page() {
  const els = new Map();
  globalThis.document = {
    getElementById(id) {
      if (!els.has(id)) els.set(id, { value: '', textContent: '', dataset: {}, addEventListener() {}, setAttribute() {}, focus() {} });
      return els.get(id);
    },
  };
  return globalThis.document.getElementById('editor');
}

// lab answers each GET when the test says so (answer), so that the test
// orders the answers of loads that are out at once.
function lab() {
  const pending = [];
  const objects = new Map();
  const subject = {
    kind: 'configmaps', name: 'demo', namespace: 'default', spec: KINDS.configmaps,
    get path() { return itemPath(lookupResource('configmaps'), this.namespace, this.name); },
  };
  const l = {
    clients: { subject },
    objects,
    guard: (fn) => fn,
    record() {},
    afterWrite() {},
    revisions: { see() {} },
    transport: {
      request: (method, path) => new Promise((resolve) => pending.push({ path, resolve })),
    },
    // answer answers the GET of path as the server would now.
    answer(path) {
      const i = pending.findIndex((p) => p.path === path);
      const [p] = pending.splice(i, 1);
      const o = objects.get(path);
      p.resolve(o ? { status: 200, body: JSON.stringify(o) } : { status: 404, body: '{}' });
    },
  };
  return l;
}

const own = '/api/v1/namespaces/ada-mrtsc/configmaps/a';
const demo = '/api/v1/namespaces/default/configmaps/demo';
const theirs = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ada-mrtsc', resourceVersion: '41' }, data: { v: '1' } };
const moveToOwn = (l) => Object.assign(l.clients.subject, { name: 'a', namespace: 'ada-mrtsc' });

test('the editor starts on the subject\'s object, and on the student\'s own once a lesson moves the subject there', async () => {
  const editor = page();
  const l = lab();
  l.objects.set(own, theirs);
  const ed = mountEditor(l);
  const boot = ed.load();
  l.answer(demo);
  await boot;
  assert.match(editor.value, /\n {2}name: demo\n {2}namespace: default\n/);
  moveToOwn(l);
  const followed = ed.follow();
  l.answer(own);
  await followed;
  assert.match(editor.value, /\n {2}name: a\n {2}namespace: ada-mrtsc\n {2}resourceVersion: '41'\n/);
});

test('a subject that moves while the editor\'s first load is out gets the newer object, whichever answer comes first', async () => {
  for (const order of [[demo, own], [own, demo]]) {
    const editor = page();
    const l = lab();
    l.objects.set(own, theirs);
    const ed = mountEditor(l);
    const boot = ed.load();
    moveToOwn(l);
    const followed = ed.follow();
    for (const p of order) l.answer(p);
    await Promise.all([boot, followed]);
    assert.match(editor.value, /namespace: ada-mrtsc\n {2}resourceVersion: '41'\n/, `answers in the order ${order}`);
  }
});

test('the learner\'s own text, and text written while a load is out (a lesson\'s stdin), stay when the subject moves', async () => {
  const editor = page();
  const l = lab();
  const ed = mountEditor(l);
  const boot = ed.load();
  l.answer(demo);
  await boot;
  editor.value = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: mine\n';
  moveToOwn(l);
  await ed.follow();
  assert.match(editor.value, /name: mine/);

  const again = page();
  const m = lab();
  const ed2 = mountEditor(m);
  const first = ed2.load();
  ed2.setText('kind: Deployment\n');
  m.answer(demo);
  await first;
  assert.equal(again.value, 'kind: Deployment\n');
});
