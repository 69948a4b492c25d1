package kubeapi

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// A watch past the client's or the session's cap is refused before the
// stream with kube's 429: a TooManyRequests Status and Retry-After.
const tooManyRequestsBody = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}`

func watchWith(h *Handler, ctx context.Context) *api.Response {
	u, _ := url.Parse("/api/v1/namespaces/default/configmaps?watch=1")
	return h.Serve(ctx, &api.Request{Method: "GET", Path: u.Path, Query: u.Query(), Header: api.Header{}})
}

func wantTooManyRequests(t *testing.T, resp *api.Response) {
	t.Helper()
	if resp.Status != 429 || string(resp.Body) != tooManyRequestsBody || resp.Header.Get("Retry-After") != "1" ||
		resp.Header.Get("Content-Type") != "application/json" || resp.Stream != nil {
		t.Fatalf("got %d %v %s %v", resp.Status, resp.Header, resp.Body, resp.Stream)
	}
}

func TestAWatchBeyondTheClientsCapIs429(t *testing.T) {
	f := newFixture(t)
	client := api.NewCounter(2)
	ctx := api.WithWatchLimiter(context.Background(), client)
	a, b := watchWith(f.h, ctx), watchWith(f.h, ctx)
	if a.Status != 200 || b.Status != 200 {
		t.Fatalf("%d %d", a.Status, b.Status)
	}
	wantTooManyRequests(t, watchWith(f.h, ctx))
	if other := watchWith(f.h, context.Background()); other.Status != 200 {
		t.Fatalf("another client: %d", other.Status)
	} else {
		other.Stream.Close()
	}
	a.Stream.Close()
	c := watchWith(f.h, ctx)
	if c.Status != 200 {
		t.Fatalf("after a watch closed: %d %s", c.Status, c.Body)
	}
	b.Stream.Close()
	c.Stream.Close()
	c.Stream.Close() // twice gives back one unit
	if client.Held() != 0 {
		t.Fatalf("held %d after every watch closed", client.Held())
	}
}

func TestAWatchBeyondTheSessionsCapIs429(t *testing.T) {
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{MaxWatchers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h := New(Options{Store: st, Kube: kube.Options{Clock: clock.NewFake(time.Date(2026, 11, 22, 1, 45, 6, 0, time.UTC))}})
	t.Cleanup(h.Registry().Close)
	client := api.NewCounter(0)
	ctx := api.WithWatchLimiter(context.Background(), client)
	first := watchWith(h, ctx)
	if first.Status != 200 {
		t.Fatalf("%d %s", first.Status, first.Body)
	}
	defer first.Stream.Close()
	wantTooManyRequests(t, watchWith(h, ctx))
	if client.Held() != 1 {
		t.Fatalf("a refused watch kept the client's unit: held %d", client.Held())
	}
}
