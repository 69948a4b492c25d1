// What the lab knows about the store's revisions: the head, the compaction
// revision, the events of the revisions it has seen, and the revision the
// learner travelled back to. Panels render from it; it has no DOM.
//
// etcd's rule for compaction at C: revisions below C are gone, C itself
// stays readable (a read at C still answers). The timeline therefore draws
// the compaction line just before C.

export const KEEP_REVISIONS = 2000; // events kept for the timeline and histories

export class Revisions extends EventTarget {
  constructor() {
    super();
    this.reset();
  }

  reset() {
    this.head = 0;
    this.compacted = 0; // 0: never compacted
    this.travel = 0; // 0: showing head
    this.events = new Map(); // revision -> [{type, key, value, createRevision, version}]
    this.firstKnown = 0; // the lowest revision whose events the lab saw (0: none)
    this.changed('reset');
  }

  changed(what) { this.dispatchEvent(new CustomEvent('change', { detail: what })); }

  see(rev) {
    rev = Number(rev) || 0;
    if (rev <= this.head) return false;
    this.head = rev;
    this.changed('head');
    return true;
  }

  seeCompaction(rev) {
    rev = Number(rev) || 0;
    if (rev <= this.compacted) return false;
    this.compacted = rev;
    if (this.travel && this.travel < rev) this.travel = rev;
    this.changed('compacted');
    return true;
  }

  // addEvent records one etcd event (a watch's PUT or DELETE) at its
  // revision; the same event seen twice (two watches) is kept once.
  addEvent(rev, ev) {
    rev = Number(rev);
    const list = this.events.get(rev) || [];
    if (list.some((x) => x.key === ev.key && x.type === ev.type)) return;
    list.push(ev);
    this.events.set(rev, list);
    if (!this.firstKnown || rev < this.firstKnown) this.firstKnown = rev;
    if (this.events.size > KEEP_REVISIONS) {
      const drop = [...this.events.keys()].sort((a, b) => a - b).slice(0, this.events.size - KEEP_REVISIONS);
      for (const r of drop) this.events.delete(r);
      this.firstKnown = drop[drop.length - 1] + 1;
    }
    this.see(rev);
  }

  // lowest is the oldest revision a read can still see.
  lowest() { return Math.max(1, this.compacted); }

  // clampTravel maps a wanted revision to one the store can show: at or
  // above the compaction, at or below the head; the head itself is 0.
  clampTravel(rev) {
    rev = Math.round(Number(rev) || 0);
    if (!rev || rev >= this.head) return 0;
    return Math.max(rev, this.lowest());
  }

  travelTo(rev) {
    const next = this.clampTravel(rev);
    if (next === this.travel) return false;
    this.travel = next;
    this.changed('travel');
    return true;
  }

  // shown is the revision the panels show: the travel revision or the head.
  shown() { return this.travel || this.head; }

  // slider is the time-travel slider's state: it spans every revision from
  // 1 to the head, so that the thumb at the head sits at the far right even
  // when everything below was compacted.
  slider() {
    const max = Math.max(1, this.head);
    return { min: 1, max, value: this.travel || max, floor: this.lowest(), atHead: !this.travel };
  }

  // timeline lays out the last `width` revisions as cells: one per
  // revision, and the compaction line just before the compaction revision.
  timeline(width = 120) {
    const head = this.head;
    const from = Math.max(1, head - width + 1);
    const cells = [];
    for (let rev = from; rev <= head; rev++) {
      if (this.compacted > 1 && rev === this.compacted) cells.push({ kind: 'compaction', rev });
      const evs = this.events.get(rev) || [];
      cells.push({
        kind: 'rev', rev, events: evs,
        compacted: rev < this.compacted,
        deleted: evs.some((e) => e.type === 'DELETE'),
        unknown: evs.length === 0 && rev > 1 && (!this.firstKnown || rev < this.firstKnown),
        later: this.travel > 0 && rev > this.travel,
        current: rev === this.shown(),
      });
    }
    return { from, head, cells };
  }
}
