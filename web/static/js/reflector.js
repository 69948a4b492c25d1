// The reflector card: client-go's reflector and its informer store, the Go
// code of engine/client in the WebAssembly engine (client "R"). It LISTs,
// WATCHes from the list's resourceVersion with bookmarks, resumes a watch
// the server ended from the last resourceVersion after a back-off that
// grows (800 ms doubling to 30 s), and relists after a 410. Every step it
// reports shows: in its card (state, resourceVersion, relists, the store)
// and as rows of its stream in the watch panel.

import { $, el } from './dom.js';
import { t } from './i18n.js';
import { collectionPath } from './kube.js';
import { ExchangeLog } from './exchanges.js';

const INFORMER = 'r';

// rowOf turns a reflector step into a row of its stream (or null).
export function rowOf(s) {
  switch (s.kind) {
    case 'list': return { type: 'LIST', text: t('reflector.ev.listing') };
    case 'listed': return { type: 'LIST', text: t('reflector.ev.list', { rv: s.rv, n: s.items ?? 0 }), rv: s.rv };
    case 'watch': return { type: 'WATCH', text: t('reflector.ev.watch', { rv: s.rv }), rv: s.rv };
    case 'event': return { type: s.type, text: `${s.key?.split('/').pop() || ''} rv=${s.rv}${s.initial ? ' (initial)' : ''}`, rv: s.rv };
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
  const log = new ExchangeLog($('client-reflector-log'), frame);
  const r = { state: 'stopped', rv: '', relists: 0, cache: new Map(), inf: null, resource: '', stream: null, storeTimer: null };
  const client = await lab.goclients.client('reflector', { label: 'R', onStep });

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
    const path = collectionPath(lab.clients.subject.resource, 'default');
    r.stream = lab.watches.open('reflector', path, { watch: 'true', allowWatchBookmarks: 'true' });
    r.stream.onStop(() => stop());
    r.stream.setState('open', t('stream.open'), lab.cfg.mode === 'server' ? 'websocket' : 'engine');
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

  function onStep(s) {
    if (s.kind === 'exchange') {
      log.add({ method: s.method, path: s.path + (s.query ? `?${s.query}` : ''), status: s.status, reqBody: s.requestBody || '', respBody: s.watch ? t('reflector.log.watch') : s.body || '' });
      if (s.status === 0) lab.connection?.failed(s.body || 'no answer');
      return;
    }
    if (!s.informer) return;
    r.state = stateAfter(r.state, s);
    if (s.rv && s.kind !== 'expired' && s.kind !== 'too-large') { r.rv = s.rv; lab.revisions.see(s.rv); }
    const row = rowOf(s);
    if (row) stream().add(row.type, row.text, { rv: row.rv });
    if (s.kind === 'expired' || s.kind === 'too-large') {
      r.relists++;
      if (s.kind === 'expired') stream().add('RELIST', t('reflector.ev.relist', { why: '410 Gone' }));
    }
    if (['replace', 'event', 'listed', 'initial-events-end'].includes(s.kind)) refreshStore();
    show();
  }

  async function informer() {
    const resource = lab.clients.subject.kind;
    if (r.inf && r.resource === resource) return r.inf;
    if (r.inf) await r.inf.remove().catch(() => {});
    r.inf = await client.informer(INFORMER, { resource });
    r.resource = resource;
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
    r.stream?.setState('ended', t('stream.ended.canceled'));
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

  // runAction: a lesson's reflector actions run on this card when they are
  // client R's, or any client's start/stopReflector.
  async function runAction(a) {
    if (a.client !== 'R' && !['startReflector', 'stopReflector'].includes(a.do)) return false;
    if (a.resource) await lab.clients.setSubject(a.resource, undefined);
    switch (a.do) {
      case 'startReflector': await start({ watchList: a.watchList }); return true;
      case 'stopReflector': await stop(); return true;
      case 'disconnect': if (r.inf) await r.inf.disconnect(); return true;
      case 'reconnect': if (r.inf) await r.inf.resume(); return true;
      default: return false;
    }
  }

  // key: the "r" shortcut does what the card's next button would.
  function key() {
    if (r.state === 'watching') return disconnect();
    if (r.state === 'disconnected') return resume();
    return toggle();
  }

  async function reset() {
    if (r.inf) await r.inf.remove().catch(() => {});
    Object.assign(r, { state: 'stopped', rv: '', relists: 0, cache: new Map(), inf: null, resource: '', stream: null });
    log.clear();
    show();
  }

  $('reflector-start').addEventListener('click', lab.guard(toggle));
  $('reflector-disconnect').addEventListener('click', lab.guard(disconnect));
  $('reflector-resume').addEventListener('click', lab.guard(resume));
  show();
  return {
    toggle, disconnect, resume, key, reset, show, runAction, state: () => r.state,
    act: (a) => ({ start: toggle, stop: toggle, disconnect, resume }[a] || (() => {}))(),
  };
}
