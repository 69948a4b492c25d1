// The lesson panel's pure parts: deep links, durations, progress, what a
// failed check is missing, where a step's moment shows.
import './setup.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { parseDeepLink, deepLink, parseDuration, Progress, actionText, focusOf, unmetPart, predicateText, textPath, ownWords, ownText, seenRevision, RECORDED, settingsLeft } from '../static/js/lessons.js';

const root = new URL('../lessons/', import.meta.url);
const lessons = readdirSync(root).filter((d) => /^\d\d-/.test(d)).map((d) => JSON.parse(readFileSync(new URL(`${d}/lesson.json`, root), 'utf8')));

test('a deep link names a lesson and a step; a share link is not one', () => {
  assert.deepEqual(parseDeepLink('#lesson=lost-update/3'), { slug: 'lost-update', step: 3 });
  assert.deepEqual(parseDeepLink('#lesson=lost-update'), { slug: 'lost-update', step: 0 });
  assert.equal(parseDeepLink('#h=abc'), null);
  assert.equal(parseDeepLink('#lesson=../x/1'), null);
  assert.equal(deepLink('lost-update', 2), '#lesson=lost-update/2');
  assert.equal(textPath('03-lost-update', 'zh', 4), 'lessons/03-lost-update/zh/04.md');
});

test('a wait is a Go duration', () => {
  assert.equal(parseDuration('6s'), 6000);
  assert.equal(parseDuration('1m30s'), 90_000);
  assert.equal(parseDuration('250ms'), 250);
  assert.throws(() => parseDuration('6'));
  assert.throws(() => parseDuration('6s and more'));
});

test('progress is kept per lesson and survives a new page', () => {
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const p = new Progress('k', storage);
  p.at('lost-update', 1);
  p.pass('lost-update', 2);
  p.pass('lost-update', 1);
  p.pass('lost-update', 1);
  const again = new Progress('k', storage);
  assert.deepEqual(again.lesson('lost-update').passed, [1, 2]);
  assert.deepEqual(again.data.current, { slug: 'lost-update', step: 1 });
  assert.equal(again.complete('lost-update', 2), true);
  assert.equal(again.complete('lost-update', 3), false);
  again.reset('lost-update');
  assert.deepEqual(new Progress('k', storage).lesson('lost-update').passed, []);
});

test('where a step began in the record survives a new page, for that step only', () => {
  // A reload in the middle of lesson 1 step 4 reads the learner's answers
  // since the step began (seq 41), not since the reload.
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const p = new Progress('k', storage);
  assert.equal(p.began('etcd-revisions', 4), null);
  p.at('etcd-revisions', 4);
  p.begin('etcd-revisions', 4, 41);
  const again = new Progress('k', storage);
  assert.equal(again.began('etcd-revisions', 4), 41);
  assert.equal(again.began('etcd-revisions', 5), null, 'another step began elsewhere');
  assert.equal(again.began('lost-update', 4), null);
  again.begin('etcd-revisions', 5, 57);
  assert.equal(new Progress('k', storage).began('etcd-revisions', 4), null, 'a step begun again starts again');
  again.reset('etcd-revisions');
  assert.equal(new Progress('k', storage).began('etcd-revisions', 5), null);
});

test('what a failed check is missing, in a line', () => {
  const verify = { all: [
    { exchange: { client: 'A', verb: 'get', success: true, resource: 'deployments', name: 'nginx' } },
    { sequence: { steps: [{ client: 'B', verb: 'get' }, { client: 'B', verb: 'update', status: 409, reason: 'Conflict', resource: 'deployments', name: 'nginx' }] } },
  ] };
  assert.equal(predicateText(unmetPart(verify, 'all[1].sequence')), 'B get, then B update deployments/nginx → 409 Conflict');
  assert.equal(predicateText(unmetPart(verify, 'all[0].exchange')), 'A get deployments/nginx → 2xx');
  assert.equal(predicateText({ key: { key: 'k1', exists: true, version: 1 } }), 'etcd k1 version 1');
  // Every lesson's every predicate says something.
  for (const l of lessons) for (const s of l.steps) if (s.verify) assert.notEqual(predicateText(s.verify), '', `${l.slug}/${s.id}`);
});

