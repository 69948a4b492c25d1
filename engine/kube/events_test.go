//go:build !js

package kube

import (
	"fmt"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

func aNewEvent(name string) Object {
	return Object{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": map[string]any{"name": name},
		"eventTime": "2026-01-02T03:04:05.000000Z", "reportingController": "example.com/scaler", "reportingInstance": "scaler-1",
		"action": "Scale", "reason": "ScaledUp", "type": "Normal", "note": "scaled up",
		"regarding": map[string]any{"kind": "Deployment", "namespace": "default", "name": "web"}}
}

// events.k8s.io/v1 Events are core/v1 Events in another form: written
// through either, stored once as core/v1's, and read, listed and watched
// through each in its own form, with the watch cache on and off; bookmarks
// name the watch's version.
func TestEventsK8sIOEventsAreCoreEventsInAnotherForm(t *testing.T) {
	for _, cache := range []bool{false, true} {
		t.Run(fmt.Sprintf("watch cache %v", cache), func(t *testing.T) {
			f := newLeaseFixture(t, cache)
			w, err := f.s.Watch(f.ctx, eventsV1, "default", ListOptions{SendInitialEvents: bptr(true), ResourceVersionMatch: MatchNotOlderThan, AllowWatchBookmarks: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if b := next(t, w); b.Type != Bookmark || b.Object["apiVersion"] != "events.k8s.io/v1" || b.Object["kind"] != "Event" {
				t.Fatalf("the bookmark ending the initial events: %v", b.Object)
			}
			cw := f.watch(t, "default", ListOptions{})
			cw.Close()
			if _, err := f.s.Create(f.ctx, eventsV1, "default", aNewEvent("scaled"), WriteOptions{FieldManager: "test"}); err != nil {
				t.Fatal(err)
			}
			f.clock.Step(time.Second) // within the lease's reuse minute
			if _, err := f.s.Create(f.ctx, events, "default", anEvent("started"), WriteOptions{FieldManager: "test"}); err != nil {
				t.Fatal(err)
			}
			resp, err := f.store.Range(f.ctx, &mvcc.RangeRequest{Key: []byte(events.Key("default", "scaled"))})
			if err != nil || len(resp.Kvs) != 1 {
				t.Fatal(resp, err)
			}
			stored, _ := DecodeObject(resp.Kvs[0].Value)
			if stored["apiVersion"] != "v1" || stored["message"] != "scaled up" || pathString("involvedObject", "name")(stored) != "web" ||
				stored["reportingComponent"] != "example.com/scaler" || stored["note"] != nil || stored["regarding"] != nil {
				t.Fatalf("stored as: %s", resp.Kvs[0].Value)
			}
			core, err := f.s.Get(f.ctx, events, "default", "scaled", "")
			if err != nil || core["apiVersion"] != "v1" || core["message"] != "scaled up" {
				t.Fatalf("read through core/v1: %v %v", core, err)
			}
			for _, name := range []string{"scaled", "started"} {
				e := next(t, w)
				if e.Type != Added || e.name() != name || e.Object["apiVersion"] != "events.k8s.io/v1" || e.Object["involvedObject"] != nil {
					t.Fatalf("events.k8s.io/v1's watch: %v %v", e, e.Object)
				}
				if name == "started" && (pathString("regarding", "name")(e.Object) != "web" || pathString("deprecatedSource", "component")(e.Object) != "" || e.Object["reason"] != "Started") {
					t.Fatalf("a core/v1 Event as events.k8s.io/v1 sees it: %v", e.Object)
				}
			}
			l, err := f.s.List(f.ctx, eventsV1, "default", ListOptions{FieldSelector: "regarding.name=web,reason=ScaledUp"})
			if err != nil || len(l.Objects()) != 1 || Name(l.Objects()[0]) != "scaled" || l.Objects()[0]["note"] != "scaled up" {
				t.Fatalf("a list by regarding.name and reason: %v %v", l, err)
			}
			if _, err := f.s.List(f.ctx, eventsV1, "default", ListOptions{FieldSelector: "involvedObject.name=web"}); !isReason(err, ReasonBadRequest) {
				t.Fatalf("core/v1's label through events.k8s.io/v1: %v", err)
			}
			// Put with a lease of its storage's own manager, as each
			// storage of kube's has one: it expires within the hour and a
			// minute, apart from the core/v1 Event written in the same
			// minute.
			lease := f.leaseOf(t, events, "scaled")
			ttl, err := f.store.LeaseTimeToLive(f.ctx, lease, false)
			if lease == 0 || err != nil || ttl.GrantedTTL != EventTTL+60 {
				t.Errorf("an events.k8s.io/v1 Event's lease %x: %+v %v", lease, ttl, err)
			}
			if core := f.leaseOf(t, events, "started"); core == 0 || core == lease {
				t.Errorf("leases: events.k8s.io/v1's %x, core/v1's %x, want two", lease, core)
			}
		})
	}
}
