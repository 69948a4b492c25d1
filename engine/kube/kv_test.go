package kube

import (
	"fmt"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// onlyKV hides a Store behind the mvcc.KV interface, as a store that lives
// elsewhere (an etcd cluster's prefix) is known.
type onlyKV struct{ mvcc.KV }

func TestAStoreKnownOnlyAsKVServesWatchesEachInAStreamOfItsOwn(t *testing.T) {
	f := newFixture(t)
	f.s = New(KVOf(onlyKV{f.store}), Options{Clock: f.clock})
	t.Cleanup(f.s.Close)
	f.s.SetBookmarkInterval(10 * time.Second)
	a := f.create(t, configmaps, "default", cm("a", nil))
	w := f.watch(t, "default", ListOptions{ResourceVersion: ResourceVersion(a), AllowWatchBookmarks: true})
	f.create(t, configmaps, "default", cm("b", nil))
	if e := next(t, w); e.Type != Added || e.name() != "b" {
		t.Fatalf("%v", e)
	}
	// Progress, asked of the one watcher of the stream, is its bookmark.
	f.create(t, namespaces, "", Object{"metadata": map[string]any{"name": "other"}})
	f.clock.Step(10 * time.Second)
	if b := next(t, w); b.Type != Bookmark || b.rv() != fmt.Sprint(f.store.Rev()) {
		t.Fatalf("%v", b)
	}
	w.Close()
	wantEnd(t, w)
}
