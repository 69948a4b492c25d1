package kube

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The watch cache is kube-apiserver's (k8s.io/apiserver/pkg/storage/cacher,
// watch_cache.go and watch_cache_history.go): for one resource, the
// objects as of the revision it has reached and a sliding window of the
// latest events, fed by one store watch (cacher.go). The window's size
// follows kube's rules: it starts at 100 events and doubles, up to
// 102,400, while every event in it is younger than 75 seconds, halves when
// its newest quarter is older than that, and drops its oldest event only
// when it is full. rvplay adds one bound of its own: the events' values
// held by the window (kube holds decoded objects and has no such bound).

const (
	// blockTimeout is how long a read waits for the cache to reach the
	// resourceVersion it asks for (kube's cacher blockTimeout).
	blockTimeout = 3 * time.Second
	// tooHighRetrySeconds is the Retry-After of a read that waited in vain
	// (resourceVersionTooHighRetrySeconds).
	tooHighRetrySeconds = 1

	historyLowerBound = 100
	historyUpperBound = 100 * 1024
	// eventFreshDuration is kube's DefaultEventFreshDuration: the bookmark
	// frequency (1 minute) plus 15 seconds.
	eventFreshDuration = 75 * time.Second

	// DefaultWatchCacheBytes bounds the values one resource's window of
	// events holds (rvplay's own bound: a session writing large objects
	// fast keeps fewer events, never more memory).
	DefaultWatchCacheBytes = 16 << 20
)

// cachedObject is one version of an object in a watch cache: the stored
// key-value, shared with the store, and its labels and selectable fields
// once a selector has asked (decoded once, whatever the number of
// watchers and lists that ask).
type cachedObject struct {
	kv    *mvcc.KeyValue
	attrs atomic.Pointer[objectAttrs]
}

// objectAttrs are what selectors look at: kube's ObjLabels and ObjFields.
type objectAttrs struct {
	labels map[string]string
	fields map[string]string
	bad    bool // the stored value does not decode: it matches no selector
}

func (o *cachedObject) attributes(r *Resource) *objectAttrs {
	if a := o.attrs.Load(); a != nil {
		return a
	}
	a := &objectAttrs{}
	obj, err := decodeKV(o.kv)
	if err != nil {
		a.bad = true
	} else {
		a.labels = Labels(obj)
		a.fields = map[string]string{"metadata.name": Name(obj), "metadata.namespace": Namespace(obj)}
		for f, get := range r.FieldSelectors {
			a.fields[f] = get(obj)
		}
	}
	o.attrs.Store(a)
	return a
}

// cacheEvent is one change the cache saw (kube's watchCacheEvent): the
// object after it (nil for a delete) and before it (nil for a create),
// both taken from the cache, so that every watcher of the resource gets
// the previous object without a read of the store. Its watch lines are
// encoded once, by the first watcher that needs each.
type cacheEvent struct {
	key      string
	rev      int64
	cur      *cachedObject
	prev     *cachedObject
	recorded time.Time
	size     int64
	lines    [3]atomic.Pointer[[]byte] // ADDED, MODIFIED (cur) and DELETED (prev at rev)
}

// watchCache is one resource's cache.
type watchCache struct {
	r *Resource

	mu sync.RWMutex
	// rev is the revision the cache has reached: every event up to it is
	// in, and the objects are the store's as of it.
	rev int64
	// listRev is the revision of the cache's last (re)list: the window
	// starts after it.
	listRev int64
	objects map[string]*cachedObject
	keys    []string // the objects' keys in order, unless keysDirty
	dirty   bool

	// The window: a ring of capacity len(events) holding the events
	// [start, end) (counted from the last list, never decreasing).
	events     []*cacheEvent
	start, end int
	// removed is set once an event has left the window since the last
	// list: the oldest revision a watch may start from is then the
	// window's first event's, no longer the list's.
	removed  bool
	bytes    int64
	maxBytes int64

	// fresh is closed, and replaced, whenever rev moves.
	fresh chan struct{}
}

