package client_test

import (
	"context"
	"fmt"
	"time"

	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

// A reflector lists, replaces its store at the list's resourceVersion and
// watches from there; each step is observable.
func ExampleReflector() {
	sess, _ := session.New("demo", mvcc.NewMemoryBackend(), session.Options{})
	defer sess.Close()
	c := client.New(sess)
	cms := c.Resource(client.ConfigMaps).Namespace("default")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, name := range []string{"a", "b"} {
		cms.Create(ctx, client.Object{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name}}, client.WriteOptions{})
	}

	store := client.NewStore()
	r := client.NewReflector(cms, store)
	r.Rand = func() float64 { return 0 } // timeoutSeconds=300
	watching := make(chan struct{})
	r.OnStep = func(s client.Step) {
		fmt.Println(s)
		switch {
		case s.Kind == client.StepWatch:
			close(watching)
		case s.Kind == client.StepEvent:
			cancel()
		}
	}
	done := make(chan struct{})
	go func() { r.Run(ctx); close(done) }()
	<-watching
	cms.Create(ctx, client.Object{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"}}, client.WriteOptions{})
	<-done
	fmt.Println(store.Len(), "objects at rv", store.ResourceVersion())
	// Output:
	// #1 list rv=0 /api/v1/namespaces/default/configmaps?limit=500&resourceVersion=0
	// #2 listed rv=7 items=2
	// #3 replace rv=7 items=2
	// #4 watch rv=7 /api/v1/namespaces/default/configmaps?allowWatchBookmarks=true&resourceVersion=7&timeoutSeconds=300&watch=true
	// #5 event ADDED default/c rv=8
	// 3 objects at rv 8
}

// RetryOnConflict re-runs a read-modify-write while it loses the race:
// here the first attempt writes a stale copy, gets 409 Conflict, and the
// second re-reads and wins.
func ExampleRetrier_RetryOnConflict() {
	sess, _ := session.New("demo", mvcc.NewMemoryBackend(), session.Options{})
	defer sess.Close()
	ctx := context.Background()
	cms := client.New(sess).Resource(client.ConfigMaps).Namespace("default")
	stale, _ := cms.Create(ctx, client.Object{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "counter"}, "data": map[string]any{"n": "0"}}, client.WriteOptions{})
	cms.Patch(ctx, "counter", client.MergePatch, []byte(`{"data":{"n":"1"}}`), client.PatchOptions{})

	r := client.Retrier{
		Rand: func() float64 { return 0 }, // no jitter: waits are exactly 10ms
		OnAttempt: func(attempt int, err error, wait time.Duration) {
			fmt.Printf("attempt %d: err=%v conflict=%v wait=%v\n", attempt, err, client.IsConflict(err), wait)
		},
	}
	cur := stale
	err := r.RetryOnConflict(ctx, client.DefaultRetry, func() error {
		if cur == nil {
			cur, _ = cms.Get(ctx, "counter", client.GetOptions{})
		}
		n, _ := cur.NestedString("data", "n")
		cur.SetNested(n+"+1", "data", "n")
		_, err := cms.Update(ctx, cur, client.WriteOptions{})
		cur = nil // re-read on the next attempt
		return err
	})
	final, _ := cms.Get(ctx, "counter", client.GetOptions{})
	n, _ := final.NestedString("data", "n")
	fmt.Println("err:", err, "n:", n)
	// Output:
	// attempt 1: err=Operation cannot be fulfilled on configmaps "counter": the object has been modified; please apply your changes to the latest version and try again conflict=true wait=10ms
	// attempt 2: err=<nil> conflict=false wait=0s
	// err: <nil> n: 1+1
}
