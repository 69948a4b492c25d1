// The lab: wires the clients, watch streams, etcd view, timeline, editor
// and console to one session through transport.js. Every change to the page
// goes through Frame (one DOM update per animation frame) and every piece
// of object content is inserted as text.

import { loadEngine, wasmTransport, httpTransport } from './transport.js';
import { Etcd, GatewayError } from './etcd.js';
import { lookupResource, itemPath, collectionPath, resourceForKind, parseStatus, singular } from './kube.js';
import { Console } from './console.js';
import { History, encodeShare, decodeShare } from './history.js';
import { el, $, Frame, RowList } from './dom.js';
import yaml from '../vendor/js-yaml-4.1.0.mjs';

const cfg = JSON.parse(document.getElementById('lab-config').textContent);
const frame = new Frame();
const root = $('lab');
const CM = lookupResource('configmaps');
const NS = 'default';
const JSONH = { 'Content-Type': 'application/json' };

const state = {
  transport: null, etcd: null,
  rev: 0, compactRev: -1,
  keys: new Map(),          // key -> kv at head
  events: new Map(),        // revision -> [{type, key, value}]
  travelRev: 0,             // 0 = head
  selectedKey: '',
  replaying: false,
};
const history = new History(cfg.mode === 'server' ? `rvplay.lab.session.${cfg.session}` : 'rvplay.lab.offline');

const toYAML = (o) => yaml.dump(o, { noRefs: true, lineWidth: 120 });
// kubectlYAML prints an object as `kubectl get -o yaml` does: keys sorted,
// strings double-quoted where YAML needs quotes, managedFields hidden.
const kubectlYAML = (o) => yaml.dump(withoutManagedFields(o), { noRefs: true, lineWidth: -1, sortKeys: true, quotingType: '"' });
function withoutManagedFields(o) {
  if (!o || typeof o !== 'object') return o;
  if (Array.isArray(o.items)) return { ...o, items: o.items.map(withoutManagedFields) };
  if (!o.metadata?.managedFields) return o;
  const { managedFields, ...md } = o.metadata;
  return { ...o, metadata: md };
}
const subjectName = () => $('subject-name').value.trim() || 'demo';
const subjectPath = () => itemPath(CM, NS, subjectName());

function notice(text, kind = 'info') {
  const n = $('notice');
  frame.schedule('notice', () => { n.textContent = text; n.dataset.kind = kind; });
}

function setConn(stateName, text) {
  const c = $('conn-status');
  c.dataset.state = stateName;
  c.textContent = text;
}

// ---- revisions -------------------------------------------------------------

function seeRevision(rev) {
  rev = Number(rev) || 0;
  if (rev > state.rev) {
    state.rev = rev;
    frame.schedule('revision', renderRevision);
  }
}

function renderRevision() {
  $('store-revision').textContent = String(state.rev);
  $('etcd-revision').textContent = String(state.rev);
  $('compact-revision').textContent = state.compactRev > 0 ? String(state.compactRev) : 'never';
  const cr = $('compact-rev');
  if (document.activeElement !== cr) cr.placeholder = String(state.rev);
  const tt = $('time-travel');
  tt.min = String(Math.max(1, state.compactRev));
  tt.max = String(Math.max(1, state.rev));
  if (!state.travelRev) tt.value = tt.max;
  renderTimeline();
}

// ---- request log -------------------------------------------------------------

const statusText = { 200: 'OK', 201: 'Created', 404: 'Not Found', 409: 'Conflict', 410: 'Gone', 422: 'Unprocessable Entity', 500: 'Internal Server Error', 504: 'Gateway Timeout' };

// exchange performs a request for a client and logs method, path, status and
// both bodies in that client's request log.
async function exchange(logId, method, path, opts = {}) {
  const r = await state.transport.request(method, path, opts);
  logExchange(logId, method, path + qs(opts.query), r.status, opts.body, r.body);
  const s = parseStatus(r.body);
  try {
    const o = JSON.parse(r.body);
    seeRevision(o?.metadata?.resourceVersion);
  } catch { /* not JSON */ }
  if (method !== 'GET' && r.status < 300) scheduleRefresh();
  return { ...r, statusObj: s };
}

function qs(query) {
  if (!query) return '';
  const p = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== ''));
  const s = p.toString();
  return s ? '?' + s : '';
}

function logExchange(logId, method, path, status, reqBody, respBody) {
  const log = $(logId);
  if (!log) return;
  const ok = status < 300;
  const entry = el('li', { 'data-testid': 'exchange', 'data-status': status, 'data-method': method, class: ok ? 'ok' : 'fail' },
    el('details', { open: !ok || undefined },
      el('summary', {},
        el('span', { class: 'method', text: method }), ' ',
        el('span', { class: 'path', text: path }), ' → ',
        el('b', { class: 'status', 'data-testid': 'exchange-status', text: `${status} ${statusText[status] || ''}`.trim() })),
      reqBody ? el('div', { class: 'body-label', text: 'request' }) : null,
      reqBody ? el('pre', { class: 'body', text: reqBody }) : null,
      el('div', { class: 'body-label', text: 'response' }),
      el('pre', { class: 'body', 'data-testid': 'exchange-body', text: respBody })));
  const rows = logLists.get(logId) || logLists.set(logId, new RowList(log, frame, 60)).get(logId);
  rows.push(entry);
}
const logLists = new Map();

