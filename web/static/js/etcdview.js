// The etcd panel: every key with its create and mod revision and version
// (at the head, or at the revision the learner travelled to), the history
// of the selected key, and compaction.
//
// Where the lab learns about revisions:
// - a keyspace watch feeds the timeline. Offline it starts at revision 1;
//   on a server session, which may be busy and long, it starts at most
//   TIMELINE_BACK revisions back, never at revision 1.
// - the selected key's history comes from a watch on that one key from
//   the oldest revision still readable, open while the key is selected.
// - compaction is not an event in etcd's API: a read at the known
//   compaction revision fails once someone compacted further, and a binary
//   search finds where. On a server session that probe runs every few
//   seconds, so another browser's compaction shows without a write here.

import { $, el, keyPath } from './dom.js';
import { t, onLanguageChange } from './i18n.js';
import { said } from './notice.js';
import { GatewayError } from './etcd.js';
import { tickOp } from './ticks.js';

export const TIMELINE_BACK = 120;
const PROBE_MS = 3000;

const isCompacted = (e) => e instanceof GatewayError && /compacted/.test(e.message);

// findCompaction binary-searches the compaction revision in (known, head]:
// readable(r) is true when a read at r answers. etcd keeps the compaction
// revision itself readable, so the answer is the lowest readable revision.
export async function findCompaction(readable, known, head) {
  let lo = Math.max(1, known); // unreadable or the known floor
  let hi = head; // always readable
  if (await readable(lo)) return known;
  while (lo + 1 < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await readable(mid)) hi = mid; else lo = mid;
  }
  return hi;
}

