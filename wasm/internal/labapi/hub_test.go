package labapi

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

// steps collects what a hub reports and lets a test wait for a step.
type steps struct {
	mu      sync.Mutex
	all     []map[string]any
	changed chan struct{}
}

func newSteps() *steps { return &steps{changed: make(chan struct{})} }

func (s *steps) add(b []byte) {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err)
	}
	s.mu.Lock()
	s.all = append(s.all, m)
	close(s.changed)
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

// waitFor returns the first step after index from that matches, waiting
// for it; it fails the test if none comes within the test's deadline.
func (s *steps) waitFor(t *testing.T, from int, match func(map[string]any) bool) (int, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		s.mu.Lock()
		for i := from; i < len(s.all); i++ {
			if match(s.all[i]) {
				st := s.all[i]
				s.mu.Unlock()
				return i, st
			}
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("no such step; got:\n%s", s.dump())
		}
	}
}

func (s *steps) dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, m := range s.all {
		j, _ := json.Marshal(m)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func kind(k string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["kind"] == k }
}

type fixture struct {
	t     *testing.T
	sess  *session.Session
	hub   *Hub
	steps *steps
	clock *clock.Fake
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	// The etcd-level read path (kube-apiserver's --watch-cache=false):
	// a watch from a compacted revision is a 410 at once, which the
	// reflector's relist tests here need.
	settings := session.DefaultSettings()
	settings.WatchCache = false
	sess, err := session.New("t", mvcc.NewMemoryBackend(), session.Options{NoControllers: true, Settings: &settings})
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, sess: sess, steps: newSteps(), clock: clock.NewFake(time.Unix(1_800_000_000, 0))}
	f.hub = New(sess, Options{Clock: f.clock, Rand: func() float64 { return 0 }, OnStep: f.steps.add})
	t.Cleanup(func() {
		f.hub.Close()
		sess.Close()
	})
	return f
}

// call runs an operation and decodes its answer into out (if not nil).
func (f *fixture) call(req map[string]any, out any) {
	f.t.Helper()
	b, _ := json.Marshal(req)
	ans, err := f.hub.Call(context.Background(), b, nil)
	if err != nil {
		f.t.Fatalf("%v: %v", req, err)
	}
	if out != nil {
		if err := json.Unmarshal(ans, out); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) answer(req map[string]any) Answer {
	f.t.Helper()
	var a Answer
	f.call(req, &a)
	return a
}

func obj(body string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		panic(err)
	}
	return m
}

func deployment(name string, replicas int) map[string]any {
	return obj(fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%q},
	  "spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},
	  "template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`,
		name, replicas, name, name))
}

func TestTwoOperatorsWithAStaleReadGetAConflictAndWithoutAResourceVersionLoseAnUpdate(t *testing.T) {
	f := newFixture(t)
	f.call(map[string]any{"op": "client", "client": "a", "label": "operator-a"}, nil)
	f.call(map[string]any{"op": "client", "client": "b", "label": "operator-b"}, nil)
	if a := f.answer(map[string]any{"op": "create", "client": "a", "resource": "deploy", "object": deployment("web", 3)}); a.Status != 201 {
		t.Fatalf("create: %+v", a)
	}
	readA := f.answer(map[string]any{"op": "get", "client": "a", "resource": "deployments", "name": "web"})
	readB := f.answer(map[string]any{"op": "get", "client": "b", "resource": "Deployment", "name": "web"})
	if readA.RV == "" || readA.RV != readB.RV {
		t.Fatalf("both read the same version: %q %q", readA.RV, readB.RV)
	}
	objA, objB := obj(readA.Body), obj(readB.Body)
	objA["spec"].(map[string]any)["replicas"] = 5
	objB["spec"].(map[string]any)["replicas"] = 2

	wa := f.answer(map[string]any{"op": "update", "client": "a", "resource": "deployments.apps", "object": objA})
	if wa.Status != 200 {
		t.Fatalf("A's update: %+v", wa)
	}
	wb := f.answer(map[string]any{"op": "update", "client": "b", "resource": "deployments", "object": objB})
	if wb.Status != 409 || wb.Reason != "Conflict" || !strings.Contains(wb.Message, "the object has been modified") {
		t.Fatalf("B's stale update must be a 409 Conflict: %+v", wb)
	}
	// B's exchange step shows the stale resourceVersion it sent.
	_, st := f.steps.waitFor(t, 0, func(m map[string]any) bool {
		return m["client"] == "b" && m["kind"] == "exchange" && m["method"] == "PUT"
	})
	if st["status"] != float64(409) || st["rvSent"] != readB.RV || st["reason"] != "Conflict" || st["requestBody"] == "" {
		t.Fatalf("B's PUT step: %v", st)
	}

	lost := f.answer(map[string]any{"op": "update", "client": "b", "resource": "deployments", "object": objB, "withoutResourceVersion": true})
	if lost.Status != 200 {
		t.Fatalf("an update without resourceVersion is unconditional: %+v", lost)
	}
	got := obj(f.answer(map[string]any{"op": "get", "client": "a", "resource": "deployments", "name": "web"}).Body)
	if r := got["spec"].(map[string]any)["replicas"]; r != float64(2) {
		t.Fatalf("B silently overwrote A's 5 with 2; replicas = %v", r)
	}
	// The field manager is the client's label.
	if !strings.Contains(lost.Body, `"manager":"operator-b"`) {
		t.Fatalf("managedFields name operator-b: %s", lost.Body)
	}
}

