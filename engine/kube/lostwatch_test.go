package kube

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// errNoLeader is how etcd's client ends a watch that requires a leader
// (kube's do) when its member has none.
var errNoLeader = &mvcc.Error{Code: mvcc.CodeUnavailable, Message: "etcdserver: no leader"}

// leaderless is a KV whose store watches of a prefix the test ends as an
// etcd member without a leader ends them: lose ends those that run, and
// every new one at once, until regain.
type leaderless struct {
	KV
	mu      sync.Mutex
	prefix  string // "" while the member has a leader
	watches []*losable
	watched chan string // the key of each watch started
	nexts   chan string // the key of each watch whose Next was called
}

func newLeaderless(kv KV) *leaderless {
	return &leaderless{KV: kv, watched: make(chan string, 100), nexts: make(chan string, 100)}
}

func (l *leaderless) Watch(ctx context.Context, r *mvcc.WatchRequest) (WatchStream, error) {
	ws, err := l.KV.Watch(ctx, r)
	if err != nil {
		return nil, err
	}
	w := &losable{WatchStream: ws, key: string(r.Key), nexts: l.nexts}
	l.mu.Lock()
	l.watches = append(l.watches, w)
	if l.prefix != "" && strings.HasPrefix(w.key, l.prefix) {
		w.lose()
	}
	l.mu.Unlock()
	l.watched <- w.key
	return w, nil
}

func (l *leaderless) lose(prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.watched) > 0 { // awaitWatch waits for those started from now
		<-l.watched
	}
	l.prefix = prefix
	for _, w := range l.watches {
		if strings.HasPrefix(w.key, prefix) {
			w.lose()
		}
	}
}

func (l *leaderless) regain() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.prefix = ""
}

// losable is a store watch that ends with errNoLeader once lost.
type losable struct {
	WatchStream
	key   string
	nexts chan<- string
	lost  sync.Once
	gone  bool
	mu    sync.Mutex
}

// lose ends the store's watcher (which wakes its consumer); its end is
// reported as errNoLeader.
func (w *losable) lose() {
	w.lost.Do(func() {
		w.mu.Lock()
		w.gone = true
		w.mu.Unlock()
		w.WatchStream.Cancel()
	})
}

func (w *losable) TryNext(ctx context.Context) (mvcc.WatchResponse, bool, error) {
	resp, ok, err := w.WatchStream.TryNext(ctx)
	return resp, ok, w.why(err)
}

func (w *losable) Next(ctx context.Context) (mvcc.WatchResponse, error) {
	select {
	case w.nexts <- w.key:
	default: // the buffer is full: no test waits for it
	}
	resp, err := w.WatchStream.Next(ctx)
	return resp, w.why(err)
}

// why is the reason the watch ended with: errNoLeader once lost.
func (w *losable) why(err error) error {
	w.mu.Lock()
	gone := w.gone
	w.mu.Unlock()
	if gone && errors.Is(err, mvcc.ErrWatcherCanceled) {
		return errNoLeader
	}
	return err
}

// awaitWatch waits for the registry to start a store watch of key.
func (l *leaderless) awaitWatch(t *testing.T, key string) {
	t.Helper()
	await(t, l.watched, key, "no store watch of %s")
}

// awaitNext waits for the registry to call Next on a store watch of key.
func (l *leaderless) awaitNext(t *testing.T, key string) {
	t.Helper()
	await(t, l.nexts, key, "no Next on a store watch of %s")
}

func await(t *testing.T, keys <-chan string, key, failure string) {
	t.Helper()
	deadline := time.After(5 * time.Second) // turns a hang into a failure
	for {
		select {
		case k := <-keys:
			if k == key {
				return
			}
		case <-deadline:
			t.Fatalf(failure, key)
		}
	}
}

// With the watch cache off, a store watch that the storage ends (an etcd
// member without a leader: etcdserver: no leader) ends the Kubernetes
// watch with what kube-apiserver's etcd3 watcher sends then: an ERROR
// event, a 500 InternalError Status carrying etcd's text. The client
// (a reflector) watches again from its last resourceVersion.
func TestAStoreWatchTheClusterEndsEndsTheWatchWithAnInternalError(t *testing.T) {
	f := newStoreFixture(t)
	l := newLeaderless(StoreKV(f.store))
	f.s = New(l, Options{Clock: f.clock})
	t.Cleanup(f.s.Close)
	a := f.create(t, configmaps, "default", cm("a", nil))
	w := f.watch(t, "default", ListOptions{ResourceVersion: ResourceVersion(a)})
	l.lose(configmaps.Prefix(""))
	e := next(t, w)
	if e.Type != Error || e.Object["reason"] != ReasonInternalError || e.Object["message"] != "Internal error occurred: etcdserver: no leader" {
		t.Fatalf("%v %v", e, e.Object)
	}
	if c, _ := numberInt(e.Object["code"]); c != 500 {
		t.Fatalf("code %v", e.Object["code"])
	}
	causes, _ := e.Object["details"].(map[string]any)["causes"].([]any)
	if len(causes) != 1 || causes[0].(map[string]any)["message"] != "etcdserver: no leader" {
		t.Fatalf("details %v", e.Object["details"])
	}
	wantEnd(t, w)

	l.regain()
	b := f.create(t, configmaps, "default", cm("b", nil))
	w = f.watch(t, "default", ListOptions{ResourceVersion: ResourceVersion(a)})
	if e := next(t, w); e.Type != Added || e.name() != "b" || e.rv() != ResourceVersion(b) {
		t.Fatalf("resumed from %s: %v", ResourceVersion(a), e)
	}
}

