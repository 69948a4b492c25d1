// The object editor: YAML or JSON, loaded from the server, applied as
// `kubectl apply` would (the console's `kubectl apply -f -` applies it too).

import { $ } from './dom.js';
import { t, onLanguageChange } from './i18n.js';
import { freshObject } from './clients.js';
import { resourceForKind, collectionPath, itemPath, singular, parseStatus } from './kube.js';
import yaml from '../vendor/js-yaml-4.1.0.mjs';

const NS = 'default';
const JSONH = { 'Content-Type': 'application/json' };
const toYAML = (o) => yaml.dump(o, { noRefs: true, lineWidth: 120 });

export function errLine(r) {
  const s = parseStatus(r.body);
  return s ? `Error from server (${s.reason || 'Unknown'}): ${s.message}` : `Error from server: ${r.status}`;
}

export function mountEditor(lab) {
  let format = 'yaml';

  function object() {
    const text = $('editor').value;
    if (!text.trim()) throw new Error('the editor is empty');
    const obj = format === 'json' ? JSON.parse(text) : yaml.load(text);
    if (!obj || typeof obj !== 'object') throw new Error('the editor must hold one object');
    return obj;
  }

  function set(obj) {
    $('editor').value = format === 'json' ? JSON.stringify(obj, null, 2) : toYAML(obj);
  }

  function setFormat(fmt) {
    if (fmt === format) return;
    let obj = null;
    try { obj = object(); } catch { /* keep the text as it is */ }
    format = fmt;
    $('editor-format-yaml').setAttribute('aria-pressed', String(fmt === 'yaml'));
    $('editor-format-json').setAttribute('aria-pressed', String(fmt === 'json'));
    if (obj) set(obj);
  }

  // load puts the subject's object in the editor, or the object the lab
  // would create for it (freshObject). What was written into the editor
  // while the GET was out (a lesson's stdin, the learner's typing,
  // kubectl edit) and a load asked for later are newer than its answer.
  let started = '';
  let loads = 0;
  async function load() {
    const n = ++loads;
    const s = lab.clients.subject;
    const before = $('editor').value;
    const r = await lab.transport.request('GET', s.path);
    if (n !== loads || $('editor').value !== before) return;
    if (r.status === 200) set(JSON.parse(r.body));
    else set(freshObject(s));
    started = $('editor').value;
  }

  // follow loads the starting object again for a subject that moved (a
  // lesson's, on a class session the student's own), as long as the
  // editor still holds the one it started with: the learner's own text
  // and a kubectl edit in progress are theirs.
  async function follow() {
    if (editing || $('editor').value !== started) return;
    await load();
  }

  async function request(method, path, body) {
    const r = await lab.transport.request(method, path, body === undefined ? {} : { headers: JSONH, body });
    lab.revisions.see(resourceVersion(r.body));
    if (method !== 'GET' && r.status < 300) lab.afterWrite();
    return r;
  }

  // apply writes obj the way `kubectl apply` (or create) reports it. An
  // object carrying metadata.resourceVersion is written with that
  // precondition (so a stale one gets the 409); without one, it is
  // created, or updated on top of the current version.
  async function apply(obj, verb = 'apply') {
    const r = resourceForKind(obj.apiVersion, obj.kind);
    if (!r) return { ok: false, line: `error: resource mapping not found for kind "${obj.kind}" in version "${obj.apiVersion}"` };
    const ns = r.namespaced ? obj.metadata?.namespace || NS : '';
    const name = obj.metadata?.name;
    if (!name) return { ok: false, line: 'error: the object has no metadata.name' };
    const ref = `${singular(r)}/${name}`;
    if (verb === 'create' || !obj.metadata.resourceVersion) {
      const c = await request('POST', collectionPath(r, ns), JSON.stringify(obj));
      if (c.status < 300) return { ok: true, line: `${ref} created`, body: c.body };
      if (verb === 'create' || parseStatus(c.body)?.reason !== 'AlreadyExists') return { ok: false, line: errLine(c), body: c.body };
      const g = await request('GET', itemPath(r, ns, name));
      if (g.status !== 200) return { ok: false, line: errLine(g), body: g.body };
      const cur = JSON.parse(g.body);
      obj = { ...obj, metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion } };
      const u = await request('PUT', itemPath(r, ns, name), JSON.stringify(obj));
      if (u.status >= 300) return { ok: false, line: errLine(u), body: u.body };
      const after = JSON.parse(u.body);
      return { ok: true, line: `${ref} ${after.metadata.resourceVersion === cur.metadata.resourceVersion ? 'unchanged' : 'configured'}`, body: u.body };
    }
    const u = await request('PUT', itemPath(r, ns, name), JSON.stringify(obj));
    if (u.status >= 300) return { ok: false, line: errLine(u), body: u.body };
    return { ok: true, line: `${ref} configured`, body: u.body };
  }

  async function applyText(text = $('editor').value, fmt = format) {
    lab.record({ op: 'apply', text, fmt });
    const out = $('editor-result');
    let res;
    try {
      const obj = fmt === 'json' ? JSON.parse(text) : yaml.load(text);
      res = await apply(obj);
    } catch (e) {
      res = { ok: false, line: `error: ${e.message}` };
    }
    out.dataset.ok = String(res.ok);
    out.textContent = res.line + (res.ok || !res.body ? '' : '\n' + res.body);
    if (res.ok && res.body) {
      const o = JSON.parse(res.body);
      out.textContent += ` (resourceVersion ${o.metadata.resourceVersion})`;
      set(o);
    }
    return res;
  }

  // edit hands text to the learner for `kubectl edit`: Apply (Ctrl+Enter)
  // resolves with what the editor then holds, Esc (or the command's
  // Ctrl+C, signal) with null.
  let editing = null;
  function edit(text, signal) {
    editing?.(null);
    $('editor').value = text;
    const out = $('editor-result');
    out.dataset.ok = 'true';
    out.textContent = t('editor.editing');
    $('editor').focus();
    return new Promise((resolve) => {
      const done = (v) => {
        if (editing !== done) return;
        editing = null;
        out.textContent = '';
        resolve(v);
      };
      editing = done;
      signal?.addEventListener('abort', () => done(null), { once: true });
    });
  }
  const save = () => (editing ? editing($('editor').value) : lab.guard(() => applyText())());

  // While kubectl edit waits, its hint is said in the language picked;
  // an apply's result is what the API answered (as kubectl prints it).
  onLanguageChange(() => { if (editing) $('editor-result').textContent = t('editor.editing'); });
  $('editor-format-yaml').addEventListener('click', () => setFormat('yaml'));
  $('editor-format-json').addEventListener('click', () => setFormat('json'));
  $('editor-load').addEventListener('click', lab.guard(load));
  $('editor-apply').addEventListener('click', save);
  $('editor').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); }
    if (e.key === 'Escape' && editing) { e.preventDefault(); editing(null); }
  });
  // setText puts text in the editor as it is (a lesson's stdin).
  const setText = (text) => { $('editor').value = text; };
  return { object, set, setText, text: () => $('editor').value, edit, load, follow, apply, applyText, focus: () => $('editor').focus() };
}

function resourceVersion(body) {
  try { return JSON.parse(body)?.metadata?.resourceVersion; } catch { return undefined; }
}