func TestRetryOnConflictRereadsAndReappliesWithDefaultRetry(t *testing.T) {
	f := newFixture(t)
	f.call(map[string]any{"op": "client", "client": "ctl", "label": "controller"}, nil)
	f.call(map[string]any{"op": "client", "client": "x", "label": "someone-else"}, nil)
	f.answer(map[string]any{"op": "create", "client": "x", "resource": "deployments", "object": deployment("web", 1)})

	// Someone else writes between each of the controller's reads and its
	// update, twice: the third attempt succeeds.
	interfere := 2
	var mu sync.Mutex
	mutate := func(o []byte) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		if interfere > 0 {
			interfere--
			cur := obj(f.answer(map[string]any{"op": "get", "client": "x", "resource": "deployments", "name": "web"}).Body)
			cur["metadata"].(map[string]any)["labels"] = map[string]any{"touched": fmt.Sprint(interfere)}
			if a := f.answer(map[string]any{"op": "update", "client": "x", "resource": "deployments", "object": cur}); a.Status != 200 {
				return nil, fmt.Errorf("interfering write: %+v", a)
			}
		}
		return o, nil
	}
	done := make(chan Answer, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"op": "retryOnConflict", "client": "ctl", "resource": "deployments",
			"name": "web", "backoff": "DefaultRetry", "set": map[string]any{"spec.replicas": 5}})
		out, err := f.hub.Call(context.Background(), b, mutate)
		if err != nil {
			t.Error(err)
		}
		var a Answer
		json.Unmarshal(out, &a)
		done <- a
	}()
	// Each conflict waits DefaultRetry's 10ms (no jitter here) on the clock.
	for i := 0; i < 2; i++ {
		_, st := f.steps.waitFor(t, 0, func(m map[string]any) bool {
			return m["client"] == "ctl" && m["kind"] == "backoff" && m["attempt"] == float64(i+1)
		})
		if st["waitMs"] != float64(10) {
			t.Fatalf("DefaultRetry waits 10ms: %v", st)
		}
		f.clock.WaitForSleepers(context.Background(), 1)
		f.clock.Step(10 * time.Millisecond)
	}
	a := <-done
	if a.Status != 200 || a.Attempts != 3 {
		t.Fatalf("third attempt succeeds: %+v", a)
	}
	if r := obj(a.Body)["spec"].(map[string]any)["replicas"]; r != float64(5) {
		t.Fatalf("replicas = %v", r)
	}
	var attempts []string
	for _, m := range f.steps.all {
		if m["client"] == "ctl" && m["kind"] == "attempt" {
			attempts = append(attempts, fmt.Sprint(m["attempt"], ":", m["reason"]))
		}
	}
	if strings.Join(attempts, " ") != "1:Conflict 2:Conflict 3:<nil>" {
		t.Fatalf("attempts: %v", attempts)
	}
}

// read: "cache" reads each attempt from the watch cache
// (resourceVersion=0), as a controller reading its informer's cache does.
func TestRetryOnConflictReadsFromTheCacheWhenAsked(t *testing.T) {
	f := newFixture(t)
	f.call(map[string]any{"op": "client", "client": "ctl", "label": "controller"}, nil)
	f.answer(map[string]any{"op": "create", "client": "ctl", "resource": "configmaps", "object": map[string]any{"metadata": map[string]any{"name": "c"}, "data": map[string]any{"v": "1"}}})
	a := f.answer(map[string]any{"op": "retryOnConflict", "client": "ctl", "resource": "configmaps", "name": "c", "read": "cache", "set": map[string]any{"data.v": "2"}})
	if a.Status != 200 {
		t.Fatalf("update: %+v", a)
	}
	_, get := f.steps.waitFor(t, 0, func(m map[string]any) bool {
		return m["client"] == "ctl" && m["kind"] == "exchange" && m["method"] == "GET"
	})
	if get["query"] != "resourceVersion=0" {
		t.Fatalf("the attempt's read: %v", get)
	}
	if _, err := f.hub.Call(context.Background(), []byte(`{"op":"retryOnConflict","client":"ctl","resource":"configmaps","name":"c","read":"etcd","set":{"data.v":"3"}}`), nil); err == nil {
		t.Fatal("an unknown read is a misuse")
	}
}

