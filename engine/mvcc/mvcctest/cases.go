package mvcctest

import (
	"context"
	"fmt"

	"github.com/rvplay/rvplay/engine/mvcc"
)

type testCase struct {
	name string
	fn   func(h *harness)
}

func b(s string) []byte { return []byte(s) }

var cases = []testCase{
	{"NewStoreIsAtRevisionOneAndEachWriteTakesTheNext", func(h *harness) {
		h.equal("rev", h.kv.Rev(), int64(1))
		h.equal("revs", []int64{h.put("foo", "a"), h.put("foo1", "b"), h.put("foo2", "c")}, []int64{2, 3, 4})
		h.equal("rev", h.kv.Rev(), int64(4))
	}},
	{"RangeFormsSingleKeyPrefixFromKeyAndEmpty", func(h *harness) {
		h.put("foo", "a")
		h.put("foo1", "b")
		h.put("foo2", "c")
		all := []string{"foo=a@2/2/1", "foo1=b@3/3/1", "foo2=c@4/4/1"}
		h.equal("single", kvs(h.rng(&mvcc.RangeRequest{Key: b("foo")}).Kvs), all[:1])
		h.equal("[foo, foo3)", kvs(h.rng(&mvcc.RangeRequest{Key: b("foo"), RangeEnd: b("foo3")}).Kvs), all)
		h.equal("[foo1, \\0)", kvs(h.rng(&mvcc.RangeRequest{Key: b("foo1"), RangeEnd: b("\x00")}).Kvs), all[1:])
		h.equal("all", kvs(h.rng(&mvcc.RangeRequest{Key: b("\x00"), RangeEnd: b("\x00")}).Kvs), all)
		h.equal("[doo, foo)", kvs(h.rng(&mvcc.RangeRequest{Key: b("doo"), RangeEnd: b("foo")}).Kvs), []string{})
		h.equal("[foo, foo)", kvs(h.rng(&mvcc.RangeRequest{Key: b("foo"), RangeEnd: b("foo")}).Kvs), []string{})
		h.equal("header", h.rng(&mvcc.RangeRequest{Key: b("zzz")}).Header.Revision, int64(4))
	}},
	{"RangeAtAnOldRevisionSeesTheStateThenButTheCurrentHeader", func(h *harness) {
		h.put("foo", "a")
		h.put("foo", "b")
		h.del("foo", "")
		h.put("foo", "c")
		for rev, want := range map[int64]string{1: "<none>", 2: "foo=a@2/2/1", 3: "foo=b@2/3/2", 4: "<none>", 5: "foo=c@5/5/1"} {
			resp := h.rng(&mvcc.RangeRequest{Key: b("foo"), Revision: rev})
			got := "<none>"
			if len(resp.Kvs) > 0 {
				got = kv(resp.Kvs[0])
			}
			h.equal(fmt.Sprintf("at %d", rev), got, want)
			h.equal("header", resp.Header.Revision, int64(5))
		}
	}},
	{"RangeBelowTheCompactionOrInTheFutureFails", func(h *harness) {
		h.put("foo", "a")
		h.put("foo1", "b")
		h.put("foo2", "c")
		if _, err := h.kv.Compact(ctx, &mvcc.CompactionRequest{Revision: 3}); err != nil {
			h.t.Fatal(err)
		}
		for rev, want := range map[int64]error{-1: nil, 0: nil, 1: mvcc.ErrCompacted, 2: mvcc.ErrCompacted, 3: nil, 4: nil, 5: mvcc.ErrFutureRev, 100: mvcc.ErrFutureRev} {
			_, err := h.kv.Range(ctx, &mvcc.RangeRequest{Key: b("foo"), RangeEnd: b("foo3"), Revision: rev})
			h.wantErr(fmt.Sprintf("range at %d", rev), err, want)
		}
	}},
	{"RangeLimitCutsTheResultButNotTheCount", func(h *harness) {
		h.put("foo", "a")
		h.put("foo1", "b")
		h.put("foo2", "c")
		for _, tc := range []struct {
			limit int64
			n     int
			more  bool
		}{{-1, 3, false}, {0, 3, false}, {1, 1, true}, {2, 2, true}, {3, 3, false}, {100, 3, false}} {
			resp := h.rng(&mvcc.RangeRequest{Key: b("foo"), RangeEnd: b("foo3"), Limit: tc.limit})
			h.equal(fmt.Sprintf("limit %d", tc.limit), []any{len(resp.Kvs), resp.More, resp.Count}, []any{tc.n, tc.more, int64(3)})
		}
	}},
	{"RangeSortsFiltersCountsAndStripsValues", func(h *harness) {
		h.put("a", "3")
		h.put("b", "1")
		h.put("c", "2")
		h.put("a", "4")
		resp := h.rng(&mvcc.RangeRequest{Key: b("a"), RangeEnd: b("z"), SortTarget: mvcc.SortByValue})
		h.equal("by value", kvs(resp.Kvs), []string{"b=1@3/3/1", "c=2@4/4/1", "a=4@2/5/2"})
		resp = h.rng(&mvcc.RangeRequest{Key: b("a"), RangeEnd: b("z"), SortTarget: mvcc.SortByMod, SortOrder: mvcc.SortDescend, Limit: 2})
		h.equal("by mod desc, limit 2", kvs(resp.Kvs), []string{"a=4@2/5/2", "c=2@4/4/1"})
		h.equal("more", resp.More, true)
		resp = h.rng(&mvcc.RangeRequest{Key: b("a"), RangeEnd: b("z"), MinModRevision: 4})
		h.equal("min mod 4", kvs(resp.Kvs), []string{"a=4@2/5/2", "c=2@4/4/1"})
		h.equal("count ignores filters", resp.Count, int64(3))
		resp = h.rng(&mvcc.RangeRequest{Key: b("a"), RangeEnd: b("z"), CountOnly: true})
		h.equal("count only", []any{len(resp.Kvs), resp.Count}, []any{0, int64(3)})
		resp = h.rng(&mvcc.RangeRequest{Key: b("a"), KeysOnly: true})
		h.equal("keys only", kvs(resp.Kvs), []string{"a=@2/5/2"})
		_, err := h.kv.Range(ctx, &mvcc.RangeRequest{})
		h.wantErr("empty key", err, mvcc.ErrEmptyKey)
	}},
	{"ARangeResponseKeepsWhatItReadAfterLaterWritesAndStrippedReads", func(h *harness) {
		// A single-key read of the newest value shares its Kvs with the
		// store: neither a later write nor a keys-only or filtered read of
		// the same key may change it.
		h.put("foo", "a")
		first := h.rng(&mvcc.RangeRequest{Key: b("foo")})
		h.equal("keys only", kvs(h.rng(&mvcc.RangeRequest{Key: b("foo"), KeysOnly: true}).Kvs), []string{"foo=@2/2/1"})
		h.equal("filtered out", kvs(h.rng(&mvcc.RangeRequest{Key: b("foo"), MinModRevision: 3}).Kvs), []string{})
		h.put("foo", "b")
		h.equal("first read", kvs(first.Kvs), []string{"foo=a@2/2/1"})
		h.equal("second read", kvs(h.rng(&mvcc.RangeRequest{Key: b("foo")}).Kvs), []string{"foo=b@2/3/2"})
		h.equal("at 2", kvs(h.rng(&mvcc.RangeRequest{Key: b("foo"), Revision: 2}).Kvs), []string{"foo=a@2/2/1"})
		h.equal("count only", h.rng(&mvcc.RangeRequest{Key: b("foo"), CountOnly: true}).Count, int64(1))
	}},
	{"PutIncrementsVersionAndModButKeepsCreate", func(h *harness) {
		for i := int64(0); i < 5; i++ {
			h.put("foo", "bar")
			h.equal("kv", kv(h.get("foo", 0)), fmt.Sprintf("foo=bar@2/%d/%d", i+2, i+1))
		}
	}},
	{"PutWithPrevKvAndIgnoreValue", func(h *harness) {
		h.put("foo", "a")
		resp, err := h.kv.Put(ctx, &mvcc.PutRequest{Key: b("foo"), Value: b("b"), PrevKv: true})
		if err != nil {
			h.t.Fatal(err)
		}
		h.equal("prev", kv(resp.PrevKv), "foo=a@2/2/1")
		if _, err := h.kv.Put(ctx, &mvcc.PutRequest{Key: b("foo"), IgnoreValue: true}); err != nil {
			h.t.Fatal(err)
		}
		h.equal("value kept", kv(h.get("foo", 0)), "foo=b@2/4/3")
		_, err = h.kv.Put(ctx, &mvcc.PutRequest{Key: b("nope"), IgnoreValue: true})
		h.wantErr("ignore_value on missing key", err, mvcc.ErrKeyNotFound)
		_, err = h.kv.Put(ctx, &mvcc.PutRequest{Key: b("foo"), Value: b("x"), IgnoreValue: true})
		h.wantErr("value with ignore_value", err, mvcc.ErrValueProvided)
		_, err = h.kv.Put(ctx, &mvcc.PutRequest{Key: b("foo"), Value: b("x"), Lease: 7})
		h.wantErr("unknown lease", err, mvcc.ErrLeaseNotFound)
		h.equal("failed puts take no revision", h.kv.Rev(), int64(4))
	}},
	{"DeleteCountsKeysAndTakesARevisionOnlyWhenItDeletes", func(h *harness) {
		h.put("foo", "a")
		h.put("foo1", "b")
		h.put("foo2", "c")
		resp := h.del("foo3", "")
		h.equal("nothing", []int64{resp.Deleted, resp.Header.Revision}, []int64{0, 4})
		resp = h.del("foo", "foo3")
		h.equal("range", []int64{resp.Deleted, resp.Header.Revision}, []int64{3, 5})
		resp = h.del("foo", "foo3")
		h.equal("again", []int64{resp.Deleted, resp.Header.Revision}, []int64{0, 5})
	}},
	{"DeleteWithPrevKvReturnsWhatItDeleted", func(h *harness) {
		h.put("a", "1")
		h.put("b", "2")
		resp, err := h.kv.DeleteRange(ctx, &mvcc.DeleteRangeRequest{Key: b("a"), RangeEnd: b("\x00"), PrevKv: true})
		if err != nil {
			h.t.Fatal(err)
		}
		h.equal("prev kvs", kvs(resp.PrevKvs), []string{"a=1@2/2/1", "b=2@3/3/1"})
	}},
	{"RecreatedKeyStartsANewGeneration", func(h *harness) {
		h.put("foo", "a")
		h.put("foo", "b")
		h.del("foo", "")
		h.put("foo", "c")
		h.equal("kv", kv(h.get("foo", 0)), "foo=c@5/5/1")
	}},
	{"TxnWritesShareOneRevisionWithOrderedEvents", func(h *harness) {
		h.put("x", "0")
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("\x00"), RangeEnd: b("\x00")})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		resp, err := h.kv.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
			{Put: &mvcc.PutRequest{Key: b("b"), Value: b("1")}},
			{Put: &mvcc.PutRequest{Key: b("a"), Value: b("2")}},
			{DeleteRange: &mvcc.DeleteRangeRequest{Key: b("x")}},
			{Range: &mvcc.RangeRequest{Key: b("a"), RangeEnd: b("c")}},
		}})
		if err != nil {
			h.t.Fatal(err)
		}
		h.equal("rev", resp.Header.Revision, int64(3))
		h.equal("reads own writes", kvs(resp.Responses[3].Range.Kvs), []string{"a=2@3/3/1", "b=1@3/3/1"})
		got := next(h.t, w)
		h.equal("one response, op order", events(got.Events), []string{"PUT b@3", "PUT a@3", "DELETE x@3"})
	}},
	{"TxnComparesOnMissingKeysUseZeroValuesExceptValue", func(h *harness) {
		try := func(c mvcc.Compare) bool {
			c.Key = b("missing")
			resp, err := h.kv.Txn(ctx, &mvcc.TxnRequest{Compare: []mvcc.Compare{c}})
			if err != nil {
				h.t.Fatal(err)
			}
			return resp.Succeeded
		}
		h.equal("mod == 0", try(mvcc.Compare{Target: mvcc.CompareMod}), true)
		h.equal("version == 0", try(mvcc.Compare{Target: mvcc.CompareVersion}), true)
		h.equal("create < 1", try(mvcc.Compare{Target: mvcc.CompareCreate, Result: mvcc.CompareLess, CreateRevision: 1}), true)
		h.equal("value == \"\"", try(mvcc.Compare{Target: mvcc.CompareValue}), false)
		h.equal("value != x", try(mvcc.Compare{Target: mvcc.CompareValue, Result: mvcc.CompareNotEqual, Value: b("x")}), false)
	}},
	{"TxnCompareAndSwapOnModRevision", func(h *harness) {
		rev := h.put("k", "v1")
		cas := func(mod int64, value string) bool {
			resp, err := h.kv.Txn(ctx, &mvcc.TxnRequest{
				Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Key: b("k"), ModRevision: mod}},
				Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b("k"), Value: b(value)}}},
				Failure: []mvcc.RequestOp{{Range: &mvcc.RangeRequest{Key: b("k")}}},
			})
			if err != nil {
				h.t.Fatal(err)
			}
			return resp.Succeeded
		}
		h.equal("current", cas(rev, "v2"), true)
		h.equal("stale", cas(rev, "v3"), false)
		h.equal("value", kv(h.get("k", 0)), "k=v2@2/3/2")
	}},
	{"TxnRefusesDuplicateKeysAndTooManyOps", func(h *harness) {
		_, err := h.kv.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
			{Put: &mvcc.PutRequest{Key: b("a")}}, {Put: &mvcc.PutRequest{Key: b("a")}}}})
		h.wantErr("two puts", err, mvcc.ErrDuplicateKey)
		_, err = h.kv.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
			{DeleteRange: &mvcc.DeleteRangeRequest{Key: b("a"), RangeEnd: b("c")}}, {Put: &mvcc.PutRequest{Key: b("b")}}}})
		h.wantErr("put in deleted range", err, mvcc.ErrDuplicateKey)
		_, err = h.kv.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
			{Txn: &mvcc.TxnRequest{Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b("a")}}}, Failure: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b("a")}}}}}}})
		h.wantErr("then and else may repeat a key", err, nil)
		ops := make([]mvcc.RequestOp, mvcc.DefaultMaxTxnOps+1)
		for i := range ops {
			ops[i] = mvcc.RequestOp{Put: &mvcc.PutRequest{Key: b(fmt.Sprint(i))}}
		}
		_, err = h.kv.Txn(ctx, &mvcc.TxnRequest{Success: ops})
		h.wantErr("129 ops", err, mvcc.ErrTooManyOps)
		_, err = h.kv.Txn(ctx, &mvcc.TxnRequest{Success: ops[:mvcc.DefaultMaxTxnOps]})
		h.wantErr("128 ops", err, nil)
	}},
	{"NestedTxnComparesSeeTheStateBeforeTheTxn", func(h *harness) {
		resp, err := h.kv.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
			{Put: &mvcc.PutRequest{Key: b("a"), Value: b("1")}},
			{Txn: &mvcc.TxnRequest{
				Compare: []mvcc.Compare{{Target: mvcc.CompareVersion, Key: b("a")}},
				Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b("b"), Value: b("then")}}},
				Failure: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b("b"), Value: b("else")}}},
			}},
		}})
		if err != nil {
			h.t.Fatal(err)
		}
		h.equal("nested took then", resp.Responses[1].Txn.Succeeded, true)
		h.equal("b", kv(h.get("b", 0)), "b=then@2/2/1")
		h.equal("nested header is empty", resp.Responses[1].Txn.Header.Revision, int64(0))
	}},
	{"ReadOnlyTxnTakesNoRevision", func(h *harness) {
		h.put("a", "1")
		resp, err := h.kv.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{{Range: &mvcc.RangeRequest{Key: b("a")}}}})
		if err != nil {
			h.t.Fatal(err)
		}
		h.equal("rev", []int64{resp.Header.Revision, h.kv.Rev()}, []int64{2, 2})
	}},
	{"CompactKeepsTheLatestRevisionOfEachKey", func(h *harness) {
		h.put("foo", "bar0")
		h.put("foo", "bar1")
		h.del("foo", "")
		h.put("foo", "bar2")
		want := map[int64]string{1: "foo=bar0@2/2/1", 2: "foo=bar1@2/3/2", 3: "<none>", 4: "foo=bar2@5/5/1"}
		for rev := int64(1); rev <= 4; rev++ {
			if _, err := h.kv.Compact(ctx, &mvcc.CompactionRequest{Revision: rev, Physical: true}); err != nil {
				h.t.Fatal(err)
			}
			h.equal(fmt.Sprintf("after compact(%d)", rev), kv(h.get("foo", rev+1)), want[rev])
		}
	}},
	{"CompactErrorsAtOrBelowTheLastCompactionAndInTheFuture", func(h *harness) {
		h.put("foo", "a")
		h.put("foo", "b")
		h.put("foo", "c")
		for _, tc := range []struct {
			rev  int64
			want error
		}{{0, nil}, {1, nil}, {1, mvcc.ErrCompacted}, {4, nil}, {5, mvcc.ErrFutureRev}, {4, mvcc.ErrCompacted}} {
			_, err := h.kv.Compact(ctx, &mvcc.CompactionRequest{Revision: tc.rev})
			h.wantErr(fmt.Sprintf("compact(%d)", tc.rev), err, tc.want)
		}
	}},
	{"RestartRebuildsTheSameState", func(h *harness) {
		h.put("a", "1")
		h.put("a", "2")
		h.put("b", "1")
		h.del("b", "")
		h.put("b", "2")
		h.put("c", "1")
		if _, err := h.kv.Compact(ctx, &mvcc.CompactionRequest{Revision: 4, Physical: true}); err != nil {
			h.t.Fatal(err)
		}
		before := kvs(h.rng(&mvcc.RangeRequest{Key: b("\x00"), RangeEnd: b("\x00")}).Kvs)
		at4 := kvs(h.rng(&mvcc.RangeRequest{Key: b("\x00"), RangeEnd: b("\x00"), Revision: 4}).Kvs)
		h.restart()
		h.equal("rev", h.kv.Rev(), int64(7))
		h.equal("compact rev", h.kv.CompactRev(), int64(4))
		h.equal("current", kvs(h.rng(&mvcc.RangeRequest{Key: b("\x00"), RangeEnd: b("\x00")}).Kvs), before)
		h.equal("at 4", kvs(h.rng(&mvcc.RangeRequest{Key: b("\x00"), RangeEnd: b("\x00"), Revision: 4}).Kvs), at4)
		_, err := h.kv.Range(ctx, &mvcc.RangeRequest{Key: b("a"), Revision: 3})
		h.wantErr("below compaction", err, mvcc.ErrCompacted)
		h.equal("next write", h.put("a", "3"), int64(8))
		h.equal("version continues", kv(h.get("a", 0)), "a=3@2/8/3")
	}},
	{"RestartAfterCompactingEverythingNeverGoesBack", func(h *harness) {
		h.put("a", "1")
		h.del("a", "")
		if _, err := h.kv.Compact(ctx, &mvcc.CompactionRequest{Revision: 3, Physical: true}); err != nil {
			h.t.Fatal(err)
		}
		h.restart()
		h.equal("rev", h.kv.Rev(), int64(3))
	}},
	{"WatchFromAnOldRevisionReplaysHistoryThenFollows", func(h *harness) {
		h.put("a", "1")
		h.put("b", "1")
		h.put("a", "2")
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("a"), StartRevision: 2})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		h.put("a", "3")
		h.del("a", "")
		h.equal("events", collect(h.t, w, 4), []string{"PUT a@2", "PUT a@4", "PUT a@5", "DELETE a@6"})
	}},
	{"WatchFromZeroSeesOnlyLaterEvents", func(h *harness) {
		h.put("a", "1")
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("a")})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		h.put("a", "2")
		resp := next(h.t, w)
		h.equal("events", events(resp.Events), []string{"PUT a@3"})
		h.equal("header", resp.Header.Revision, int64(3))
	}},
	{"WatchFromAFutureRevisionWaitsForIt", func(h *harness) {
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("a"), StartRevision: 4})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		h.put("a", "1")
		h.put("a", "2")
		h.put("a", "3")
		h.put("a", "4")
		h.equal("events", collect(h.t, w, 2), []string{"PUT a@4", "PUT a@5"})
	}},
	{"WatchWithPrevKvAndFilters", func(h *harness) {
		h.put("a", "1")
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("a"), RangeEnd: b("b"), StartRevision: 2, PrevKv: true, Filters: []mvcc.WatchFilter{mvcc.FilterNoDelete}})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		h.put("a", "2")
		h.del("a", "")
		h.put("a", "3")
		h.equal("events", collect(h.t, w, 3), []string{"PUT a@2", "PUT a@3/prev=1", "PUT a@5"})
	}},
	{"WatchOfAnEmptyRangeIsRefused", func(h *harness) {
		_, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("b"), RangeEnd: b("a")})
		if err == nil || err.Error() != mvcc.ReasonEmptyWatchRange {
			h.t.Fatalf("got %v", err)
		}
	}},
	{"CompactionRemovesATombstoneAtTheCompactRevision", func(h *harness) {
		h.put("xx", "1")
		h.put("xx", "2")
		h.del("xx", "")
		h.put("yy", "1")
		// A Store skips the tombstone at once; etcd 3.4 drops it in the
		// physical step of its compaction, which runs after Compact
		// returns unless Physical is set: until then a watch from the
		// compact revision still sees the delete there.
		if _, err := h.kv.Compact(ctx, &mvcc.CompactionRequest{Revision: 4, Physical: h.s == nil}); err != nil {
			h.t.Fatal(err)
		}
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("\x00"), RangeEnd: b("\x00"), StartRevision: 4})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		h.put("zz", "1")
		h.equal("no DELETE at the compact revision", collect(h.t, w, 2), []string{"PUT yy@5", "PUT zz@6"})
	}},
	{"WatchFromACompactedRevisionIsCancelledWithTheCompactRevision", func(h *harness) {
		h.put("a", "1")
		h.put("a", "2")
		h.put("a", "3")
		if _, err := h.kv.Compact(ctx, &mvcc.CompactionRequest{Revision: 3}); err != nil {
			h.t.Fatal(err)
		}
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("a"), StartRevision: 2})
		if err != nil {
			h.t.Fatal(err)
		}
		resp := next(h.t, w)
		h.equal("compact revision", resp.CompactRevision, int64(3))
		ended(h.t, w, mvcc.ErrCompacted)
		w2, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("a"), StartRevision: 3})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w2.Cancel()
		h.equal("start == compact rev is fine", collect(h.t, w2, 2), []string{"PUT a@3", "PUT a@4"})
	}},
	{"ConcurrentWritersGetTheirOwnRevisionsAndWatchersEveryValue", func(h *harness) {
		// Writers on several goroutines, puts and compare-and-swap txns
		// mixed: every response carries the revision of its own write, and
		// a watcher of the prefix sees each write once, with its value, in
		// revision order (the store reuses a finished write's buffers).
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("c/"), RangeEnd: b("c0")})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		const writers, each = 8, 100
		revs := make(chan string, writers*each)
		errs := make(chan error, writers)
		for g := range writers {
			go func() {
				for i := range each {
					key, value := fmt.Sprintf("c/%d", g), fmt.Sprintf("%d.%d", g, i)
					var rev int64
					if i%2 == 0 {
						r, err := h.kv.Put(ctx, &mvcc.PutRequest{Key: b(key), Value: b(value)})
						if err != nil {
							errs <- err
							return
						}
						rev = r.Header.Revision
					} else {
						// Only this goroutine writes key: the compare holds.
						cur, err := h.kv.Range(ctx, &mvcc.RangeRequest{Key: b(key)})
						if err != nil {
							errs <- err
							return
						}
						r, err := h.kv.Txn(ctx, &mvcc.TxnRequest{
							Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Key: b(key), ModRevision: cur.Kvs[0].ModRevision}},
							Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b(key), Value: b(value)}}},
						})
						if err != nil || !r.Succeeded {
							errs <- fmt.Errorf("txn on %s: succeeded %v, %v", key, r != nil && r.Succeeded, err)
							return
						}
						rev = r.Header.Revision
					}
					revs <- fmt.Sprintf("%s=%s@%d", key, value, rev)
				}
				errs <- nil
			}()
		}
		for range writers {
			if err := <-errs; err != nil {
				h.t.Fatal(err)
			}
		}
		close(revs)
		want := map[string]bool{}
		for r := range revs {
			want[r] = true
		}
		var last int64
		for seen := 0; seen < writers*each; {
			for _, ev := range next(h.t, w).Events {
				got := fmt.Sprintf("%s=%s@%d", ev.Kv.Key, ev.Kv.Value, ev.Kv.ModRevision)
				if !want[got] || ev.Kv.ModRevision <= last {
					h.t.Fatalf("event %d: %s (after revision %d) is not a write's own response", seen, got, last)
				}
				delete(want, got)
				last = ev.Kv.ModRevision
				seen++
			}
		}
	}},
	{"SlowWatcherNeverBlocksWritersAndLosesNothing", func(h *harness) {
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("k")})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		const n = 600 // well past the watcher's queue
		for i := 0; i < n; i++ {
			h.put("k", fmt.Sprint(i))
		}
		got := collect(h.t, w, n)
		for i, e := range got {
			if want := fmt.Sprintf("PUT k@%d", i+2); e != want {
				h.t.Fatalf("event %d: got %s want %s", i, e, want)
			}
		}
	}},
	{"EventsAndProgressKeepTheirOrderWhileTheConsumerReadsConcurrently", func(h *harness) {
		// Responses reach a watcher either straight from the committer or
		// through its goroutine (when some are queued); whichever way,
		// events arrive once each, in revision order, and a progress
		// notification never overtakes an event before it nor trails one
		// after it.
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("k")})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		const n = 500
		type mark struct {
			rev      int64
			progress bool
		}
		got := make(chan []mark)
		go func() {
			var marks []mark
			for events := 0; events < n; {
				resp, err := w.Next(ctx)
				if err != nil {
					break
				}
				if resp.ProgressNotify {
					marks = append(marks, mark{resp.Header.Revision, true})
				}
				for _, e := range resp.Events {
					marks = append(marks, mark{e.Kv.ModRevision, false})
					events++
				}
			}
			got <- marks
		}()
		for i := 0; i < n; i++ {
			h.put("k", fmt.Sprint(i))
			if i%7 == 0 {
				w.RequestProgress()
			}
		}
		var last int64 = 1
		for i, m := range <-got {
			switch {
			case !m.progress && m.rev != last+1:
				h.t.Fatalf("mark %d: event at %d after revision %d", i, m.rev, last)
			case m.progress && m.rev < last:
				h.t.Fatalf("mark %d: progress at %d after an event at %d", i, m.rev, last)
			}
			last = m.rev
		}
		if last != n+1 {
			h.t.Fatalf("last revision seen %d, want %d", last, n+1)
		}
	}},
	{"ProgressNotificationCarriesTheCurrentRevision", func(h *harness) {
		h.put("other", "1")
		w, err := h.watch(ctx, &mvcc.WatchRequest{Key: b("a")})
		if err != nil {
			h.t.Fatal(err)
		}
		defer w.Cancel()
		h.put("other", "2")
		if !w.RequestProgress() {
			h.t.Fatal("synced watcher refused progress")
		}
		resp := next(h.t, w)
		h.equal("progress", []any{resp.ProgressNotify, resp.Header.Revision, len(resp.Events)}, []any{true, int64(3), 0})
	}},
	{"CancelledContextEndsTheWatcher", func(h *harness) {
		c, cancel := context.WithCancel(ctx)
		w, err := h.watch(c, &mvcc.WatchRequest{Key: b("a")})
		if err != nil {
			h.t.Fatal(err)
		}
		cancel()
		ended(h.t, w, mvcc.ErrWatcherCanceled)
	}},
}