// With the watch cache on, the cache watches the store again from the
// revision after the last one it took in, at once and then every second
// while the storage keeps ending its watch (kube's cacher's reflector
// watches again after an internal error): its watchers go on, and get
// what was written meanwhile, nothing lost and nothing twice.
func TestTheCacheWatchesTheStoreAgainWhenTheClusterEndsItsWatch(t *testing.T) {
	f := newFixture(t)
	l := newLeaderless(StoreKV(f.store))
	f.s = New(l, Options{Clock: f.clock, WatchCache: true})
	t.Cleanup(f.s.Close)
	prefix := configmaps.Prefix("")
	a := f.create(t, configmaps, "default", cm("a", nil))
	w := f.watch(t, "default", ListOptions{ResourceVersion: ResourceVersion(a)})

	armed := f.clock.TimerCreated()
	l.lose(prefix)
	// The cache watches again at once; the member still has no leader,
	// so that watch ends too, and the cache tries again in a second.
	l.awaitWatch(t, prefix)
	select {
	case <-armed:
	case <-time.After(5 * time.Second): // turns a hang into a failure
		t.Fatal("the cache set no time to watch again")
	}
	if s := f.clock.Sleepers(); len(s) == 0 || s[0] != time.Second {
		t.Fatalf("timers %v, want the cache's in 1s first", s)
	}
	b := f.create(t, configmaps, "default", cm("b", nil))
	l.regain()
	f.clock.Step(time.Second)
	l.awaitWatch(t, prefix)
	if e := next(t, w); e.Type != Added || e.name() != "b" || e.rv() != ResourceVersion(b) {
		t.Fatalf("after the cache watched again: %v", e)
	}
	c := f.create(t, configmaps, "default", cm("c", nil))
	if e := next(t, w); e.Type != Added || e.name() != "c" || e.rv() != ResourceVersion(c) {
		t.Fatalf("then: %v (b twice?)", e)
	}
}

// With the watch cache off, a lag (the lessons' stale resourceVersion "0"
// read) times the store's revisions with a store watch of its own, which
// sees the writes of others (here another replica's). When the storage
// ends it, it is watched again from the revision after the last it took
// in, at once and then every second, as the cache's is: the writes made
// meanwhile are timed, and the lagged read sees them once the lag has
// passed, not only this replica's own.
func TestTheLagsRevisionLogWatchesTheStoreAgainWhenTheClusterEndsItsWatch(t *testing.T) {
	f := newStoreFixture(t)
	l := newLeaderless(StoreKV(f.store))
	f.s = New(l, Options{Clock: f.clock})
	t.Cleanup(f.s.Close)
	other := New(StoreKV(f.store), Options{Clock: f.clock}) // another replica
	t.Cleanup(other.Close)
	f.create(t, configmaps, "default", cm("a", nil))
	const lag = 5 * time.Second
	f.s.SetWatchCacheDelay(lag)
	l.awaitNext(t, revisionLogPrefix)

	armed := f.clock.TimerCreated()
	l.lose(revisionLogPrefix)
	l.awaitWatch(t, revisionLogPrefix) // at once; it ends too
	select {
	case <-armed:
	case <-time.After(5 * time.Second): // turns a hang into a failure
		t.Fatal("the revision log set no time to watch again")
	}
	if s := f.clock.Sleepers(); len(s) != 1 || s[0] != time.Second {
		t.Fatalf("timers %v, want the revision log's in 1s", s)
	}
	b, err := object(other.Create(f.ctx, configmaps, "default", cm("b", nil), WriteOptions{FieldManager: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	for len(l.nexts) > 0 {
		<-l.nexts
	}
	l.regain()
	f.clock.Step(time.Second)
	l.awaitWatch(t, revisionLogPrefix)
	// Its first Next takes b in; its second waits for more.
	l.awaitNext(t, revisionLogPrefix)
	l.awaitNext(t, revisionLogPrefix)

	f.clock.Step(lag)
	list, err := f.s.List(f.ctx, configmaps, "default", ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	if names(list) != "a,b" || list.Metadata.ResourceVersion != ResourceVersion(b) {
		t.Fatalf("a lagged read once the lag passed: %s at %s, want a,b at %s", names(list), list.Metadata.ResourceVersion, ResourceVersion(b))
	}
}