func TestRetryOnConflictGivesUpAfterDefaultBackoffsFourAttempts(t *testing.T) {
	f := newFixture(t)
	f.call(map[string]any{"op": "client", "client": "ctl"}, nil)
	f.call(map[string]any{"op": "client", "client": "x"}, nil)
	f.answer(map[string]any{"op": "create", "client": "x", "resource": "configmaps", "object": obj(`{"metadata":{"name":"c"},"data":{"v":"0"}}`)})
	n := 0
	mutate := func(o []byte) ([]byte, error) {
		n++
		f.answer(map[string]any{"op": "patch", "client": "x", "resource": "configmaps", "name": "c", "patch": obj(fmt.Sprintf(`{"data":{"v":"%d"}}`, n))})
		return o, nil
	}
	done := make(chan Answer, 1)
	go func() {
		b, _ := json.Marshal(map[string]any{"op": "retryOnConflict", "client": "ctl", "resource": "cm", "name": "c",
			"backoff": "DefaultBackoff", "set": map[string]any{"data.v": "mine"}})
		out, _ := f.hub.Call(context.Background(), b, mutate)
		var a Answer
		json.Unmarshal(out, &a)
		done <- a
	}()
	var waits []float64
	for i := 1; i <= 3; i++ {
		_, st := f.steps.waitFor(t, 0, func(m map[string]any) bool {
			return m["client"] == "ctl" && m["kind"] == "backoff" && m["attempt"] == float64(i)
		})
		waits = append(waits, st["waitMs"].(float64))
		f.clock.WaitForSleepers(context.Background(), 1)
		f.clock.Step(time.Duration(st["waitMs"].(float64)) * time.Millisecond)
	}
	a := <-done
	if a.Status != 409 || a.Attempts != 4 {
		t.Fatalf("four conflicting attempts, then the last 409: %+v", a)
	}
	if fmt.Sprint(waits) != "[10 50 250]" {
		t.Fatalf("DefaultBackoff waits 10, 50, 250 ms: %v", waits)
	}
}

func TestInformerDisconnectResumeAndRelistAfterCompaction(t *testing.T) {
	f := newFixture(t)
	f.call(map[string]any{"op": "client", "client": "r", "label": "reflector"}, nil)
	f.call(map[string]any{"op": "client", "client": "w", "label": "writer"}, nil)
	one := f.answer(map[string]any{"op": "create", "client": "w", "resource": "configmaps", "object": obj(`{"metadata":{"name":"one"}}`)})

	var st InformerState
	f.call(map[string]any{"op": "informer", "client": "r", "informer": "cms", "resource": "configmaps"}, &st)
	if st.Running || !st.Bookmarks || st.WatchList {
		t.Fatalf("a new informer: %+v", st)
	}
	f.call(map[string]any{"op": "start", "client": "r", "informer": "cms"}, &st)
	i, _ := f.steps.waitFor(t, 0, kind("watch"))

	// An event while watching reaches the store.
	f.answer(map[string]any{"op": "create", "client": "w", "resource": "configmaps", "object": obj(`{"metadata":{"name":"two"}}`)})
	i, _ = f.steps.waitFor(t, i, func(m map[string]any) bool { return m["kind"] == "event" && m["key"] == "default/two" })

	// Disconnected, it misses nothing: on resume it watches from where it was.
	f.call(map[string]any{"op": "disconnect", "client": "r", "informer": "cms"}, nil)
	i, disc := f.steps.waitFor(t, i, kind("disconnected"))
	f.answer(map[string]any{"op": "create", "client": "w", "resource": "configmaps", "object": obj(`{"metadata":{"name":"three"}}`)})
	f.call(map[string]any{"op": "resume", "client": "r", "informer": "cms"}, nil)
	i, _ = f.steps.waitFor(t, i, kind("resumed"))
	i, w := f.steps.waitFor(t, i, kind("watch"))
	if w["rv"] != disc["rv"] {
		t.Fatalf("resumes from the revision it reached: %v after %v", w, disc)
	}
	i, _ = f.steps.waitFor(t, i, func(m map[string]any) bool { return m["kind"] == "event" && m["key"] == "default/three" })

	// Disconnected across a compaction, the resume gets 410 and relists;
	// the delete it missed meanwhile it can only infer.
	f.call(map[string]any{"op": "disconnect", "client": "r", "informer": "cms"}, nil)
	i, _ = f.steps.waitFor(t, i, kind("disconnected"))
	f.answer(map[string]any{"op": "delete", "client": "w", "resource": "configmaps", "name": "one"})
	f.answer(map[string]any{"op": "create", "client": "w", "resource": "configmaps", "object": obj(`{"metadata":{"name":"four"}}`)})
	f.answer(map[string]any{"op": "create", "client": "w", "resource": "configmaps", "object": obj(`{"metadata":{"name":"five"}}`)})
	if _, err := f.sess.Store.Compact(context.Background(), &mvcc.CompactionRequest{Revision: f.sess.Store.Rev()}); err != nil {
		t.Fatal(err)
	}
	f.call(map[string]any{"op": "resume", "client": "r", "informer": "cms"}, nil)
	i, exp := f.steps.waitFor(t, i, kind("expired"))
	if exp["code"] != float64(410) {
		t.Fatalf("expired step: %v", exp)
	}
	// The reflector backs off (800ms on its clock) before it relists.
	i, b := f.steps.waitFor(t, i, kind("backoff"))
	if b["waitMs"] != float64(800) {
		t.Fatalf("backoff: %v", b)
	}
	f.clock.WaitForSleepers(context.Background(), 1)
	f.clock.Step(800 * time.Millisecond)
	i, rep := f.steps.waitFor(t, i, kind("replace"))
	if rep["items"] != float64(4) {
		t.Fatalf("relist finds four configmaps: %v", rep)
	}
	_, gone := f.steps.waitFor(t, i, kind("deleted-final-state-unknown"))
	if gone["key"] != "default/one" || gone["rv"] != one.RV {
		t.Fatalf("the missed delete: %v, want default/one last seen at its creation, rv %s", gone, one.RV)
	}
	f.call(map[string]any{"op": "store", "client": "r", "informer": "cms"}, &st)
	if len(st.Objects) != 4 || st.Items != 4 || !st.Synced || st.ResourceVersion != rep["rv"] {
		t.Fatalf("store: %+v", st)
	}
	f.call(map[string]any{"op": "stop", "client": "r", "informer": "cms"}, &st)
	if st.Running {
		t.Fatalf("stopped: %+v", st)
	}
}

