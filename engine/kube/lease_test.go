package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
)

var events = Lookup("", "v1", "events")

// newLeaseFixture is a registry whose store expires leases on the
// registry's fake clock, as a session's store and registry share one.
func newLeaseFixture(t *testing.T, cache bool) *fixture {
	t.Helper()
	c := clock.NewFake(t0)
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{Clock: c})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	n := 0
	s := New(StoreKV(st), Options{Clock: c, WatchCache: cache, NewUID: func() string { n++; return fmt.Sprintf("uid-%d", n) }})
	t.Cleanup(s.Close)
	return &fixture{s: s, store: st, clock: c, ctx: context.Background()}
}

func anEvent(name string) Object {
	return Object{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": name, "namespace": "default"},
		"involvedObject": map[string]any{"kind": "Pod", "name": "web", "namespace": "default"}, "reason": "Started", "type": "Normal"}
}

// leaseOf is the lease the object's key was last put with.
func (f *fixture) leaseOf(t *testing.T, r *Resource, name string) int64 {
	t.Helper()
	resp, err := f.store.Range(f.ctx, &mvcc.RangeRequest{Key: []byte(r.Key("default", name))})
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("%s: %v %v", name, resp, err)
	}
	return resp.Kvs[0].Lease
}

// TestEventsExpireAnHourAfterTheyAreWritten: an Event is put with an etcd
// lease, as kube-apiserver's --event-ttl (1 h) makes it: kube's lease
// manager grants 3,600 s plus its 60 s reuse window and puts every Event
// written within that minute with the same lease, so that they are
// deleted together, in one revision, when it expires (a Kubernetes watch
// sees them DELETED); an update puts the Event with the current lease
// again. Other objects have none.
func TestEventsExpireAnHourAfterTheyAreWritten(t *testing.T) {
	for _, cache := range []bool{false, true} {
		t.Run(fmt.Sprintf("watch cache %v", cache), func(t *testing.T) {
			f := newLeaseFixture(t, cache)
			create := func(r *Resource, o Object) {
				t.Helper()
				if _, err := f.s.Create(f.ctx, r, "default", o, WriteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			create(events, anEvent("a"))
			first := f.leaseOf(t, events, "a")
			ttl, err := f.store.LeaseTimeToLive(f.ctx, first, false)
			if first == 0 || err != nil || ttl.GrantedTTL != EventTTL+60 {
				t.Fatalf("the first Event's lease %x: %+v %v, want one of %d s", first, ttl, err, EventTTL+60)
			}
			f.clock.Step(30 * time.Second)
			create(events, anEvent("b"))
			f.clock.Step(29 * time.Second)
			create(events, anEvent("c"))
			create(configmaps, Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "kept"}})
			for name, want := range map[string]int64{"b": first, "c": first} {
				if got := f.leaseOf(t, events, name); got != want {
					t.Errorf("Event %s written within the reuse minute: lease %x, want %x", name, got, want)
				}
			}
			if l := f.leaseOf(t, configmaps, "kept"); l != 0 {
				t.Errorf("a ConfigMap was put with lease %x", l)
			}

			f.clock.Step(2 * time.Second) // 61 s after the first grant: a new lease
			create(events, anEvent("d"))
			second := f.leaseOf(t, events, "d")
			if second == 0 || second == first {
				t.Fatalf("an Event 61 s later: lease %x, want a new one (the first is %x)", second, first)
			}
			f.clock.Step(time.Second)
			c, err := f.s.Get(f.ctx, events, "default", "c", "")
			if err != nil {
				t.Fatal(err)
			}
			c["count"] = jsonInt(2)
			if _, err := f.s.Update(f.ctx, events, "default", "c", "", c, WriteOptions{}); err != nil {
				t.Fatal(err)
			}
			if got := f.leaseOf(t, events, "c"); got != second {
				t.Errorf("an updated Event: lease %x, want the current one %x", got, second)
			}

			w, err := f.store.Watch(f.ctx, &mvcc.WatchRequest{Key: []byte(events.Prefix("")), RangeEnd: prefixEnd([]byte(events.Prefix(""))), StartRevision: f.store.Rev() + 1})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Cancel()
			before := f.store.Rev()
			day := int64(24 * 3600) // a watch longer than the hour the clock jumps
			kw, err := f.s.Watch(f.ctx, events, "default", ListOptions{ResourceVersion: formatRV(before), TimeoutSeconds: &day})
			if err != nil {
				t.Fatal(err)
			}
			defer kw.Close()
			f.clock.Set(t0.Add((EventTTL + 60) * time.Second))
			ctx, cancel := context.WithTimeout(f.ctx, 10*time.Second)
			defer cancel()
			resp, err := w.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Header.Revision != before+1 || len(resp.Events) != 2 ||
				string(resp.Events[0].Kv.Key) != events.Key("default", "a") || string(resp.Events[1].Kv.Key) != events.Key("default", "b") ||
				resp.Events[0].Type != mvcc.EventDelete || resp.Events[1].Type != mvcc.EventDelete {
				t.Fatalf("the first lease's expiry: %+v, want a and b deleted at revision %d", resp, before+1)
			}
			for _, name := range []string{"a", "b"} {
				if e := next(t, kw); e.Type != Deleted || e.name() != name {
					t.Errorf("a Kubernetes watch of the events: %v, want %s DELETED", e, name)
				}
			}
			if _, err := f.s.Get(f.ctx, events, "default", "a", ""); !isReason(err, ReasonNotFound) {
				t.Errorf("Event a after an hour: %v, want NotFound", err)
			}
			if _, err := f.s.Get(f.ctx, events, "default", "c", ""); err != nil {
				t.Errorf("Event c, updated a minute later: %v, want it until its own lease expires", err)
			}
			if _, err := f.s.Get(f.ctx, configmaps, "default", "kept", ""); err != nil {
				t.Errorf("the ConfigMap: %v", err)
			}
		})
	}
}

func isReason(err error, reason string) bool {
	se, ok := err.(*StatusError)
	return ok && se.Status.Reason == reason
}
