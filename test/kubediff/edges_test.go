package kubediff

import (
	"testing"
)

// eachWatchCacheMode runs f with both sides' watch cache off (the
// etcd-level answers) and on (each side's default), as
// TestSequencesMatchGenericAPIServer does.
func eachWatchCacheMode(t *testing.T, f func(t *testing.T, on bool)) {
	for _, mode := range []string{"off", "on"} {
		if *flagModes != "both" && *flagModes != mode {
			continue
		}
		t.Run("watch-cache="+mode, func(t *testing.T) {
			watchCache = mode == "on"
			defer func() { watchCache = false }()
			f(t, watchCache)
		})
	}
}

// runScript runs seq (after the anchor's creation) on fresh servers and
// compares every answer, as runSequence does for the seeded ones.
func runScript(t *testing.T, seq []op) {
	i := 0
	runSequence(t, 0, len(seq)+1, true, func(genState) op { i++; return seq[i-1] })
}

// TestCompactedResourceVersions reads at revisions a compaction removed:
// an exact list at one (410 Expired, "The resourceVersion for the
// provided list is too old." from etcd; the watch cache serves it from its
// snapshots, since no compactor recorded the compaction in
// compact_rev_key), the next page of a list whose continue token
// predates it (410 with kube's long message and a fresh token from etcd,
// twice; the cache serves it from its snapshots too), a get at one (not older than: the current object), a watch
// from before it (410 "The resourceVersion for the provided watch is too
// old." from etcd; the cache's window still has the events), a watch from
// the oldest revision that works, a watch-list from before it, and a
// compaction at a compacted revision (etcd's error). The writes after the
// compaction point are creates: an update there would reach the
// known difference "watch-prevkv-compacted". Revisions are relative to
// each side's start (the anchor is 1).
func TestCompactedResourceVersions(t *testing.T) {
	buildAll(t)
	eachWatchCacheMode(t, func(t *testing.T, on bool) {
		runScript(t, []op{
			{Verb: "create", Name: "a", Labels: map[string]string{"x": "1"}},                 // 2
			{Verb: "update", Name: "a", Labels: map[string]string{"x": "2"}, Pre: "current"}, // 3
			{Verb: "create", Name: "b", Labels: map[string]string{"x": "1"}},                 // 4
			{Verb: "list", Limit: 1}, // a page pinned at 4
			{Verb: "create", Name: "c", Labels: map[string]string{"x": "1"}}, // 5
			{Verb: "create", Name: "d", Labels: map[string]string{"y": "1"}}, // 6
			{Verb: "compact", Rel: 5},
			{Verb: "list", Continue: true, Limit: 1}, // the token pinned at 4
			{Verb: "list", Continue: true, Limit: 1}, // the same token again
			{Verb: "list", RV: "old", Rel: 3, RVM: "Exact"},
			{Verb: "list", RV: "old", Rel: 4, RVM: "Exact", Limit: 2},
			{Verb: "list", RV: "old", Rel: 5, RVM: "Exact"},
			{Verb: "get", Name: "a", RV: "old", Rel: 3},
			{Verb: "watch", RV: "old", Rel: 3},
			{Verb: "watch", RV: "old", Rel: 4, Bookmarks: true},
			{Verb: "watch", RV: "old", Rel: 4, Selector: "x=1"},
			{Verb: "watch", RV: "old", Rel: 3, SendInitial: true, Bookmarks: true, RVM: "NotOlderThan"},
			{Verb: "compact", Rel: 5},
			{Verb: "compact", Rel: 3},
			{Verb: "list"},
		})
	})
}

// TestFutureResourceVersions reads at a revision ahead of the store (40
// past it): kube-apiserver's watch cache waits up to 3 s for it and
// answers 504 Timeout "Too large resource version: N, current: C" with
// details.retryAfterSeconds 1 (and a Retry-After header), for gets, lists
// and watch-lists (an ERROR event); from etcd (watch cache off) a get or
// list answers the same 504 at once, without retryAfterSeconds, and a
// watch-list ends its stream with it (its retryAfterSeconds drawn between
// 1 and 3: the known difference "watchlist-too-large-retry-after"). A
// plain watch from such a revision is a watch that waits for it, on both
// sides: with the cache on it is compared (neither sends an event, the
// fence's revision being below it, until the read gives up); with it off
// it is left out, the same wait without a cache to time.
func TestFutureResourceVersions(t *testing.T) {
	buildAll(t)
	eachWatchCacheMode(t, func(t *testing.T, on bool) {
		seq := []op{
			{Verb: "create", Name: "a", Labels: map[string]string{"x": "1"}},
			{Verb: "get", Name: "a", RV: "future"},
			{Verb: "get", Name: "missing", RV: "future"},
			{Verb: "list", RV: "future"},
			{Verb: "list", RV: "future", RVM: "NotOlderThan"},
			{Verb: "list", RV: "future", RVM: "Exact"},
			{Verb: "list", RV: "future", Limit: 1},
			{Verb: "list", RV: "future", Selector: "x=1"},
			{Verb: "watch", RV: "future", SendInitial: true, Bookmarks: true, RVM: "NotOlderThan"},
		}
		if on {
			seq = append(seq, op{Verb: "watch", RV: "future", Bookmarks: true})
		}
		runScript(t, append(seq, op{Verb: "list"}))
	})
}
