package client

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
)

// The verbs against a real session, and the Status errors as the
// predicates see them.
func TestRESTVerbsAndStatusErrors(t *testing.T) {
	ts, c := newTestSession(t, kube.Options{})
	ctx := testCtx(t)
	rc := c.Resource(ConfigMaps).Namespace("default")

	a := createCM(t, c, "default", "a")
	_, err := rc.Create(ctx, Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}}, WriteOptions{})
	if !IsAlreadyExists(err) || IsConflict(err) {
		t.Fatalf("duplicate create: %v", err)
	}
	if se, _ := AsStatus(err); se.Message() != `configmaps "a" already exists` || se.Code() != 409 || se.Status.Details.Name != "a" {
		t.Fatalf("AlreadyExists status %+v", se.Status)
	}
	if _, err := rc.Get(ctx, "nope", GetOptions{}); !IsNotFound(err) || err.Error() != `configmaps "nope" not found` {
		t.Fatalf("get missing: %v", err)
	}

	a.SetNested("1", "data", "v")
	updated, err := rc.Update(ctx, a, WriteOptions{})
	if err != nil || updated.ResourceVersion() == a.ResourceVersion() {
		t.Fatalf("update: %v", err)
	}
	a.SetNested("2", "data", "v") // a still has the old resourceVersion
	_, err = rc.Update(ctx, a, WriteOptions{})
	if !IsConflict(err) || err.Error() != `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again` {
		t.Fatalf("stale update: %v", err)
	}

	patched, err := rc.Patch(ctx, "a", MergePatch, []byte(`{"data":{"p":"q"}}`), PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	if v, _ := patched.NestedString("data", "p"); v != "q" {
		t.Fatalf("patched %v", patched)
	}
	applied, err := rc.Apply(ctx, Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "a"}, "data": map[string]any{"owner": "me"}}, "lesson", false)
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if v, _ := applied.NestedString("data", "owner"); v != "me" {
		t.Fatalf("applied %v", applied)
	}

	l, err := rc.List(ctx, ListOptions{})
	if err != nil || len(l.Items) != 1 || l.Kind != "ConfigMapList" || l.ResourceVersion == "" {
		t.Fatalf("list: %v %+v", err, l)
	}
	// An Exact list at a compacted revision: 410 Expired.
	old := a.ResourceVersion()
	createCM(t, c, "default", "b")
	createCM(t, c, "default", "c")
	compactNow(t, ts)
	_, err = rc.List(ctx, ListOptions{ResourceVersion: old, ResourceVersionMatch: "Exact"})
	if !IsResourceExpired(err) || IsGone(err) {
		t.Fatalf("exact list at compacted %s: %v", old, err)
	}
	// A forbidden combination: 422 Invalid.
	if _, err := rc.List(ctx, ListOptions{ResourceVersionMatch: "Exact"}); !IsInvalid(err) {
		t.Fatalf("RVM without RV: %v", err)
	}

	err = rc.Delete(ctx, "a", DeleteOptions{Preconditions: &Preconditions{ResourceVersion: old}})
	if !IsConflict(err) {
		t.Fatalf("delete with stale RV precondition: %v", err)
	}
	if err := rc.Delete(ctx, "a", DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := rc.Delete(ctx, "a", DeleteOptions{}); !IsNotFound(err) {
		t.Fatalf("second delete: %v", err)
	}
}

func TestWatchDeliversEventsStrictlyAfterItsResourceVersion(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	ctx := testCtx(t)
	rc := c.Resource(ConfigMaps).Namespace("default")
	a := createCM(t, c, "default", "a")
	b := createCM(t, c, "default", "b")
	w, err := rc.Watch(ctx, ListOptions{ResourceVersion: a.ResourceVersion()})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := nextEvent(t, w)
	if ev.Type != Added || ev.Object.Name() != "b" || ev.Object.ResourceVersion() != b.ResourceVersion() {
		t.Fatalf("first event %v %v", ev.Type, ev.Object)
	}
	if err := rc.Delete(ctx, "a", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ev = nextEvent(t, w)
	if ev.Type != Deleted || ev.Object.Name() != "a" {
		t.Fatalf("delete event %v %v", ev.Type, ev.Object)
	}
	w.Stop()
	if _, ok := <-w.ResultChan(); ok {
		t.Fatal("channel open after Stop")
	}
	if w.Err() != nil {
		t.Fatalf("Err after Stop: %v", w.Err())
	}
}

func nextEvent(t *testing.T, w *Watcher) Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatalf("watch ended: %v", w.Err())
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
	}
	return Event{}
}

// scriptedStream replays fixed frames: the transport contract says a frame
// is one message, but the decoder must not depend on it.
type scriptedStream struct{ frames []string }

func (s *scriptedStream) Next(ctx context.Context) ([]byte, error) {
	if len(s.frames) == 0 {
		return nil, io.EOF
	}
	f := s.frames[0]
	s.frames = s.frames[1:]
	return []byte(f), nil
}
func (s *scriptedStream) Close() {}

func TestWatchDecodesEventsSplitOrJoinedAcrossFrames(t *testing.T) {
	frames := []string{
		`{"type":"ADDED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"}}}` + "\n" + `{"type":"MODI`,
		`FIED","object":{"kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"6"}}}` + "\n",
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 6 (9)","reason":"Expired","code":410}}`,
	}
	c := New(api.HandlerFunc(func(ctx context.Context, req *api.Request) *api.Response {
		return &api.Response{Status: 200, Stream: &scriptedStream{frames: frames}}
	}))
	w, err := c.Resource(ConfigMaps).Watch(context.Background(), ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []Event
	for ev := range w.ResultChan() {
		got = append(got, ev)
	}
	if len(got) != 3 || got[0].Type != Added || got[1].Type != Modified || got[1].Object.ResourceVersion() != "6" || got[2].Type != Error {
		t.Fatalf("events %+v", got)
	}
	if !IsResourceExpired(got[2].Err) || got[2].Err.Error() != "too old resource version: 6 (9)" {
		t.Fatalf("ERROR event error %v", got[2].Err)
	}
	if w.Err() != nil {
		t.Fatalf("Err %v", w.Err())
	}
}