// ---- clients -----------------------------------------------------------------

const clients = {};
for (const id of ['a', 'b', 'controller']) clients[id] = { id, copy: null };

function showCopy(c) {
  frame.schedule('copy-' + c.id, () => {
    $(`client-${c.id}-copy`).textContent = c.copy ? kubectlYAML(c.copy) : '(nothing read yet)';
    $(`client-${c.id}-rv`).textContent = c.copy?.metadata?.resourceVersion || '–';
  });
}

async function clientGet(id) {
  const c = clients[id];
  record({ op: 'get', c: id, name: subjectName() });
  const r = await exchange(`client-${id}-log`, 'GET', subjectPath());
  if (r.status === 200) c.copy = JSON.parse(r.body);
  else if (r.status === 404) c.copy = null;
  showCopy(c);
  return r;
}

function valueFor(id) { return $(`client-${id}-value`).value; }

async function clientPut(id, value = valueFor(id)) {
  const c = clients[id];
  record({ op: 'put', c: id, name: subjectName(), v: value });
  if (!c.copy || c.copy.metadata?.name !== subjectName()) {
    // Nothing read yet: create the object (POST), as kubectl create would.
    const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: subjectName(), namespace: NS }, data: { value } });
    const r = await exchange(`client-${id}-log`, 'POST', collectionPath(CM, NS), { headers: JSONH, body });
    if (r.status === 201 || r.status === 200) { c.copy = JSON.parse(r.body); showCopy(c); }
    return r;
  }
  const next = structuredClone(c.copy);
  next.data = { ...(next.data || {}), value };
  const r = await exchange(`client-${id}-log`, 'PUT', subjectPath(), { headers: JSONH, body: JSON.stringify(next) });
  if (r.status === 200) { c.copy = JSON.parse(r.body); showCopy(c); }
  return r;
}

// controllerUpdate is client-go's RetryOnConflict: on 409, read the latest
// version and apply the change again, at most five times.
async function controllerUpdate(value = valueFor('controller')) {
  record({ op: 'update', c: 'controller', name: subjectName(), v: value });
  const c = clients.controller;
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (!c.copy) {
        const g = await exchange('client-controller-log', 'GET', subjectPath());
        if (g.status !== 200) { c.copy = null; showCopy(c); return g; }
        c.copy = JSON.parse(g.body);
      }
      const next = structuredClone(c.copy);
      next.data = { ...(next.data || {}), value };
      const r = await exchange('client-controller-log', 'PUT', subjectPath(), { headers: JSONH, body: JSON.stringify(next) });
      if (r.status === 200) { c.copy = JSON.parse(r.body); showCopy(c); return r; }
      if (r.status !== 409) return r;
      c.copy = null; // conflict: re-read and retry
    }
  } finally {
    showCopy(c);
  }
}

// ---- watch streams -------------------------------------------------------

let streamSeq = 0;

// openStream shows one watch stream in the watch panel and returns a handle
// whose add(row) appends event rows (batched per frame).
function openStream(title, path, query) {
  const id = ++streamSeq;
  const list = el('ol', { class: 'events', 'data-testid': 'stream-events' });
  const stateEl = el('span', { class: 'stream-state', 'data-testid': 'stream-state', text: 'connecting' });
  const stop = el('button', { 'data-testid': 'stream-stop', 'aria-label': `stop ${title}`, text: 'Stop' });
  const box = el('article', { class: 'stream', 'data-testid': 'stream', 'data-stream': title, 'data-state': 'connecting' },
    el('header', {}, el('b', { text: title }), ' ', el('code', { class: 'muted', text: path + qs(query) }), ' ', stateEl, stop),
    el('div', { class: 'scroll' }, list));
  const streams = $('streams');
  frame.schedule('stream-open-' + id, () => { streams.prepend(box); });
  const rows = new RowList(list, frame, 300);
  let count = 0;
  const handle = {
    box, stop,
    setState(s, text = s) { frame.schedule(`stream-state-${id}`, () => { box.dataset.state = s; stateEl.textContent = text; }); },
    add(type, text, extra = {}) {
      count++;
      rows.push(el('li', { 'data-testid': 'watch-event', 'data-type': type, 'data-rv': extra.rv, class: 'ev-' + type.toLowerCase() },
        el('span', { class: 'etype', text: type }), ' ', el('span', { text }),
        extra.detail ? el('pre', { class: 'body', text: extra.detail }) : null));
      frame.schedule(`stream-count-${id}`, () => { box.dataset.count = String(count); });
    },
  };
  return handle;
}

// describe renders a Kubernetes watch event as a row: type, name, RV.
function describe(ev) {
  const o = ev.object || {};
  const md = o.metadata || {};
  if (ev.type === 'BOOKMARK') {
    const end = md.annotations?.['k8s.io/initial-events-end'] ? ' (initial-events-end)' : '';
    return { text: `rv=${md.resourceVersion}${end}`, rv: md.resourceVersion };
  }
  if (ev.type === 'ERROR') return { text: `${o.code} ${o.reason || ''}: ${o.message || ''}`, rv: '', detail: JSON.stringify(o) };
  return { text: `${md.name} rv=${md.resourceVersion}`, rv: md.resourceVersion };
}

