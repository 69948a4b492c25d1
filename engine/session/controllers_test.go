package session

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/lesson"
)

const deployPath = "/apis/apps/v1/namespaces/default/deployments"

type deploymentStatus struct {
	Metadata struct {
		Generation      int64
		ResourceVersion string
	}
	Status struct {
		ObservedGeneration, Replicas, UpdatedReplicas, ReadyReplicas, AvailableReplicas, UnavailableReplicas int64
		Conditions                                                                                           []struct{ Type, Status, Reason, Message string }
	}
}

// The deployment controller runs in the session: a new Deployment gets its
// status (observed at once, available ReadyDelay later), each status write
// moves the resourceVersion and leaves the generation alone, and its
// requests are recorded as kube-controller-manager's.
func TestTheSessionsDeploymentControllerWritesStatusAsKubeDoes(t *testing.T) {
	clock := kube.NewFakeClock(epoch)
	// No automatic compaction: its timer, armed while waitFor waits,
	// would move the clock by a step the ready delay does not expect.
	settings := DefaultSettings()
	settings.CompactionInterval = 0
	s := open(t, "t", Options{Clock: clock, Settings: &settings})
	r := serve(s, "POST", deployPath, `{"metadata":{"name":"web"},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"web"}},
		"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`)
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var created deploymentStatus
	json.Unmarshal(r.Body, &created)

	get := func() deploymentStatus { // not through Serve: not recorded
		var d deploymentStatus
		json.Unmarshal(s.Kube.Serve(context.Background(), &api.Request{Method: "GET", Path: deployPath + "/web"}).Body, &d)
		return d
	}
	// waitFor waits for the controller, on the record; and whenever a
	// component arms a timer (a conflicting status write waits
	// DefaultRetry's 10ms before it re-reads), it moves the clock on.
	waitFor := func(what string, ok func(deploymentStatus) bool) deploymentStatus {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		for {
			armed, seen := clock.TimerCreated(), s.Record.Last()
			if d := get(); ok(d) {
				return d
			}
			wctx, stop := context.WithCancel(ctx)
			recorded := make(chan bool, 1)
			go func() { recorded <- s.Record.Wait(wctx, seen) }()
			select {
			case <-recorded:
			case <-armed:
				clock.Step(20 * time.Millisecond)
			case <-ctx.Done():
				t.Fatalf("no %s: %+v", what, get())
			}
			stop()
		}
	}
	observed := waitFor("observedGeneration", func(d deploymentStatus) bool { return d.Status.ObservedGeneration == 1 })
	if st := observed.Status; st.Replicas != 3 || st.UpdatedReplicas != 3 || st.AvailableReplicas != 0 || st.UnavailableReplicas != 3 ||
		len(st.Conditions) != 2 || st.Conditions[0].Type != "Available" || st.Conditions[0].Status != "False" ||
		st.Conditions[1].Reason != "ReplicaSetUpdated" || st.Conditions[1].Message != `Deployment "web" is progressing.` {
		t.Fatalf("first status: %+v", st)
	}
	if observed.Metadata.Generation != created.Metadata.Generation || observed.Metadata.ResourceVersion == created.Metadata.ResourceVersion {
		t.Fatalf("a status write moves resourceVersion, not generation: %+v -> %+v", created.Metadata, observed.Metadata)
	}
	clock.Step(time.Second) // the pretend pods become ready
	done := waitFor("availability", func(d deploymentStatus) bool { return d.Status.AvailableReplicas == 3 })
	if st := done.Status; st.ReadyReplicas != 3 || st.UnavailableReplicas != 0 || len(st.Conditions) != 2 ||
		st.Conditions[0].Type != "Available" || st.Conditions[0].Status != "True" || st.Conditions[0].Reason != "MinimumReplicasAvailable" ||
		st.Conditions[1].Type != "Progressing" || st.Conditions[1].Reason != "NewReplicaSetAvailable" ||
		st.Conditions[1].Message != `Deployment "web" has successfully progressed.` {
		t.Fatalf("rolled out: %+v", st)
	}
	if done.Metadata.Generation != 1 {
		t.Fatalf("generation %d", done.Metadata.Generation)
	}
	var writes int
	all, _ := s.Record.Since(0, Filter{Principal: ControllerManager.ID}, 0)
	for _, e := range all {
		if e.Verb() == "update" && target(e).Subresource == "status" && e.Status == 200 {
			writes++
			if e.UserAgent != controllerUserAgent() {
				t.Fatalf("user agent %q", e.UserAgent)
			}
		}
	}
	if writes != 2 {
		t.Fatalf("%d status writes recorded, want 2", writes)
	}
}

// With the setting off, no controller runs: a lesson (or a test) plays
// the controller by hand. Turned on again, it catches up.
func TestTheDeploymentControllerSettingStopsAndStartsIt(t *testing.T) {
	s := open(t, "t", Options{})
	if r := serve(s, "PATCH", "/rvplay/v1/settings", `{"controllers":"paused"}`); r.Status != 200 ||
		!strings.Contains(string(r.Body), `"controllers":"paused"`) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	serve(s, "POST", deployPath, `{"metadata":{"name":"web"},"spec":{"selector":{"matchLabels":{"app":"web"}},
		"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}`)
	if all, _ := s.Record.Since(0, Filter{Principal: ControllerManager.ID}, 0); len(all) != 0 {
		t.Fatalf("%d controller requests while it is off", len(all))
	}
	serve(s, "PATCH", "/rvplay/v1/settings", `{"controllers":"running"}`)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for seen := s.Record.Last(); ; seen = s.Record.Last() {
		all, _ := s.Record.Since(0, Filter{Principal: ControllerManager.ID}, 0)
		if len(all) > 0 && target(all[len(all)-1]).Subresource == "status" {
			break
		}
		if !s.Record.Wait(ctx, seen) {
			t.Fatal("the controller did not catch up")
		}
	}
}

func target(e Exchange) lesson.Target {
	t, _ := e.Target()
	return t
}