func newWatchCache(r *Resource, maxBytes int64) *watchCache {
	if maxBytes <= 0 {
		maxBytes = DefaultWatchCacheBytes
	}
	return &watchCache{r: r, events: make([]*cacheEvent, historyLowerBound), maxBytes: maxBytes,
		objects: map[string]*cachedObject{}, fresh: make(chan struct{})}
}

// moveLocked sets rev and wakes whoever waits for the cache to be fresh.
func (w *watchCache) moveLocked(rev int64) {
	if rev <= w.rev {
		return
	}
	w.rev = rev
	close(w.fresh)
	w.fresh = make(chan struct{})
}

// replaceLocked is a (re)list: the objects as of rev, an empty window.
func (w *watchCache) replaceLocked(kvs []*mvcc.KeyValue, rev int64) {
	w.objects = make(map[string]*cachedObject, len(kvs))
	for _, kv := range kvs {
		w.objects[string(kv.Key)] = &cachedObject{kv: w.r.served(kv)}
	}
	w.keys, w.dirty = nil, true
	clear(w.events)
	w.start, w.removed, w.bytes = w.end, false, 0
	w.listRev = rev
	if rev > w.rev {
		w.moveLocked(rev)
	} else {
		w.rev = rev
	}
}

// applyLocked takes one event of the store into the cache and its window;
// it returns the event as watchers see it, or nil for the delete of a key
// the cache did not hold (nothing a watcher could be told of).
func (w *watchCache) applyLocked(ev *mvcc.Event, now time.Time) *cacheEvent {
	key := string(ev.Kv.Key)
	prev := w.objects[key]
	ce := &cacheEvent{key: key, rev: ev.Kv.ModRevision, prev: prev, recorded: now}
	if ev.Type == mvcc.EventDelete {
		if prev == nil {
			return nil
		}
		delete(w.objects, key)
		w.dirty = true
		ce.size = int64(len(key) + len(prev.kv.Value))
	} else {
		ce.cur = &cachedObject{kv: w.r.served(ev.Kv)}
		if prev == nil {
			w.dirty = true
		}
		w.objects[key] = ce.cur
		ce.size = int64(len(key) + len(ev.Kv.Value))
	}
	w.addLocked(ce)
	return ce
}

// addLocked puts ce in the window (kube's updateCache), resizing it first.
func (w *watchCache) addLocked(ce *cacheEvent) {
	w.resizeLocked(ce.recorded)
	if w.fullLocked() {
		w.evictLocked()
	}
	w.events[w.end%len(w.events)] = ce
	w.end++
	w.bytes += ce.size
	for w.bytes > w.maxBytes && w.end-w.start > 1 {
		w.evictLocked()
	}
}

func (w *watchCache) evictLocked() {
	i := w.start % len(w.events)
	w.bytes -= w.events[i].size
	w.events[i] = nil
	w.start++
	w.removed = true
}

func (w *watchCache) fullLocked() bool { return w.end == w.start+len(w.events) }

func (w *watchCache) at(i int) *cacheEvent { return w.events[i%len(w.events)] }

// resizeLocked is kube's resizeCacheLocked: twice the capacity when the
// window is full of events younger than eventFreshDuration, half of it
// when its newest quarter is older.
func (w *watchCache) resizeLocked(now time.Time) {
	if !w.fullLocked() {
		return
	}
	capacity := len(w.events)
	switch {
	case now.Sub(w.at(w.start).recorded) < eventFreshDuration:
		if c := min(capacity*2, historyUpperBound); c > capacity {
			w.resizeToLocked(c)
		}
	case now.Sub(w.at(w.end-capacity/4).recorded) > eventFreshDuration:
		if c := max(capacity/2, historyLowerBound); c < capacity {
			w.resizeToLocked(c)
		}
	}
}

func (w *watchCache) resizeToLocked(capacity int) {
	events := make([]*cacheEvent, capacity)
	if capacity < len(w.events) {
		for i := w.start; i < w.end-capacity; i++ {
			w.bytes -= w.at(i).size
		}
		w.start = w.end - capacity
		w.removed = true
	}
	for i := w.start; i < w.end; i++ {
		events[i%capacity] = w.at(i)
	}
	w.events = events
}

