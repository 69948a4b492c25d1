package mvcctest

import (
	"fmt"
	"runtime"
	"strings"
	"sync"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The backend's paged Scan, and watchers catching up through it: a
// watcher holds one page of history at a time whatever the history's
// size, at most as many watchers as the limiter has slots read at once,
// and no event is lost, repeated or split from its revision.

// recordingBackend remembers the largest page its Scan returned and how
// many Scans ran at once.
type recordingBackend struct {
	mvcc.Backend

	mu                   sync.Mutex
	scans, running, most int
	mostRecords          int
	mostBytes            int
}

func (r *recordingBackend) Scan(after mvcc.Revision, to int64, limit mvcc.PageLimit, page []mvcc.Record) ([]mvcc.Record, bool, error) {
	r.mu.Lock()
	r.scans++
	r.running++
	r.most = max(r.most, r.running)
	r.mu.Unlock()
	// Let other goroutines run while this scan is in progress: without a
	// bound, watchers catching up would overlap here.
	for range 10 {
		runtime.Gosched()
	}
	n := len(page)
	page, more, err := r.Backend.Scan(after, to, limit, page)
	size := 0
	for i := n; i < len(page); i++ {
		size += page[i].Size()
	}
	r.mu.Lock()
	r.running--
	r.mostRecords = max(r.mostRecords, len(page)-n)
	r.mostBytes = max(r.mostBytes, size)
	r.mu.Unlock()
	return page, more, err
}

func revs(recs []mvcc.Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, fmt.Sprintf("%d.%d", r.Rev.Main, r.Rev.Sub))
	}
	return out
}

