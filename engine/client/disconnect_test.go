package client

import (
	"context"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/kube"
)

func TestADisconnectedReflectorResumesFromItsRevisionAndMissesNothing(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	store := NewStore()
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
	rec := record(t, r)
	runReflector(t, r)
	rec.kind(StepWatch)

	r.Disconnect()
	d := rec.kind(StepDisconnected)
	if !r.Disconnected() {
		t.Fatal("Disconnected() after Disconnect")
	}
	// Written while nobody watches.
	createCM(t, c, "default", "b")
	r.Resume()
	rec.kind(StepResumed)
	w := rec.kind(StepWatch)
	if w.RV != d.RV {
		t.Fatalf("resumed from %q, want the revision it reached, %q", w.RV, d.RV)
	}
	rec.until("ADDED b", func(s Step) bool { return s.Kind == StepEvent && s.Key == "default/b" })
	if rec.count(StepReplace) != 1 || rec.count(StepList) != 1 {
		t.Fatalf("a resume is not a relist: %d lists", rec.count(StepList))
	}
}

func TestADisconnectedReflectorRelistsWhenItsRevisionWasCompactedMeanwhile(t *testing.T) {
	ts, c := newTestSession(t, kube.Options{})
	createCM(t, c, "default", "a")
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), NewStore())
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	r.Clock = clock
	rec := record(t, r)
	runReflector(t, r)
	rec.kind(StepWatch)
	r.Disconnect()
	rec.kind(StepDisconnected)
	// Compacting at the revision of b keeps b's own event: a watch from
	// the reflector's revision only fails once the revision after it is
	// gone, hence two writes.
	createCM(t, c, "default", "b")
	createCM(t, c, "default", "c")
	compactNow(t, ts)
	r.Resume()
	exp := rec.kind(StepExpired)
	if !IsResourceExpired(exp.Err) {
		t.Fatalf("expired: %v", exp)
	}
	b := rec.kind(StepBackoff)
	if b.Wait != 800*time.Millisecond {
		t.Fatalf("client-go's first backoff is 800ms (jitter 0 here): %v", b.Wait)
	}
	clock.WaitForSleepers(context.Background(), 1)
	clock.Step(b.Wait)
	if rep := rec.kind(StepReplace); rep.Items != 3 {
		t.Fatalf("relist: %v", rep)
	}
}

func TestAReflectorWithoutBookmarksDoesNotAskForThem(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), NewStore())
	if !r.Bookmarks {
		t.Fatal("client-go's reflector asks for bookmarks by default")
	}
	r.SetBookmarks(false)
	rec := record(t, r)
	runReflector(t, r)
	if w := rec.kind(StepWatch); containsParam(w.Request, "allowWatchBookmarks") {
		t.Fatalf("watch %s", w.Request)
	}
}

func containsParam(req, name string) bool {
	for i := 0; i+len(name) <= len(req); i++ {
		if req[i:i+len(name)] == name {
			return true
		}
	}
	return false
}

func TestOnExchangeSeesEveryRequestAndItsAnswer(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	var seen []Exchange
	c.OnExchange = func(e Exchange) { seen = append(seen, e) }
	createCM(t, c, "default", "x")
	_, err := c.Resource(ConfigMaps).Namespace("default").Get(testCtx(t), "missing", GetOptions{})
	if !IsNotFound(err) {
		t.Fatal(err)
	}
	if len(seen) != 2 {
		t.Fatalf("%d exchanges", len(seen))
	}
	if e := seen[0]; e.Method != "POST" || e.Status != 201 || len(e.RequestBody) == 0 || len(e.Body) == 0 {
		t.Fatalf("create: %+v", e)
	}
	st, ok := seen[1].StatusObject()
	if seen[1].Status != 404 || !ok || st.Reason != ReasonNotFound {
		t.Fatalf("get: %+v %+v", seen[1], st)
	}
}

func TestMapperResolvesWhatKubectlAccepts(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	m := NewMapper(c)
	for _, name := range []string{"deployments", "deployment", "deploy", "Deployment", "deployments.apps", "deployments.v1.apps"} {
		mp, err := m.Lookup(testCtx(t), name)
		if err != nil || mp.Resource != Deployments || mp.Kind != "Deployment" || !mp.Namespaced {
			t.Errorf("%s: %+v %v", name, mp, err)
		}
	}
	if mp, err := m.Lookup(testCtx(t), "ns"); err != nil || mp.Resource != Namespaces || mp.Namespaced {
		t.Errorf("ns: %+v %v", mp, err)
	}
	if _, err := m.Lookup(testCtx(t), "deployments.example.com"); err == nil {
		t.Error("a group the server does not serve")
	}
}

// A delete the informer's watch delivers reaches OnDelete as the object
// as deleted (at the delete's revision). One it missed while disconnected,
// past a compaction, only the relist can infer: the object is not in the
// new list, so OnDelete gets a DeletedFinalStateUnknown whose Obj is the
// last state the informer knew, at its old resourceVersion.
func TestAMissedDeleteArrivesAsDeletedFinalStateUnknownWithTheLastKnownState(t *testing.T) {
	ts, c := newTestSession(t, kube.Options{})
	cms := c.Resource(ConfigMaps).Namespace("default")
	createCM(t, c, "default", "a")
	b := createCM(t, c, "default", "b")
	store := NewStore()
	deletes := make(chan any, 10)
	store.AddHandler(Handler{OnDelete: func(obj any) { deletes <- obj }})
	r := NewReflector(cms, store)
	clock := clock.NewFake(time.Unix(1_800_000_000, 0))
	r.Clock = clock
	rec := record(t, r)
	runReflector(t, r)
	rec.kind(StepWatch)

	if err := cms.Delete(testCtx(t), "a", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := rec.until("DELETED a", func(s Step) bool { return s.Kind == StepEvent && s.Type == Deleted })
	if o, ok := (<-deletes).(Object); !ok || o.Key() != "default/a" || o.ResourceVersion() != ev.RV {
		t.Fatalf("a watched delete: OnDelete(%v), want the object at the delete's revision %s", o, ev.RV)
	}

	r.Disconnect()
	rec.kind(StepDisconnected)
	if err := cms.Delete(testCtx(t), "b", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	createCM(t, c, "default", "c") // compacting past b's delete needs a later revision
	compactNow(t, ts)
	r.Resume()
	rec.kind(StepExpired)
	backoff := rec.kind(StepBackoff)
	clock.WaitForSleepers(context.Background(), 1)
	clock.Step(backoff.Wait)
	if rep := rec.kind(StepReplace); rep.Items != 1 {
		t.Fatalf("relist: %v, want c alone", rep)
	}
	st := rec.kind(StepDeletedFinalStateUnknown)
	if st.Key != "default/b" || st.RV != b.ResourceVersion() {
		t.Fatalf("step %v, want default/b at its last known rv %s", st, b.ResourceVersion())
	}
	d, ok := (<-deletes).(DeletedFinalStateUnknown)
	if !ok || d.Key != "default/b" || d.Obj.ResourceVersion() != b.ResourceVersion() {
		t.Fatalf("a missed delete: OnDelete(%#v), want a DeletedFinalStateUnknown of default/b at rv %s", d, b.ResourceVersion())
	}
}
