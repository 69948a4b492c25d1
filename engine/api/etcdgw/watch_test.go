package etcdgw

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

type fakeClock struct {
	mu      sync.Mutex
	tickers []*fakeTicker
}

type fakeTicker struct{ c chan time.Time }

func (c *fakeClock) NewTicker(time.Duration) Ticker {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTicker{c: make(chan time.Time)}
	c.tickers = append(c.tickers, t)
	return t
}

func (t *fakeTicker) C() <-chan time.Time { return t.c }
func (t *fakeTicker) Stop()               {}

// tick fires every ticker once and returns when each has taken the tick.
func (c *fakeClock) tick() {
	c.mu.Lock()
	ts := append([]*fakeTicker(nil), c.tickers...)
	c.mu.Unlock()
	for _, t := range ts {
		t.c <- time.Now()
	}
}

type frame struct {
	Result struct {
		Header struct {
			Revision string `json:"revision"`
		} `json:"header"`
		WatchID         string `json:"watch_id"`
		Created         bool   `json:"created"`
		Canceled        bool   `json:"canceled"`
		CompactRevision string `json:"compact_revision"`
		CancelReason    string `json:"cancel_reason"`
		Events          []struct {
			Type string `json:"type"`
			Kv   struct {
				Key         []byte `json:"key"`
				ModRevision string `json:"mod_revision"`
				Value       []byte `json:"value"`
			} `json:"kv"`
			PrevKv *struct {
				Value []byte `json:"value"`
			} `json:"prev_kv"`
		} `json:"events"`
	} `json:"result"`
}

type testEnv struct {
	t     *testing.T
	store *mvcc.Store
	gw    *Gateway
	clock *fakeClock
}

func newEnv(t *testing.T) *testEnv {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c := &fakeClock{}
	return &testEnv{t: t, store: s, clock: c, gw: NewWithOptions(s, Options{Clock: c, ProgressInterval: time.Minute})}
}

func (e *testEnv) put(key, value string) int64 {
	e.t.Helper()
	r, err := e.store.Put(context.Background(), &mvcc.PutRequest{Key: []byte(key), Value: []byte(value)})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.Header.Revision
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

func (e *testEnv) watch(body string) api.Stream {
	e.t.Helper()
	resp := e.gw.Serve(context.Background(), &api.Request{Method: "POST", Path: "/v3/watch", Body: []byte(body)})
	if resp.Status != 200 || resp.Stream == nil {
		e.t.Fatalf("watch: %d %s", resp.Status, resp.Body)
	}
	e.t.Cleanup(resp.Stream.Close)
	return resp.Stream
}

// next waits for the next frame; the bound only turns a hang into a failure.
func next(t *testing.T, s api.Stream) frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.Next(ctx)
	if err != nil {
		t.Fatalf("no frame: %v", err)
	}
	var f frame
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("bad frame %q: %v", b, err)
	}
	return f
}

// none checks that no frame is waiting: a progress request answered by
// nothing is observable only as the absence of a frame, so the check asks
// a second question whose answer must come first.
func noFrameBefore(t *testing.T, s api.Stream, want func(frame) bool) {
	t.Helper()
	f := next(t, s)
	if !want(f) {
		t.Fatalf("unexpected frame %+v", f.Result)
	}
}

func TestWatchIDsAreAssignedPerStreamFromZero(t *testing.T) {
	e := newEnv(t)
	body := fmt.Sprintf(`{"create_request":{"key":%q}} {"create_request":{"key":%q,"watch_id":"1"}} {"create_request":{"key":%q}}`, b64("a"), b64("a"), b64("a"))
	for range 2 { // two streams: each starts from 0
		s := e.watch(body)
		for _, want := range []string{"", "1", "2"} {
			f := next(t, s)
			if !f.Result.Created || f.Result.WatchID != want {
				t.Fatalf("created %+v, want watch_id %q", f.Result, want)
			}
		}
	}
}