func init() {
	storeCases = append(storeCases,
		testCase{"ScanReadsOnePageAfterTheGivenRevisionUpToTo", func(h *harness) {
			// Revision 2 puts three keys, 3 a large value, 4 deletes two keys.
			_, err := h.s.Txn(ctx, &mvcc.TxnRequest{Success: []mvcc.RequestOp{
				{Put: &mvcc.PutRequest{Key: b("a"), Value: b("1")}},
				{Put: &mvcc.PutRequest{Key: b("b"), Value: b("1")}},
				{Put: &mvcc.PutRequest{Key: b("c"), Value: b("1")}},
			}})
			if err != nil {
				h.t.Fatal(err)
			}
			h.put("big", strings.Repeat("x", 100))
			h.del("a", "bb")
			h.put("d", "1")
			h.put("d", "2")
			scan := func(after mvcc.Revision, to int64, limit mvcc.PageLimit) ([]string, bool) {
				page, more, err := h.b.Scan(after, to, limit, nil)
				if err != nil {
					h.t.Fatal(err)
				}
				return revs(page), more
			}
			from := func(rev int64) mvcc.Revision { return mvcc.Revision{Main: rev, Sub: -1} }
			all := []string{"2.0", "2.1", "2.2", "3.0", "4.0", "4.1", "5.0", "6.0"}
			page, more := scan(from(2), 6, mvcc.PageLimit{})
			h.equal("everything", []any{page, more}, []any{all, false})
			page, more = scan(from(2), 6, mvcc.PageLimit{Records: 2})
			h.equal("two records", []any{page, more}, []any{all[:2], true})
			page, more = scan(mvcc.Revision{Main: 2, Sub: 1}, 6, mvcc.PageLimit{Records: 2})
			h.equal("after 2.1", []any{page, more}, []any{all[2:4], true})
			page, more = scan(from(4), 4, mvcc.PageLimit{Records: 2})
			h.equal("to ends the page, not the limit", []any{page, more}, []any{all[4:6], false})
			page, more = scan(from(2), 6, mvcc.PageLimit{Bytes: 4})
			h.equal("the record that reaches the bytes ends the page", []any{page, more}, []any{all[:2], true})
			page, more = scan(from(3), 6, mvcc.PageLimit{Bytes: 4})
			h.equal("a record above the bytes is a page of its own", []any{page, more}, []any{all[3:4], true})
			page, more = scan(from(7), 100, mvcc.PageLimit{Records: 2})
			h.equal("past the end", []any{page, more}, []any{[]string{}, false})
			// Records removed by compaction are not read.
			if _, err := h.s.Compact(ctx, &mvcc.CompactionRequest{Revision: 6, Physical: true}); err != nil {
				h.t.Fatal(err)
			}
			page, more = scan(from(1), 6, mvcc.PageLimit{Records: 2})
			h.equal("after compaction", []any{page, more}, []any{[]string{"2.2", "3.0"}, true})
			page, more = scan(mvcc.Revision{Main: 3, Sub: 0}, 6, mvcc.PageLimit{Records: 2})
			h.equal("after compaction, next page", []any{page, more}, []any{[]string{"6.0"}, false})
		}},
		testCase{"CatchingUpWatchersReadOnePageAtATimeAndTakeTurns", func(h *harness) {
			// Twenty watchers from revision 1 over a history of 600
			// revisions of 100 bytes, two catch-up slots, pages of 16
			// records: no watcher ever reads more than a page at once,
			// no more than two read at the same time, and each sees every
			// revision once, in order.
			rec := &recordingBackend{}
			opts := options()
			opts.CatchUp = mvcc.NewCatchUpLimiter(2)
			opts.CatchUpPage = mvcc.PageLimit{Records: 16, Bytes: 1 << 20}
			h.reopen(func(b mvcc.Backend) mvcc.Backend { rec.Backend = b; return rec }, opts)
			const history = 600
			value := strings.Repeat("v", 100)
			for i := range history {
				h.put(fmt.Sprintf("k%d", i%37), value)
			}
			const watchers = 20
			var wg sync.WaitGroup
			errs := make(chan error, watchers)
			for range watchers {
				w, err := h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("\x00"), RangeEnd: b("\x00"), StartRevision: 1})
				if err != nil {
					h.t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer w.Cancel()
					want := int64(2)
					for want <= history+1 {
						resp, err := w.Next(ctx)
						if err != nil {
							errs <- fmt.Errorf("watcher ended at revision %d: %v", want, err)
							return
						}
						for _, ev := range resp.Events {
							if ev.Kv.ModRevision != want {
								errs <- fmt.Errorf("event at %d, want %d", ev.Kv.ModRevision, want)
								return
							}
							want++
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				h.t.Fatal(err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if rec.mostRecords > 16 {
				h.t.Errorf("a scan returned %d records; the page is 16", rec.mostRecords)
			}
			if rec.most > 2 {
				h.t.Errorf("%d scans ran at once; the limiter has 2 slots", rec.most)
			}
			if min := watchers * history / 16; rec.scans < min {
				h.t.Errorf("%d scans for %d watchers over %d records: not paged", rec.scans, watchers, history)
			}
		}},
		testCase{"CatchUpNeverSplitsARevisionAcrossResponses", func(h *harness) {
			// Txns of four puts, pages of five records, and one delete of
			// eight keys, larger than a page: every response holds whole
			// revisions.
			for i := range 6 {
				var ops []mvcc.RequestOp
				for j := range 4 {
					ops = append(ops, mvcc.RequestOp{Put: &mvcc.PutRequest{Key: b(fmt.Sprintf("k%d-%d", i, j)), Value: b("v")}})
				}
				if _, err := h.s.Txn(ctx, &mvcc.TxnRequest{Success: ops}); err != nil {
					h.t.Fatal(err)
				}
			}
			h.del("k0", "k2")
			h.put("z", "1")
			w, err := h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("\x00"), RangeEnd: b("\x00"), StartRevision: 1})
			if err != nil {
				h.t.Fatal(err)
			}
			defer w.Cancel()
			type whole struct{ rev, events int64 }
			var got []whole
			for seen := 0; seen < 6*4+8+1; {
				resp := next(h.t, w)
				per := map[int64]int64{}
				for _, ev := range resp.Events {
					per[ev.Kv.ModRevision]++
				}
				for rev, n := range per {
					got = append(got, whole{rev, n})
				}
				seen += len(resp.Events)
			}
			for _, g := range got {
				want := int64(4)
				switch {
				case g.rev == 8:
					want = 8
				case g.rev == 9:
					want = 1
				}
				if g.events != want {
					h.t.Fatalf("revision %d came with %d events in one response, want %d (all: %v)", g.rev, g.events, want, got)
				}
			}
		}},
		testCase{"CompactionDuringCatchUpEndsTheWatcherWithTheCompactRevision", func(h *harness) {
			// More history than the watcher can have read ahead of its
			// consumer.
			for i := range 200 {
				h.put("k", fmt.Sprint(i))
			}
			w, err := h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("k"), StartRevision: 2})
			if err != nil {
				h.t.Fatal(err)
			}
			defer w.Cancel()
			first := next(h.t, w)
			if len(first.Events) == 0 || first.Events[0].Kv.ModRevision != 2 {
				h.t.Fatalf("first response: %v", events(first.Events))
			}
			if _, err := h.s.Compact(ctx, &mvcc.CompactionRequest{Revision: 150, Physical: true}); err != nil {
				h.t.Fatal(err)
			}
			want := first.Events[len(first.Events)-1].Kv.ModRevision + 1
			for {
				resp := next(h.t, w)
				if resp.CompactRevision != 0 {
					h.equal("compact revision", resp.CompactRevision, int64(150))
					break
				}
				for _, ev := range resp.Events {
					if ev.Kv.ModRevision != want {
						h.t.Fatalf("event at %d, want %d", ev.Kv.ModRevision, want)
					}
					want++
				}
			}
			if want >= 150 {
				h.t.Fatalf("the watcher got to %d, past the compaction: nothing was compacted under it", want)
			}
			ended(h.t, w, mvcc.ErrCompacted)
		}},
	)
}
