// The watch panel: one box per watch stream (the learner's, the
// reflector's), its events as rows batched per frame, its state in words.
// A stream that ended loses its Stop button; Remove takes the box away.

import { $, el, keyPath, REQUEST_BREAKS, RowList } from './dom.js';
import { t, onLanguageChange } from './i18n.js';
import { said } from './notice.js';
import { collectionPath, parseStatus } from './kube.js';

// describeEvent renders a Kubernetes watch event as a row: type, name, RV.
export function describeEvent(ev) {
  const o = ev.object || {};
  const md = o.metadata || {};
  if (ev.type === 'BOOKMARK') {
    const end = md.annotations?.['k8s.io/initial-events-end'] ? ' (initial-events-end)' : '';
    return { text: `rv=${md.resourceVersion}${end}`, rv: md.resourceVersion };
  }
  if (ev.type === 'ERROR') return { text: `${o.code} ${o.reason || ''}: ${o.message || ''}`, rv: '', detail: JSON.stringify(o) };
  return { text: `${md.name} rv=${md.resourceVersion}`, rv: md.resourceVersion };
}

// endText says in words why a stream ended (transport.js's reasons).
export function endText(e) {
  const known = { eof: 'stream.ended.eof', canceled: 'stream.ended.canceled', 'connection lost': 'stream.ended.lost', closed: 'stream.ended.closed' };
  if (known[e.reason] && !(e.code && e.code !== 1000 && e.code !== 1006)) return t(known[e.reason]);
  if (e.code && e.code !== 1000) return t('stream.ended.code', { reason: e.reason, code: e.code });
  return t('stream.ended.reason', { reason: e.reason });
}

