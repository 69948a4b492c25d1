// The teacher's dashboard's reading of a class: watch states, named
// misconceptions, which lessons show, where a student is.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import './setup.mjs';
import { watchState, rankWatches, watchLine, findingsList, misconceptionCount, connected, activeLessons, where, whereParts, onStepMinutes, stuckAfter, mergeRoster, exchangeRow } from '../static/js/dashboardview.js';

const detectors = [
  { name: 'retry-409-without-reread', kind: 'misconception' },
  { name: 'watch-from-item-resourceversion', kind: 'misconception' },
  { name: 'relist-after-410', kind: 'practice' },
];

test('a watch is up to date, behind the store, waiting, gone, closed by the server or ended', () => {
  assert.deepEqual(watchState({ lastResourceVersion: 42, behind: 0 }), { kind: 'current', text: 'rv 42 · up to date' });
  assert.deepEqual(watchState({ lastResourceVersion: 40, behind: 2 }), { kind: 'behind', text: 'rv 40 · 2 behind' });
  assert.deepEqual(watchState({ from: '17' }), { kind: 'waiting', text: 'from 17 · nothing yet' });
  assert.deepEqual(watchState({ ended: true, errorCode: 410, from: '3', lastResourceVersion: 0 }), { kind: 'gone', text: '410 Gone (from 3)' });
  assert.equal(watchState({ ended: true, endedBy: 'server', lastResourceVersion: 9 }).kind, 'closed');
  assert.equal(watchState({ ended: true, endedBy: 'client', lastResourceVersion: 9 }).text, 'ended at rv 9');
});

test("the watch that matters most comes first: a failed one (410, closed by the server), then the furthest behind, then the others", () => {
  const watches = [
    { seq: 1, client: 'browser', path: '/v3/watch', lastResourceVersion: 30, behind: 0 },
    { seq: 2, client: 'I', path: '/api/v1/configmaps', lastResourceVersion: 28, behind: 2 },
    { seq: 3, client: 'I', path: '/api/v1/configmaps', ended: true, endedBy: 'client', lastResourceVersion: 20 },
    { seq: 4, client: 'I', path: '/api/v1/configmaps', lastResourceVersion: 21, behind: 9 },
    { seq: 5, client: 'kubectl', path: '/api/v1/pods', from: '' },
    { seq: 6, client: 'I', path: '/api/v1/configmaps', ended: true, errorCode: 410, from: '12' },
    { seq: 7, client: 'W', path: '/api/v1/configmaps', ended: true, endedBy: 'server', lastResourceVersion: 25 },
  ];
  assert.deepEqual(rankWatches(watches).map((x) => x.w.seq), [6, 7, 4, 2, 5, 1, 3]);
  assert.deepEqual(rankWatches(watches).map((x) => x.s.kind), ['gone', 'closed', 'behind', 'behind', 'waiting', 'current', 'ended']);
  // Watches alike keep the class's order (newest first).
  assert.deepEqual(rankWatches([{ seq: 9, lastResourceVersion: 5 }, { seq: 8, lastResourceVersion: 5 }]).map((x) => x.w.seq), [9, 8]);
  assert.deepEqual(rankWatches(undefined), []);
  assert.equal(watchLine(rankWatches(watches)[0]), 'I · 410 Gone (from 12) · /api/v1/configmaps');
});

test('findings are named, misconceptions first and the most frequent first; practices are not misconceptions', () => {
  const list = findingsList({ 'relist-after-410': 5, 'watch-from-item-resourceversion': 1, 'retry-409-without-reread': 3 }, detectors);
  assert.deepEqual(list.map((f) => `${f.text} ×${f.n}`), [
    'retried a 409 without re-reading ×3', "resumed a watch from an item's resourceVersion ×1", 'relisted after a 410 ×5']);
  assert.deepEqual(findingsList({}, detectors), []);
  assert.equal(misconceptionCount({ 'relist-after-410': 5, 'retry-409-without-reread': 3 }, detectors), 3);
});

test('the lessons shown are the pushed one and those with someone in them, a pass or a finding', () => {
  const l = (slug, here = 0, passed = 0, findings = {}) => ({ slug, here, steps: [{ n: 1, passed }], findings });
  const lessons = [l('a'), l('b', 2), l('c', 0, 1), l('d', 0, 0, { x: 1 }), l('e'), l('f', 0, 0, { x: 0 })];
  assert.deepEqual(activeLessons(lessons, { lesson: 'e' }).map((x) => x.slug), ['b', 'c', 'd', 'e']);
  assert.deepEqual(activeLessons(lessons, null).map((x) => x.slug), ['b', 'c', 'd']);
});