function startWatch(rv = $('watch-rv').value.trim(), bookmarks = $('watch-bookmarks').checked) {
  record({ op: 'watch', rv, bookmarks });
  const path = collectionPath(CM, NS);
  const query = { watch: 'true', resourceVersion: rv || undefined, allowWatchBookmarks: bookmarks ? 'true' : undefined };
  const s = openStream('watch configmaps', path, query);
  const cancel = state.transport.watch(path, query, (e) => {
    if (e.type === 'open') {
      if (e.status === 200) s.setState('open', `open (${e.via})`);
      else { const st = parseStatus(e.body); s.add('ERROR', `${e.status} ${st?.reason || ''}: ${st?.message || e.body}`, { detail: e.body }); }
    } else if (e.type === 'frame') {
      let ev;
      try { ev = JSON.parse(e.data); } catch { return; }
      const d = describe(ev);
      seeRevision(d.rv);
      s.add(ev.type, d.text, d);
    } else {
      s.setState('ended', `ended: ${e.reason}${e.code ? ` (${e.code})` : ''}`);
    }
  });
  s.stop.addEventListener('click', () => cancel());
  return s;
}

// ---- reflector --------------------------------------------------------------

// The reflector does what client-go's does: LIST (resourceVersion from the
// list), WATCH from there with bookmarks; on a 410 (HTTP or ERROR event)
// it relists. A dropped connection re-watches from the last resourceVersion.
const reflector = { state: 'stopped', rv: '', cache: new Map(), relists: 0, cancel: null, stream: null, retry: null, gen: 0 };

function showReflector() {
  frame.schedule('reflector', () => {
    $('reflector-state').textContent = reflector.state;
    $('client-reflector').dataset.state = reflector.state;
    $('reflector-rv').textContent = reflector.rv || '–';
    $('reflector-relists').textContent = String(reflector.relists);
    $('reflector-start').textContent = reflector.state === 'stopped' ? 'Start' : 'Stop';
    $('reflector-disconnect').disabled = reflector.state !== 'watching';
    $('reflector-resume').disabled = reflector.state !== 'disconnected';
    const ul = $('reflector-cache');
    ul.replaceChildren(...[...reflector.cache.entries()].sort().map(([name, rv]) =>
      el('li', { 'data-testid': 'reflector-item', 'data-name': name }, el('span', { text: name }), ' ', el('span', { class: 'muted', text: `rv=${rv}` }))));
  });
}

async function reflectorList() {
  reflector.state = 'listing';
  showReflector();
  const r = await exchange('client-reflector-log', 'GET', collectionPath(CM, NS));
  if (r.status !== 200) { reflector.state = 'list failed'; showReflector(); return false; }
  const list = JSON.parse(r.body);
  reflector.cache = new Map((list.items || []).map((o) => [o.metadata.name, o.metadata.resourceVersion]));
  reflector.rv = list.metadata.resourceVersion;
  seeRevision(reflector.rv);
  showReflector();
  return true;
}

function reflectorWatch() {
  const gen = ++reflector.gen;
  const path = collectionPath(CM, NS);
  const query = { watch: 'true', resourceVersion: reflector.rv, allowWatchBookmarks: 'true', timeoutSeconds: '3600' };
  logExchange('client-reflector-log', 'GET', path + qs(query), 200, '', '(watch stream: events in the watch panel)');
  const s = reflector.stream && reflector.stream.box.isConnected ? reflector.stream : openStream('reflector', path, query);
  reflector.stream = s;
  s.add('WATCH', `from rv=${reflector.rv}`, { rv: reflector.rv });
  reflector.state = 'watching';
  showReflector();
  let relisting = false;
  const relist = async (why) => {
    if (relisting || gen !== reflector.gen) return;
    relisting = true;
    reflector.cancel?.();
    reflector.relists++;
    s.add('RELIST', `${why}: list again, then watch from the new resourceVersion`);
    if (await reflectorList()) { s.add('LIST', `rv=${reflector.rv}, ${reflector.cache.size} objects`, { rv: reflector.rv }); reflectorWatch(); }
  };
  reflector.cancel = state.transport.watch(path, query, (e) => {
    if (gen !== reflector.gen) return;
    if (e.type === 'open') {
      s.setState('open', `open (${e.via})`);
      if (e.status === 410) { s.add('ERROR', `410 (HTTP): ${parseStatus(e.body)?.message || ''}`, { detail: e.body }); relist('410 Gone'); }
      else if (e.status !== 200) s.add('ERROR', `${e.status}`, { detail: e.body });
      return;
    }
    if (e.type === 'frame') {
      let ev;
      try { ev = JSON.parse(e.data); } catch { return; }
      const d = describe(ev);
      s.add(ev.type, d.text, d);
      const md = ev.object?.metadata || {};
      if (ev.type === 'ADDED' || ev.type === 'MODIFIED') reflector.cache.set(md.name, md.resourceVersion);
      else if (ev.type === 'DELETED') reflector.cache.delete(md.name);
      if (ev.type === 'ERROR') {
        if (ev.object?.code === 410) relist('410 Expired');
        return;
      }
      if (md.resourceVersion) { reflector.rv = md.resourceVersion; seeRevision(md.resourceVersion); }
      showReflector();
      return;
    }
    // end of the stream
    s.setState('ended', `ended: ${e.reason}${e.code ? ` (${e.code})` : ''}`);
    if (relisting || reflector.state !== 'watching' || e.reason === 'canceled') return;
    // The server or the network ended the watch: re-watch from the last
    // resourceVersion, as client-go does, after a short back-off.
    s.add('CLOSED', `watch closed (${e.reason}${e.code ? `, code ${e.code}` : ''}); re-watch from rv=${reflector.rv}`);
    reflector.state = 'reconnecting';
    showReflector();
    clearTimeout(reflector.retry);
    reflector.retry = setTimeout(() => { if (reflector.state === 'reconnecting' && gen === reflector.gen) reflectorWatch(); }, 300);
  });
}

