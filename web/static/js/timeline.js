// The revision timeline and time travel. Each revision is a mark the
// learner can click to see the store as it was; the compaction line sits
// just before the compaction revision (the first one still readable);
// the slider spans revision 1 to the head and stops at the compaction.
// Travelling changes everything that shows the store: the etcd table, the
// key history, the timeline itself.

import { $, el } from './dom.js';
import { t } from './i18n.js';

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

  function render() {
    const { from, head, cells } = revs.timeline(TIMELINE_WIDTH);
    const strip = $('timeline');
    const nodes = cells.map((c) => {
      if (c.kind === 'compaction') {
        return el('span', { class: 'compaction-line', 'data-testid': 'compaction-line', 'data-rev': c.rev, title: t('timeline.compaction', { rev: c.rev }) });
      }
      const cls = ['tick', c.compacted && 'compacted', c.deleted && 'del', c.unknown && 'unknown', c.later && 'later', c.current && revs.travel && 'current'].filter(Boolean).join(' ');
      const title = tickTitle(c);
      return el('button', {
        type: 'button', class: cls, 'data-testid': 'timeline-tick', 'data-rev': c.rev, title, 'aria-label': title,
        disabled: c.compacted || undefined, tabindex: -1, 'aria-current': c.current && revs.travel ? 'true' : undefined,
      }, c.rev % 5 === 0 || c.rev === head ? el('small', { text: c.rev }) : null);
    });
    strip.replaceChildren(...nodes);
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
