package client

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// testSession is the Kubernetes API of a playground session (memory
// backend, kubeapi; engine/session itself runs these clients, so its tests
// cannot import it) with a hook in front of it that tests use to hold a
// request until they have changed the world underneath it.
type testSession struct {
	kube   api.Handler
	Store  *mvcc.Store
	mu     sync.Mutex
	before func(ctx context.Context, req *api.Request)
	// answer, if it returns non-nil, replaces the session's answer (to
	// play a kube-apiserver configured differently).
	answer func(req *api.Request) *api.Response
}

func (s *testSession) Serve(ctx context.Context, req *api.Request) *api.Response {
	s.mu.Lock()
	hook, answer := s.before, s.answer
	s.mu.Unlock()
	if hook != nil {
		hook(ctx, req)
	}
	if answer != nil {
		if resp := answer(req); resp != nil {
			return resp
		}
	}
	return s.kube.Serve(ctx, req)
}

func (s *testSession) setBefore(f func(ctx context.Context, req *api.Request)) {
	s.mu.Lock()
	s.before = f
	s.mu.Unlock()
}

func newTestSession(t *testing.T, ko kube.Options) (*testSession, *Client) {
	t.Helper()
	store, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := kubeapi.New(kubeapi.Options{Store: store, Kube: ko})
	t.Cleanup(func() {
		h.Registry().Close()
		store.Close()
	})
	ts := &testSession{kube: h, Store: store}
	return ts, New(ts)
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func createCM(t *testing.T, c *Client, ns, name string) Object {
	t.Helper()
	o, err := c.Resource(ConfigMaps).Namespace(ns).Create(testCtx(t), Object{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name}, "data": map[string]any{"v": "0"},
	}, WriteOptions{})
	if err != nil {
		t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return o
}

// stepRecorder collects a reflector's steps on a channel.
type stepRecorder struct {
	ch  chan Step
	t   *testing.T
	all []Step
}

func record(t *testing.T, r *Reflector) *stepRecorder {
	rec := &stepRecorder{ch: make(chan Step, 100000), t: t}
	r.OnStep = func(s Step) { rec.ch <- s }
	r.Rand = func() float64 { return 0 }
	t.Cleanup(func() {
		if t.Failed() {
			for _, s := range r.Steps() {
				t.Log(s.String())
			}
		}
	})
	return rec
}

// until reads steps until one satisfies pred and returns it.
func (rec *stepRecorder) until(desc string, pred func(Step) bool) Step {
	rec.t.Helper()
	timeout := time.NewTimer(15 * time.Second)
	defer timeout.Stop()
	for {
		select {
		case s := <-rec.ch:
			rec.all = append(rec.all, s)
			if pred(s) {
				return s
			}
		case <-timeout.C:
			rec.t.Fatalf("no step %s within 15s", desc)
		}
	}
}

func (rec *stepRecorder) kind(k string) Step {
	rec.t.Helper()
	return rec.until(k, func(s Step) bool { return s.Kind == k })
}

func (rec *stepRecorder) count(k string) int {
	n := 0
	for _, s := range rec.all {
		if s.Kind == k {
			n++
		}
	}
	return n
}

func runReflector(t *testing.T, r *Reflector) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
}

func rvInt(t *testing.T, rv string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", rv, err)
	}
	return n
}