async function reflectorToggle() {
  if (reflector.state === 'stopped') {
    record({ op: 'reflector', act: 'start' });
    reflector.stream = null;
    if (await reflectorList()) reflectorWatch();
  } else {
    record({ op: 'reflector', act: 'stop' });
    reflector.gen++;
    reflector.cancel?.();
    reflector.state = 'stopped';
    showReflector();
  }
}

// Disconnect drops the watch (as a network fault would) and keeps the last
// resourceVersion; Resume re-watches from it, which is how a compaction in
// between turns into 410 and a relist.
function reflectorDisconnect() {
  record({ op: 'reflector', act: 'disconnect' });
  reflector.gen++;
  reflector.cancel?.();
  reflector.state = 'disconnected';
  reflector.stream?.add('CLOSED', `disconnected at rv=${reflector.rv}`);
  showReflector();
}

function reflectorResume() {
  record({ op: 'reflector', act: 'resume' });
  if (reflector.state === 'disconnected') reflectorWatch();
}

// ---- etcd view ----------------------------------------------------------------

// The etcd view re-reads the keyspace after writes, at most every 200 ms
// while events stream in (one read in flight at a time), so a burst of
// events costs a few reads, not one per event.
let refreshQueued = false;
let refreshRunning = null;
let lastRefresh = 0;
function scheduleRefresh() {
  if (refreshQueued) return;
  refreshQueued = true;
  const wait = Math.max(0, lastRefresh + 200 - performance.now());
  setTimeout(async () => {
    await refreshRunning;
    refreshQueued = false;
    lastRefresh = performance.now();
    refreshRunning = refreshKeys();
  }, wait);
}

// learnCompactRev finds the store's compaction revision with what the etcd
// API offers: a read at revision r fails with "compacted" exactly when r is
// below it, so a binary search over [known, head] needs a few cheap reads.
async function learnCompactRev() {
  const readable = async (rev) => {
    try { await state.etcd.range('\0', { rev }); return true; } catch (e) {
      if (e instanceof GatewayError && /compacted/.test(e.message)) return false;
      throw e;
    }
  };
  try {
    const head = n0((await state.etcd.range('\0')).header.revision);
    let lo = Math.max(1, state.compactRev);
    let hi = head;
    if (await readable(lo)) return;
    while (lo + 1 < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (await readable(mid)) hi = mid; else lo = mid;
    }
    if (hi > state.compactRev) {
      state.compactRev = hi;
      frame.schedule('revision', renderRevision);
      frame.schedule('timeline', renderTimeline);
      if (state.selectedKey) frame.schedule('history', renderHistory);
    }
  } catch (e) {
    notice(`etcd: ${e.message}`, 'error');
  }
}
const n0 = (x) => Number(x || 0);

let lastProbe = -Infinity;
async function refreshKeys() {
  try {
    // A compaction by someone else (another browser, the console) shows up
    // as a failed read at the compaction revision we know; look every 2 s.
    if (performance.now() - lastProbe > 2000) {
      lastProbe = performance.now();
      await state.etcd.range('\0', { rev: Math.max(1, state.compactRev) }).catch(async (e) => {
        if (e instanceof GatewayError && /compacted/.test(e.message)) await learnCompactRev();
      });
    }
    const res = await state.etcd.range('', { all: true, rev: state.travelRev || 0 });
    seeRevision(res.header.revision);
    if (!state.travelRev) state.keys = new Map(res.kvs.map((kv) => [kv.key, kv]));
    frame.schedule('keys', () => renderKeys(state.travelRev ? res.kvs : [...state.keys.values()]));
  } catch (e) {
    if (e instanceof GatewayError && /compacted/.test(e.message)) { backToHead(); return; }
    notice(`etcd: ${e.message}`, 'error');
  }
}

