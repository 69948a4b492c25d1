package clientgo

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// watchControl sits in client-go's transport: it can end the current
// watch response (as a server timeout would) and hold the next watch
// request until the test has changed the server underneath it.
type watchControl struct {
	mu      sync.Mutex
	bodies  []*cuttableBody
	hold    chan struct{} // non-nil: the next watch waits for it
	held    chan struct{}
	reqs    []string
	watches int
}

type cuttableBody struct {
	io.ReadCloser
	once sync.Once
	cut  chan struct{}
}

func (b *cuttableBody) Read(p []byte) (int, error) {
	select {
	case <-b.cut:
		return 0, io.EOF
	default:
	}
	type result struct {
		n   int
		err error
	}
	// Reads block on the server; a cut must end them at once.
	ch := make(chan result, 1)
	go func() { n, err := b.ReadCloser.Read(p); ch <- result{n, err} }()
	select {
	case r := <-ch:
		return r.n, r.err
	case <-b.cut:
		return 0, io.EOF
	}
}

func (b *cuttableBody) Close() error {
	b.once.Do(func() { close(b.cut) })
	return b.ReadCloser.Close()
}

func (c *watchControl) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		isWatch := req.URL.Query().Get("watch") == "true" || req.URL.Query().Get("watch") == "1"
		c.mu.Lock()
		c.reqs = append(c.reqs, req.Method+" "+req.URL.RequestURI())
		var hold, held chan struct{}
		if isWatch && c.hold != nil {
			hold, held = c.hold, c.held
			c.hold = nil
		}
		c.mu.Unlock()
		if hold != nil {
			close(held)
			select {
			case <-hold:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
		}
		resp, err := rt.RoundTrip(req)
		if err != nil || !isWatch {
			return resp, err
		}
		body := &cuttableBody{ReadCloser: resp.Body, cut: make(chan struct{})}
		resp.Body = body
		c.mu.Lock()
		c.bodies = append(c.bodies, body)
		c.watches++
		c.mu.Unlock()
		return resp, nil
	})
}

// holdNextWatch arms the hold; held closes when the watch arrives.
func (c *watchControl) holdNextWatch() (held, release chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.hold, c.held = make(chan struct{}), make(chan struct{})
	return c.held, c.hold
}

// cutWatches ends every open watch response as a clean end of stream.
func (c *watchControl) cutWatches() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, b := range c.bodies {
		b.once.Do(func() { close(b.cut) })
	}
	c.bodies = nil
}

func (c *watchControl) requests() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.reqs...)
}

// compact compacts the session's etcd history up to rev through the etcd
// gateway of the same session.
func compact(t *testing.T, base, rev string) {
	t.Helper()
	resp, err := http.Post(base+"/v3/kv/compaction", "application/json", strings.NewReader(`{"revision":"`+rev+`","physical":true}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("compaction at %s: %d %s", rev, resp.StatusCode, body)
	}
}

func TestInformerRelistsAfterItsWatchRevisionWasCompacted(t *testing.T) {
	rvplaytest.RequireSessionCompaction(t)
	for _, mode := range []struct {
		name      string
		watchList bool
	}{{"list+watch", false}, {"watch-list", true}} {
		t.Run(mode.name, func(t *testing.T) { relistScenario(t, mode.watchList, false) })
	}
}

// With the session's watch cache on, a compaction by hand does not end a
// watch (the cache still holds the events); a watch from before the
// cache's window does: "too old resource version", 410, and client-go
// relists. The window starts again when the cache is turned off and on.
func TestInformerRelistsWhenItsRevisionLeftTheWatchCachesWindow(t *testing.T) {
	for _, mode := range []struct {
		name      string
		watchList bool
	}{{"list+watch", false}, {"watch-list", true}} {
		t.Run(mode.name, func(t *testing.T) { relistScenario(t, mode.watchList, true) })
	}
}

// setWatchCache turns the session's watch cache on or off.
func setWatchCache(t *testing.T, base, to string) {
	t.Helper()
	req, _ := http.NewRequest("PATCH", base+"/rvplay/v1/settings", strings.NewReader(`{"watchCache":"`+to+`"}`))
	req.Header.Set("Content-Type", "application/merge-patch+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"watchCache":"`+to+`"`) {
		t.Fatalf("watchCache %s: %d %s", to, resp.StatusCode, body)
	}
}

func relistScenario(t *testing.T, watchList, cached bool) {
	base := startServer(t)
	// A session's default is kube-apiserver's, the cache on; off, the store
	// serves the watch, whose resume after a compaction by hand is etcd's
	// 410 at once.
	if !cached {
		setWatchCache(t, base, "off")
	}
	ctl := &watchControl{}
	cfg := restConfig(base)
	cfg.WrapTransport = ctl.wrap
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	plain := clientset(t, base)
	ctx := testContext(t)
	ensureNamespace(t, plain, "relist")
	cms := plain.CoreV1().ConfigMaps("relist")
	create := func(name string) *corev1.ConfigMap {
		t.Helper()
		o, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	create("a")

	setWatchListClient(t, watchList)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("relist"))
	inf := factory.Core().V1().ConfigMaps().Informer()
	adds := make(chan string, 100)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { adds <- o.(*corev1.ConfigMap).Name },
	}); err != nil {
		t.Fatal(err)
	}
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if !startInformers(t, syncCtx, factory, inf) {
		t.Fatalf("no sync; requests %q", ctl.requests())
	}
	// A relist replaces the informer's store from a list (watch-list: a
	// map) and announces the new objects in no particular order, so an add
	// that arrives while another is awaited counts when its turn comes.
	seen := map[string]bool{}
	await := func(name string) {
		t.Helper()
		for !seen[name] {
			select {
			case n := <-adds:
				seen[n] = true
			case <-time.After(20 * time.Second):
				t.Fatalf("no add for %s; requests %q", name, ctl.requests())
			}
		}
	}
	await("a")
	// One event on the live watch, so that ending it is an ordinary
	// close and not a "very short watch".
	create("b")
	await("b")

	held, release := ctl.holdNextWatch()
	ctl.cutWatches() // the reflector re-watches from its last RV: held
	select {
	case <-held:
	case <-time.After(20 * time.Second):
		t.Fatalf("no re-watch after the stream ended; requests %q", ctl.requests())
	}
	create("c")
	d := create("d")
	if cached {
		// The cache starts again at d: b's revision is before its window.
		setWatchCache(t, base, "off")
		setWatchCache(t, base, "on")
	} else {
		compact(t, base, d.ResourceVersion)
	}
	before := len(ctl.requests())
	close(release)

	// The re-watch starts at a compacted revision (or one before the
	// cache's window): 200 + ERROR 410 Expired. client-go then gets a new complete state, which brings
	// the objects it missed.
	await("c")
	await("d")
	after := ctl.requests()[before:]
	var relisted bool
	for _, r := range after {
		if !strings.Contains(r, "/namespaces/relist/configmaps") {
			continue
		}
		if watchList && strings.Contains(r, "sendInitialEvents=true") {
			relisted = true
		}
		if !watchList && !strings.Contains(r, "watch=") {
			relisted = true
		}
	}
	if !relisted {
		t.Fatalf("no relist after the 410; requests after release %q", after)
	}
}
