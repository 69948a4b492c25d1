// The connection monitor: a failure marks the session unreachable and
// probes with growing waits until the server answers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Backoff, Connection } from '../static/js/connection.js';

test('the back-off doubles from 800 ms to a 30 s cap and starts over after a success', () => {
  const b = new Backoff({ jitter: 0 });
  assert.deepEqual([b.next(), b.next(), b.next(), b.next()], [800, 1600, 3200, 6400]);
  for (let i = 0; i < 10; i++) b.next();
  assert.equal(b.next(), 30_000);
  b.reset();
  assert.equal(b.next(), 800);
});

// fakeTimers runs timers when the test says so.
function fakeTimers() {
  const due = [];
  return {
    due,
    setTimeout(fn, ms) { due.push({ fn, ms }); return due.length; },
    clearTimeout() {},
    async fire() { const { fn } = due.shift(); await fn(); },
  };
}

test('a failed request marks the session lost; the probe retries with back-off until the server answers', async () => {
  const timers = fakeTimers();
  let up = false;
  const c = new Connection({ probe: async () => up, backoff: new Backoff({ jitter: 0 }), timers });
  const states = [];
  const retries = [];
  c.addEventListener('change', (e) => states.push(e.detail.state));
  c.addEventListener('retry', (e) => retries.push(e.detail.inMs));
  c.ok();
  c.failed('Failed to fetch');
  assert.equal(c.state, 'lost');
  assert.equal(timers.due[0].ms, 800);
  await timers.fire();
  assert.equal(timers.due[0].ms, 1600);
  c.failed('again'); // more failures while probing schedule nothing more
  assert.equal(timers.due.length, 1);
  // Each wait is said when it starts, so that "retrying in N s" tells
  // the current one (it said the first, 1 s, while the lab waited 30).
  assert.deepEqual(retries, [800, 1600]);
  assert.equal(c.nextProbeIn, 1600);
  up = true;
  await timers.fire();
  assert.equal(c.state, 'live');
  assert.deepEqual(states, ['live', 'lost', 'live']);
  assert.equal(timers.due.length, 0);
});