function renderKeys(kvs) {
  const tbody = $('etcd-keys').querySelector('tbody');
  tbody.replaceChildren(...kvs.map((kv) => el('tr', {
    'data-testid': 'etcd-key', 'data-key': kv.key, tabindex: 0, class: kv.key === state.selectedKey ? 'selected' : '',
    onclick: () => selectKey(kv.key), onkeydown: (e) => { if (e.key === 'Enter') selectKey(kv.key); },
  }, el('td', { class: 'key', text: kv.key }), el('td', { text: kv.createRevision }), el('td', { 'data-testid': 'etcd-key-mod', text: kv.modRevision }), el('td', { text: kv.version }))));
  $('etcd-viewing').textContent = state.travelRev ? `(keyspace at revision ${state.travelRev})` : '';
  root.dataset.travel = state.travelRev ? String(state.travelRev) : '';
}

function selectKey(key) {
  state.selectedKey = key;
  frame.schedule('history', renderHistory);
  frame.schedule('keys-sel', () => {
    for (const tr of $('etcd-keys').querySelectorAll('tr[data-key]')) tr.classList.toggle('selected', tr.dataset.key === key);
  });
}

function renderHistory() {
  const key = state.selectedKey;
  $('history-key').textContent = key || '(select a key)';
  const items = [];
  for (const [rev, evs] of [...state.events.entries()].sort((a, b) => a[0] - b[0])) {
    for (const ev of evs) {
      if (ev.key !== key) continue;
      const label = ev.type === 'DELETE' ? 'DELETE' : (ev.createRevision === rev ? 'PUT (create)' : 'PUT');
      items.push(el('li', { 'data-testid': 'history-entry', 'data-rev': rev, class: rev < state.compactRev ? 'compacted' : '' },
        el('b', { text: `rev ${rev}` }), ` ${label}`,
        ev.type === 'PUT' ? ` · create ${ev.createRevision} · version ${ev.version}` : '',
        ev.type === 'PUT' ? el('pre', { class: 'body', text: ev.value.length > 400 ? ev.value.slice(0, 400) + '…' : ev.value }) : null));
    }
  }
  if (state.compactRev > 0 && key) items.unshift(el('li', { class: 'muted', text: `revisions before ${state.compactRev} were compacted away` }));
  $('key-history').replaceChildren(...items);
}

// The keyspace watcher follows every write (from any client, or another
// browser on the same server session): it feeds the timeline and the key
// histories, and tells the etcd view to refresh.
let keyspaceCancel = null;
function watchKeyspace(from = 1) {
  keyspaceCancel?.();
  keyspaceCancel = state.etcd.watch('', { all: true, rev: from }, (res) => {
    if (res.canceled) {
      if (res.compactRevision) {
        state.compactRev = Math.max(state.compactRev, res.compactRevision);
        frame.schedule('revision', renderRevision);
        watchKeyspace(res.compactRevision);
      }
      return;
    }
    seeRevision(res.header.revision);
    for (const ev of res.events) {
      const rev = ev.kv.modRevision;
      const list = state.events.get(rev) || [];
      if (!list.some((x) => x.key === ev.kv.key && x.type === ev.type)) list.push({ type: ev.type, key: ev.kv.key, value: ev.kv.value, createRevision: ev.kv.createRevision, version: ev.kv.version });
      state.events.set(rev, list);
      seeRevision(rev);
    }
    if (res.events.length) {
      scheduleRefresh();
      frame.schedule('timeline', renderTimeline);
      if (state.selectedKey) frame.schedule('history', renderHistory);
    }
  }, (err) => {
    if (err) notice(`etcd watch: ${err.message}`, 'error');
  });
}

async function compact(rev) {
  rev = Number(rev || $('compact-rev').value || state.rev);
  record({ op: 'compact', rev });
  try {
    await state.etcd.compact(rev);
    state.compactRev = Math.max(state.compactRev, rev);
    notice(`compacted at revision ${rev}: older revisions are gone`);
  } catch (e) {
    notice(`compaction: ${e.message}`, 'error');
  }
  frame.schedule('revision', renderRevision);
  if (state.selectedKey) frame.schedule('history', renderHistory);
  scheduleRefresh();
}

// ---- timeline and time travel ----------------------------------------------------

const TIMELINE_MAX = 120;
function renderTimeline() {
  const strip = $('timeline');
  const head = state.rev;
  const from = Math.max(1, head - TIMELINE_MAX + 1);
  const cells = [];
  for (let rev = from; rev <= head; rev++) {
    const evs = state.events.get(rev) || [];
    const compacted = rev < state.compactRev;
    const title = `revision ${rev}` + (evs.length ? ': ' + evs.map((e) => `${e.type} ${e.key}`).join(', ') : (rev === 1 ? ': empty store' : compacted ? ': compacted' : ''));
    cells.push(el('span', {
      class: `tick${compacted ? ' compacted' : ''}${evs.some((e) => e.type === 'DELETE') ? ' del' : ''}${state.travelRev === rev ? ' current' : ''}`,
      'data-rev': rev, title, 'aria-label': title,
    }, rev % 5 === 0 || rev === head ? el('small', { text: rev }) : null));
    if (rev === state.compactRev) cells.push(el('span', { class: 'compaction-line', 'data-testid': 'compaction-line', title: `compacted at ${rev}` }));
  }
  strip.replaceChildren(...cells);
  strip.setAttribute('aria-label', `revisions ${from} to ${head}; compacted at ${state.compactRev > 0 ? state.compactRev : 'never'}`);
}