func TestReflectorListsThenWatchesFromTheListResourceVersion(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	for i := 0; i < 3; i++ {
		createCM(t, c, "default", fmt.Sprintf("cm-%d", i))
	}
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	rec := record(t, r)
	runReflector(t, r)

	first := rec.kind(StepList)
	if first.RV != "0" {
		t.Fatalf("first list at rv %q, want \"0\" (any state the cache has)", first.RV)
	}
	rep := rec.kind(StepReplace)
	if rep.Items != 3 || store.Len() != 3 || !store.HasSynced() {
		t.Fatalf("replace: %d items, store %d, synced %v", rep.Items, store.Len(), store.HasSynced())
	}
	w := rec.kind(StepWatch)
	if w.RV != rep.RV {
		t.Fatalf("watch from %q, want the list's resourceVersion %q", w.RV, rep.RV)
	}

	created := createCM(t, c, "default", "late")
	ev := rec.until("ADDED late", func(s Step) bool { return s.Kind == StepEvent && s.Key == "default/late" })
	if ev.Type != Added || ev.RV != created.ResourceVersion() {
		t.Fatalf("event %v, want ADDED at %s", ev, created.ResourceVersion())
	}
	if r.LastSyncResourceVersion() != created.ResourceVersion() || store.ResourceVersion() != created.ResourceVersion() {
		t.Fatalf("last sync rv %s / store %s, want %s", r.LastSyncResourceVersion(), store.ResourceVersion(), created.ResourceVersion())
	}

	rc := c.Resource(ConfigMaps).Namespace("default")
	if err := rc.Delete(testCtx(t), "cm-0", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	del := rec.until("DELETED cm-0", func(s Step) bool { return s.Kind == StepEvent && s.Type == Deleted })
	if del.Key != "default/cm-0" || rvInt(t, del.RV) <= rvInt(t, created.ResourceVersion()) {
		t.Fatalf("delete event %v", del)
	}
	if _, ok := store.Get("default/cm-0"); ok || store.Len() != 3 {
		t.Fatalf("store after delete: %d items", store.Len())
	}
}

func TestReflectorResumesFromTheLastResourceVersionWhenTheWatchCloses(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	r.MinWatchTimeout = time.Second // timeoutSeconds=1 with Rand 0
	rec := record(t, r)
	runReflector(t, r)

	rec.kind(StepReplace)
	w1 := rec.kind(StepWatch)
	if want := "timeoutSeconds=1"; !contains(w1.Request, want) {
		t.Fatalf("watch request %q lacks %s", w1.Request, want)
	}
	b := createCM(t, c, "default", "b")
	rec.until("ADDED b", func(s Step) bool { return s.Kind == StepEvent && s.Key == "default/b" })
	closed := rec.kind(StepWatchClosed)
	if closed.RV != b.ResourceVersion() {
		t.Fatalf("closed at %s, want %s", closed.RV, b.ResourceVersion())
	}
	w2 := rec.kind(StepWatch)
	if w2.RV != b.ResourceVersion() {
		t.Fatalf("resumed watch from %q, want the last seen %q", w2.RV, b.ResourceVersion())
	}
	if n := rec.count(StepList); n != 1 {
		t.Fatalf("%d lists: a clean close must not relist", n)
	}
	createCM(t, c, "default", "c")
	rec.until("ADDED c", func(s Step) bool { return s.Kind == StepEvent && s.Key == "default/c" })
	if store.Len() != 3 {
		t.Fatalf("store has %d items", store.Len())
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// holdNext makes the next request matching pred wait until release is
// closed (or its client goes away); held is closed when it arrives.
func holdNext(ts *testSession, pred func(*api.Request) bool) (held, release chan struct{}) {
	held, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	ts.setBefore(func(ctx context.Context, req *api.Request) {
		if pred(req) {
			fired := false
			once.Do(func() { fired = true })
			if fired {
				close(held)
				select {
				case <-release:
				case <-ctx.Done():
				}
			}
		}
	})
	return held, release
}

func isWatch(req *api.Request) bool { return req.Query.Get("watch") == "true" }

func compactNow(t *testing.T, ts *testSession) int64 {
	t.Helper()
	rev := ts.Store.Rev()
	if _, err := ts.Store.Compact(context.Background(), &mvcc.CompactionRequest{Revision: rev}); err != nil {
		t.Fatalf("compact %d: %v", rev, err)
	}
	return rev
}

func TestReflectorRelistsWhenItsWatchRevisionWasCompacted(t *testing.T) {
	ts, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	r.BackoffInit = time.Millisecond
	rec := record(t, r)
	held, release := holdNext(ts, isWatch)
	runReflector(t, r)

	rep := rec.kind(StepReplace)
	<-held
	// While the watch request is in flight: two writes, then compaction
	// past the list's revision. The watch now starts at a compacted
	// revision and the server answers 200 + one ERROR (410 Expired).
	createCM(t, c, "default", "b")
	createCM(t, c, "default", "c")
	compacted := compactNow(t, ts)
	close(release)

	exp := rec.kind(StepExpired)
	if exp.RV != rep.RV || !IsResourceExpired(exp.Err) {
		t.Fatalf("expired step %v", exp)
	}
	list := rec.kind(StepList)
	if list.RV != rep.RV {
		t.Fatalf("relist at %q, want the last synced %q (not older than)", list.RV, rep.RV)
	}
	rep2 := rec.kind(StepReplace)
	if rep2.Items != 3 || rvInt(t, rep2.RV) < compacted {
		t.Fatalf("relist replaced %d items at %s (compacted %d)", rep2.Items, rep2.RV, compacted)
	}
	w := rec.kind(StepWatch)
	if w.RV != rep2.RV {
		t.Fatalf("watch after relist from %q, want %q", w.RV, rep2.RV)
	}
	createCM(t, c, "default", "d")
	rec.until("ADDED d", func(s Step) bool { return s.Kind == StepEvent && s.Key == "default/d" })
	if store.Len() != 4 {
		t.Fatalf("store %d items", store.Len())
	}
}

func TestReflectorBookmarksAdvanceTheResourceVersionWithoutEvents(t *testing.T) {
	_, c := newTestSession(t, kube.Options{BookmarkInterval: 20 * time.Millisecond})
	createCM(t, c, "default", "a")
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	rec := record(t, r)
	runReflector(t, r)
	rep := rec.kind(StepReplace)
	rec.kind(StepWatch)
	// Writes elsewhere (another namespace) move the revision; this
	// watch gets no events for them, only bookmarks that catch up.
	other := createCM(t, c, "kube-system", "elsewhere")
	bm := rec.until("bookmark past the other write", func(s Step) bool {
		return s.Kind == StepBookmark && rvInt(t, s.RV) >= rvInt(t, other.ResourceVersion())
	})
	if r.LastSyncResourceVersion() != bm.RV || rvInt(t, bm.RV) <= rvInt(t, rep.RV) {
		t.Fatalf("bookmark %s, last sync %s, list %s", bm.RV, r.LastSyncResourceVersion(), rep.RV)
	}
	if rec.count(StepEvent) != 0 {
		t.Fatalf("saw events from another namespace")
	}
}

func TestReflectorWatchListWaitsForInitialEventsEndThenReplaces(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	var want []string
	for i := 0; i < 3; i++ {
		want = append(want, createCM(t, c, "default", fmt.Sprintf("cm-%d", i)).ResourceVersion())
	}
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	r.WatchList = true
	rec := record(t, r)
	// Record, at the moment of each initial event, whether the store was
	// already synced (OnStep runs synchronously in the reflector).
	var syncedEarly []bool
	recordStep := r.OnStep
	r.OnStep = func(s Step) {
		if s.Kind == StepEvent && s.Initial {
			syncedEarly = append(syncedEarly, store.HasSynced())
		}
		recordStep(s)
	}
	runReflector(t, r)

	w := rec.kind(StepWatch)
	for _, p := range []string{"sendInitialEvents=true", "resourceVersionMatch=NotOlderThan", "allowWatchBookmarks=true"} {
		if !contains(w.Request, p) {
			t.Fatalf("watch-list request %q lacks %s", w.Request, p)
		}
	}
	if w.RV != "" {
		t.Fatalf("first watch-list from %q, want \"\" (consistent)", w.RV)
	}
	for i := 0; i < 3; i++ {
		ev := rec.kind(StepEvent)
		if !ev.Initial || ev.Type != Added {
			t.Fatalf("initial event %v", ev)
		}
	}
	end := rec.kind(StepInitialEventsEnd)
	for i, early := range syncedEarly {
		if early {
			t.Fatalf("store synced before the initial-events-end bookmark (initial event %d)", i)
		}
	}
	if rvInt(t, end.RV) < rvInt(t, want[2]) {
		t.Fatalf("end bookmark at %s, before the last object %s", end.RV, want[2])
	}
	rep := rec.kind(StepReplace)
	if rep.RV != end.RV || rep.Items != 3 || !store.HasSynced() || r.LastSyncResourceVersion() != end.RV {
		t.Fatalf("replace %v, synced %v, last sync %s", rep, store.HasSynced(), r.LastSyncResourceVersion())
	}
	// The same stream carries on with changes.
	late := createCM(t, c, "default", "late")
	ev := rec.until("ADDED late", func(s Step) bool { return s.Kind == StepEvent && s.Key == "default/late" })
	if ev.Initial || ev.RV != late.ResourceVersion() {
		t.Fatalf("live event %v", ev)
	}
	if rec.count(StepList) != 0 || rec.count(StepWatch) != 1 {
		t.Fatalf("watch-list mode made %d lists and %d watches (want 0 and 1)", rec.count(StepList), rec.count(StepWatch))
	}
}

// A relist from "" (after the RV became unavailable) is paged; a page
// whose revision was compacted meanwhile answers 410 and the pager falls
// back to one full list.
func TestReflectorPagedListFallsBackToAFullListWhenAPageExpires(t *testing.T) {
	ts, c := newTestSession(t, kube.Options{})
	for i := 0; i < 5; i++ {
		createCM(t, c, "default", fmt.Sprintf("cm-%d", i))
	}
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	r.PageSize = 2
	rec := record(t, r)
	r.setRVUnavailable(true) // as after a 410: relist from "" (latest)

	held, release := holdNext(ts, func(req *api.Request) bool { return req.Query.Get("continue") != "" })
	errc := make(chan error, 1)
	go func() { errc <- r.list(testCtx(t)) }()
	p1 := rec.kind(StepList)
	if p1.RV != "" || !contains(p1.Request, "limit=2") {
		t.Fatalf("first page %v", p1)
	}
	<-held
	createCM(t, c, "default", "cm-5")
	compactNow(t, ts)
	close(release)
	if err := <-errc; err != nil {
		t.Fatalf("list: %v", err)
	}
	exp := rec.kind(StepExpired)
	if !IsResourceExpired(exp.Err) {
		t.Fatalf("expired step %v", exp)
	}
	full := rec.until("full list", func(s Step) bool { return s.Kind == StepList && !contains(s.Request, "limit=") })
	_ = full
	rep := rec.kind(StepReplace)
	if rep.Items != 6 || store.Len() != 6 {
		t.Fatalf("after fallback: replaced %d, store %d (want 6)", rep.Items, store.Len())
	}
}

func TestReflectorPagesAListFromLatestButNotFromZero(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	for i := 0; i < 5; i++ {
		createCM(t, c, "default", fmt.Sprintf("cm-%d", i))
	}
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), NewStore())
	r.PageSize = 2
	rec := record(t, r)
	// RV "0": the cache answers everything at once, ignoring limit.
	if err := r.list(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	rec.kind(StepReplace)
	if n := rec.count(StepList); n != 1 {
		t.Fatalf("RV=0 list took %d requests, want 1", n)
	}
	// From "" it is paged: 2+2+1.
	rec.all = nil
	r.setRVUnavailable(true)
	if err := r.list(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	rep := rec.kind(StepReplace)
	if n := rec.count(StepList); n != 3 || rep.Items != 5 {
		t.Fatalf("RV=\"\" list took %d pages for %d items, want 3 for 5", n, rep.Items)
	}
}

// A kube-apiserver with the WatchList gate off refuses sendInitialEvents
// with 422; the reflector then falls back to LIST and an ordinary watch.
func TestReflectorWatchListFallsBackToListWhenTheServerRefusesIt(t *testing.T) {
	ts, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	const refusal = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","reason":"Invalid","details":{"group":"meta.k8s.io","kind":"ListOptions","causes":[{"reason":"FieldValueForbidden","message":"Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled","field":"sendInitialEvents"}]},"code":422}`
	ts.mu.Lock()
	ts.answer = func(req *api.Request) *api.Response {
		if req.Query.Get("sendInitialEvents") == "true" {
			return &api.Response{Status: 422, Header: api.Header{"Content-Type": {"application/json"}}, Body: []byte(refusal)}
		}
		return nil
	}
	ts.mu.Unlock()
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	r.WatchList = true
	rec := record(t, r)
	runReflector(t, r)

	fb := rec.kind(StepFallback)
	if !IsInvalid(fb.Err) {
		t.Fatalf("fallback because of %v", fb.Err)
	}
	rep := rec.kind(StepReplace)
	w := rec.kind(StepWatch)
	if rep.Items != 1 || w.RV != rep.RV || contains(w.Request, "sendInitialEvents") {
		t.Fatalf("after fallback: replace %v, watch %v", rep, w)
	}
	createCM(t, c, "default", "b")
	rec.until("ADDED b", func(s Step) bool { return s.Kind == StepEvent && s.Key == "default/b" })
}

// In watch-list mode a 410 also leads to a new complete state, this time
// through another watch-list from the last synced RV (not older than it).
func TestReflectorWatchListStartsOverAfterTheWatchRevisionWasCompacted(t *testing.T) {
	ts, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	r.WatchList = true
	// Streams last 2s: long enough after the initial-events-end bookmark
	// not to count as a "very short watch" (<1s, no events).
	r.MinWatchTimeout = 2 * time.Second
	r.BackoffInit = time.Millisecond
	rec := record(t, r)
	runReflector(t, r)

	rep := rec.kind(StepReplace)
	// Hold the re-watch that follows the first stream's clean close.
	held, release := holdNext(ts, isWatch)
	rec.kind(StepWatchClosed)
	<-held
	// Two writes: compacting at the second makes the first (the watch's
	// start, rv+1) unavailable.
	createCM(t, c, "default", "b")
	createCM(t, c, "default", "c")
	compactNow(t, ts)
	close(release)

	exp := rec.kind(StepExpired)
	if exp.RV != rep.RV {
		t.Fatalf("expired at %s, want %s", exp.RV, rep.RV)
	}
	w := rec.kind(StepWatch)
	if !contains(w.Request, "sendInitialEvents=true") || w.RV != rep.RV {
		t.Fatalf("after 410: %v, want a watch-list from %s", w, rep.RV)
	}
	rec.kind(StepInitialEventsEnd)
	rep2 := rec.kind(StepReplace)
	if rep2.Items != 3 || store.Len() != 3 {
		t.Fatalf("second replace %v, store %d", rep2, store.Len())
	}
	if n := rec.count(StepList); n != 0 {
		t.Fatalf("%d LIST requests in watch-list mode", n)
	}
}

// A watch that ends in under a second without a single event is
// suspicious (client-go: "very short watch"); the reflector relists
// rather than hammering the server with re-watches.
func TestReflectorRelistsAfterAVeryShortEmptyWatch(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), NewStore())
	r.MinWatchTimeout = time.Second
	rec := record(t, r)
	r.Clock = serverTime{clock.NewFake(time.Unix(1_700_000_000, 0))} // never moves: every watch lasts no time
	runReflector(t, r)
	rec.kind(StepWatch)
	e := rec.kind(StepError)
	if e.Err == nil || !contains(e.Err.Error(), "very short watch") {
		t.Fatalf("error step %v", e)
	}
	rec.kind(StepBackoff)
	if l := rec.kind(StepList); l.RV == "0" || l.RV == "" {
		t.Fatalf("relist at %q, want the last synced RV", l.RV)
	}
}

// serverTime is the server's fake clock as a reflector's: its watches are
// timed in the time the server's timeouts follow; backoffs end at once.
type serverTime struct{ c *clock.Fake }

func (c serverTime) Now() time.Time                     { return c.c.Now() }
func (c serverTime) NewTimer(time.Duration) clock.Timer { return clock.Fired(c.c.Now()) }

// client-go starts a watch's clock before it sends the request: a watch
// the server ends after the second it was asked for is not a "very short
// watch", however late the reflector's goroutine got to its stream (here
// the whole second passes before it reads a frame). Timed from the first
// read, it relisted at random when the machine was busy.
func TestAWatchIsTimedFromItsRequest(t *testing.T) {
	clock := clock.NewFake(time.Unix(1_700_000_000, 0))
	_, c := newTestSession(t, kube.Options{Clock: clock})
	createCM(t, c, "default", "a")
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), NewStore())
	r.MinWatchTimeout = time.Second // timeoutSeconds=1 (jitter 0)
	r.Clock = serverTime{clock}
	rec := record(t, r)
	recordStep := r.OnStep
	first := true
	r.OnStep = func(s Step) {
		if s.Kind == StepWatch && first {
			first = false
			clock.Step(time.Second) // the server ends the watch
		}
		recordStep(s)
	}
	runReflector(t, r)
	end := rec.until("the first watch's end", func(s Step) bool { return s.Kind == StepWatchClosed || s.Kind == StepError })
	if end.Kind != StepWatchClosed {
		t.Fatalf("a watch that lasted its second ended in %v, want a clean close and a re-watch", end)
	}
	if n := rec.count(StepList); n != 1 {
		t.Fatalf("%d lists, want 1", n)
	}
}

