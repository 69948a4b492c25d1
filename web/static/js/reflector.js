// The reflector card: client-go's reflector and its informer store, the Go
// code of engine/client in the WebAssembly engine (client "I", as the
// lessons name the informer). It LISTs,
// WATCHes from the list's resourceVersion with bookmarks, resumes a watch
// the server ended from the last resourceVersion after a back-off that
// grows (800 ms doubling to 30 s), and relists after a 410. Every step it
// reports shows: in its card (state, resourceVersion, relists, the store)
// and as rows of its stream in the watch panel. A lesson's other clients
// may run a reflector too ("W", with watch-list): theirs show as a stream.

import { $, el } from './dom.js';
import { t, onLanguageChange } from './i18n.js';
import { collectionPath, lookupResource } from './kube.js';
import { said } from './notice.js';

const INFORMER = 'r';

// rowOf turns a reflector step into a row of its stream (or null).
export function rowOf(s) {
  switch (s.kind) {
    case 'list': return { type: 'LIST', text: t('reflector.ev.listing') };
    case 'listed': return { type: 'LIST', text: t('reflector.ev.list', { rv: s.rv, n: s.items ?? 0 }), rv: s.rv };
    case 'watch': return { type: 'WATCH', text: t('reflector.ev.watch', { rv: s.rv }), rv: s.rv };
    case 'event': return { type: s.type, text: `${s.key?.split('/').pop() || ''} rv=${s.rv}${s.initial ? ' (initial)' : ''}`, rv: s.rv };
    // A delete only the relist could infer: the handlers get client-go's
    // tombstone, whose object is the last state the informer knew (its
    // rv is that old one, not the reflector's).
    case 'deleted-final-state-unknown': return { type: 'DeletedFinalStateUnknown', text: t('reflector.ev.tombstone', { key: s.key, rv: s.rv }) };
    case 'bookmark': return { type: 'BOOKMARK', text: `rv=${s.rv}`, rv: s.rv };
    case 'initial-events-end': return { type: 'BOOKMARK', text: `rv=${s.rv} (initial-events-end)`, rv: s.rv };
    case 'watch-closed': return { type: 'CLOSED', text: t('reflector.ev.closed', { reason: s.error || t('stream.ended.eof'), rv: s.rv }) };
    case 'expired': return { type: 'ERROR', text: `410 ${s.reason || 'Expired'}: ${s.message || s.error || ''}`, rv: s.rv };
    case 'too-large': return { type: 'RELIST', text: t('reflector.ev.toolarge', { rv: s.rv }) };
    case 'fallback': return { type: 'LIST', text: t('reflector.ev.fallback') };
    case 'backoff': return { type: 'BACKOFF', text: t('reflector.ev.backoff', { ms: Math.round(s.waitMs || 0) }) };
    case 'disconnected': return { type: 'CLOSED', text: t('reflector.ev.disconnected', { rv: s.rv }) };
    case 'resumed': return { type: 'WATCH', text: t('reflector.ev.resumed', { rv: s.rv }), rv: s.rv };
    case 'error': return { type: 'ERROR', text: s.message || s.error || '' };
    default: return null;
  }
}

// sayRow says a step's row in the language of the moment: a stream and
// the card's log say the lab's words again when the reader picks another.
const sayRow = (s) => () => rowOf(s).text;

// stateAfter is the card's state once a step happened.
export function stateAfter(state, s) {
  switch (s.kind) {
    case 'list': return 'listing';
    case 'watch': case 'resumed': return 'watching';
    case 'backoff': return 'backoff';
    case 'disconnected': return 'disconnected';
    default: return state;
  }
}

