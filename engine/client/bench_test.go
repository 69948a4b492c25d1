package client

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/mvcc"
)

func BenchmarkStoreReplace10k(b *testing.B) {
	objs := make([]Object, 10000)
	next := make([]Object, 10000)
	for i := range objs {
		objs[i] = cm("ns", fmt.Sprintf("cm-%05d", i), strconv.Itoa(i+1))
		rv := i + 1
		if i%2 == 0 {
			rv += 20000 // half of them changed
		}
		next[i] = cm("ns", fmt.Sprintf("cm-%05d", i), strconv.Itoa(rv))
	}
	s := NewStore()
	updates := 0
	s.AddHandler(Handler{OnUpdate: func(_, _ Object) { updates++ }})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.Replace(objs, "1")
		s.Replace(next, "2")
	}
}

// benchSession is a memory session's Kubernetes API with n configmaps in
// "default".
func benchSession(b *testing.B, n int) *Client {
	store, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	h := kubeapi.New(kubeapi.Options{Store: store})
	b.Cleanup(func() {
		h.Registry().Close()
		store.Close()
	})
	c := New(api.Handler(h))
	rc := c.Resource(ConfigMaps).Namespace("default")
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if _, err := rc.Create(ctx, Object{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%05d", i)},
			"data":     map[string]any{"k": "some value of moderate length"}}, WriteOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return c
}

// Time for a new informer to hold n objects: LIST (from RV "" in pages of
// 500, as after a 410) versus one watch-list stream.
func BenchmarkReflectorInitialSync2000(b *testing.B) {
	const n = 2000
	c := benchSession(b, n)
	for _, mode := range []string{"list-paged", "list-rv0", "watchlist"} {
		b.Run(mode, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				store := NewStore()
				r := NewReflector(c.Resource(ConfigMaps).Namespace("default"), store)
				ctx, cancel := context.WithCancel(context.Background())
				r.OnStep = func(s Step) {
					if s.Kind == StepReplace {
						cancel()
					}
				}
				switch mode {
				case "list-paged":
					r.setRVUnavailable(true)
					_ = r.list(ctx)
				case "list-rv0":
					_ = r.list(ctx)
				case "watchlist":
					r.WatchList = true
					r.Run(ctx)
				}
				cancel()
				if store.Len() != n {
					b.Fatalf("store has %d", store.Len())
				}
			}
		})
	}
}