func TestStepMarshalsForAUI(t *testing.T) {
	s := Step{Seq: 3, Time: time.Unix(0, 0), Kind: StepExpired, RV: "12",
		Err: &StatusError{Status: Status{Message: "too old resource version: 12 (40)", Reason: ReasonExpired, Code: 410}}}
	b, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"seq":3,"time":"1970-01-01T00:00:00Z","kind":"expired","rv":"12","error":"too old resource version: 12 (40)","reason":"Expired","code":410}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
}

// A relist at a revision the server has not reached (504 Too large
// resource version) starts over from the latest state.
func TestReflectorRelistsFromLatestWhenItsRevisionIsTooLarge(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), NewStore())
	rec := record(t, r)
	r.setLastSyncRV("100000")
	if err := r.list(testCtx(t)); err != nil {
		t.Fatalf("list: %v", err)
	}
	l1 := rec.kind(StepList)
	tl := rec.kind(StepTooLarge)
	l2 := rec.kind(StepList)
	rep := rec.kind(StepReplace)
	if l1.RV != "100000" || !IsTooLargeResourceVersion(tl.Err) || l2.RV != "" || rep.Items != 1 {
		t.Fatalf("steps: %v / %v / %v / %v", l1, tl, l2, rep)
	}
}

// Servers may also refuse an old watch before the stream starts (HTTP 410
// with a Gone or Expired Status); the reflector relists the same way.
func TestReflectorRelistsWhenTheWatchRequestIsAnsweredWithHTTP410(t *testing.T) {
	ts, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	var once sync.Once
	ts.mu.Lock()
	ts.answer = func(req *api.Request) *api.Response {
		var resp *api.Response
		if isWatch(req) {
			once.Do(func() {
				resp = &api.Response{Status: 410, Header: api.Header{"Content-Type": {"application/json"}},
					Body: []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the resourceVersion is gone","reason":"Gone","code":410}`)}
			})
		}
		return resp
	}
	ts.mu.Unlock()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), NewStore())
	r.BackoffInit = time.Millisecond
	rec := record(t, r)
	runReflector(t, r)
	rep := rec.kind(StepReplace)
	exp := rec.kind(StepExpired)
	if !IsGone(exp.Err) || exp.RV != rep.RV {
		t.Fatalf("expired step %v", exp)
	}
	l := rec.kind(StepList)
	if l.RV != rep.RV {
		t.Fatalf("relist at %q, want %q", l.RV, rep.RV)
	}
	rec.kind(StepReplace)
	w := rec.kind(StepWatch)
	createCM(t, c, "default", "b")
	ev := rec.until("ADDED b", func(s Step) bool { return s.Kind == StepEvent && s.Key == "default/b" })
	if rvInt(t, ev.RV) <= rvInt(t, w.RV) {
		t.Fatalf("event %v after watch %v", ev, w)
	}
}

// With a lagging watch cache, the first list (RV "0") may be stale; the
// watch from that list's RV then delivers what the list missed, so the
// store still converges. This is why RV "0" is safe for informers.
func TestReflectorConvergesAfterAStaleFirstListFromALaggingCache(t *testing.T) {
	_, c := newTestSession(t, kube.Options{WatchCacheDelay: time.Hour})
	var rvs []string
	for i := 0; i < 3; i++ {
		rvs = append(rvs, createCM(t, c, "default", fmt.Sprintf("cm-%d", i)).ResourceVersion())
	}
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	rec := record(t, r)
	runReflector(t, r)
	rep := rec.kind(StepReplace)
	if rep.Items != 0 || rvInt(t, rep.RV) >= rvInt(t, rvs[0]) {
		t.Fatalf("first list %v: want the cache's stale, empty state", rep)
	}
	for _, want := range rvs {
		ev := rec.kind(StepEvent)
		if ev.Type != Added || ev.RV != want {
			t.Fatalf("event %v, want ADDED at %s", ev, want)
		}
	}
	if store.Len() != 3 || r.LastSyncResourceVersion() != rvs[2] {
		t.Fatalf("store %d items at %s", store.Len(), r.LastSyncResourceVersion())
	}
}
