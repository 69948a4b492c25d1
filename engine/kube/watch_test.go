package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

type event struct {
	Type   string         `json:"type"`
	Object map[string]any `json:"object"`
}

func (e event) rv() string   { return ResourceVersion(e.Object) }
func (e event) name() string { return Name(e.Object) }
func (e event) String() string {
	return fmt.Sprintf("%s %s@%s", e.Type, e.name(), e.rv())
}

func next(t *testing.T, w *Watch) event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, err := w.Next(ctx)
	if err != nil {
		t.Fatalf("next: %v", err)
	}
	var e event
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("%s: %v", b, err)
	}
	return e
}

func wantEnd(t *testing.T, w *Watch) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if b, err := w.Next(ctx); err != io.EOF {
		t.Fatalf("want end of stream, got %s %v", b, err)
	}
}

func (f *fixture) watch(t *testing.T, ns string, lo ListOptions) *Watch {
	t.Helper()
	w, err := f.s.Watch(f.ctx, configmaps, ns, lo)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	return w
}

func bptr(b bool) *bool { return &b }

func TestWatchFromResourceVersionIsStrictlyAfter(t *testing.T) {
	f := newFixture(t)
	a := f.create(t, configmaps, "default", cm("a", nil))
	f.create(t, configmaps, "default", cm("b", nil))
	w := f.watch(t, "default", ListOptions{ResourceVersion: ResourceVersion(a)})
	if e := next(t, w); e.Type != Added || e.name() != "b" {
		t.Fatalf("got %v", e)
	}
}

func TestWatchFromZeroSendsCurrentStateThenChanges(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	f.create(t, configmaps, "default", cm("b", nil))
	w := f.watch(t, "default", ListOptions{ResourceVersion: "0"})
	if e1, e2 := next(t, w), next(t, w); e1.Type != Added || e1.name() != "a" || e2.name() != "b" {
		t.Fatalf("initial: %v %v", e1, e2)
	}
	c := f.create(t, configmaps, "default", cm("c", nil))
	if e := next(t, w); e.Type != Added || e.name() != "c" || e.rv() != ResourceVersion(c) {
		t.Fatalf("change: %v", e)
	}
	if _, err := f.s.Delete(f.ctx, configmaps, "default", "c", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	e := next(t, w)
	if e.Type != Deleted || e.name() != "c" || e.rv() != fmt.Sprint(f.store.Rev()) || e.Object["kind"] != "ConfigMap" {
		t.Fatalf("delete: %v (store at %d)", e, f.store.Rev())
	}
}

func TestWatchListEndsInitialEventsWithAnnotatedBookmark(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	w := f.watch(t, "default", ListOptions{SendInitialEvents: bptr(true), ResourceVersionMatch: MatchNotOlderThan, AllowWatchBookmarks: true})
	if e := next(t, w); e.Type != Added || e.name() != "a" {
		t.Fatalf("%v", e)
	}
	b := next(t, w)
	ann, _ := meta(b.Object)["annotations"].(map[string]any)
	if b.Type != Bookmark || b.rv() != fmt.Sprint(f.store.Rev()) || ann[InitialEventsAnnotation] != "true" {
		t.Fatalf("bookmark %v %v", b, b.Object)
	}
}

func TestWatchListWithoutMatchIsInvalid(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Watch(f.ctx, configmaps, "default", ListOptions{SendInitialEvents: bptr(true)})
	wantStatus(t, err, 422, ReasonInvalid, `ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan`)
	_, err = f.s.Watch(f.ctx, configmaps, "default", ListOptions{ResourceVersion: "abc"})
	if err == nil || AsStatus(err).Code() != 500 || AsStatus(err).Status.Reason != "" {
		t.Fatalf("bad rv: %v", err)
	}
}

func TestWatchBookmarksAtTheSessionInterval(t *testing.T) {
	f := newFixture(t)
	f.s.SetBookmarkInterval(10 * time.Second)
	a := f.create(t, configmaps, "default", cm("a", nil))
	w := f.watch(t, "default", ListOptions{ResourceVersion: ResourceVersion(a), AllowWatchBookmarks: true})
	// a write the watch does not see still moves the bookmark's revision
	f.create(t, namespaces, "", Object{"metadata": map[string]any{"name": "other"}})
	f.clock.Step(10 * time.Second)
	b := next(t, w)
	if b.Type != Bookmark || b.rv() != fmt.Sprint(f.store.Rev()) {
		t.Fatalf("%v", b)
	}
	if _, ok := meta(b.Object)["annotations"]; ok {
		t.Fatalf("periodic bookmark carries the initial-events annotation")
	}
}

func TestWatchEndsAfterTimeoutSeconds(t *testing.T) {
	f := newFixture(t)
	sec := int64(30)
	w := f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(f.store.Rev()), TimeoutSeconds: &sec})
	f.clock.Step(30 * time.Second)
	wantEnd(t, w)
}

