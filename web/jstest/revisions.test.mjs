// What the lab knows about revisions: travel, compaction, the timeline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Revisions, KEEP_REVISIONS } from '../static/js/revisions.js';

function store(head, compacted = 0) {
  const r = new Revisions();
  for (let rev = 2; rev <= head; rev++) r.addEvent(rev, { type: 'PUT', key: `k${rev}` });
  if (compacted) r.seeCompaction(compacted);
  return r;
}

test('the compaction line is drawn before the compaction revision, which stays readable', () => {
  const r = store(10, 7);
  const cells = r.timeline().cells;
  const i = cells.findIndex((c) => c.kind === 'compaction');
  assert.equal(cells[i + 1].rev, 7);
  assert.equal(cells[i + 1].compacted, false);
  assert.equal(cells[i - 1].rev, 6);
  assert.equal(cells[i - 1].compacted, true);
});

test('after compacting at the head the slider sits at the head, at the far right', () => {
  const r = store(12, 12);
  const s = r.slider();
  assert.deepEqual([s.min, s.max, s.value, s.atHead], [1, 12, 12, 12 === 12]);
  assert.equal(s.floor, 12);
});

test('time travel stops at the compaction and at the head', () => {
  const r = store(10, 5);
  assert.equal(r.clampTravel(2), 5);
  assert.equal(r.clampTravel(7), 7);
  assert.equal(r.clampTravel(10), 0);
  assert.equal(r.clampTravel(99), 0);
  r.travelTo(7);
  assert.equal(r.shown(), 7);
  const later = r.timeline().cells.filter((c) => c.kind === 'rev' && c.later).map((c) => c.rev);
  assert.deepEqual(later, [8, 9, 10]);
  r.seeCompaction(8); // someone compacts past the travel revision
  assert.equal(r.travel, 8);
});

test('revisions the lab never saw are marked unknown, not empty', () => {
  const r = new Revisions();
  r.see(50);
  r.addEvent(48, { type: 'PUT', key: 'a' });
  const cells = r.timeline(10).cells;
  assert.equal(cells.find((c) => c.rev === 45).unknown, true);
  assert.equal(cells.find((c) => c.rev === 48).unknown, false);
});

test('the same event seen by two watches is kept once; old revisions are dropped past the bound', () => {
  const r = new Revisions();
  r.addEvent(2, { type: 'PUT', key: 'a' });
  r.addEvent(2, { type: 'PUT', key: 'a' });
  assert.equal(r.events.get(2).length, 1);
  for (let rev = 3; rev < KEEP_REVISIONS + 10; rev++) r.addEvent(rev, { type: 'PUT', key: 'a' });
  assert.equal(r.events.size, KEEP_REVISIONS);
  assert.equal(r.events.has(2), false);
});
