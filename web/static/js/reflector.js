// The reflector card: what client-go's reflector does. LIST (the list's
// resourceVersion), WATCH from there with bookmarks; a 410 (HTTP or an
// ERROR event) means list again. A watch the server or the network ended
// is re-opened from the last resourceVersion after a back-off that grows
// (client-go: 800 ms doubling to 30 s), not in a tight loop.

import { $, el } from './dom.js';
import { t } from './i18n.js';
import { collectionPath, parseStatus } from './kube.js';
import { Backoff } from './connection.js';
import { ExchangeLog } from './exchanges.js';
import { describeEvent, endText } from './watches.js';

const NS = 'default';

export function mountReflector(lab) {
  const { frame } = lab;
  const log = new ExchangeLog($('client-reflector-log'), frame);
  const r = { state: 'stopped', rv: '', cache: new Map(), relists: 0, cancel: null, stream: null, retry: null, gen: 0, backoff: new Backoff() };
  const resource = () => lab.clients.subject.resource;

  function show() {
    frame.schedule('reflector', () => {
      const st = $('reflector-state');
      st.textContent = t('reflector.state.' + r.state);
      st.dataset.state = r.state;
      $('client-reflector').dataset.state = r.state;
      $('reflector-rv').textContent = r.rv || '–';
      $('reflector-relists').textContent = String(r.relists);
      $('reflector-start').textContent = t(r.state === 'stopped' ? 'reflector.start' : 'reflector.stop');
      $('reflector-disconnect').disabled = r.state !== 'watching';
      $('reflector-resume').disabled = r.state !== 'disconnected';
      $('reflector-cache').replaceChildren(...[...r.cache.entries()].sort().map(([name, rv]) =>
        el('li', { 'data-testid': 'reflector-item', 'data-name': name }, el('span', { text: name }), ' ', el('span', { class: 'muted', text: `rv=${rv}` }))));
    });
  }

  async function list() {
    r.state = 'listing';
    show();
    const path = collectionPath(resource(), NS);
    let resp;
    try { resp = await lab.transport.request('GET', path); } catch (e) { resp = { status: 0, body: e.message }; }
    log.add({ method: 'GET', path, status: resp.status, respBody: resp.body });
    if (resp.status !== 200) { r.state = 'failed'; show(); return false; }
    const l = JSON.parse(resp.body);
    r.cache = new Map((l.items || []).map((o) => [o.metadata.name, o.metadata.resourceVersion]));
    r.rv = l.metadata.resourceVersion;
    lab.revisions.see(r.rv);
    show();
    return true;
  }

  function watch() {
    const gen = ++r.gen;
    const path = collectionPath(resource(), NS);
    const query = { watch: 'true', resourceVersion: r.rv, allowWatchBookmarks: 'true', timeoutSeconds: '3600' };
    log.add({ method: 'GET', path: `${path}?${new URLSearchParams(query)}`, status: 200, respBody: t('reflector.log.watch') });
    const s = r.stream && r.stream.box.isConnected ? r.stream : lab.watches.open('reflector', path, query);
    r.stream = s;
    s.add('WATCH', t('reflector.ev.watch', { rv: r.rv }), { rv: r.rv });
    r.state = 'watching';
    show();
    let relisting = false;
    const relist = async (why) => {
      if (relisting || gen !== r.gen) return;
      relisting = true;
      r.cancel?.();
      r.relists++;
      s.add('RELIST', t('reflector.ev.relist', { why }));
      if (await list()) { s.add('LIST', t('reflector.ev.list', { rv: r.rv, n: r.cache.size }), { rv: r.rv }); watch(); }
    };
    r.cancel = lab.transport.watch(path, query, (e) => {
      if (gen !== r.gen) return;
      if (e.type === 'open') {
        s.setState('open', t('stream.open'), e.via);
        if (e.status === 410) { s.add('ERROR', `410 (HTTP): ${parseStatus(e.body)?.message || ''}`, { detail: e.body }); relist('410 Gone'); } else if (e.status !== 200) s.add('ERROR', `${e.status}`, { detail: e.body });
        return;
      }
      if (e.type === 'frame') {
        let ev;
        try { ev = JSON.parse(e.data); } catch { return; }
        r.backoff.reset();
        const d = describeEvent(ev);
        s.add(ev.type, d.text, d);
        const md = ev.object?.metadata || {};
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') r.cache.set(md.name, md.resourceVersion);
        else if (ev.type === 'DELETED') r.cache.delete(md.name);
        if (ev.type === 'ERROR') {
          if (ev.object?.code === 410) relist('410 Expired');
          return;
        }
        if (md.resourceVersion) { r.rv = md.resourceVersion; lab.revisions.see(md.resourceVersion); }
        show();
        return;
      }
      // The stream ended.
      s.setState('ended', endText(e));
      if (relisting || r.state !== 'watching' || e.reason === 'canceled') return;
      const wait = r.backoff.next();
      s.add('CLOSED', t('reflector.ev.closed', { reason: `${e.reason}${e.code ? `, code ${e.code}` : ''}`, rv: r.rv, ms: wait }));
      r.state = 'backoff';
      show();
      clearTimeout(r.retry);
      r.retry = setTimeout(() => { if (r.state === 'backoff' && gen === r.gen) watch(); }, wait);
    });
  }

  async function toggle() {
    if (r.state === 'stopped') {
      lab.record({ op: 'reflector', act: 'start' });
      r.stream = null;
      r.backoff.reset();
      if (await list()) watch();
    } else {
      lab.record({ op: 'reflector', act: 'stop' });
      stop();
    }
  }

  function stop() {
    r.gen++;
    clearTimeout(r.retry);
    r.cancel?.();
    r.state = 'stopped';
    show();
  }

  // Disconnect drops the watch (as a network fault would) and keeps the
  // last resourceVersion; Resume re-watches from it, which is how a
  // compaction in between turns into 410 and a relist.
  function disconnect() {
    lab.record({ op: 'reflector', act: 'disconnect' });
    r.gen++;
    clearTimeout(r.retry);
    r.cancel?.();
    r.state = 'disconnected';
    r.stream?.add('CLOSED', t('reflector.ev.disconnected', { rv: r.rv }));
    show();
  }

  function resume() {
    lab.record({ op: 'reflector', act: 'resume' });
    if (r.state === 'disconnected') watch();
  }

  // key: the "r" shortcut does what the card's next button would.
  function key() {
    if (r.state === 'watching') disconnect();
    else if (r.state === 'disconnected') resume();
    else toggle();
  }

  function reset() {
    stop();
    Object.assign(r, { rv: '', cache: new Map(), relists: 0, cancel: null, stream: null });
    log.clear();
    show();
  }

  $('reflector-start').addEventListener('click', lab.guard(toggle));
  $('reflector-disconnect').addEventListener('click', lab.guard(disconnect));
  $('reflector-resume').addEventListener('click', lab.guard(resume));
  show();
  return { toggle, disconnect, resume, key, reset, show, state: () => r.state, act: (a) => ({ start: toggle, stop: toggle, disconnect, resume }[a] || (() => {}))() };
}