func TestWatchEventsOfOneTxnArriveInOneResponse(t *testing.T) {
	e := newEnv(t)
	e.put("k0", "0")
	s := e.watch(fmt.Sprintf(`{"create_request":{"key":%q,"range_end":%q}}`, b64("k"), b64("l")))
	next(t, s) // created
	_, err := e.store.Txn(context.Background(), &mvcc.TxnRequest{Success: []mvcc.RequestOp{
		{Put: &mvcc.PutRequest{Key: []byte("k1"), Value: []byte("1")}},
		{Put: &mvcc.PutRequest{Key: []byte("k2"), Value: []byte("2")}},
		{DeleteRange: &mvcc.DeleteRangeRequest{Key: []byte("k0")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	f := next(t, s)
	if len(f.Result.Events) != 3 || f.Result.Events[0].Type != "" || f.Result.Events[2].Type != "DELETE" ||
		string(f.Result.Events[1].Kv.Key) != "k2" || f.Result.Header.Revision != "3" {
		t.Fatalf("txn events: %+v", f.Result)
	}
}

func TestWatchFromNowStartsRightAfterTheCreatedRevision(t *testing.T) {
	e := newEnv(t)
	e.put("k", "1")
	s := e.watch(fmt.Sprintf(`{"create_request":{"key":%q,"prev_kv":true}}`, b64("k")))
	created := next(t, s)
	rev := e.put("k", "2")
	f := next(t, s)
	if created.Result.Header.Revision != "2" || f.Result.Events[0].Kv.ModRevision != strconv.FormatInt(rev, 10) ||
		string(f.Result.Events[0].PrevKv.Value) != "1" {
		t.Fatalf("created %+v then %+v", created.Result, f.Result)
	}
}

func TestWatchCancelAnswersCanceledAndStopsEvents(t *testing.T) {
	e := newEnv(t)
	s := e.watch(fmt.Sprintf(`{"create_request":{"key":%q}} {"create_request":{"key":%q}} {"cancel_request":{"watch_id":"0"}}`, b64("a"), b64("b")))
	next(t, s)
	next(t, s)
	if f := next(t, s); !f.Result.Canceled || f.Result.WatchID != "" {
		t.Fatalf("cancel: %+v", f.Result)
	}
	e.put("a", "x")
	e.put("b", "y")
	if f := next(t, s); f.Result.WatchID != "1" || string(f.Result.Events[0].Kv.Key) != "b" {
		t.Fatalf("after cancel: %+v", f.Result)
	}
}

func TestWatchBelowCompactionIsCanceledWithCompactRevision(t *testing.T) {
	e := newEnv(t)
	for i := range 5 {
		e.put("k", strconv.Itoa(i))
	}
	if _, err := e.store.Compact(context.Background(), &mvcc.CompactionRequest{Revision: 4}); err != nil {
		t.Fatal(err)
	}
	s := e.watch(fmt.Sprintf(`{"create_request":{"key":%q,"start_revision":"2"}}`, b64("k")))
	next(t, s)
	f := next(t, s)
	if !f.Result.Canceled || f.Result.CompactRevision != "4" || f.Result.Header.Revision != "" {
		t.Fatalf("compacted: %+v", f.Result)
	}
}

func TestProgressRequestAnswersWatchIDMinusOneWhenSynced(t *testing.T) {
	e := newEnv(t)
	e.put("k", "1")
	s := e.watch(fmt.Sprintf(`{"create_request":{"key":%q}}`, b64("k")))
	next(t, s)
	if err := s.(*watchStream).Receive([]byte(`{"progress_request":{}}`)); err != nil {
		t.Fatal(err)
	}
	f := next(t, s)
	if f.Result.WatchID != "-1" || f.Result.Header.Revision != "2" || len(f.Result.Events) != 0 {
		t.Fatalf("progress: %+v", f.Result)
	}
}

func TestProgressNotifyFiresEachIntervalWithoutEvents(t *testing.T) {
	e := newEnv(t)
	e.put("k", "1")
	s := e.watch(fmt.Sprintf(`{"create_request":{"key":%q}} {"create_request":{"key":%q,"progress_notify":true}}`, b64("k"), b64("p")))
	next(t, s)
	next(t, s)
	e.clock.tick()
	f := next(t, s)
	if f.Result.WatchID != "1" || f.Result.Header.Revision != "2" || len(f.Result.Events) != 0 || f.Result.Created {
		t.Fatalf("progress notify: %+v", f.Result)
	}
	// An interval with events sends no notification for that watch.
	e.put("p", "x")
	noFrameBefore(t, s, func(f frame) bool { return len(f.Result.Events) == 1 })
	e.clock.tick()
	e.put("k", "y") // watch 0's event must come next: watch 1 had events
	noFrameBefore(t, s, func(f frame) bool { return f.Result.WatchID == "" && len(f.Result.Events) == 1 })
	e.clock.tick()
	if f := next(t, s); f.Result.WatchID != "1" || f.Result.Header.Revision != "4" {
		t.Fatalf("progress notify after quiet interval: %+v", f.Result)
	}
}

func TestWatchOverWebSocketTakesFurtherRequests(t *testing.T) {
	e := newEnv(t)
	s := e.watch(``) // a WebSocket starts with no body
	r := s.(*watchStream)
	if err := r.Receive([]byte(fmt.Sprintf(`{"create_request":{"key":%q}}`, b64("w")))); err != nil {
		t.Fatal(err)
	}
	next(t, s)
	e.put("w", "1")
	if f := next(t, s); len(f.Result.Events) != 1 {
		t.Fatalf("event: %+v", f.Result)
	}
	if err := r.Receive([]byte(`not json`)); err == nil {
		t.Fatal("malformed request accepted")
	}
	if err := r.Receive([]byte(`{"progress_request":{}}`)); err == nil {
		t.Fatal("a request after a malformed one was accepted; etcd stops reading")
	}
}

// A stream nobody reads must not hold writers up, and once read it must
// deliver every event, in order, exactly once.
func TestUnreadWatchNeverBlocksWritersAndLosesNothing(t *testing.T) {
	e := newEnv(t)
	s := e.watch(fmt.Sprintf(`{"create_request":{"key":%q,"range_end":%q}}`, b64("k"), b64("l")))
	next(t, s)
	const n = 3000
	for i := range n {
		e.put(fmt.Sprintf("k%04d", i%50), strconv.Itoa(i))
	}
	want := int64(2)
	for want <= n+1 {
		f := next(t, s)
		for _, ev := range f.Result.Events {
			got, _ := strconv.ParseInt(ev.Kv.ModRevision, 10, 64)
			if got != want {
				t.Fatalf("event at revision %d, want %d", got, want)
			}
			want++
		}
	}
}

// etcd 3.4 answers a watch whose server shuts down with a gRPC Unavailable
// error line (seen with curl on a watch while etcd stopped).
func TestStreamEndsWithEtcdsErrorLineWhenTheStoreCloses(t *testing.T) {
	e := newEnv(t)
	s := e.watch(fmt.Sprintf(`{"create_request":{"key":%q}}`, b64("k")))
	next(t, s)
	e.store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.Next(ctx)
	if err != nil || string(b) != streamClosingError {
		t.Fatalf("on close: %q %v", b, err)
	}
	if _, err := s.Next(ctx); err != api.EOF {
		t.Fatalf("after close: %v", err)
	}
}

func TestMalformedFirstWebSocketRequestAnswersTheErrorAndEnds(t *testing.T) {
	e := newEnv(t)
	s := e.watch(``)
	if err := s.(*watchStream).Receive([]byte(`not json`)); err == nil {
		t.Fatal("accepted")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.Next(ctx)
	want := `{"error":"invalid character 'o' in literal null (expecting 'u')","message":"invalid character 'o' in literal null (expecting 'u')","code":2}` + "\n"
	if err != nil || string(b) != want {
		t.Fatalf("got %q %v", b, err)
	}
	if _, err := s.Next(ctx); err != api.EOF {
		t.Fatalf("after the error: %v", err)
	}
}

// Closing a stream releases everything it started: its progress ticker
// and its mvcc watchers.
func TestClosedStreamsLeaveNoGoroutines(t *testing.T) {
	e := newEnv(t)
	e.put("k", "1")
	before := runtime.NumGoroutine()
	for range 50 {
		s := e.gw.Serve(context.Background(), &api.Request{Method: "POST", Path: "/v3/watch", Body: []byte(fmt.Sprintf(
			`{"create_request":{"key":%q}} {"create_request":{"key":%q,"start_revision":"1"}} {"create_request":{"key":%q,"progress_notify":true}}`,
			b64("k"), b64("k"), b64("p")))}).Stream
		next(t, s)
		s.Close()
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, %d before:\n%s", runtime.NumGoroutine(), before, buf[:runtime.Stack(buf, true)])
		}
		runtime.Gosched()
	}
}