test('every action of every lesson has words, and every step a place to look at', () => {
  for (const l of lessons) {
    for (const s of l.steps) {
      for (const a of s.actions || []) assert.doesNotMatch(actionText(a), /^\{/, `${l.slug}/${s.id}/${a.id}`);
      const f = focusOf(s);
      assert.ok(f.client || f.panel, `${l.slug}/${s.id}`);
    }
  }
  assert.deepEqual(focusOf({ verify: { exchange: { client: 'B', status: 409 } } }), { client: 'B' });
  assert.deepEqual(focusOf({ verify: { key: { key: 'k1' } } }), { panel: 'etcd-panel' });
});

// The words the server replaces in a student's commands
// (engine/lesson/classnames, TestWordsReplacesWholeWords: the same table).
test('a student of a class sees their own names where the server gives them', () => {
  const own = { k1: 'k1-ada-x', nginx: 'nginx-ada-x', default: 'ada-x', 6: '4312' };
  for (const [input, want] of Object.entries({
    'etcdctl put k1 v1': 'etcdctl put k1-ada-x v1',
    'etcdctl get k1 --rev=6 -w json': 'etcdctl get k1-ada-x --rev=4312 -w json',
    'etcdctl put k10 v1': 'etcdctl put k10 v1',
    'kubectl rollout status deployment/nginx': 'kubectl rollout status deployment/nginx-ada-x',
    'etcdctl get /registry/deployments/default/nginx -w json': 'etcdctl get /registry/deployments/ada-x/nginx-ada-x -w json',
    'kubectl get deployment nginx-deployment': 'kubectl get deployment nginx-deployment',
    "kubectl get deployment nginx -o jsonpath='{.metadata.generation}'": "kubectl get deployment nginx-ada-x -o jsonpath='{.metadata.generation}'",
  })) assert.equal(ownWords(input, own), want, input);
  // In a text: console blocks and inline code, not prose or manifests.
  const md = 'Put `k1` at revision 6:\n\n```console\netcdctl get k1 --rev=6 -w json\n```\n\n```yaml\nmetadata:\n  name: nginx\n```\n';
  assert.equal(ownText(md, own), 'Put `k1-ada-x` at revision 6:\n\n```console\netcdctl get k1-ada-x --rev=4312 -w json\n```\n\n```yaml\nmetadata:\n  name: nginx-ada-x\n```\n');
  // A manifest's own name changes, not its labels, containers or images
  // (engine/lesson/classnames, TestAManifestKeepsItsLabelsAndImages).
  const yaml = '```yaml\nkind: Deployment\nmetadata:\n  name: nginx\n  labels:\n    app: nginx\nspec:\n  template:\n    metadata:\n      name: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n```\n\n```go\nd, err := deployments.Get(ctx, "nginx", metav1.GetOptions{})\n```';
  assert.equal(ownText(yaml, own), yaml.replace('  name: nginx\n  labels', '  name: nginx-ada-x\n  labels'));
  // A kubectl replace --raw body (JSON): the same, its top-level metadata only.
  const json = '```json\n{\n  "kind": "Deployment",\n  "metadata": {\n    "name": "nginx",\n    "labels": {\n      "app": "nginx"\n    }\n  },\n  "spec": {\n    "template": {\n      "metadata": {\n        "name": "nginx"\n      }\n    }\n  }\n}\n```\n';
  assert.equal(ownText(json, own), json.replace('    "name": "nginx",', '    "name": "nginx-ada-x",'));
  assert.equal(ownText(md, null), md);
  // A revision the prose names as a placeholder reads as the student's own,
  // as their command does; a number that is not a placeholder (lesson 6)
  // keeps the article's; offline the placeholder is the article's number.
  const prose = 'Read `k1` as it was at revision {{6}} (lesson 6):\n\n```console\netcdctl get k1 --rev=6 -w json\n```\n\n```\ncreated at {{6}}\n```\n';
  assert.equal(ownText(prose, own), 'Read `k1-ada-x` as it was at revision 4312 (lesson 6):\n\n```console\netcdctl get k1-ada-x --rev=4312 -w json\n```\n\n```\ncreated at 4312\n```\n');
  assert.equal(ownText(prose, null), prose.replaceAll('{{6}}', '6'));
  // Before the student's k1 exists the session maps no revision yet.
  assert.match(ownText(prose, { k1: 'k1-ada-x' }), /^Read `k1-ada-x` as it was at revision 6 \(lesson 6\)/);
  // Every lesson says whose names it uses on a class session.
  for (const l of lessons) assert.ok(l.class && (l.class.shared || l.class.names || l.class.namespace), l.slug);
});

test('a plain block shows the request and the answer of the student\'s own step: their namespace and names, by the console\'s rule; the article\'s offline', () => {
  // Lesson 5 step 2 and lesson 8 step 1 show the path R's watch requests,
  // which the student's watch panel shows in their namespace; lesson 11
  // step 2 the 409 their replace gets, on their own Deployment. The
  // placeholder in the path stays the revision their answers showed.
  const ns = { default: 'ada-x', 6: '4312', 7: '4313', 8: '4314' };
  const sent = [{ protocol: 'kubernetes', verb: 'watch', status: 200, resourceVersionSent: '4320', watch: { events: 0 } }];
  for (const language of ['en', 'zh', 'ko']) {
    const read = (f) => readFileSync(new URL(`${f.replace('/', `/${language}/`)}`, root), 'utf8');
    const watch = read('05-list-then-watch/02.md');
    assert.match(ownText(watch, ns, sent), /^GET \/api\/v1\/namespaces\/ada-x\/configmaps\?watch=1&resourceVersion=4320$/m, language);
    assert.match(ownText(watch, null), /^GET \/api\/v1\/namespaces\/default\/configmaps\?watch=1&resourceVersion=8$/m, language);
    const watchList = read('08-watch-list/01.md');
    assert.match(ownText(watchList, ns), /^GET \/api\/v1\/namespaces\/ada-x\/configmaps\?watch=1&sendInitialEvents=true&/m, language);
    assert.match(ownText(watchList, null), /^GET \/api\/v1\/namespaces\/default\/configmaps\?/m, language);
    const conflict = read('11-inside-update/02.md');
    assert.match(ownText(conflict, { nginx: 'nginx-ada-x', daily: 'daily-ada-x' }), /^Error from server \(Conflict\): .* deployments\.apps "nginx-ada-x": /m, language);
    assert.match(ownText(conflict, null), /^Error from server \(Conflict\): .* deployments\.apps "nginx": /m, language);
  }
});

test('a store\'s revision the text quotes is the one the learner\'s last answer showed, and the article\'s offline and until then', () => {
  // Lesson 1 step 4 as written, in every language: its store revisions are
  // placeholders that read as the article's 9 offline, and as the
  // learner's own last answer's header on a class session (the verify
  // answer's revision); the key's revision {{6}} keeps its own map.
  const own = { k1: 'k1-ada-x', 6: '4312' };
  for (const language of ['en', 'zh', 'ko']) {
    const md = readFileSync(new URL(`01-etcd-revisions/${language}/04.md`, root), 'utf8');
    assert.match(md, /\{\{store:9\}\}/, language);
    const offline = ownText(md, null);
    assert.doesNotMatch(offline, /\{\{/, language);
    assert.equal(offline, md.replaceAll('{{store:9}}', '9').replaceAll('{{6}}', '6'), language);
    assert.equal(ownText(md, own, []), ownText(md, own), language);
    const shown = ownText(md, own, [{ protocol: 'etcd', verb: 'range', status: 200, resourceVersion: '4320', revision: 4320 }]);
    assert.ok(shown.includes('4320') && shown.includes('4312'), language);
    assert.doesNotMatch(shown.replace(/lesson 6|第 6 课|레슨 6/g, ''), /(^|[^0-9A-Za-z_.-])9($|[^0-9A-Za-z_.-])/, language);
  }
  // The revision is the newest answer's of the learner's record (GET
  // /rvplay/v1/exchanges, oldest first), as their tool showed it: an etcd
  // answer's header, a list's resourceVersion, else the store's revision
  // when it was answered (lesson 12's 504 "current: N"); not a watch, the
  // session's own API, nor the lab's etcd table reading the store again.
  const put = { protocol: 'etcd', verb: 'put', status: 200, userAgent: 'etcdctl/v3.4.23 (rvplay console)', resourceVersion: '4318', revision: 4318 };
  const get = { ...put, verb: 'range', resourceVersion: '4320', revision: 4321 };
  const panel = { ...get, userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140', resourceVersion: '4333', revision: 4333 };
  const watch = { protocol: 'kubernetes', verb: 'watch', status: 200, revision: 4340, watch: { events: 1 } };
  const verify = { protocol: 'rvplay', verb: 'post', status: 200, revision: 4341 };
  assert.equal(seenRevision([put, get, panel, watch, verify]), 4320);
  assert.equal(seenRevision([put]), 4318);
  assert.equal(seenRevision([]), 0);
  assert.equal(seenRevision([panel, verify]), 0);
  const list = { protocol: 'kubernetes', verb: 'list', status: 200, userAgent: 'B/rvplay-lab', resourceVersion: '4401', revision: 4409 };
  assert.equal(seenRevision([put, list]), 4401, 'an exact list answers the past it read');
  const tooNew = { protocol: 'kubernetes', verb: 'get', status: 504, reason: 'Timeout', userAgent: 'B/rvplay-lab', revision: 4412 };
  assert.equal(seenRevision([list, tooNew]), 4412);
  const object = { protocol: 'kubernetes', verb: 'get', status: 200, userAgent: 'A/rvplay-lab', resourceVersion: '4001', revision: 4415 };
  assert.equal(seenRevision([object]), 4415, 'an object\'s resourceVersion is not the store\'s');
  // In inline code too (lesson 12's resourceVersion=7&resourceVersionMatch=Exact).
  assert.equal(ownText('`resourceVersion={{store:7}}&resourceVersionMatch=Exact`', { default: 'ada-x' }, [list]), '`resourceVersion=4401&resourceVersionMatch=Exact`');
});

test('the other revisions a text quotes are those the learner\'s answers of their kind showed, and the article\'s offline and until then', () => {
  // Lesson 7's first step as a student of a class did it: R lists and
  // watches, A creates two ConfigMaps elsewhere, R's watch gets
  // bookmarks (the record's watch is as it was when read).
  const lab = (client, e) => ({ protocol: 'kubernetes', status: 200, userAgent: `${client}/rvplay-lab`, ...e });
  const list = lab('R', { verb: 'list', resourceVersion: '4401', revision: 4402 });
  const watch = lab('R', { verb: 'watch', resourceVersionSent: '4401', revision: 4402, watch: { events: 0, bookmarks: 2, lastResourceVersion: '4420', bookmarkResourceVersion: '4420' } });
  const x = lab('A', { verb: 'create', status: 201, resourceVersion: '4405', revision: 4406 });
  const y = lab('A', { verb: 'create', status: 201, resourceVersion: '4407', revision: 4407 });
  const panel = { ...list, userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140', resourceVersion: '4409' };
  const denied = lab('A', { verb: 'create', status: 409, reason: 'AlreadyExists', revision: 4408 });
  const record = [list, watch, x, y, panel, denied];
  assert.equal(seenRevision(record, 'list'), 4401);
  assert.equal(seenRevision(record, 'write'), 4407);
  assert.equal(seenRevision(record, 'write', 1), 4405, 'the write before the newest');
  assert.equal(seenRevision(record, 'write', 2), 0);
  assert.equal(seenRevision(record, 'sent'), 4401, 'where the watch started');
  assert.equal(seenRevision(record, 'bookmark'), 4420);
  assert.equal(seenRevision(record, 'last'), 4420, 'where the watch would resume');
  assert.equal(seenRevision(record, 'initial-events-end'), 0);
  assert.equal(seenRevision(record, 'get'), 0);
  assert.equal(seenRevision(record, 'nonsense'), 0);
  assert.equal(seenRevision(record), 4408, 'the store\'s: the refused create\'s');
  const md = 'R lists ({{list:6}}), A creates {{write~1:7}} and {{write:8}}, R gets a bookmark at {{bookmark:8}}, a watch-list ends at {{initial-events-end:8}}; lesson {{6}}.';
  assert.equal(ownText(md, null), 'R lists (6), A creates 7 and 8, R gets a bookmark at 8, a watch-list ends at 8; lesson 6.', 'offline: the article\'s');
  assert.equal(ownText(md, null, [list]), 'R lists (4401), A creates 7 and 8, R gets a bookmark at 8, a watch-list ends at 8; lesson 6.', 'before an answer of its kind: the article\'s');
  assert.equal(ownText(md, null, record), 'R lists (4401), A creates 4405 and 4407, R gets a bookmark at 4420, a watch-list ends at 8; lesson 6.');
  // A watch-list's end bookmark, in an output block too (lesson 8).
  const w = lab('W', { verb: 'watch', watch: { events: 3, bookmarks: 1, initialEventsEnd: true, initialEventsEndResourceVersion: '4433', lastResourceVersion: '4433', bookmarkResourceVersion: '4433' } });
  assert.equal(ownText('```\n{"resourceVersion":"{{initial-events-end:8}}"}\n```', null, [w, lab('W', { verb: 'watch', watch: { events: 3 } })]), '```\n{"resourceVersion":"4433"}\n```');
  // Resolved after the names: the article's 8 in W's log line is not
  // taken for the 8 the class maps to the student's c.
  const log = '`initial-events-end rv={{initial-events-end:8}}` in `default`, `c` at {{8}}';
  assert.equal(ownText(log, { default: 'ada-x', 8: '4410' }), '`initial-events-end rv=8` in `ada-x`, `c` at 4410');
  assert.equal(ownText(log, { default: 'ada-x', 8: '4410' }, [w]), '`initial-events-end rv=4433` in `ada-x`, `c` at 4410');
  for (const p of ['{{store:9}}', '{{list:6}}', '{{write~1:7}}', '{{initial-events-end:8}}']) assert.match(p, RECORDED);
  for (const p of ['{{6}}', '{{1000}}', 'store:9']) assert.doesNotMatch(p, RECORDED);
});

test('a lesson\'s settings go on without the compactionInterval a session on an etcd cluster refuses, and stop on any other refusal', () => {
  const cluster = { kind: 'Status', code: 422, reason: 'Invalid', message: 'compactionInterval: 10s refused: ...',
    details: { kind: 'settings', causes: [{ reason: 'FieldValueForbidden', field: 'compactionInterval', message: '10s refused: ...' }] } };
  assert.deepEqual(settingsLeft({ compactionInterval: '10s' }, cluster), {});
  assert.deepEqual(settingsLeft({ compactionInterval: '10s', bookmarkInterval: '5s' }, cluster), { bookmarkInterval: '5s' });
  assert.equal(settingsLeft({ compactionInterval: '10s' }, { kind: 'Status', code: 403, reason: 'Forbidden' }), null);
  assert.equal(settingsLeft({ bookmarkInterval: '0s' }, { kind: 'Status', code: 422, reason: 'Invalid', message: 'bookmarkInterval: must be at least 1s' }), null);
  assert.equal(settingsLeft({ compactionInterval: '10s' }, undefined), null);
});