test('where a student is, and who is connected', () => {
  assert.equal(where({ connections: 0, lesson: 'x', step: 2 }, 'Lost update', 5), 'not connected');
  assert.equal(where({ connections: 1, lesson: '' }, '', 0), 'lesson list');
  assert.equal(where({ connections: 1, lesson: 'x', step: 0 }, 'Lost update', 5), 'Lost update · introduction');
  assert.equal(where({ connections: 2, lesson: 'x', step: 2 }, 'Lost update', 5), 'Lost update · step 2 of 5');
  // The lesson and its step apart: the dashboard gives each a line, so a
  // long title is cut and the step still shows.
  assert.deepEqual(whereParts({ connections: 2, lesson: 'x', step: 2 }, 'Lost update', 5), ['Lost update', 'step 2 of 5']);
  assert.deepEqual(whereParts({ connections: 0, lesson: 'x', step: 2 }, 'Lost update', 5), ['not connected']);
  const people = [{ role: 'student', connections: 1 }, { role: 'student', connections: 0 }, { role: 'teacher', connections: 1 }];
  assert.deepEqual(connected(people), { n: 1, total: 2 });
});

test('a roster updates presence and keeps what the last poll said of everything else', () => {
  const people = [{ id: 'ada', connections: 0, lesson: '', passed: { a: [1] }, watches: [{ seq: 3 }] }];
  const merged = mergeRoster(people, [{ id: 'ada', connections: 1, lesson: 'a', step: 2 }, { id: 'bob', connections: 1 }]);
  assert.deepEqual(merged[0], { id: 'ada', connections: 1, lesson: 'a', step: 2, passed: { a: [1] }, findings: {}, watches: [{ seq: 3 }] });
  assert.deepEqual(merged[1].watches, []);
});

test("a student's exchange, as the dashboard lists it", () => {
  const row = exchangeRow({ time: '2026-11-03T09:00:12.5Z', userAgent: 'B/rvplay-lab', verb: 'update', path: '/api/v1/namespaces/default/configmaps/demo',
    status: 409, reason: 'Conflict', resourceVersionSent: '7', resourceVersion: '9' });
  assert.deepEqual(row, { time: '09:00:12', client: 'B', request: 'update /api/v1/namespaces/default/configmaps/demo', status: '409 Conflict', rv: '7 → 9', failed: true });
  const w = exchangeRow({ time: '2026-11-03T09:01:00Z', userAgent: 'kubectl/v1.32.0 (linux/amd64)', verb: 'watch', path: '/api/v1/pods', query: 'watch=true&resourceVersion=3',
    status: 200, watch: { errorCode: 410, errorReason: 'Expired' } });
  assert.equal(w.request, 'watch /api/v1/pods?watch=true&resourceVersion=3');
  assert.equal(w.client, 'kubectl/v1.32.0');
  assert.equal(w.status, '200 · 410 Expired');
  assert.equal(w.failed, true);
  // The lab's own panels (its etcd view, its watch panel) send the browser's User-Agent.
  assert.equal(exchangeRow({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140', verb: 'range', path: '/v3/kv/range', status: 200 }).client, 'browser');
});

test('a student long on one step: how long, on the server\'s clock, once it is five minutes or more', () => {
  const since = '2026-11-26T10:00:00Z';
  const at = (ms) => Date.parse(since) + ms;
  const ada = { connections: 1, lesson: 'x', step: 2, since };
  assert.equal(onStepMinutes(ada, at(stuckAfter - 1)), 0);
  assert.equal(onStepMinutes(ada, at(stuckAfter)), 5);
  assert.equal(onStepMinutes(ada, at(12 * 60_000 + 59_000)), 12);
  assert.deepEqual(whereParts(ada, 'Lost update', 5, at(12 * 60_000)), ['Lost update', 'step 2 of 5 · 12 min']);
  assert.equal(where({ ...ada, step: 0 }, 'Lost update', 5, at(7 * 60_000)), 'Lost update · introduction · 7 min');
  // Only who is connected, in a lesson, and known since when.
  assert.equal(onStepMinutes({ ...ada, connections: 0 }, at(60 * 60_000)), 0);
  assert.equal(onStepMinutes({ ...ada, lesson: '' }, at(60 * 60_000)), 0);
  assert.equal(onStepMinutes({ ...ada, since: undefined }, at(60 * 60_000)), 0);
  assert.deepEqual(whereParts(ada, 'Lost update', 5), ['Lost update', 'step 2 of 5']);
});