func TestWatchListInformerReportsInitialEventsEnd(t *testing.T) {
	f := newFixture(t)
	f.call(map[string]any{"op": "client", "client": "r"}, nil)
	f.answer(map[string]any{"op": "create", "client": "r", "resource": "configmaps", "object": obj(`{"metadata":{"name":"one"}}`)})
	f.call(map[string]any{"op": "informer", "client": "r", "informer": "i", "resource": "configmaps", "watchList": true}, nil)
	f.call(map[string]any{"op": "start", "client": "r", "informer": "i"}, nil)
	i, w := f.steps.waitFor(t, 0, kind("watch"))
	if !strings.Contains(w["request"].(string), "sendInitialEvents=true") {
		t.Fatalf("watch-list request: %v", w)
	}
	i, ev := f.steps.waitFor(t, i, kind("event"))
	if ev["initial"] != true {
		t.Fatalf("initial event: %v", ev)
	}
	_, end := f.steps.waitFor(t, i, kind("initial-events-end"))
	if end["items"] != float64(1) {
		t.Fatalf("initial-events-end: %v", end)
	}
}

func TestMisuseIsAnErrorAndAPIErrorsAreAnswers(t *testing.T) {
	f := newFixture(t)
	for _, bad := range []string{
		`{"op":"get","client":"nobody","resource":"configmaps","name":"x"}`,
		`{"op":"bogus"}`,
		`not json`,
		`{"op":"client","client":"a","label":"has/slash"}`,
	} {
		if _, err := f.hub.Call(context.Background(), []byte(bad), nil); err == nil {
			t.Errorf("%s: want an error", bad)
		}
	}
	f.call(map[string]any{"op": "client", "client": "a"}, nil)
	if _, err := f.hub.Call(context.Background(), []byte(`{"op":"get","client":"a","resource":"widgets","name":"x"}`), nil); err == nil ||
		!strings.Contains(err.Error(), `doesn't have a resource type "widgets"`) {
		t.Errorf("unknown resource: %v", err)
	}
	if a := f.answer(map[string]any{"op": "get", "client": "a", "resource": "configmaps", "name": "missing"}); a.Status != 404 || a.Reason != "NotFound" {
		t.Errorf("missing object: %+v", a)
	}
	if a := f.answer(map[string]any{"op": "get", "client": "a", "resource": "namespaces", "name": "default"}); a.Status != 200 {
		t.Errorf("cluster-scoped get: %+v", a)
	}
}
