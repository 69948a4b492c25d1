package mvcctest

import (
	"context"
	"runtime"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

func init() {
	storeCases = append(storeCases, testCase{"WatchersBeyondTheStoresCapAreRefusedUntilOneEnds", func(h *harness) {
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

func init() {
	storeCases = append(storeCases, testCase{"AdmittedWatchersCountAgainstTheCapUncappedOnesDoNot", func(h *harness) {
		// A server's own watch that serves many clients (kube's watch
		// cache) is Uncapped; each client it serves takes a slot with
		// AdmitWatcher, refused as a watcher is when none is left.
		opts := options()
		opts.MaxWatchers = 2
		h.reopen(nil, opts)
		own, err := h.s.Watch(mvcc.Uncapped(ctx), &mvcc.WatchRequest{Key: b("a")})
		if err != nil {
			h.t.Fatal(err)
		}
		defer own.Cancel()
		release, err := h.s.AdmitWatcher()
		if err != nil {
			h.t.Fatal(err)
		}
		w, err := h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("a")})
		if err != nil {
			h.t.Fatalf("the second slot: %v", err)
		}
		_, err = h.s.AdmitWatcher()
		h.wantErr("a third client", err, mvcc.ErrTooManyRequests)
		_, err = h.s.Watch(ctx, &mvcc.WatchRequest{Key: b("a")})
		h.wantErr("a third watcher", err, mvcc.ErrTooManyRequests)
		release()
		release() // once only
		again, err := h.s.AdmitWatcher()
		if err != nil {
			h.t.Fatalf("after a release: %v", err)
		}
		_, err = h.s.AdmitWatcher()
		h.wantErr("both slots taken again", err, mvcc.ErrTooManyRequests)
		again()
		w.Cancel()
	}})
}

func init() {
	storeCases = append(storeCases, testCase{"WatchersCostNoGoroutineOfTheirOwn", func(h *harness) {
		// A thousand watchers, synced and catching up, bound to contexts
		// or not, in streams of their own and in one shared stream: the
		// consumers that call Next do the delivering, so making them
		// starts no goroutine.
		h.put("a", "1")
		c, cancel := context.WithCancel(ctx)
		defer cancel()
		before := runtime.NumGoroutine()
		shared := h.s.NewWatchStream(mvcc.WatchStreamOptions{})
		defer shared.Close()
		for i := range 1000 {
			r := &mvcc.WatchRequest{Key: b("a"), StartRevision: int64(i % 3)}
			var err error
			switch i % 4 {
			case 0:
				_, err = h.s.Watch(ctx, r)
			case 1:
				_, err = h.s.Watch(c, r)
			default:
				_, err = shared.Watch(c, r)
			}
			if err != nil {
				h.t.Fatal(err)
			}
		}
		if after := runtime.NumGoroutine(); after > before+2 {
			h.t.Fatalf("1000 watchers made %d goroutines", after-before)
		}
		// They work: the shared stream delivers each of its watchers' events.
		h.put("a", "2")
		seen := 0
		for seen < 500 {
			c, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, resp, err := shared.Next(c)
			cancel()
			if err != nil {
				h.t.Fatal(err)
			}
			for _, ev := range resp.Events {
				if ev.Kv.ModRevision == 3 {
					seen++
				}
			}
		}
	}})
}