func init() {
	cases = append(cases, testCase{"TxnRefusesAPutRepeatedInANestedTxn", func(h *harness) {
		_, err := h.kv.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
			{Put: &mvcc.PutRequest{Key: b("a")}},
			{Txn: &mvcc.TxnRequest{Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: b("a")}}}}},
		}})
		h.wantErr("nested repeat", err, mvcc.ErrDuplicateKey)
	}})
}

func init() {
	cases = append(cases, testCase{"TxnChecksPutsBeforeRangeRevisions", func(h *harness) {
		_, err := h.kv.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
			{Range: &mvcc.RangeRequest{Key: b("a"), Revision: 100}},
			{Put: &mvcc.PutRequest{Key: b("missing"), IgnoreValue: true}},
		}})
		h.wantErr("put check first", err, mvcc.ErrKeyNotFound)
		_, err = h.kv.Put(ctx, &mvcc.PutRequest{Key: b("missing"), IgnoreValue: true, Lease: 5})
		h.wantErr("unary put checks the lease first", err, mvcc.ErrLeaseNotFound)
	}})
}

func init() {
	cases = append(cases, testCase{"CloseCommitsAcceptedWritesAndRefusesNewOnes", func(h *harness) {
		// Writers race Close: every write either commits (and is there
		// after a restart) or fails with ErrStopped; none is half done.
		const writers = 8
		revs := make(chan int64, writers*50)
		done := make(chan struct{})
		s := h.kv
		for w := 0; w < writers; w++ {
			go func(w int) {
				defer func() { done <- struct{}{} }()
				for i := 0; i < 50; i++ {
					resp, err := s.Put(ctx, &mvcc.PutRequest{Key: b(fmt.Sprintf("w%d-%d", w, i)), Value: b("v")})
					if err == mvcc.ErrStopped {
						return
					}
					if err != nil {
						h.t.Errorf("put: %v", err)
						return
					}
					revs <- resp.Header.Revision
				}
			}(w)
		}
		h.put("first", "x")
		h.restart()
		for w := 0; w < writers; w++ {
			<-done
		}
		close(revs)
		for rev := range revs {
			if rev > h.kv.Rev() {
				h.t.Fatalf("acknowledged revision %d lost: store is at %d", rev, h.kv.Rev())
			}
		}
	}})
}
