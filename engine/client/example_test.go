package client_test

import (
	"context"
	"fmt"

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