function travel(rev) {
  rev = Number(rev);
  state.travelRev = rev >= state.rev ? 0 : Math.max(rev, state.compactRev, 1);
  $('time-travel-rev').textContent = state.travelRev ? String(state.travelRev) : 'head';
  frame.schedule('timeline', renderTimeline);
  refreshKeys();
}

function backToHead() {
  state.travelRev = 0;
  $('time-travel').value = String(state.rev);
  $('time-travel-rev').textContent = 'head';
  frame.schedule('timeline', renderTimeline);
  refreshKeys();
}

// ---- editor --------------------------------------------------------------------

let editorFormat = 'yaml';

function editorObject() {
  const text = $('editor').value;
  if (!text.trim()) throw new Error('the editor is empty');
  const obj = editorFormat === 'json' ? JSON.parse(text) : yaml.load(text);
  if (!obj || typeof obj !== 'object') throw new Error('the editor must hold one object');
  return obj;
}

function setEditor(obj) {
  $('editor').value = editorFormat === 'json' ? JSON.stringify(obj, null, 2) : toYAML(obj);
}

function setFormat(fmt) {
  if (fmt === editorFormat) return;
  let obj = null;
  try { obj = editorObject(); } catch { /* keep the text as it is */ }
  editorFormat = fmt;
  $('editor-format-yaml').setAttribute('aria-pressed', String(fmt === 'yaml'));
  $('editor-format-json').setAttribute('aria-pressed', String(fmt === 'json'));
  if (obj) setEditor(obj);
}

async function editorLoad() {
  const r = await state.transport.request('GET', subjectPath());
  if (r.status === 200) setEditor(JSON.parse(r.body));
  else setEditor({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: subjectName(), namespace: NS }, data: { value: 'from-editor' } });
}

// apply writes obj the way `kubectl apply` (or create) reports it. An object
// carrying metadata.resourceVersion is written with that precondition (so a
// stale one gets the 409); without one, it is created, or updated on top of
// the current version.
async function applyObject(obj, verb = 'apply') {
  const r = resourceForKind(obj.apiVersion, obj.kind);
  if (!r) return { ok: false, line: `error: resource mapping not found for kind "${obj.kind}" in version "${obj.apiVersion}"` };
  const ns = r.namespaced ? obj.metadata?.namespace || NS : '';
  const name = obj.metadata?.name;
  if (!name) return { ok: false, line: 'error: the object has no metadata.name' };
  const ref = `${singular(r)}/${name}`;
  const log = 'editor-log';
  if (verb === 'create' || !obj.metadata.resourceVersion) {
    const c = await exchange(log, 'POST', collectionPath(r, ns), { headers: JSONH, body: JSON.stringify(obj) });
    if (c.status < 300) return { ok: true, line: `${ref} created`, body: c.body };
    if (verb === 'create' || c.statusObj?.reason !== 'AlreadyExists') return { ok: false, line: errLine(c), body: c.body };
    const g = await exchange(log, 'GET', itemPath(r, ns, name));
    if (g.status !== 200) return { ok: false, line: errLine(g), body: g.body };
    const cur = JSON.parse(g.body);
    obj = { ...obj, metadata: { ...obj.metadata, resourceVersion: cur.metadata.resourceVersion } };
    const u = await exchange(log, 'PUT', itemPath(r, ns, name), { headers: JSONH, body: JSON.stringify(obj) });
    if (u.status >= 300) return { ok: false, line: errLine(u), body: u.body };
    const after = JSON.parse(u.body);
    return { ok: true, line: `${ref} ${after.metadata.resourceVersion === cur.metadata.resourceVersion ? 'unchanged' : 'configured'}`, body: u.body };
  }
  const u = await exchange(log, 'PUT', itemPath(r, ns, name), { headers: JSONH, body: JSON.stringify(obj) });
  if (u.status >= 300) return { ok: false, line: errLine(u), body: u.body };
  return { ok: true, line: `${ref} configured`, body: u.body };
}

function errLine(r) {
  return r.statusObj ? `Error from server (${r.statusObj.reason || 'Unknown'}): ${r.statusObj.message}` : `Error from server: ${r.status}`;
}

async function editorApply(text = $('editor').value, fmt = editorFormat) {
  record({ op: 'apply', text, fmt });
  const out = $('editor-result');
  let res;
  try {
    const obj = fmt === 'json' ? JSON.parse(text) : yaml.load(text);
    res = await applyObject(obj);
  } catch (e) {
    res = { ok: false, line: `error: ${e.message}` };
  }
  out.dataset.ok = String(res.ok);
  out.textContent = res.line + (res.ok || !res.body ? '' : '\n' + res.body);
  if (res.ok && res.body) {
    const o = JSON.parse(res.body);
    out.textContent += ` (resourceVersion ${o.metadata.resourceVersion})`;
    setEditor(o);
  }
  return res;
}

// ---- console -------------------------------------------------------------------------

