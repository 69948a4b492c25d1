// The revision timeline and time travel. Each revision is a mark the
// learner can click to see the store as it was; the compaction line sits
// just before the compaction revision (the first one still readable);
// the slider spans revision 1 to the head and stops at the compaction.
// Travelling changes everything that shows the store: the etcd table, the
// key history, the timeline itself.

import { $, el } from './dom.js';
import { t, onLanguageChange } from './i18n.js';

export const TIMELINE_WIDTH = 120;

export function mountTimeline(lab) {
  const { frame, revisions: revs } = lab;

  function tickTitle(c) {
    let what = '';
    if (c.events.length) what = ': ' + c.events.map((e) => `${e.type} ${e.key}`).join(', ');
    else if (c.rev === 1) what = ': ' + t('timeline.empty');
    else if (c.compacted) what = ': ' + t('timeline.compactedrev');
    else if (c.unknown) what = ': ' + t('timeline.unknown');
    return t('timeline.rev', { rev: c.rev }) + what;
  }

  // The marks are kept between renders: a render while events stream in
  // adds the new revisions and changes only the marks whose state moved.
  const marks = new Map(); // rev -> {node, sig}
  let line = null;

  function markFor(c, head) {
    const cls = ['tick', c.compacted && 'compacted', c.deleted && 'del', c.unknown && 'unknown', c.later && 'later', c.current && revs.travel && 'current'].filter(Boolean).join(' ');
    // Every fifth revision and the head are labelled, not two side by side.
    const label = (c.rev % 5 === 0 && head - c.rev >= 2) || c.rev === head;
    const sig = `${cls}|${label}|${c.events.length}`;
    let m = marks.get(c.rev);
    if (m && m.sig === sig) return m.node;
    const title = tickTitle(c);
    const node = m?.node || el('button', { type: 'button', 'data-testid': 'timeline-tick', 'data-rev': c.rev, tabindex: -1 });
    node.className = cls;
    node.title = title;
    node.setAttribute('aria-label', title);
    node.disabled = !!c.compacted;
    if (c.current && revs.travel) node.setAttribute('aria-current', 'true'); else node.removeAttribute('aria-current');
    node.replaceChildren(...(label ? [el('small', { text: c.rev })] : []));
    marks.set(c.rev, { node, sig });
    return node;
  }

  function render() {
    const { from, head, cells } = revs.timeline(TIMELINE_WIDTH);
    const strip = $('timeline');
    for (const r of marks.keys()) if (r < from || r > head) marks.delete(r);
    const nodes = cells.map((c) => {
      if (c.kind !== 'compaction') return markFor(c, head);
      if (!line || line.dataset.rev !== String(c.rev)) {
        line = el('span', { class: 'compaction-line', 'data-testid': 'compaction-line', 'data-rev': c.rev, title: t('timeline.compaction', { rev: c.rev }) });
      }
      return line;
    });
    // Only touch the strip where its children differ.
    const cur = strip.children;
    let same = cur.length === nodes.length;
    for (let i = 0; same && i < nodes.length; i++) same = cur[i] === nodes[i];
    if (!same) strip.replaceChildren(...nodes);
    strip.setAttribute('aria-description', t('timeline.aria', { from, head, compacted: revs.compacted || t('header.never') }));

    const s = revs.slider();
    const tt = $('time-travel');
    tt.min = String(s.min);
    tt.max = String(s.max);
    if (document.activeElement !== tt || s.atHead) tt.value = String(s.value);
    // The compacted part of the slider's track is shaded.
    const pct = s.max > s.min ? ((s.floor - s.min) / (s.max - s.min)) * 100 : 0;
    tt.style.setProperty('--floor', `${pct}%`);
    const shown = $('time-travel-rev');
    shown.textContent = revs.travel ? String(revs.travel) : t('timeline.head');
    shown.dataset.rev = String(revs.shown());
    $('time-travel-head').disabled = !revs.travel;
  }

  onLanguageChange(() => { marks.clear(); line = null; frame.schedule('timeline', render); });

  function travel(rev) {
    const r = Number(rev);
    revs.travelTo(r);
    // A wish below the compaction stops at it.
    if (revs.travel && r < revs.travel) $('time-travel').value = String(revs.travel);
  }

  function backToHead() { revs.travelTo(0); }

  revs.addEventListener('change', () => frame.schedule('timeline', render));
  $('time-travel').addEventListener('input', (e) => travel(e.target.value));
  $('time-travel-head').addEventListener('click', backToHead);
  $('timeline').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-rev]');
    if (b && !b.disabled) travel(Number(b.dataset.rev) === revs.head ? 0 : b.dataset.rev);
  });
  frame.schedule('timeline', render);
  return { travel, backToHead, render };
}
