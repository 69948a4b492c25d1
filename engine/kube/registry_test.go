package kube

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type fixture struct {
	s     *Registry
	store *mvcc.Store
	clock *clock.Fake
	ctx   context.Context
}

// newFixture is a registry with the watch cache on, kube-apiserver's
// default.
func newFixture(t testing.TB) *fixture { return newFixtureWith(t, Options{WatchCache: true}) }

// newStoreFixture is a registry with the watch cache off: every watch and
// read goes to the store (--watch-cache=false).
func newStoreFixture(t testing.TB) *fixture {
	return newFixtureWith(t, Options{})
}

func newFixtureWith(t testing.TB, o Options) *fixture {
	t.Helper()
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := clock.NewFake(t0)
	n := 0
	o.Clock = c
	o.NewUID = func() string { n++; return fmt.Sprintf("uid-%d", n) }
	s := New(StoreKV(st), o)
	t.Cleanup(s.Close)
	return &fixture{s: s, store: st, clock: c, ctx: context.Background()}
}

// bothModes runs a test with the watch cache on and off.
func bothModes(t *testing.T, test func(t *testing.T, f *fixture)) {
	t.Run("cache", func(t *testing.T) { test(t, newFixture(t)) })
	t.Run("store", func(t *testing.T) { test(t, newStoreFixture(t)) })
}

// waiting runs op, letting the fake clock pass whenever something arms a
// timer (a read waiting for a revision the cache has not reached waits
// blockTimeout on the registry's clock), until op returns.
func (f *fixture) waiting(op func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		op()
	}()
	for {
		armed := f.clock.TimerCreated()
		if f.clock.Timers() > 0 {
			f.clock.Step(blockTimeout)
		}
		select {
		case <-done:
			return
		case <-armed:
		}
	}
}

var (
	configmaps  = Lookup("", "v1", "configmaps")
	deployments = Lookup("apps", "v1", "deployments")
	namespaces  = Lookup("", "v1", "namespaces")
	pods        = Lookup("", "v1", "pods")
)

func obj(t testing.TB, s string) Object {
	t.Helper()
	o, err := DecodeObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func cm(name string, data map[string]any) Object {
	return Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": data}
}

func wantStatus(t *testing.T, err error, code int, reason, msg string) {
	t.Helper()
	var se *StatusError
	if !errors.As(err, &se) {
		if code == 500 && reason == "" && err != nil && err.Error() == msg {
			return
		}
		t.Fatalf("got %v, want Status %d %s", err, code, reason)
	}
	if se.Code() != code || se.Status.Reason != reason || (msg != "" && se.Status.Message != msg) {
		t.Fatalf("got %d %s %q, want %d %s %q", se.Code(), se.Status.Reason, se.Status.Message, code, reason, msg)
	}
}

func (f *fixture) create(t *testing.T, r *Resource, ns string, o Object) Object {
	t.Helper()
	out, err := object(f.s.Create(f.ctx, r, ns, o, WriteOptions{FieldManager: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

const nginx = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","labels":{"app":"nginx"}},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.21"}]}}}}`

// object is the object of a write's answer.
func object(w Written, err error) (Object, error) { return w.Object, err }
