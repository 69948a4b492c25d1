// The lab's entry point: it reads the page's configuration, picks the
// language, connects to the session (the engine in this page, or a server
// session over fetch and WebSocket), mounts one module per panel and wires
// them through one small context object, `lab`. Every change to the page
// goes through a Frame (one DOM update per animation frame) and every
// piece of object content is inserted as text.

import { loadEngine, wasmTransport, httpTransport } from './transport.js';
import { Clients } from './goclients.js';
import { Etcd, b64 } from './etcd.js';
import { pausedOp, COMPACT_REV_KEY } from './ticks.js';
import { History } from './history.js';
import { $, Frame } from './dom.js';
import { setLanguage, chosenLanguage } from './i18n.js';
import { createNotice, errorText, said } from './notice.js';
import { Revisions } from './revisions.js';
import { Connection } from './connection.js';
import { mountHeader } from './header.js';
import { mountClients } from './clients.js';
import { mountReflector } from './reflector.js';
import { mountWatches } from './watches.js';
import { mountEtcd } from './etcdview.js';
import { mountTimeline } from './timeline.js';
import { mountEditor } from './editor.js';
import { mountConsole } from './consolepanel.js';
import { mountSettings, zero } from './settings.js';
import { mountLabFile } from './labfile.js';
import { mountKeys } from './keys.js';
import { mountLessons } from './lessons.js';
import { mountChannel } from './channel.js';

const cfg = JSON.parse($('lab-config').textContent);
const frame = new Frame();
const { show: notice, guard } = createNotice(frame);
const server = cfg.mode === 'server';

let markReady;
const lab = {
  cfg, frame, notice, guard,
  // ready resolves when every panel is mounted and the session booted.
  ready: new Promise((resolve) => { markReady = resolve; }),
  revisions: new Revisions(),
  history: new History(server ? `rvplay.lab.session.${cfg.session}` : 'rvplay.lab.offline'),
  replaying: false,
  transport: null, etcd: null, connection: null,
  // record adds a learner's operation to the lab's history (not while
  // the history itself is being replayed); the lesson step checks it.
  record(op) {
    if (lab.replaying) return;
    lab.history.add(op);
    lab.lessons?.verifySoon();
  },
  // settled resolves when the console has run what was queued.
  settled() { return lab.console?.idle(); },
  // cardFor finds where a lesson's client shows: its card (A, B, the
  // controller, the informer I), else its stream in the watch panel.
  cardFor(name) { return $({ A: 'client-a', B: 'client-b', controller: 'client-controller', I: 'client-reflector' }[name] || 'watches-panel'); },
  // afterWrite: the store changed; the etcd view re-reads it.
  afterWrite() { lab.etcd_view?.refresh(); },
};

// Replaying a history runs each operation as the learner did.
const watchCommand = (line) => /\s(-w|--watch)\b/.test(line) || /^\s*etcdctl\s+watch/.test(line);
const actions = {
  get: (o) => withSubject(o, () => lab.clients.get(o.c)),
  put: (o) => withSubject(o, () => lab.clients.put(o.c, o.v, o.rv ?? true)),
  update: (o) => withSubject(o, () => lab.clients.update(o.v)),
  subject: async (o) => { await lab.clients.setSubject(o.kind, o.name); await lab.clients.ensureSubject(); },
  watch: (o) => withSubject(o, () => lab.watches.start(o.rv, o.bookmarks)),
  reflector: (o) => lab.reflector.act(o.act),
  compact: (o) => lab.etcd_view.compact(o.rev),
  apply: (o) => lab.editor.applyText(o.text, o.fmt),
  cmd: (o) => (watchCommand(o.line) ? undefined : lab.console.run(o.line)),
  settings: (o) => lab.settings.save(o.set),
  lesson: (o) => lab.transport.request('POST', `/rvplay/v1/lessons/${o.slug}/setup`),
  'lesson-action': (o) => lab.clients.runAction(o.action),
  // An automatic compaction's tick: its write of compact_rev_key, then its
  // compaction to the previous tick's revision (the value it wrote).
  tick: async (o) => {
    await lab.etcd.call('/v3/kv/put', { key: b64(COMPACT_REV_KEY), value: b64(o.v) });
    const rev = Number(o.v);
    if (rev > 0) await lab.etcd.compact(rev).then(() => lab.revisions.seeCompaction(rev), () => {});
  },
};

async function withSubject(o, fn) {
  await lab.clients.setSubject(o.kind || 'configmaps', o.name);
  return fn();
}

// The compaction timer stays off while a history replays: its recorded
// ticks replay in its place, and it starts again at the end with the
// interval the history left (a settings change, or a lesson's set-up).
const SETTINGS = '/rvplay/v1/settings';
const setCompaction = (v) => lab.transport.request('PUT', SETTINGS, { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ compactionInterval: v }) });

// pauseCompaction turns the timer off and answers the interval it had.
async function pauseCompaction() {
  const r = await lab.transport.request('GET', SETTINGS);
  if (r.status !== 200) return undefined;
  const { compactionInterval } = JSON.parse(r.body);
  if (compactionInterval && !zero(compactionInterval)) await setCompaction('0s');
  return compactionInterval;
}

