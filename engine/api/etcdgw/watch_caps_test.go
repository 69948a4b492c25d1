package etcdgw

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// A watch past a cap is answered as etcd answers one its server refuses:
// created and canceled, watch_id -1, "etcdserver: too many requests".
const tooManyRequests = `{"result":{"header":{"cluster_id":"%d","member_id":"%d","revision":"%d","raft_term":"2"},"watch_id":"-1","created":true,"canceled":true,"cancel_reason":"etcdserver: too many requests"}}` + "\n"

func (e *testEnv) refused(rev int64) string {
	o := e.gw.opts
	return fmt.Sprintf(tooManyRequests, o.ClusterID, o.MemberID, rev)
}

func nextRaw(t *testing.T, s api.Stream) string {
	t.Helper()
	b, err := s.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func creates(n int, key string) string {
	return strings.Repeat(fmt.Sprintf(`{"create_request":{"key":%q}} `, b64(key)), n)
}

func TestAWatchBeyondTheStreamsCapIsCreatedAndCanceled(t *testing.T) {
	e := newEnv(t)
	e.gw.opts.MaxWatchersPerStream = 2
	s := e.watch(creates(3, "k"))
	next(t, s)
	next(t, s)
	if got, want := nextRaw(t, s), e.refused(1); got != want {
		t.Fatalf("third watch:\n got  %s want %s", got, want)
	}
	// A cancel makes room; the two watches that were made deliver.
	if err := s.(*watchStream).Receive([]byte(`{"cancel_request":{"watch_id":"0"}}` + creates(1, "k"))); err != nil {
		t.Fatal(err)
	}
	if f := next(t, s); !f.Result.Canceled || f.Result.WatchID != "" {
		t.Fatalf("cancel: %+v", f.Result)
	}
	if f := next(t, s); !f.Result.Created || f.Result.Canceled || f.Result.WatchID != "2" {
		t.Fatalf("after a cancel: %+v", f.Result)
	}
	e.put("k", "1")
	got := map[string]int{}
	for range 2 {
		f := next(t, s)
		got[f.Result.WatchID] += len(f.Result.Events)
	}
	if got["1"] != 1 || got["2"] != 1 {
		t.Fatalf("events per watch: %v", got)
	}
}

func TestAClientsWatchesCountAcrossItsStreams(t *testing.T) {
	e := newEnv(t)
	client := api.NewCounter(3)
	ctx := api.WithWatchLimiter(context.Background(), client)
	serve := func(body string) api.Stream {
		resp := e.gw.Serve(ctx, &api.Request{Method: "POST", Path: "/v3/watch", Body: []byte(body)})
		t.Cleanup(resp.Stream.Close)
		return resp.Stream
	}
	a := serve(creates(2, "k"))
	b := serve(creates(2, "k"))
	next(t, a)
	next(t, a)
	next(t, b)
	if got, want := nextRaw(t, b), e.refused(1); got != want {
		t.Fatalf("the client's fourth watch:\n got  %s want %s", got, want)
	}
	// Another client is not affected.
	other := e.watch(creates(1, "k"))
	if f := next(t, other); f.Result.Canceled {
		t.Fatalf("another client: %+v", f.Result)
	}
	// Ending a stream gives its watches back.
	a.Close()
	if client.Held() != 1 {
		t.Fatalf("held %d after closing a stream of two", client.Held())
	}
	if err := b.(*watchStream).Receive([]byte(creates(1, "k"))); err != nil {
		t.Fatal(err)
	}
	if f := next(t, b); f.Result.Canceled {
		t.Fatalf("after a stream closed: %+v", f.Result)
	}
	// A watch ended by compaction gives its unit back too.
	for i := range 3 {
		e.put("k", fmt.Sprint(i))
	}
	if _, err := e.store.Compact(ctx, &mvcc.CompactionRequest{Revision: 4}); err != nil {
		t.Fatal(err)
	}
	if err := b.(*watchStream).Receive([]byte(fmt.Sprintf(`{"create_request":{"key":%q,"start_revision":"2"}}`, b64("k")))); err != nil {
		t.Fatal(err)
	}
	for f := next(t, b); f.Result.CompactRevision == ""; f = next(t, b) {
	}
	if client.Held() != 2 {
		t.Fatalf("held %d after a compacted watch ended, want 2", client.Held())
	}
	b.Close()
	if client.Held() != 0 {
		t.Fatalf("held %d after every stream closed", client.Held())
	}
}

func TestAWatchBeyondTheSessionsCapIsCreatedAndCanceled(t *testing.T) {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{MaxWatchers: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	e := &testEnv{t: t, store: s, gw: NewWithOptions(s, Options{})}
	client := api.NewCounter(0)
	resp := e.gw.Serve(api.WithWatchLimiter(context.Background(), client), &api.Request{Method: "POST", Path: "/v3/watch", Body: []byte(creates(2, "k"))})
	t.Cleanup(resp.Stream.Close)
	next(t, resp.Stream)
	if got, want := nextRaw(t, resp.Stream), e.refused(1); got != want {
		t.Fatalf("the session's second watch:\n got  %s want %s", got, want)
	}
	if client.Held() != 1 {
		t.Fatalf("a refused watch kept the client's unit: held %d", client.Held())
	}
}

// One body of many create_requests (the attack sent 58,000): the
// stream holds as many watches as its cap allows, refuses the rest, and
// its watches cost no goroutine: the stream's Next delivers for all.
func TestManyWatchesOnOneStreamCostNoGoroutines(t *testing.T) {
	e := newEnv(t)
	e.gw.opts.MaxWatchersPerStream = 1000
	e.put("k", "1")
	before := runtime.NumGoroutine()
	body := creates(1500, "k") + strings.Repeat(fmt.Sprintf(`{"create_request":{"key":%q,"start_revision":"1"}} `, b64("k")), 1500)
	s := e.watch(body)
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Fatalf("1000 watches made %d goroutines", after-before)
	}
	created, refused := 0, 0
	for created+refused < 3000 {
		f := next(t, s)
		switch {
		case f.Result.Canceled && f.Result.CancelReason == "etcdserver: too many requests":
			refused++
		case f.Result.Created:
			created++
		default:
			t.Fatalf("frame %d: %+v", created+refused, f.Result)
		}
	}
	if created != 1000 || refused != 2000 {
		t.Fatalf("created %d, refused %d", created, refused)
	}
	// Every watch delivers.
	e.put("k", "2")
	events := 0
	for events < 1000 {
		events += len(next(t, s).Result.Events)
	}
}

// A WebSocket client that sends requests and reads no answer cannot make
// the stream queue answers without end: past maxQueuedFrames the stream
// takes no more requests until the client reads.
func TestAClientThatDoesNotReadStopsBeingRead(t *testing.T) {
	e := newEnv(t)
	e.gw.opts.MaxWatchersPerStream = 1
	s := e.watch(``)
	ws := s.(*watchStream)
	const requests = 3 * maxQueuedFrames
	done := make(chan error, 1)
	go func() { done <- ws.Receive([]byte(creates(requests, "k"))) }()
	for answered := 0; answered < requests; answered++ {
		ws.mu.Lock()
		queued := len(ws.queue)
		ws.mu.Unlock()
		if queued > maxQueuedFrames {
			t.Fatalf("%d answers queued", queued)
		}
		if f := next(t, s); !f.Result.Created || (answered > 0) != f.Result.Canceled {
			t.Fatalf("answer %d: %+v", answered, f.Result)
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