const consoleOut = $('console-output');
const consoleRows = new RowList(consoleOut, frame, 1000);
function print(text, cls = '') {
  consoleRows.push(el('div', { class: 'line ' + cls, 'data-testid': 'console-line', text }));
}
let con;

// Commands run one after another, as in a shell, even when typed quickly.
let consoleQueue = Promise.resolve();
function runCommand(line) {
  record({ op: 'cmd', line });
  const run = async () => {
    print('$ ' + line, 'cmd');
    await con.run(line);
    if (/^\s*etcdctl\s+compact/.test(line)) await learnCompactRev();
  };
  consoleQueue = consoleQueue.then(run, run);
  return consoleQueue;
}

// ---- history, persistence, sharing ------------------------------------------------

function record(op) {
  if (state.replaying) return;
  history.add(op);
}

const actions = {
  get: (o) => withSubject(o.name, () => clientGet(o.c)),
  put: (o) => withSubject(o.name, () => clientPut(o.c, o.v)),
  update: (o) => withSubject(o.name, () => controllerUpdate(o.v)),
  watch: (o) => startWatch(o.rv, o.bookmarks),
  reflector: (o) => ({ start: reflectorToggle, stop: reflectorToggle, disconnect: reflectorDisconnect, resume: reflectorResume }[o.act] || (() => {}))(),
  compact: (o) => compact(o.rev),
  apply: (o) => editorApply(o.text, o.fmt),
  cmd: (o) => (/\s(-w|--watch)\b/.test(o.line) || /^etcdctl\s+watch/.test(o.line) ? Promise.resolve() : runCommand(o.line)),
};

async function withSubject(name, fn) {
  if (name) $('subject-name').value = name;
  return fn();
}

async function replay(ops) {
  state.replaying = true;
  try {
    for (const op of ops) {
      const fn = actions[op.op];
      if (fn) await fn(op);
    }
  } finally {
    state.replaying = false;
  }
}

// bootSession makes the first Kubernetes request, which creates the
// system namespaces (four revisions), so that a replayed history always
// starts from the same revision whatever its first operation is.
async function bootSession() {
  const r = await state.transport.request('GET', '/api/v1/namespaces/default');
  if (r.status >= 500) notice(`the Kubernetes API answered ${r.status}`, 'error');
}

async function resetLab() {
  if (!state.transport.reset) return;
  reflector.gen++;
  reflector.cancel?.();
  con.stopWatches();
  await state.transport.reset();
  await bootSession();
  state.rev = 0; state.compactRev = -1; state.keys.clear(); state.events.clear(); state.travelRev = 0; state.selectedKey = '';
  Object.assign(reflector, { state: 'stopped', rv: '', cache: new Map(), relists: 0, cancel: null, stream: null });
  for (const c of Object.values(clients)) { c.copy = null; showCopy(c); }
  for (const id of ['client-a-log', 'client-b-log', 'client-controller-log', 'client-reflector-log']) $(id).replaceChildren();
  $('streams').replaceChildren();
  $('key-history').replaceChildren();
  showReflector();
  seeRevision(1);
  frame.schedule('revision', renderRevision);
  watchKeyspace(1);
  scheduleRefresh();
}

async function importOps(ops, label) {
  if (cfg.mode !== 'server') await resetLab();
  history.replace(ops);
  notice(`replaying ${ops.length} operations (${label})…`);
  await replay(ops);
  notice(`${label}: replayed ${ops.length} operations; store revision ${state.rev}`);
  root.dataset.replayed = String(ops.length);
}

