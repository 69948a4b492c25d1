// Package clientgo checks that the real client-go (latest release) works
// against an rvplay server process: typed clientsets in JSON and protobuf,
// the dynamic client, discovery, custom resources, shared informers
// (list+watch and watch-list, a relist after a compaction),
// RetryOnConflict, list pagination and selectors, objects as stored under
// /registry/, and a real kube-apiserver running on rvplay's etcd gRPC API
// (kubeapiserver_test.go). It is a module of its own so that the product
// module never depends on client-go.
package clientgo

import (
	"context"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/rvplaytest"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

func TestMain(m *testing.M) { os.Exit(rvplaytest.RunTests(m)) }

// startServer runs a fresh rvplay server (its own SQLite file) with one
// session "t" and returns the session's base URL.
func startServer(t *testing.T) string {
	t.Helper()
	return rvplaytest.Start(t, "t").SessionURL
}

// restConfig is what the README tells users: JSON, because rvplay does
// not speak protobuf (client-go's typed clients prefer it since v0.32).
func restConfig(base string) *rest.Config {
	return &rest.Config{
		Host:          base,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"},
		QPS:           1000,
		Burst:         1000,
	}
}

// requestLog records the URLs client-go requests, to check which protocol
// path (LIST vs watch-list) it took.
type requestLog struct {
	mu   sync.Mutex
	urls []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.urls = append(l.urls, req.Method+" "+req.URL.RequestURI())
		l.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.urls...)
}

// informerFactory is what the typed and the dynamic shared informer
// factories have in common.
type informerFactory interface {
	Start(stopCh <-chan struct{})
	Shutdown()
}

// startInformers runs factory's informers until the test ends and waits
// until inf has synced or ctx ends; it says whether inf synced.
func startInformers(t *testing.T, ctx context.Context, factory informerFactory, inf cache.SharedInformer) bool {
	t.Helper()
	stop := make(chan struct{})
	factory.Start(stop)
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	return cache.WaitForCacheSync(ctx.Done(), inf.HasSynced)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
