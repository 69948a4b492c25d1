package kube

import (
	"fmt"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The watch cache's window holds every event since the cache listed. It
// starts at 100 events and doubles while full of events younger than
// 75 s; once its newest quarter is older than that, a full window halves
// (never below 100) and drops its oldest events. A watch from before its
// first event is "too old resource version: N (M)", M the oldest revision
// a watch may still start from.
func TestWatchOlderThanTheCachesWindowIsTooOld(t *testing.T) {
	f := newFixture(t)
	var revs []int64
	for i := range 200 { // all at t0: the window doubles to 200
		revs = append(revs, mustInt(ResourceVersion(f.create(t, configmaps, "default", cm(fmt.Sprintf("cm-%03d", i), nil)))))
	}
	w := f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(revs[0] - 1)})
	if e := next(t, w); e.Type != Added || e.name() != "cm-000" {
		t.Fatalf("from the cache's list: %v", e)
	}
	f.clock.Step(80 * time.Second)
	f.create(t, configmaps, "default", cm("late", nil))
	// 200 stale events: the window halves to 100, then drops one more to
	// make room; its first event is cm-101's.
	oldest := revs[101] - 1
	w = f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(revs[10])})
	e := next(t, w)
	if e.Type != Error || e.Object["reason"] != ReasonExpired || e.Object["message"] != fmt.Sprintf("too old resource version: %d (%d)", revs[10], oldest) {
		t.Fatalf("%v %v", e, e.Object)
	}
	if c, _ := numberInt(e.Object["code"]); c != 410 {
		t.Fatalf("code %v", e.Object["code"])
	}
	wantEnd(t, w)
	w = f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(oldest)})
	if e := next(t, w); e.Type != Added || e.name() != "cm-101" {
		t.Fatalf("from the window's start: %v", e)
	}
	// At 100 events it keeps its size: each new event drops the oldest.
	f.create(t, configmaps, "default", cm("later", nil))
	w = f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(oldest)})
	if e := next(t, w); e.Type != Error || e.Object["message"] != fmt.Sprintf("too old resource version: %d (%d)", oldest, revs[102]-1) {
		t.Fatalf("%v %v", e, e.Object)
	}
}

// The cache does not see a compaction made by hand: an exact list at a
// compacted revision is served from the snapshot the cache still holds,
// until kube's compactor records its revision in compact_rev_key and the
// cache, reading it (every 15 s), drops its snapshots below it; the store
// then answers 410. A watch from such a revision is served from the window.
func TestTheCacheServesCompactedRevisionsUntilTheCompactorsRecord(t *testing.T) {
	f := newFixture(t)
	f.fill(t, 3)
	old := f.store.Rev()
	f.create(t, configmaps, "default", cm("x", nil))
	cur := f.store.Rev()
	if _, err := f.store.Compact(f.ctx, &mvcc.CompactionRequest{Revision: cur, Physical: true}); err != nil {
		t.Fatal(err)
	}
	exact := ListOptions{ResourceVersion: fmt.Sprint(old), ResourceVersionMatch: MatchExact}
	l, err := f.s.List(f.ctx, configmaps, "default", exact)
	if err != nil || names(l) != "cm-00,cm-01,cm-02" || l.Metadata.ResourceVersion != fmt.Sprint(old) {
		t.Fatalf("from the cache: %v %v", names(l), err)
	}
	w := f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(old)})
	if e := next(t, w); e.name() != "x" {
		t.Fatalf("watch from the window: %v", e)
	}
	if _, err := f.store.Put(f.ctx, &mvcc.PutRequest{Key: []byte(CompactRevKey), Value: []byte(fmt.Sprint(cur))}); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(compactorPollPeriod)
	_, err = f.s.List(f.ctx, configmaps, "default", exact)
	wantStatus(t, err, 410, ReasonExpired, "The resourceVersion for the provided list is too old.")
}

// resourceVersion "0" reads the cache: the whole list whatever the limit,
// at the revision the cache has reached; a lagging cache answers what it
// held that long ago, while a consistent read waits for the cache to
// reach the store (then reads the store). With the cache off, "0" reads
// answer the same as before the cache (anyread.go).
func TestResourceVersionZeroListsServeTheCache(t *testing.T) {
	bothModes(t, func(t *testing.T, f *fixture) {
		f.fill(t, 3)
		l, err := f.s.List(f.ctx, configmaps, "default", ListOptions{ResourceVersion: "0", Limit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if names(l) != "cm-00,cm-01,cm-02" || l.Metadata.Continue != "" {
			t.Fatalf("limit 1: %s %+v", names(l), l.Metadata)
		}
		f.s.SetWatchCacheDelay(5 * time.Second)
		before := f.store.Rev()
		f.create(t, configmaps, "default", cm("new", nil))
		l, _ = f.s.List(f.ctx, configmaps, "default", ListOptions{ResourceVersion: "0"})
		if names(l) != "cm-00,cm-01,cm-02" || l.Metadata.ResourceVersion != fmt.Sprint(before) {
			t.Fatalf("lagging: %s at %s", names(l), l.Metadata.ResourceVersion)
		}
		// A consistent list waits (blockTimeout) for the cache to reach
		// the store, then reads the store.
		var latest *List
		f.waiting(func() { latest, _ = f.s.List(f.ctx, configmaps, "default", ListOptions{}) })
		if latest.Metadata.ResourceVersion != fmt.Sprint(f.store.Rev()) || names(latest) != "cm-00,cm-01,cm-02,new" {
			t.Fatalf("a consistent list waits for nothing the lag holds back: %s at %s", names(latest), latest.Metadata.ResourceVersion)
		}
	})
}

// The two modes side by side, for what kube-apiserver answers differently
// with --watch-cache=false: a watch from a compacted revision is the
// store's 410 with its own message; with the cache, the window serves it.
func TestWatchCacheOffIsTheStoresBehaviour(t *testing.T) {
	bothModes(t, func(t *testing.T, f *fixture) {
		a := f.create(t, configmaps, "default", cm("a", nil))
		f.create(t, configmaps, "default", cm("b", nil))
		if _, err := f.store.Compact(f.ctx, &mvcc.CompactionRequest{Revision: f.store.Rev(), Physical: true}); err != nil {
			t.Fatal(err)
		}
		w := f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(mustInt(ResourceVersion(a)) - 1)})
		e := next(t, w)
		switch {
		case f.s.WatchCache() && (e.Type != Added || e.name() != "a"):
			t.Fatalf("cache: %v", e)
		case !f.s.WatchCache() && (e.Type != Error || e.Object["message"] != expiredWatchMsg):
			t.Fatalf("store: %v %v", e, e.Object)
		}
	})
}

// A continue token with resourceVersion "0" (tolerated) is served from the
// cache at the token's revision, and the rest comes in one page: the cache
// ignores a "0" list's limit there too, as sample-apiserver's does.
func TestAContinueTokenWithResourceVersionZeroGetsTheRestFromTheCache(t *testing.T) {
	f := newFixture(t)
	f.fill(t, 3)
	first, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 1})
	if err != nil {
		t.Fatal(err)
	}
	f.create(t, configmaps, "default", cm("later", nil))
	l, err := f.s.List(f.ctx, configmaps, "default", ListOptions{Limit: 1, Continue: first.Metadata.Continue, ResourceVersion: "0"})
	if err != nil || names(l) != "cm-01,cm-02" || l.Metadata.Continue != "" || l.Metadata.ResourceVersion != first.Metadata.ResourceVersion {
		t.Fatalf("%s %+v %v", names(l), l.Metadata, err)
	}
}