export async function mountReflector(lab) {
  const { frame } = lab;
  const r = { state: 'stopped', rv: '', relists: 0, cache: new Map(), inf: null, resource: '', namespace: '', stream: null, storeTimer: null };
  const card = await lab.clients.clientFor('I'); // its exchanges go to the card's log
  const client = card.client;
  client.onStep(onStep);
  const others = new Map(); // a lesson client's label -> {inf, stream}
  const subscribed = new Set();

  function show() {
    frame.schedule('reflector', () => {
      const st = $('reflector-state');
      st.textContent = t('reflector.state.' + r.state);
      st.dataset.state = r.state;
      $('client-reflector').dataset.state = r.state;
      $('reflector-rv').textContent = r.rv || '–';
      $('reflector-relists').textContent = String(r.relists);
      $('reflector-start').textContent = t(r.state === 'stopped' ? 'reflector.start' : 'reflector.stop');
      $('reflector-disconnect').disabled = !['watching', 'backoff', 'listing'].includes(r.state);
      $('reflector-resume').disabled = r.state !== 'disconnected';
      $('reflector-cache').replaceChildren(...[...r.cache.entries()].sort().map(([name, rv]) =>
        el('li', { 'data-testid': 'reflector-item', 'data-name': name }, el('span', { text: name }), ' ', el('span', { class: 'muted', text: `rv=${rv}` }))));
    });
  }

  function stream() {
    if (r.stream && !r.stream.removed) return r.stream;
    const path = collectionPath(lab.clients.subject.resource, lab.clients.subject.namespace);
    r.stream = lab.watches.open('reflector', path, { watch: 'true', allowWatchBookmarks: 'true' });
    r.stream.onStop(() => stop());
    r.stream.setState('open', said('stream.open'), lab.cfg.mode === 'server' ? 'websocket' : 'engine');
    return r.stream;
  }

  // The store changes with events; read it once they settle.
  function refreshStore() {
    clearTimeout(r.storeTimer);
    r.storeTimer = setTimeout(async () => {
      if (!r.inf) return;
      const st = await r.inf.store().catch(() => null);
      if (!st) return;
      r.cache = new Map(st.objects.map((o) => [o.metadata?.name, o.metadata?.resourceVersion]));
      if (st.resourceVersion) r.rv = st.resourceVersion;
      show();
    }, 50);
  }

  // settled waits until the reflector is past its list (watching, or
  // backing off after a failure, or stopped): a lesson's next action
  // (I's disconnect) must find the watch open, which on a loaded server
  // can come after A's next writes otherwise.
  const settledWaiters = new Set();
  const settled = () => (r.state === 'listing' ? new Promise((resolve) => settledWaiters.add(resolve)) : Promise.resolve());
  function notifySettled() {
    if (r.state === 'listing') return;
    for (const resolve of settledWaiters) resolve();
    settledWaiters.clear();
  }

  function onStep(s) {
    if (!s.informer) return;
    r.state = stateAfter(r.state, s);
    notifySettled();
    if (s.rv && !['expired', 'too-large', 'deleted-final-state-unknown'].includes(s.kind)) { r.rv = s.rv; lab.revisions.see(s.rv); }
    const row = rowOf(s);
    if (row) stream().add(row.type, sayRow(s), { rv: row.rv });
    // The card's log tells the reflector's own steps (its events and
    // bookmarks are in its stream): list, watch, 410, relist, backoff.
    if (row && !['event', 'bookmark', 'initial-events-end', 'list', 'watch'].includes(s.kind)) card.log.note(() => `${row.type} ${sayRow(s)()}`, s.kind === 'deleted-final-state-unknown' ? 'tombstone' : '');
    if (s.kind === 'expired' || s.kind === 'too-large') {
      r.relists++;
      if (s.kind === 'expired') stream().add('RELIST', said('reflector.ev.relist', { why: '410 Gone' }));
    }
    if (['replace', 'event', 'listed', 'initial-events-end'].includes(s.kind)) refreshStore();
    show();
  }

  async function informer() {
    const { kind: resource, namespace } = lab.clients.subject;
    if (r.inf && r.resource === resource && r.namespace === namespace) return r.inf;
    if (r.inf) await r.inf.remove().catch(() => {});
    r.inf = await client.informer(INFORMER, { resource, namespace });
    r.resource = resource;
    r.namespace = namespace;
    return r.inf;
  }

  async function start(opts = {}) {
    const inf = await informer();
    if (opts.watchList !== undefined) await inf.configure({ watchList: !!opts.watchList });
    r.stream = null;
    stream();
    r.state = 'listing';
    show();
    await inf.start();
  }

  async function stop() {
    if (r.inf) await r.inf.stop();
    r.state = 'stopped';
    notifySettled();
    r.stream?.setState('ended', said('stream.ended.canceled'));
    show();
  }

  async function toggle() {
    if (r.state === 'stopped') {
      lab.record({ op: 'reflector', act: 'start' });
      await start();
    } else {
      lab.record({ op: 'reflector', act: 'stop' });
      await stop();
    }
  }

  // Disconnect drops the watch (as a network fault would) and keeps the
  // last resourceVersion; Resume re-watches from it, which is how a
  // compaction in between turns into 410 and a relist.
  async function disconnect() {
    lab.record({ op: 'reflector', act: 'disconnect' });
    if (r.inf) await r.inf.disconnect();
  }

  async function resume() {
    lab.record({ op: 'reflector', act: 'resume' });
    if (r.inf) await r.inf.resume();
  }

  // runAction runs a lesson's reflector actions: client I's on this card,
  // another client's (c, from clients.js) on an informer of its own.
  async function runAction(a, c) {
    if (a.client === 'I') {
      if (a.resource || a.namespace) await lab.clients.setSubject(a.resource, undefined, a.namespace);
      switch (a.do) {
        case 'startReflector': {
          const running = r.state !== 'stopped'; // a running informer's start changes nothing to wait for
          await start({ watchList: a.watchList });
          if (!running) await settled();
          return true;
        }
        case 'stopReflector': await stop(); return true;
        case 'disconnect': if (r.inf) await r.inf.disconnect(); return true;
        case 'reconnect': if (r.inf) await r.inf.resume(); return true;
        default: return false;
      }
    }
    let o = others.get(c.label);
    if (a.do === 'startReflector') {
      if (o) await o.inf.remove().catch(() => {});
      const inf = await c.client.informer('r', { resource: a.resource || 'configmaps', namespace: a.namespace, watchList: !!a.watchList });
      const path = collectionPath(lookupResource(a.resource || 'configmaps'), a.namespace || 'default');
      const stream = lab.watches.open(`${c.label}: reflector`, path, { watch: 'true', allowWatchBookmarks: 'true', sendInitialEvents: a.watchList ? 'true' : undefined });
      stream.setState('open', said('stream.open'));
      o = { inf, stream };
      others.set(c.label, o);
      if (!subscribed.has(c.label)) {
        subscribed.add(c.label);
        c.client.onStep((s) => {
          const cur = others.get(c.label);
          if (!s.informer || !cur) return;
          const row = rowOf(s);
          if (row) cur.stream.add(row.type, sayRow(s), { rv: row.rv });
          if (s.rv && s.kind !== 'deleted-final-state-unknown') lab.revisions.see(s.rv);
        });
      }
      stream.onStop(() => inf.stop());
      await inf.start();
      return true;
    }
    if (!o) return false;
    switch (a.do) {
      case 'stopReflector': await o.inf.stop(); o.stream.setState('ended', said('stream.ended.canceled')); return true;
      case 'disconnect': await o.inf.disconnect(); return true;
      case 'reconnect': await o.inf.resume(); return true;
      default: return false;
    }
  }

  // has says whether a lesson client runs a reflector (its disconnect and
  // reconnect are the reflector's).
  const has = (c) => c.label === 'I' || others.has(c.label);

  // key: the "r" shortcut does what the card's next button would.
  function key() {
    if (r.state === 'watching') return disconnect();
    if (r.state === 'disconnected') return resume();
    return toggle();
  }

  async function reset() {
    if (r.inf) await r.inf.remove().catch(() => {});
    for (const o of others.values()) await o.inf.remove().catch(() => {});
    others.clear();
    Object.assign(r, { state: 'stopped', rv: '', relists: 0, cache: new Map(), inf: null, resource: '', stream: null });
    show();
  }

  $('reflector-start').addEventListener('click', lab.guard(toggle));
  $('reflector-disconnect').addEventListener('click', lab.guard(disconnect));
  $('reflector-resume').addEventListener('click', lab.guard(resume));
  onLanguageChange(show);
  show();
  return {
    toggle, disconnect, resume, key, reset, show, runAction, has, state: () => r.state,
    act: (a) => ({ start: toggle, stop: toggle, disconnect, resume }[a] || (() => {}))(),
  };
}
