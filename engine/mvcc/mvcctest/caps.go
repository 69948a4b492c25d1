package mvcctest

import "github.com/rvplay/rvplay/engine/mvcc"

func init() {
	cases = append(cases, testCase{"WatchersBeyondTheStoresCapAreRefusedUntilOneEnds", func(h *harness) {
		opts := options()
		opts.MaxWatchers = 3
		h.reopen(nil, opts)
		var ws []*mvcc.Watcher
		for range 3 {
			w, err := h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("a")})
			if err != nil {
				h.t.Fatal(err)
			}
			ws = append(ws, w)
		}
		_, err := h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("a"), StartRevision: 1})
		h.wantErr("a fourth watcher", err, mvcc.ErrTooManyRequests)
		ws[0].Cancel()
		w, err := h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("a")})
		if err != nil {
			h.t.Fatalf("after a cancel: %v", err)
		}
		// The watchers that were let in work as before.
		h.put("a", "1")
		for _, w := range append(ws[1:], w) {
			h.equal("event", events(next(h.t, w).Events), []string{"PUT a@2"})
			w.Cancel()
		}
	}})
}
