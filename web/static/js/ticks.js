// The session's automatic compaction (kube-apiserver's
// --etcd-compaction-interval) as operations of the lab's history. Its
// ticks come from a timer, which a fast replay does not reproduce: each
// tick the lab sees (a PUT of compact_rev_key in the keyspace watch) is
// recorded, the replay writes the same value and compacts to it at the
// same point, and the timer stays off while the replay runs.

export const COMPACT_REV_KEY = 'compact_rev_key';

// tickOp is the operation a keyspace event records, or null: not a tick,
// or a tick the history already holds (the keyspace watch starts from
// revision 1 and so sees the ticks a replay wrote again). A tick's value
// is the revision of the previous tick, the one it compacts to ("0" on
// the first tick, which compacts nothing).
export function tickOp(ev, ops) {
  if (ev.type !== 'PUT' || ev.kv.key !== COMPACT_REV_KEY) return null;
  const rev = ev.kv.modRevision;
  if (ops.some((o) => o.op === 'tick' && o.rev >= rev)) return null;
  return { op: 'tick', rev, v: ev.kv.value };
}

// pausedOp is what a replay runs for a recorded operation: a settings
// change with its compaction interval turned off (the recorded ticks
// stand for the timer), and the interval it chose, to set back once the
// replay ends (undefined: the operation chose none).
export function pausedOp(o) {
  if (o.op !== 'settings' || !o.set || !('compactionInterval' in o.set)) return { run: o, interval: undefined };
  return { run: { ...o, set: { ...o.set, compactionInterval: '0s' } }, interval: o.set.compactionInterval };
}