function exportFile() {
  const blob = new Blob([history.exportJSON()], { type: 'application/json' });
  const a = el('a', { href: URL.createObjectURL(blob), download: `rvplay-lab-${new Date().toISOString().replace(/[:.]/g, '-')}.json` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
}

async function importFile(file) {
  try {
    const ops = History.parse(await file.text());
    await importOps(ops, `imported ${file.name}`);
  } catch (e) {
    notice(`import failed: ${e.message}`, 'error');
  }
}

async function share() {
  const code = await encodeShare(history.ops);
  const url = new URL(location.href);
  url.hash = 'h=' + code;
  const input = $('share-link');
  input.hidden = false;
  input.value = url.toString();
  input.select();
  try { await navigator.clipboard.writeText(url.toString()); notice('share link copied to the clipboard'); } catch { notice('share link ready: copy it from the field'); }
}

// ---- keyboard -------------------------------------------------------------------------

function toggleHelp(show) {
  const o = $('help-overlay');
  const open = show ?? o.hidden;
  o.hidden = !open;
  if (open) $('help-close').focus();
  else $('help').focus();
}

function onKey(e) {
  const t = e.target;
  const typing = t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t.isContentEditable;
  if (e.key === 'Escape') {
    if (!$('help-overlay').hidden) { toggleHelp(false); e.preventDefault(); return; }
    if (typing) t.blur();
    return;
  }
  if (t === $('editor') && e.key === 'Enter' && (e.ctrlKey || e.metaKey)) { e.preventDefault(); editorApply(); return; }
  if (t === $('console-input') && e.key === 'c' && e.ctrlKey && !t.value) { e.preventDefault(); print(con.stopWatches() ? '^C' : '^C (no watch running)', 'muted'); return; }
  if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
  const keys = {
    '?': () => toggleHelp(), '1': () => clientGet('a'), '2': () => clientGet('b'), '!': () => clientPut('a'), '@': () => clientPut('b'),
    '3': () => controllerUpdate(), r: () => (reflector.state === 'watching' ? reflectorDisconnect() : reflector.state === 'disconnected' ? reflectorResume() : reflectorToggle()),
    w: () => startWatch(), c: () => compact(), t: () => $('time-travel').focus(), e: () => $('editor').focus(), '/': () => $('console-input').focus(),
  };
  // Shift+1 is "!" on US layouts; accept the code too.
  const fn = e.shiftKey && e.code === 'Digit1' ? keys['!'] : e.shiftKey && e.code === 'Digit2' ? keys['@'] : keys[e.key];
  if (fn) { e.preventDefault(); fn(); }
}

// ---- start-up ---------------------------------------------------------------------------

function bind() {
  for (const id of ['a', 'b']) {
    $(`client-${id}-get`).addEventListener('click', () => clientGet(id));
    $(`client-${id}-put`).addEventListener('click', () => clientPut(id));
  }
  $('client-controller-get').addEventListener('click', () => clientGet('controller'));
  $('client-controller-put').addEventListener('click', () => controllerUpdate());
  $('reflector-start').addEventListener('click', reflectorToggle);
  $('reflector-disconnect').addEventListener('click', reflectorDisconnect);
  $('reflector-resume').addEventListener('click', reflectorResume);
  $('watch-start').addEventListener('click', () => startWatch());
  $('compact').addEventListener('click', () => compact());
  $('time-travel').addEventListener('input', (e) => travel(e.target.value));
  $('time-travel-head').addEventListener('click', backToHead);
  $('editor-format-yaml').addEventListener('click', () => setFormat('yaml'));
  $('editor-format-json').addEventListener('click', () => setFormat('json'));
  $('editor-load').addEventListener('click', editorLoad);
  $('editor-apply').addEventListener('click', () => editorApply());
  $('console-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $('console-input');
    const line = input.value;
    input.value = '';
    if (line.trim()) runCommand(line);
  });
  $('export').addEventListener('click', exportFile);
  $('import').addEventListener('click', () => $('import-file').click());
  $('import-file').addEventListener('change', (e) => { if (e.target.files[0]) importFile(e.target.files[0]); e.target.value = ''; });
  $('share').addEventListener('click', share);
  $('reset').addEventListener('click', async () => { await resetLab(); history.replace([]); notice('reset: a fresh store at revision 1'); });
  $('help').addEventListener('click', () => toggleHelp());
  $('help-close').addEventListener('click', () => toggleHelp(false));
  $('zoom').addEventListener('click', (e) => {
    const on = document.documentElement.classList.toggle('projector');
    e.target.setAttribute('aria-pressed', String(on));
    localStorage.setItem('rvplay.projector', on ? '1' : '');
  });
  if (localStorage.getItem('rvplay.projector')) { document.documentElement.classList.add('projector'); $('zoom').setAttribute('aria-pressed', 'true'); }
  document.addEventListener('keydown', onKey);
  if (cfg.mode === 'server') $('reset').hidden = true;
}

async function start() {
  bind();
  for (const c of Object.values(clients)) showCopy(c);
  showReflector();
  try {
    if (cfg.mode === 'server') {
      state.transport = httpTransport(cfg.apiBase);
    } else {
      state.transport = wasmTransport(await loadEngine(cfg.static));
    }
  } catch (e) {
    setConn('error', `engine failed: ${e.message}`);
    notice(e.message, 'error');
    return;
  }
  state.etcd = new Etcd(state.transport);
  con = new Console({
    transport: state.transport, etcd: state.etcd, print, toYAML: kubectlYAML, withoutManagedFields,
    clear: () => consoleOut.replaceChildren(), editorObject, apply: applyObject, afterWrite: scheduleRefresh,
  });
  await bootSession();
  performance.mark('kube-booted');
  setConn('ready', cfg.mode === 'server' ? `live · session ${cfg.session}` : 'ready · engine in this page');
  seeRevision(1);
  renderRevision();
  watchKeyspace(1);
  await refreshKeys();
  performance.mark('keys-loaded');
  root.dataset.ready = 'true';
  root.dataset.readyMs = String(Math.round(performance.now()));

  await editorLoad();
  // Restore: a share link wins over the saved lab.
  const m = location.hash.match(/^#h=(.+)$/);
  if (m) {
    try {
      const ops = await decodeShare(m[1]);
      await importOps(ops, 'share link');
      history.replaceState(location.pathname + location.search, ops);
    } catch (e) {
      notice(`share link: ${e.message}`, 'error');
    }
  } else if (cfg.mode !== 'server') {
    const ops = history.load();
    if (ops.length) {
      notice(`restoring the lab: replaying ${ops.length} operations…`);
      await replay(ops);
      notice(`restored the lab (${ops.length} operations, store revision ${state.rev})`);
      root.dataset.replayed = String(ops.length);
    }
  }
}

start();
