package kube

import (
	"context"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// storeRewatch is the rule for a store watch of the registry's own (the
// watch cache's, cacher.go; the revision log's of the lag with the cache
// off, anyread.go) that the storage ends: on an etcd cluster "etcdserver:
// no leader", etcd's client ending a watch that requires a leader, as
// kube's do, when its member has none. The watch is started again from
// the revision after the last one it delivered, as kube's cacher's
// reflector watches again from its last resourceVersion after an internal
// error, so that its consumer misses and repeats nothing: the first time
// at once, then each second on the registry's clock while the storage
// keeps ending the new watch before it delivers anything (kube's
// reflector tries again at once for 30 s, then lists again, ending its
// cache's watchers; the registry keeps them and keeps trying: its watchers
// never end for a leader's loss).
type storeRewatch struct {
	resume int64     // the revision after the last the store watch delivered
	lost   int       // the store watches the storage ended in a row
	at     time.Time // when to watch the store again (zero: the watch runs)
}

// rewatchPeriod is how long the registry waits before it watches the
// store again after the storage ended its new watch too (the period
// kube's cacher lists and watches again with while its reflector fails).
const rewatchPeriod = time.Second

// from starts over with a new store watch from rev, the revision after
// the last one its consumer has.
func (rw *storeRewatch) from(rev int64) { *rw = storeRewatch{resume: rev} }

// watch starts the store watch of prefix's keys from the revision after
// the last one the store watch delivered. Its context is a child of ctx,
// canceled by the function returned.
func (rw *storeRewatch) watch(ctx context.Context, kv KV, prefix string) (WatchStream, context.CancelFunc, error) {
	wctx, cancel := context.WithCancel(ctx)
	ws, err := kv.Watch(wctx, &mvcc.WatchRequest{Key: []byte(prefix), RangeEnd: prefixEnd([]byte(prefix)), StartRevision: rw.resume})
	if err != nil {
		cancel()
		return nil, nil, err
	}
	rw.at = time.Time{}
	return ws, cancel, nil
}

// took notes a response the store watch delivered.
func (rw *storeRewatch) took(resp *mvcc.WatchResponse) {
	if n := len(resp.Events); n > 0 {
		rw.resume, rw.lost = resp.Events[n-1].Kv.ModRevision+1, 0
	} else if resp.ProgressNotify {
		rw.resume, rw.lost = max(rw.resume, resp.Header.Revision+1), 0
	}
}

// ended notes that the storage ended the store watch at now, and sets
// when to watch again: at once the first time, then a second later each
// time, not in a busy loop against a cluster without a leader.
func (rw *storeRewatch) ended(now time.Time) {
	rw.at = now
	if rw.lost > 0 {
		rw.at = rw.at.Add(rewatchPeriod)
	}
	rw.lost++
}

// waiting reports whether the store watch has ended and waits to be
// started again.
func (rw *storeRewatch) waiting() bool { return !rw.at.IsZero() }

// due reports whether it is time to watch the store again.
func (rw *storeRewatch) due(now time.Time) bool { return rw.waiting() && !rw.at.After(now) }
