package session

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// CompactRevKey is the etcd key kube-apiserver's compactor keeps its
// bookkeeping in; it shows in the session's keyspace as it does in a
// cluster's etcd, and the watch cache reads it to drop what it holds of
// compacted revisions (kube.CompactRevKey).
const CompactRevKey = kube.CompactRevKey

// compactor is kube-apiserver's automatic compaction
// (k8s.io/apiserver/pkg/storage/etcd3/compact.go) over the session's store:
// every interval, a txn "if version(compact_rev_key) == the version I last
// saw, put compact_rev_key = the revision I saw last time, else read it"
// (so that of several API servers only one compacts per interval), then a
// compaction to that previous revision. Each compaction therefore keeps one
// interval of history; the first tick only records a revision.
type compactor struct {
	store mvcc.KV
	clock clock.Clock
	// start runs the compactor's loop: the first time an interval is set,
	// so that a session that never compacts holds no goroutine for it.
	start func(loop func())

	mu       sync.Mutex
	interval time.Duration // 0 = off
	started  bool
	changed  chan struct{}

	// What the last tick saw: compact_rev_key's version and the store's
	// revision. Only run touches them.
	version, rev int64
	// compacted, if set, is told every compaction (tests, logs).
	compacted func(rev int64)
}

func newCompactor(store mvcc.KV, clk clock.Clock, start func(loop func())) *compactor {
	return &compactor{store: store, clock: clk, start: start, changed: make(chan struct{}, 1)}
}

// setInterval changes the period; the next tick is one new period away.
func (c *compactor) setInterval(ctx context.Context, d time.Duration) {
	c.mu.Lock()
	c.interval = d
	startNow := d > 0 && !c.started
	c.started = c.started || startNow
	c.mu.Unlock()
	if startNow {
		c.start(func() { c.run(ctx) })
	}
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *compactor) run(ctx context.Context) {
	for {
		c.mu.Lock()
		interval := c.interval
		c.mu.Unlock()
		var tick <-chan time.Time
		var timer clock.Timer
		if interval > 0 {
			timer = c.clock.NewTimer(interval)
			tick = timer.C()
		}
		select {
		case <-tick:
			c.tick(ctx)
		case <-c.changed:
			if timer != nil {
				timer.Stop()
			}
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		}
	}
}

// tick is kube-apiserver's compact(): the txn on compact_rev_key, then the
// compaction to the revision of the previous tick.
func (c *compactor) tick(ctx context.Context) {
	key := []byte(CompactRevKey)
	resp, err := c.store.Txn(ctx, &mvcc.TxnRequest{
		Compare: []mvcc.Compare{{Result: mvcc.CompareEqual, Target: mvcc.CompareVersion, Key: key, Version: c.version}},
		Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: key, Value: []byte(strconv.FormatInt(c.rev, 10))}}},
		Failure: []mvcc.RequestOp{{Range: &mvcc.RangeRequest{Key: key}}},
	})
	if err != nil {
		return // the store is closing, or full: try again next tick
	}
	prev := c.rev
	c.rev = resp.Header.Revision
	if !resp.Succeeded {
		// Someone else (a previous run of this session, or etcdctl) moved
		// the key: take its version and compact next time.
		if len(resp.Responses) == 1 && resp.Responses[0].Range != nil && len(resp.Responses[0].Range.Kvs) == 1 {
			c.version = resp.Responses[0].Range.Kvs[0].Version
		}
		return
	}
	c.version++
	if prev == 0 {
		return // kube-apiserver does not compact on bootstrap
	}
	_, err = c.store.Compact(ctx, &mvcc.CompactionRequest{Revision: prev})
	if err != nil && !errors.Is(err, mvcc.ErrCompacted) {
		return
	}
	if c.compacted != nil && err == nil {
		c.compacted(prev)
	}
}
