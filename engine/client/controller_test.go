package client

import (
	"context"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/kube"
)

func deployment(name string, replicas int64) Object {
	return Object{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}},
			},
		},
	}
}

func TestDeploymentControllerMaintainsObservedGenerationAndReplicas(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	deps := c.Resource(Deployments).Namespace("default")
	ctx := testCtx(t)
	if _, err := deps.Create(ctx, deployment("web", 3), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	dc := NewDeploymentController(c, "default")
	// ReadyDelay passes when the test says; a status write that conflicts
	// (the informer's copy not yet at the controller's last write) retries
	// after DefaultRetry's real 10ms.
	clock := NewFakeClock(time.Unix(1_800_000_000, 0))
	dc.Clock = clock
	dc.Retrier.Sleep = SleepContext
	synced := make(chan SyncResult, 100)
	dc.OnSync = func(r SyncResult) { synced <- r }
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); dc.Run(runCtx) }()
	defer func() { cancel(); <-done }()

	waitFor := func(gen, replicas, available int64) {
		t.Helper()
		timeout := time.After(15 * time.Second)
		for {
			select {
			case r := <-synced:
				if r.Err != nil {
					t.Fatalf("sync: %v", r)
				}
				if r.ObservedGeneration == gen && r.Replicas == replicas && r.Available == available {
					return
				}
			case <-timeout:
				t.Fatalf("no sync reached observedGeneration %d, replicas %d", gen, replicas)
			}
		}
	}
	check := func(gen, replicas int64) {
		t.Helper()
		got, err := deps.Get(ctx, "web", GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if g := got.Generation(); g != gen {
			t.Fatalf("generation %d, want %d", g, gen)
		}
		if og, _ := got.NestedInt64("status", "observedGeneration"); og != gen {
			t.Fatalf("observedGeneration %d, want %d", og, gen)
		}
		for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
			if n, _ := got.NestedInt64("status", f); n != replicas {
				t.Fatalf("status.%s = %d, want %d", f, n, replicas)
			}
		}
	}
	// The new generation is observed at once; its replicas become
	// available ReadyDelay later.
	waitFor(1, 3, 0)
	clock.WaitForSleepers(ctx, 1)
	clock.Advance(DefaultReadyDelay)
	waitFor(1, 3, 3)
	check(1, 3)

	// Scaling changes spec: generation 2, and the controller catches up.
	if _, err := deps.Patch(ctx, "web", MergePatch, []byte(`{"spec":{"replicas":5}}`), PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(2, 5, 3)
	clock.WaitForSleepers(ctx, 1)
	clock.Advance(DefaultReadyDelay)
	waitFor(2, 5, 5)
	check(2, 5)
}

// The controller's first status write uses its cached copy; when that copy
// is stale the write conflicts, and RetryOnConflict re-reads and wins.
func TestDeploymentControllerRetriesAStaleStatusWriteOnConflict(t *testing.T) {
	_, c := newTestSession(t, kube.Options{})
	deps := c.Resource(Deployments).Namespace("default")
	ctx := testCtx(t)
	created, err := deps.Create(ctx, deployment("api", 2), WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dc := NewDeploymentController(c, "default")
	var waits []time.Duration
	dc.Retrier = Retrier{
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
		Rand:  func() float64 { return 0 },
	}
	dc.Store.Replace([]Object{created}, created.ResourceVersion())
	// Someone else writes after the cache was filled: the cache is stale.
	if _, err := deps.Patch(ctx, "api", MergePatch, []byte(`{"metadata":{"labels":{"team":"x"}}}`), PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	res := dc.Sync(ctx, "default/api")
	if res.Err != nil || res.Attempts != 2 || len(waits) != 1 || waits[0] != DefaultRetry.Duration {
		t.Fatalf("sync %v, waits %v: want success on the 2nd attempt after one 10ms wait", res, waits)
	}
	got, _ := deps.Get(ctx, "api", GetOptions{})
	if og, _ := got.NestedInt64("status", "observedGeneration"); og != 1 || got.ResourceVersion() != res.ResourceVersion {
		t.Fatalf("observedGeneration %d rv %s (sync rv %s)", og, got.ResourceVersion(), res.ResourceVersion)
	}
	if lbl, _ := got.NestedString("metadata", "labels", "team"); lbl != "x" {
		t.Fatalf("the other writer's label was lost: %v", got["metadata"])
	}
}