export function mountEtcd(lab) {
  const { frame, revisions: revs } = lab;
  let keys = new Map(); // key -> kv at head
  let shownKvs = [];
  let selected = '';
  let history = []; // [{rev, type, kv}] of the selected key
  let historyCancel = null;
  let keyspaceCancel = null;
  let probeTimer = null;

  // ---- the key table -------------------------------------------------------

  let refreshQueued = false;
  let refreshRunning = null;
  let lastRefresh = 0;
  // refresh re-reads the keyspace after writes, at most every 300 ms while
  // events stream in (one read in flight), so a burst costs a few reads.
  function refresh() {
    if (refreshQueued) return;
    refreshQueued = true;
    const wait = Math.max(0, lastRefresh + 300 - performance.now());
    setTimeout(async () => {
      await refreshRunning;
      refreshQueued = false;
      lastRefresh = performance.now();
      refreshRunning = readKeys().catch((e) => lab.notice(said('notice.error', { message: `etcd: ${e.message}` }), 'error'));
    }, wait);
  }

  async function readKeys() {
    const at = revs.travel;
    let res;
    try {
      res = await lab.etcd.range('', { all: true, rev: at || 0 });
    } catch (e) {
      if (isCompacted(e)) { await learnCompaction(); revs.travelTo(0); return; }
      throw e;
    }
    revs.see(res.header.revision);
    if (!at) keys = new Map(res.kvs.map((kv) => [kv.key, kv]));
    shownKvs = at ? res.kvs : [...keys.values()];
    frame.schedule('keys', renderKeys);
  }

  function renderKeys() {
    const tbody = $('etcd-keys').querySelector('tbody');
    tbody.replaceChildren(...shownKvs.map((kv) => el('tr', {
      'data-testid': 'etcd-key', 'data-key': kv.key, tabindex: 0, class: kv.key === selected ? 'selected' : '',
    }, el('td', { class: 'key' }, keyPath(kv.key)), el('td', { text: kv.createRevision }), el('td', { 'data-testid': 'etcd-key-mod', text: kv.modRevision }), el('td', { text: kv.version }))));
    $('etcd-viewing').textContent = revs.travel ? t('etcd.viewing', { rev: revs.travel }) : '';
    $('lab').dataset.travel = revs.travel ? String(revs.travel) : '';
  }

  function renderRevision() {
    $('etcd-revision').textContent = String(revs.shown() || '–');
    const cr = $('compact-rev');
    if (document.activeElement !== cr) cr.placeholder = String(revs.head);
  }

  // ---- the selected key's history -----------------------------------------

  function select(key) {
    if (key === selected) return;
    selected = key;
    history = [];
    historyCancel?.();
    historyCancel = null;
    frame.schedule('history', renderHistory);
    frame.schedule('keys-sel', () => {
      for (const tr of $('etcd-keys').querySelectorAll('tr[data-key]')) tr.classList.toggle('selected', tr.dataset.key === key);
    });
    if (key) watchHistory(key, revs.lowest());
  }

  function watchHistory(key, from) {
    historyCancel = lab.etcd.watch(key, { rev: from }, (res) => {
      if (key !== selected) return;
      if (res.canceled) {
        if (res.compactRevision) { revs.seeCompaction(res.compactRevision); historyCancel?.(); watchHistory(key, res.compactRevision); }
        return;
      }
      for (const ev of res.events) {
        if (!history.some((h) => h.rev === ev.kv.modRevision)) history.push({ rev: ev.kv.modRevision, type: ev.type, kv: ev.kv });
      }
      if (res.events.length) frame.schedule('history', renderHistory);
    }, () => {});
  }

  // shownValue is a value as the history shows it: an object a real
  // kube-apiserver stored in protobuf (the k8s\0 envelope) decoded by the
  // engine into the JSON it would have been, under a line that says so;
  // any other value as text. Both are cut at 400 characters.
  function shownValue(kv) {
    const cut = (s) => (s.length > 400 ? s.slice(0, 400) + '…' : s);
    const d = lab.engine?.decodeStored?.(kv.valueB64);
    if (d?.json) return `${t('etcd.hist.protobuf')}\n${cut(d.json)}`;
    if (d?.error) return `${t('etcd.hist.protobuf.error', { error: d.error })}\n${cut(kv.value)}`;
    return cut(kv.value);
  }

  function renderHistory() {
    $('history-key').textContent = selected || t('etcd.select');
    const items = [];
    const shown = revs.shown();
    for (const h of [...history].sort((a, b) => a.rev - b.rev)) {
      const label = h.type === 'DELETE' ? t('etcd.delete') : (h.kv.createRevision === h.rev ? t('etcd.put.create') : t('etcd.put'));
      const later = h.rev > shown;
      items.push(el('li', {
        'data-testid': 'history-entry', 'data-rev': h.rev,
        class: [h.rev < revs.compacted ? 'compacted' : '', later ? 'later' : ''].join(' ').trim(),
        title: later ? t('etcd.hist.later') : undefined,
      },
      el('b', { text: `rev ${h.rev}` }), ` ${label}`,
      h.type === 'PUT' ? ` · ${t('etcd.hist.meta', { create: h.kv.createRevision, version: h.kv.version })}` : '',
      h.type === 'PUT' && h.kv.leaseHex ? el('span', { 'data-testid': 'history-lease', text: ` · ${t('etcd.hist.lease', { lease: h.kv.leaseHex })}` }) : null,
      later ? el('span', { class: 'muted', text: ` · ${t('etcd.hist.later')}` }) : null,
      h.type === 'PUT' ? el('pre', { class: 'body', text: shownValue(h.kv) }) : null));
    }
    if (revs.compacted > 1 && selected) items.unshift(el('li', { class: 'muted', text: t('etcd.hist.compacted', { rev: revs.compacted }) }));
    $('key-history').replaceChildren(...items);
  }

  // ---- the keyspace watch (feeds the timeline) ------------------------------

  function watchKeyspace(from) {
    keyspaceCancel?.();
    keyspaceCancel = lab.etcd.watch('', { all: true, rev: from }, (res) => {
      if (res.canceled) {
        if (res.compactRevision) { revs.seeCompaction(res.compactRevision); watchKeyspace(res.compactRevision); }
        return;
      }
      revs.see(res.header.revision);
      for (const ev of res.events) {
        revs.addEvent(ev.kv.modRevision, { type: ev.type, key: ev.kv.key });
        // Offline the history replays: the compaction timer's ticks go in it.
        const tick = lab.cfg.mode === 'server' || lab.replaying ? null : tickOp(ev, lab.history.ops);
        if (tick) lab.record(tick);
      }
      if (res.events.length) refresh();
    }, (err) => {
      if (!err) return;
      // The stream broke (a server session whose server went away): watch
      // again from the next revision once the connection is back.
      keyspaceCancel = null;
      lab.connection?.addEventListener('change', function again(e) {
        if (e.detail.state !== 'live') return;
        lab.connection.removeEventListener('change', again);
        watchKeyspace(revs.head + 1);
        probe();
      });
    });
  }

  // startWatching picks where the keyspace watch starts: offline the whole
  // (small, private) history; on a server session only the recent past.
  function startWatching() {
    const from = lab.cfg.mode === 'server' ? Math.max(1, revs.head - TIMELINE_BACK + 1, revs.compacted) : 1;
    watchKeyspace(from);
    if (lab.cfg.mode === 'server') schedulProbe();
  }

  // ---- compaction ----------------------------------------------------------

  const readable = async (rev) => {
    try { await lab.etcd.range('\0', { rev }); return true; } catch (e) {
      if (isCompacted(e)) return false;
      throw e;
    }
  };

  async function learnCompaction() {
    const head = Number((await lab.etcd.range('\0')).header.revision || 0);
    revs.see(head);
    const found = await findCompaction(readable, revs.compacted, head);
    return revs.seeCompaction(found) ? found : 0;
  }

  async function probe() {
    try {
      if (await readable(revs.lowest())) return;
      const rev = await learnCompaction();
      if (rev) { lab.notice(said('notice.compactedby', { rev })); refresh(); }
    } catch { /* the connection monitor reports network failures */ }
  }

  function schedulProbe() {
    clearTimeout(probeTimer);
    probeTimer = setTimeout(async () => {
      if (document.visibilityState !== 'hidden' && lab.connection?.state !== 'lost') await probe();
      schedulProbe();
    }, PROBE_MS);
  }

  async function compact(rev) {
    rev = Number(rev || $('compact-rev').value || revs.head);
    lab.record({ op: 'compact', rev });
    try {
      await lab.etcd.compact(rev);
      revs.seeCompaction(rev);
      lab.notice(said('notice.compacted', { rev }));
    } catch (e) {
      // A student of a class: etcd's refusal, and why, since the class
      // shares one store whose compaction is the teacher's.
      const student = e.status === 403 && lab.channel?.role() === 'student';
      lab.notice(said(student ? 'notice.compactteacher' : 'notice.compactfailed', { message: e.message }), 'error');
    }
    refresh();
  }

  function reset() {
    keys = new Map();
    shownKvs = [];
    select('');
    keyspaceCancel?.();
    keyspaceCancel = null;
    frame.schedule('keys', renderKeys);
  }

  revs.addEventListener('change', (e) => {
    frame.schedule('etcd-rev', renderRevision);
    if (e.detail === 'travel') { refresh(); frame.schedule('history', renderHistory); }
    if (e.detail === 'compacted' && selected) frame.schedule('history', renderHistory);
  });
  onLanguageChange(() => { frame.schedule('history', renderHistory); frame.schedule('keys', renderKeys); });
  frame.schedule('history', renderHistory);
  const tbody = $('etcd-keys').querySelector('tbody');
  tbody.addEventListener('click', (e) => { const tr = e.target.closest('tr[data-key]'); if (tr) select(tr.dataset.key); });
  tbody.addEventListener('keydown', (e) => { const tr = e.target.closest('tr[data-key]'); if (tr && e.key === 'Enter') select(tr.dataset.key); });
  $('compact').addEventListener('click', lab.guard(() => compact()));

  return { refresh, readKeys, startWatching, learnCompaction, compact, select, reset, keys: () => keys, probe };
}