// bufferLocked is how many events a watcher's buffer holds: kube's input
// and result channels, each of suggestedWatchChannelSize for a resource
// without an index (about one second of the window, between 10 and 100
// events).
func (w *watchCache) bufferLocked() int {
	size := min(max(int(math.Ceil(float64(len(w.events))/eventFreshDuration.Seconds())), 10), 100)
	return 2 * size
}

// oldestLocked is the revision before the first event the window can
// deliver: a watch may start from it or later.
func (w *watchCache) oldestLocked() int64 {
	if !w.removed || w.end == w.start {
		return w.listRev
	}
	return w.at(w.start).rev - 1
}

// sinceLocked returns the events after rev (kube's GetIntervalLocked), or
// kube's "too old resource version" when the window no longer reaches back
// to it.
func (w *watchCache) sinceLocked(rev int64) ([]*cacheEvent, error) {
	if oldest := w.oldestLocked(); rev < oldest {
		return nil, NewExpired(fmt.Sprintf("too old resource version: %d (%d)", rev, oldest))
	}
	n := w.end - w.start
	first := sort.Search(n, func(i int) bool { return w.at(w.start+i).rev > rev })
	out := make([]*cacheEvent, 0, n-first)
	for i := w.start + first; i < w.end; i++ {
		out = append(out, w.at(i))
	}
	return out, nil
}

// servesLocked reports whether the cache can list the objects as of rev
// (kube's ListFromCacheSnapshot: a snapshot is kept at the list's
// revision and at every event's in the window, and those below the
// revision the API server's compactor last recorded are dropped): the
// newest snapshot at or before rev must still be there.
func (w *watchCache) servesLocked(rev, compacted int64) bool {
	if rev > w.rev {
		return true // a future revision: served once the cache reaches it
	}
	n := w.end - w.start
	i := sort.Search(n, func(i int) bool { return w.at(w.start+i).rev > rev })
	var snap int64
	switch {
	case i > 0:
		snap = w.at(w.start + i - 1).rev
	case !w.removed && rev >= w.listRev:
		snap = w.listRev
	default:
		return false
	}
	return snap >= compacted
}

// sortedKeysLocked returns the objects' keys in order (the caller holds
// the write lock, or the read lock with the keys in order).
func (w *watchCache) sortedKeysLocked() []string {
	if w.dirty {
		w.keys = w.keys[:0]
		for k := range w.objects {
			w.keys = append(w.keys, k)
		}
		sort.Strings(w.keys)
		w.dirty = false
	}
	return w.keys
}

// listLocked returns the objects under prefix, after the key from (when
// not empty), in key order, as of rev (the cache's own revision, or an
// older one it serves: the newer events are undone).
func (w *watchCache) listLocked(prefix, from string, rev int64) []*cachedObject {
	keys := w.sortedKeysLocked()
	lo := prefix
	if from > lo {
		lo = from
	}
	if rev >= w.rev {
		out := []*cachedObject{}
		for i := sort.SearchStrings(keys, lo); i < len(keys) && strings.HasPrefix(keys[i], prefix); i++ {
			out = append(out, w.objects[keys[i]])
		}
		return out
	}
	at := map[string]*cachedObject{}
	for i := sort.SearchStrings(keys, lo); i < len(keys) && strings.HasPrefix(keys[i], prefix); i++ {
		at[keys[i]] = w.objects[keys[i]]
	}
	for i := w.end - 1; i >= w.start && w.at(i).rev > rev; i-- {
		ev := w.at(i)
		if ev.key < lo || !strings.HasPrefix(ev.key, prefix) {
			continue
		}
		if ev.prev == nil {
			delete(at, ev.key)
		} else {
			at[ev.key] = ev.prev
		}
	}
	ks := make([]string, 0, len(at))
	for k := range at {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	out := make([]*cachedObject, len(ks))
	for i, k := range ks {
		out[i] = at[k]
	}
	return out
}
