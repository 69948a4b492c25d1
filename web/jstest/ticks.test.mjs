// The automatic compaction's ticks as operations of the lab's history.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tickOp, pausedOp } from '../static/js/ticks.js';

const put = (key, value, modRevision) => ({ type: 'PUT', kv: { key, value, modRevision } });

test('a write of compact_rev_key is recorded as a tick with the revision it compacts to', () => {
  assert.deepEqual(tickOp(put('compact_rev_key', '12', 20), []), { op: 'tick', rev: 20, v: '12' });
  assert.deepEqual(tickOp(put('compact_rev_key', '0', 8), [{ op: 'get', c: 'A' }]), { op: 'tick', rev: 8, v: '0' });
});

test('other keys and deletes are no ticks', () => {
  assert.equal(tickOp(put('/registry/configmaps/default/demo', 'x', 9), []), null);
  assert.equal(tickOp({ type: 'DELETE', kv: { key: 'compact_rev_key', modRevision: 9 } }, []), null);
});

test('a tick the history already holds is not recorded again (the keyspace watch sees replayed ticks from revision 1)', () => {
  const ops = [{ op: 'tick', rev: 8, v: '0' }, { op: 'put', c: 'A' }, { op: 'tick', rev: 20, v: '8' }];
  assert.equal(tickOp(put('compact_rev_key', '0', 8), ops), null);
  assert.equal(tickOp(put('compact_rev_key', '8', 20), ops), null);
  assert.deepEqual(tickOp(put('compact_rev_key', '20', 31), ops), { op: 'tick', rev: 31, v: '20' });
});

test('a replay runs a settings change with the compaction timer off and keeps the interval it chose', () => {
  const op = { op: 'settings', set: { compactionInterval: '2s', bookmarkInterval: '3s' } };
  assert.deepEqual(pausedOp(op), { run: { op: 'settings', set: { compactionInterval: '0s', bookmarkInterval: '3s' } }, interval: '2s' });
  assert.equal(op.set.compactionInterval, '2s', 'the history itself is unchanged');
});

test('operations that set no compaction interval replay as recorded', () => {
  for (const op of [{ op: 'settings', set: { bookmarkInterval: '5s' } }, { op: 'get', c: 'A' }, { op: 'tick', rev: 8, v: '0' }]) {
    assert.deepEqual(pausedOp(op), { run: op, interval: undefined });
  }
});