export function mountWatches(lab) {
  const { frame } = lab;
  let seq = 0;

  // The streams shown: their headers, and the lab's words in their rows (a
  // reflector's "list the objects"), are said again in the language the
  // reader picks, as the console's notes are; an event's name and
  // resourceVersion, and what a server said, stay as they came.
  const shown = new Set();
  const says = new WeakMap(); // a row's words -> their say()
  onLanguageChange(() => { for (const h of shown) h.say(); });

  // open shows one watch stream and returns a handle whose add(type, text)
  // appends event rows and setState(state, text) updates its header: text
  // is a text, or a function that says it (said) in the current language.
  // So is title; data-stream keeps the one it had when opened (tests and
  // the lab's own look-ups name a stream by it).
  function open(title, path, query, { stoppable = true } = {}) {
    const id = ++seq;
    const sayTitle = typeof title === 'function' ? title : () => title;
    const titleEl = el('b', { text: sayTitle() });
    const list = el('ol', { class: 'events', 'data-testid': 'stream-events' });
    const stateEl = el('span', { class: 'stream-state', 'data-testid': 'stream-state' });
    const stop = el('button', { 'data-testid': 'stream-stop' });
    const qs = new URLSearchParams(Object.entries(query || {}).filter(([, v]) => v !== undefined && v !== '')).toString();
    // The request whole, on a line of its own that breaks only between
    // its parts: where a watch starts (its resourceVersion) is what
    // lessons 5 to 8 are about, and an ellipsis cut it off.
    const url = path + (qs ? '?' + qs : '');
    const box = el('article', { class: 'stream', 'data-testid': 'stream', 'data-stream': sayTitle(), 'data-state': 'connecting' },
      el('header', {}, titleEl, ' ', stateEl, stoppable ? stop : null, ' ', el('code', { class: 'muted' }, keyPath(url, REQUEST_BREAKS))),
      el('div', { class: 'scroll' }, list));
    frame.schedule('stream-open-' + id, () => { $('streams').prepend(box); });
    const rows = new RowList(list, frame, 300);
    // count is every event shown; changes only the objects' ADDED,
    // MODIFIED and DELETED, which periodic bookmarks do not move.
    let count = 0;
    let changes = 0;
    let cancel = null;
    let stateText = said('stream.connecting');
    const sayHeader = () => {
      stateEl.textContent = typeof stateText === 'function' ? stateText() : stateText;
      const word = t(box.dataset.state === 'ended' ? 'watches.remove' : 'watches.stop');
      stop.textContent = word;
      titleEl.textContent = sayTitle();
      stop.setAttribute('aria-label', `${word} ${titleEl.textContent}`);
    };
    sayHeader();
    const handle = {
      box,
      removed: false,
      onStop(fn) { cancel = fn; },
      say: () => {
        frame.schedule(`stream-state-${id}`, sayHeader);
        frame.schedule(`stream-rows-${id}`, () => {
          for (const words of list.querySelectorAll('[data-said]')) words.textContent = says.get(words)();
        });
      },
      setState(s, text = s, via = '') {
        stateText = text;
        frame.schedule(`stream-state-${id}`, () => {
          box.dataset.state = s;
          if (via) box.dataset.via = via;
          if (s === 'ended') stop.dataset.testid = 'stream-remove';
          sayHeader();
        });
      },
      // text: a text, or a function that says it (the lab's words).
      add(type, text, extra = {}) {
        count++;
        if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') changes++;
        const say = typeof text === 'function' ? text : null;
        const words = el('span', { text: say ? say() : text, 'data-said': !!say });
        if (say) says.set(words, say);
        rows.push(el('li', { 'data-testid': 'watch-event', 'data-type': type, 'data-rv': extra.rv, class: 'ev-' + type.toLowerCase() },
          el('span', { class: 'etype', text: type }), ' ', words,
          extra.detail ? el('pre', { class: 'body', text: extra.detail }) : null));
        frame.schedule(`stream-count-${id}`, () => { box.dataset.count = String(count); box.dataset.changes = String(changes); });
      },
    };
    stop.addEventListener('click', () => {
      if (box.dataset.state === 'ended') { box.remove(); handle.removed = true; shown.delete(handle); } else cancel?.();
    });
    shown.add(handle);
    return handle;
  }

  // follow runs a Kubernetes watch into stream s (its state, a row per
  // event) and answers its cancel function; the stream's Stop ends it.
  // onOpen, onEvent(event, row) and onEnd let a client follow along;
  // userAgent names the client to the session.
  function follow(s, path, query, { userAgent, onOpen, onEvent, onEnd } = {}) {
    const cancel = lab.transport.watch(path, query, (e) => {
      if (e.type === 'open') {
        onOpen?.(e);
        if (e.status === 200) s.setState('open', said('stream.open'), e.via);
        else {
          const st = parseStatus(e.body);
          s.add('ERROR', `${e.status} ${st?.reason || ''}: ${st?.message || e.body}`, { detail: e.body });
        }
      } else if (e.type === 'frame') {
        let ev;
        try { ev = JSON.parse(e.data); } catch { return; }
        const d = describeEvent(ev);
        lab.revisions.see(d.rv);
        onEvent?.(ev, d);
        s.add(ev.type, d.text, d);
      } else {
        s.setState('ended', () => endText(e));
        onEnd?.(e);
      }
    }, userAgent ? { userAgent } : {});
    s.onStop(cancel);
    return cancel;
  }

  // start watches the subject's kind, as `kubectl get <kind> --watch` does.
  function start(rv = $('watch-rv').value.trim(), bookmarks = $('watch-bookmarks').checked) {
    lab.record({ op: 'watch', rv, bookmarks, kind: lab.clients.subject.kind });
    const r = lab.clients.subject.resource;
    const path = collectionPath(r, lab.clients.subject.namespace);
    const query = { watch: 'true', resourceVersion: rv || undefined, allowWatchBookmarks: bookmarks ? 'true' : undefined };
    const s = open(`watch ${r.resource}`, path, query);
    follow(s, path, query);
    return s;
  }

  function reset() {
    $('streams').replaceChildren();
    for (const h of shown) h.removed = true;
    shown.clear();
  }

  $('watch-start').addEventListener('click', lab.guard(() => start()));
  return { open, follow, start, reset };
}
