package kubeapi

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// cacheHandler is a Kubernetes API with the watch cache on, over a store
// holding at most maxWatchers watchers (0: any number).
func cacheHandler(t *testing.T, maxWatchers int) (*Handler, *clock.Fake) {
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{MaxWatchers: maxWatchers})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := clock.NewFake(time.Date(2026, 11, 22, 1, 45, 6, 0, time.UTC))
	h := New(Options{Store: st, Kube: kube.Options{Clock: c, WatchCache: true}})
	t.Cleanup(h.Registry().Close)
	return h, c
}

func get(h *Handler, path string) *api.Response {
	u, _ := url.Parse(path)
	return h.Serve(context.Background(), &api.Request{Method: "GET", Path: u.Path, Query: u.Query(), Header: api.Header{}})
}

// A read from a revision the store has not reached waits for the watch
// cache (kube's blockTimeout, 3 s, on the session's clock), then answers
// 504 with retryAfterSeconds and a Retry-After header of 1 s.
func TestAFutureResourceVersionWaitsForTheCacheThenIs504WithRetryAfter(t *testing.T) {
	h, clock := cacheHandler(t, 0)
	if r := get(h, "/api/v1/namespaces/default/configmaps"); r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	for _, path := range []string{
		"/api/v1/namespaces/default/configmaps/a?resourceVersion=999",
		"/api/v1/namespaces/default/configmaps?resourceVersion=999",
	} {
		done := make(chan *api.Response)
		start := clock.Now()
		go func() { done <- get(h, path) }()
		// Time passes, 3 s at a time, whenever a timer is armed.
		var r *api.Response
		for r == nil {
			armed := clock.TimerCreated()
			if clock.Timers() > 0 {
				clock.Step(3 * time.Second)
			}
			select {
			case r = <-done:
			case <-armed:
			}
		}
		if r.Status != 504 || r.Header.Get("Retry-After") != "1" || clock.Now().Sub(start) < 3*time.Second {
			t.Fatalf("%s: %d %v %s", path, r.Status, r.Header, r.Body)
		}
		if want := `"message":"Timeout: Too large resource version: 999, current: `; !contains(r.Body, want) || !contains(r.Body, `"retryAfterSeconds":1`) {
			t.Fatalf("%s: %s", path, r.Body)
		}
	}
}

// The watches a cache serves take the session's watcher slots as store
// watches do (the cache's own store watches take none): past the cap, 429.
func TestWatchesTheCacheServesCountAgainstTheSessionsCap(t *testing.T) {
	h, _ := cacheHandler(t, 1)
	client := api.NewCounter(0)
	ctx := api.WithWatchLimiter(context.Background(), client)
	first := watchWith(h, ctx)
	if first.Status != 200 {
		t.Fatalf("%d %s", first.Status, first.Body)
	}
	wantTooManyRequests(t, watchWith(h, ctx))
	first.Stream.Close()
	again := watchWith(h, ctx)
	if again.Status != 200 {
		t.Fatalf("after the first ended: %d %s", again.Status, again.Body)
	}
	again.Stream.Close()
}

func contains(b []byte, s string) bool { return strings.Contains(string(b), s) }
