package kube

import (
	"context"
	"sort"
	"sync"
	"time"
)

// With the watch cache off (a session's default), resourceVersion "0"
// reads keep what they were before the cache: the latest state, whole
// (a list's limit ignored), or with a lag the store as it was that long
// ago, as rvplay modelled kube-apiserver's cache for them. The lessons
// that show a stale read and the clients' tests of one rely on it; a
// session with its watchCache setting on gets the cache itself
// (cache_read.go). revisionLog times the revisions for that lag.

// revisionLog remembers when each revision was observed, so that a
// lagging read can answer "the store as it was WatchCacheDelay ago".
type revisionLog struct {
	mu      sync.Mutex
	base    int64
	entries []revAt
}

type revAt struct {
	rev int64
	at  time.Time
}

// note records that rev was observed at at (once per revision).
func (rl *revisionLog) note(rev int64, at time.Time) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	if n := len(rl.entries); rev <= rl.base || n > 0 && rev <= rl.entries[n-1].rev {
		return
	}
	rl.entries = append(rl.entries, revAt{rev, at})
	if len(rl.entries) > 100000 {
		rl.base = rl.entries[50000].rev
		rl.entries = append([]revAt(nil), rl.entries[50000:]...)
	}
}

// noteRevision times a write made through the registry at once, so that
// the lag's timeline does not depend on watch delivery.
func (reg *Registry) noteRevision(rev int64) {
	reg.revMu.Lock()
	rl := reg.revLog
	reg.revMu.Unlock()
	if rl != nil {
		rl.note(rev, reg.clock.Now())
	}
}

// startRevisionLog starts timing revisions, once a lag is first set. Its
// store watch sees the writes of others (another replica's, an etcd
// client's); one the storage ends is started again (storeRewatch).
func (reg *Registry) startRevisionLog() {
	reg.revMu.Lock()
	defer reg.revMu.Unlock()
	if reg.revLog != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	base := reg.kv.Rev()
	var rw storeRewatch
	rw.from(base + 1)
	ws, stop, err := rw.watch(ctx, reg.kv, revisionLogPrefix)
	if err != nil {
		cancel()
		return
	}
	rl := &revisionLog{base: base}
	reg.revLog, reg.revStop = rl, cancel
	go reg.logRevisions(ctx, rl, &rw, ws, stop)
}

// revisionLogPrefix is the keys whose revisions the log times: every
// resource's.
const revisionLogPrefix = "/registry/"

// logRevisions times the revisions ws delivers until ctx ends, watching
// the store again when the storage ends the watch.
func (reg *Registry) logRevisions(ctx context.Context, rl *revisionLog, rw *storeRewatch, ws WatchStream, stop context.CancelFunc) {
	var again timerAt
	defer again.stop()
	for {
		resp, err := ws.Next(ctx)
		if err == nil {
			rw.took(&resp)
			if n := len(resp.Events); n > 0 {
				rl.note(resp.Events[n-1].Kv.ModRevision, reg.clock.Now())
			}
			continue
		}
		stop()
		if ctx.Err() != nil || !storeWatchLost(err) {
			return
		}
		if rw.ended(reg.clock.Now()); !rw.due(reg.clock.Now()) {
			select {
			case <-again.at(reg.clock, rw.at):
				again.fired()
			case <-ctx.Done():
				return
			}
		}
		if ws, stop, err = rw.watch(ctx, reg.kv, revisionLogPrefix); err != nil {
			return // the store refuses watches: it closed
		}
	}
}

func (reg *Registry) stopRevisionLog() {
	reg.revMu.Lock()
	defer reg.revMu.Unlock()
	if reg.revStop != nil {
		reg.revStop()
	}
}

// anyRev is the revision a resourceVersion "0" read sees with the cache
// off: the latest, or the latest the lag lets through.
func (reg *Registry) anyRev() int64 {
	d := reg.WatchCacheDelay()
	cur := reg.kv.Rev()
	if d <= 0 {
		return cur
	}
	reg.revMu.Lock()
	rl := reg.revLog
	reg.revMu.Unlock()
	if rl == nil {
		return cur
	}
	cutoff := reg.clock.Now().Add(-d)
	rl.mu.Lock()
	defer rl.mu.Unlock()
	i := sort.Search(len(rl.entries), func(i int) bool { return rl.entries[i].at.After(cutoff) })
	if i == 0 {
		return rl.base
	}
	return rl.entries[i-1].rev
}