func TestWatchSelectorTransitions(t *testing.T) {
	f := newFixture(t)
	start := f.store.Rev()
	w := f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(start), LabelSelector: "app=x"})
	o := cm("a", nil)
	meta(o)["labels"] = map[string]any{"app": "y"}
	a := f.create(t, configmaps, "default", o) // not matching: dropped
	meta(a)["labels"] = map[string]any{"app": "x"}
	a, err := object(f.s.Update(f.ctx, configmaps, "default", "a", "", a, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if e := next(t, w); e.Type != Added || e.rv() != ResourceVersion(a) {
		t.Fatalf("starts matching: %v", e)
	}
	a["data"] = map[string]any{"k": "v"}
	a, _ = object(f.s.Update(f.ctx, configmaps, "default", "a", "", a, WriteOptions{}))
	if e := next(t, w); e.Type != Modified {
		t.Fatalf("still matching: %v", e)
	}
	meta(a)["labels"] = map[string]any{"app": "z"}
	a, _ = object(f.s.Update(f.ctx, configmaps, "default", "a", "", a, WriteOptions{}))
	e := next(t, w)
	if e.Type != Deleted || e.rv() != ResourceVersion(a) || Labels(e.Object)["app"] != "x" {
		t.Fatalf("stops matching: %v %v", e, e.Object)
	}
}

// With the watch cache off, a watch from a compacted revision is the
// store's: etcd3's watcher ends with kube's 410 message for a watch. (The
// cache's own window and message: cache_test.go.)
func TestWatchFromCompactedRevisionIsExpiredErrorEvent(t *testing.T) {
	f := newStoreFixture(t)
	a := f.create(t, configmaps, "default", cm("a", nil))
	f.create(t, configmaps, "default", cm("b", nil))
	if _, err := f.store.Compact(f.ctx, &mvcc.CompactionRequest{Revision: f.store.Rev(), Physical: true}); err != nil {
		t.Fatal(err)
	}
	w := f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(mustInt(ResourceVersion(a)) - 1)})
	e := next(t, w)
	if e.Type != Error || e.Object["reason"] != "Expired" || e.Object["message"] != "The resourceVersion for the provided watch is too old." {
		t.Fatalf("%v %v", e, e.Object)
	}
	if c, _ := numberInt(e.Object["code"]); c != 410 {
		if e.Object["code"] != float64(410) {
			t.Fatalf("code %v", e.Object["code"])
		}
	}
	wantEnd(t, w)
}

func TestWatchWithoutInitialEventsStartsNow(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	w := f.watch(t, "default", ListOptions{SendInitialEvents: bptr(false), ResourceVersionMatch: MatchNotOlderThan})
	f.create(t, configmaps, "default", cm("b", nil))
	if e := next(t, w); e.name() != "b" {
		t.Fatalf("%v", e)
	}
}

func mustInt(s string) int64 {
	var n int64
	fmt.Sscan(s, &n)
	return n
}

func TestWatchListOfAFutureRevisionWaitsForIt(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	target := f.store.Rev() + 2
	w := f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(target), SendInitialEvents: bptr(true),
		ResourceVersionMatch: MatchNotOlderThan, AllowWatchBookmarks: true})
	f.create(t, namespaces, "", Object{"metadata": map[string]any{"name": "n1"}})
	f.create(t, configmaps, "default", cm("b", nil)) // reaches target
	f.create(t, configmaps, "default", cm("c", nil)) // after the state: an event
	got := []string{}
	for len(got) < 4 {
		e := next(t, w)
		got = append(got, e.Type+" "+e.name())
		if e.Type == Bookmark && mustInt(e.rv()) < target {
			t.Fatalf("bookmark %s before target %d", e.rv(), target)
		}
	}
	// the state is read when the target is reached: it holds b, maybe c
	if got[0] != "ADDED a" || got[1] != "ADDED b" {
		t.Fatalf("%v", got)
	}
}

func TestWatchListOfAFutureRevisionTimesOut(t *testing.T) {
	f := newFixture(t)
	target := f.store.Rev() + 5
	w := f.watch(t, "default", ListOptions{ResourceVersion: fmt.Sprint(target), SendInitialEvents: bptr(true),
		ResourceVersionMatch: MatchNotOlderThan, AllowWatchBookmarks: true})
	f.clock.Step(3 * time.Second)
	e := next(t, w)
	if e.Type != Error || e.Object["message"] != fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", target, f.store.Rev()) {
		t.Fatalf("%v %v", e, e.Object)
	}
	wantEnd(t, w)
}

// A watch costs no goroutine of its own: its events are taken from the
// store as its client takes them, in Next.
func TestWatchesCostNoGoroutine(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	rv := fmt.Sprint(f.store.Rev())
	before := runtime.NumGoroutine()
	var ws []*Watch
	for i := range 300 {
		lo := ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true}
		if i%3 == 1 {
			lo = ListOptions{} // initial events, then changes
		}
		ws = append(ws, f.watch(t, "default", lo))
	}
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Fatalf("300 watches made %d goroutines", after-before)
	}
	f.create(t, configmaps, "default", cm("b", nil))
	for _, w := range ws {
		for e := next(t, w); e.Type != Added || e.name() != "b"; e = next(t, w) {
		}
	}
}