lab.replay = async (ops) => {
  lab.replaying = true;
  let interval = await pauseCompaction();
  try {
    for (const op of ops) {
      const paused = pausedOp(op);
      interval = paused.interval ?? interval;
      const fn = actions[op.op];
      if (fn) await fn(paused.run);
      if (op.op === 'lesson') interval = (await pauseCompaction()) ?? interval;
    }
  } finally {
    if (interval && !zero(interval)) await setCompaction(interval);
    lab.replaying = false;
    lab.settings.load().catch(() => {});
  }
};

// bootSession makes the first Kubernetes request, which creates the
// system namespaces (revisions 2 to 5), so that a replayed history always
// starts from the same revision whatever its first operation is.
async function bootSession() {
  const r = await lab.transport.request('GET', '/api/v1/namespaces/default');
  if (r.status >= 500) notice(said('notice.error', { message: `the Kubernetes API answered ${r.status}` }), 'error');
}

// resetLab starts over: offline a fresh store in the page; on a server
// session the session's own reset (the server decides who may).
lab.resetLab = async () => {
  await lab.reflector.reset();
  lab.console.stopWatches();
  lab.watches.reset();
  lab.clients.reset();
  lab.etcd_view.reset();
  if (lab.transport.reset) {
    await lab.transport.reset();
  } else {
    const r = await lab.transport.request('POST', '/rvplay/v1/reset');
    if (r.status >= 300) {
      let message = `${r.status}`;
      try { message = JSON.parse(r.body).message || message; } catch { /* not JSON */ }
      throw new Error(message);
    }
  }
  lab.revisions.reset();
  await bootSession();
  await lab.etcd_view.readKeys();
  lab.etcd_view.startWatching();
};

// connect starts the engine (in both modes: on a server session it runs
// the lab's Go clients, which talk to the server) and answers the
// transport the panels use.
async function connect() {
  if (server) {
    lab.connection = new Connection({ probe: async () => (await fetch(cfg.health || cfg.home, { cache: 'no-store' })).ok });
    const http = httpTransport(cfg.apiBase, lab.connection);
    lab.engine = await loadEngine(cfg.static);
    lab.goclients = new Clients(lab.engine, { base: cfg.apiBase });
    return http;
  }
  lab.connection = new Connection();
  lab.engine = await loadEngine(cfg.static);
  lab.goclients = new Clients(lab.engine);
  lab.connection.set('ready');
  return wasmTransport(lab.engine);
}

async function start() {
  const codes = (cfg.languages || []).map((l) => l.code);
  try {
    await setLanguage(chosenLanguage(codes.length ? codes : ['en']), { base: cfg.static });
  } catch (e) {
    console.error(e);
  }
  lab.connection = new Connection();
  lab.labfile = mountLabFile(lab);
  if (lab.labfile.redirectShared()) return;
  // The lessons' definitions and texts load while the engine does.
  lab.lessons = mountLessons(lab);
  window.addEventListener('unhandledrejection', (e) => notice(errorText(e.reason), 'error'));

  let header = null;
  try {
    const pending = connect();
    header = mountHeader(lab);
    lab.header = header;
    lab.transport = await pending;
    // The header listens to the connection the transport reports to.
    header.showConnection();
  } catch (e) {
    lab.connection.set('error', e.message);
    notice(e.message, 'error');
    return;
  }
  lab.etcd = new Etcd(lab.transport);
  lab.watches = mountWatches(lab);
  lab.clients = await mountClients(lab);
  lab.reflector = await mountReflector(lab);
  lab.etcd_view = mountEtcd(lab);
  lab.timeline = mountTimeline(lab);
  lab.editor = mountEditor(lab);
  lab.console = mountConsole(lab);
  lab.settings = mountSettings(lab);
  mountKeys(lab);
  $('reset').addEventListener('click', guard(async () => {
    await lab.restored; // a restore still replaying would write into the fresh store
    await lab.resetLab();
    lab.history.replace([]);
    notice(said('notice.reset', { rev: lab.revisions.head }));
  }));

  try {
    await bootSession();
    performance.mark('kube-booted');
    if (server) lab.connection.ok();
    await lab.etcd_view.readKeys();
  } catch (e) {
    notice(errorText(e), 'error');
  }
  lab.etcd_view.startWatching();
  lab.settings.load().catch(() => {});
  performance.mark('keys-loaded');
  $('lab').dataset.ready = 'true';
  performance.mark('lab-interactive');
  markReady();
  if (server) lab.channel = mountChannel(lab);
  $('lab').dataset.readyMs = String(Math.round(performance.now()));

  // The lesson panel opens at once; restoring the saved lab (replaying its
  // history) runs beside it, and a lesson's set-up waits for it.
  lab.restored = (async () => {
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0))); // the lesson panel first
    await lab.editor.load().catch(() => {});
    await lab.labfile.restore();
  })();
  await lab.lessons.load().catch((e) => notice(errorText(e), 'error'));
  performance.mark('lessons-loaded');
  $('lab').dataset.lessonsReady = 'true';
  await lab.restored;
}

start();
