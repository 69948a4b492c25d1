package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// Watch event types.
const (
	Added    = "ADDED"
	Modified = "MODIFIED"
	Deleted  = "DELETED"
	Bookmark = "BOOKMARK"
	Error    = "ERROR"
)

// InitialEventsAnnotation marks the bookmark that ends a watch-list's
// initial events.
const InitialEventsAnnotation = "k8s.io/initial-events-end"

const expiredWatchMsg = "The resourceVersion for the provided watch is too old."

// Watch is one Kubernetes watch: Next yields its events as JSON lines
// ({"type":…,"object":…}\n) until the stream ends. With the watch cache on
// it is served from the resource's cache (cache_watcher.go), else from a
// store watch of its own, as kube-apiserver's --watch-cache=false serves
// it (storeWatch, below).
type Watch struct{ src watchSource }

type watchSource interface {
	next(ctx context.Context) ([]byte, error)
	close()
}

// Next blocks until the next event, the end of the stream (io.EOF) or the
// end of ctx. A watch costs no goroutine beyond its transport's: its
// events are taken as its client takes them, here.
func (w *Watch) Next(ctx context.Context) ([]byte, error) { return w.src.next(ctx) }

// Close ends the watch.
func (w *Watch) Close() { w.src.close() }

// Watch starts a watch. Errors before the stream (400, 422, the 500 of a
// malformed resourceVersion, the 429 of a session with as many watchers as
// it may hold) are returned; errors after it (a resourceVersion too old
// for the cache or compacted in the store, a too-large watch-list
// revision, the 500 InternalError of a store watch the storage ended
// without the cache) are ERROR events in the stream.
func (reg *Registry) Watch(ctx context.Context, r *Resource, ns string, lo ListOptions) (*Watch, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	lo.Watch = true
	m, err := admitListOptions(r, &lo)
	if err != nil {
		return nil, err
	}
	rv, err := parseRV(lo.ResourceVersion)
	if err != nil {
		return nil, err // a plain error: kube's cacher answers 500
	}
	// kube-apiserver ≥1.34 (WatchList on) turns a legacy watch from ""/"0"
	// into one with initial events (SetListOptionsDefaults).
	if lo.SendInitialEvents == nil && rv == 0 {
		lo.SendInitialEvents = &[]bool{true}[0]
		lo.ResourceVersionMatch = MatchNotOlderThan
	}
	timeout := reg.minTimeout
	if lo.TimeoutSeconds != nil && *lo.TimeoutSeconds > 0 {
		timeout = time.Duration(*lo.TimeoutSeconds) * time.Second
	}
	if c := reg.cacherFor(r); c != nil {
		release, err := reg.admitWatcher()
		if err != nil {
			return nil, err
		}
		return &Watch{c.watch(ctx, ns, m, lo, rv, timeout, release)}, nil
	}
	return reg.watchStore(ctx, r, ns, m, lo, rv, timeout)
}

// admitWatcher takes one of the session's watcher slots for a watch the
// cache serves (a store watch takes its own), so that the cap counts the
// session's watchers in both protocols: kube's 429 past it.
func (reg *Registry) admitWatcher() (func(), error) {
	a, ok := reg.kv.(interface{ AdmitWatcher() (func(), error) })
	if !ok {
		return func() {}, nil
	}
	release, err := a.AdmitWatcher()
	if err != nil {
		return nil, refusedWatch(err)
	}
	return release, nil
}

// refusedWatch is the Status of a watch the store would not make: a 429
// when the session holds as many watchers as it may.
func refusedWatch(err error) error {
	if err == mvcc.ErrTooManyRequests {
		return NewTooManyRequests()
	}
	return err
}

// watchLine is one watch event as kube-apiserver's watch handler writes
// it: {"type":…,"object":…}\n, the stored object with kind and apiVersion
// and the resourceVersion rev. nil when the stored value does not decode
// (the event is skipped).
func watchLine(r *Resource, typ string, value []byte, rev int64) []byte {
	obj, ok := spliceRV(value, formatRV(rev), false)
	if !ok {
		o, err := DecodeObject(value)
		if err != nil {
			return nil
		}
		meta(o)["resourceVersion"] = formatRV(rev)
		o["kind"], o["apiVersion"] = r.Kind, r.GroupVersion()
		obj = r.Encode(o)
	}
	return eventLine(typ, obj)
}

func eventLine(typ string, obj []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(obj) + len(typ) + 24)
	b.WriteString(`{"type":"`)
	b.WriteString(typ)
	b.WriteString(`","object":`)
	b.Write(obj)
	b.WriteString("}\n")
	return b.Bytes()
}

// bookmarkLine is a BOOKMARK: an empty object of the resource's kind with
// only its resourceVersion (and, ending a watch-list's initial events,
// the annotation that says so).
func bookmarkLine(r *Resource, rev int64, initialEnd bool) []byte {
	o := r.Zero()
	m := map[string]any{"resourceVersion": formatRV(rev)}
	if initialEnd {
		m["annotations"] = map[string]any{InitialEventsAnnotation: "true"}
	}
	o["metadata"] = m
	o["kind"], o["apiVersion"] = r.Kind, r.GroupVersion()
	return eventLine(Bookmark, r.Encode(o))
}

// errorLine is an ERROR event carrying se: the last line of its stream.
func errorLine(se *StatusError) []byte { return eventLine(Error, se.JSON()) }

// --- a watch served by the store (--watch-cache=false) ----------------------

// storeWatch is kube-apiserver's etcd3 watcher: a store watch of its own
// with the previous values (prev_kv), the initial state read from the
// store. With allowWatchBookmarks it gets a BOOKMARK every bookmark
// interval, made of a progress notification of its store watch (rvplay's
// behaviour before the watch cache, which lessons on bookmarks rely on:
// kube-apiserver with --watch-cache=false sends none).
type storeWatch struct {
	reg     *Registry
	r       *Resource
	m       *matcher
	ws      WatchStream
	cancel  context.CancelFunc
	queue   [][]byte
	done    bool
	timeout clock.Timer

	bookmarks     bool
	bookmarkTimer clock.Timer
	lastRev       int64 // the newest revision the watch has passed
}

// watchStore starts a watch the store serves (kube's etcd3 watcher).
func (reg *Registry) watchStore(ctx context.Context, r *Resource, ns string, m *matcher, lo ListOptions, rv int64, timeout time.Duration) (*Watch, error) {
	w := &storeWatch{reg: reg, r: r, m: m, bookmarks: lo.AllowWatchBookmarks}
	initial := lo.SendInitialEvents != nil && *lo.SendInitialEvents
	prefix := r.Prefix(ns)
	var start int64
	switch {
	case initial && rv > reg.kv.Rev():
		// etcd3's watcher does not wait: a watch-list beyond the store
		// fails at once, with a Retry-After jittered between 1 and 4 s.
		w.queue = append(w.queue, errorLine(NewTooLargeResourceVersion(rv, reg.kv.Rev(), int32(1+rand.IntN(3)))))
		w.done = true
		return &Watch{w}, nil
	case initial:
		// the state is read at the latest revision (etcd3's sync), or for
		// "0" where the lag lets through (anyread.go)
		readRev := int64(0)
		if lo.ResourceVersion == "0" {
			readRev = reg.anyRev()
		}
		items, rev, _, _, err := reg.rangeList(ctx, r, m, prefix, prefix, readRev, 0)
		if err != nil && readRev != 0 && isCompacted(err) {
			items, rev, _, _, err = reg.rangeList(ctx, r, m, prefix, prefix, 0, 0)
		}
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			w.queue = append(w.queue, eventLine(Added, withTypeMeta(r, it)))
		}
		if lo.AllowWatchBookmarks {
			w.queue = append(w.queue, bookmarkLine(r, rev, true))
		}
		start = rev + 1
	case rv == 0:
		// sendInitialEvents=false: from now (""), or where the lag lets
		// through ("0")
		start = reg.kv.Rev() + 1
		if lo.ResourceVersion == "0" {
			start = reg.anyRev() + 1
		}
	default:
		start = rv + 1
	}
	wctx, cancel := context.WithCancel(context.Background())
	ws, err := reg.kv.Watch(wctx, &mvcc.WatchRequest{Key: []byte(prefix), RangeEnd: prefixEnd([]byte(prefix)),
		StartRevision: start, PrevKv: true})
	if err != nil {
		cancel()
		return nil, refusedWatch(err)
	}
	w.ws, w.cancel = ws, cancel
	w.lastRev = start - 1
	w.timeout = reg.clock.NewTimer(timeout)
	if w.bookmarks {
		w.bookmarkTimer = reg.clock.NewTimer(reg.BookmarkInterval())
	}
	return &Watch{w}, nil
}

// storeWatchLost reports whether a store watch ended for a reason of the
// storage's (on an etcd cluster, "etcdserver: no leader": etcd's client
// ends a watch that requires a leader, as kube's do, when its member has
// none or loses it), rather than because the store closed or the watch
// was canceled.
func storeWatchLost(err error) bool {
	return err != nil && !errors.Is(err, mvcc.ErrStopped) && !errors.Is(err, mvcc.ErrWatcherCanceled) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// withTypeMeta puts kind and apiVersion back in front of a list item.
func withTypeMeta(r *Resource, item []byte) []byte {
	var b bytes.Buffer
	b.Grow(len(item) + 48)
	b.WriteString(`{"kind":`)
	writeJSON(&b, r.Kind)
	b.WriteString(`,"apiVersion":`)
	writeJSON(&b, r.GroupVersion())
	if len(item) > 2 {
		b.WriteByte(',')
	}
	b.Write(item[1:])
	return b.Bytes()
}

func (w *storeWatch) next(ctx context.Context) ([]byte, error) {
	for {
		if len(w.queue) > 0 {
			f := w.queue[0]
			w.queue[0] = nil
			w.queue = w.queue[1:]
			return f, nil
		}
		if w.done {
			return nil, io.EOF
		}
		resp, ok, err := w.ws.TryNext(ctx)
		switch {
		case ok && err == nil:
			w.handle(resp)
			continue
		case err != nil:
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			switch {
			case ok && resp.CompactRevision != 0:
				w.handle(resp)
			case storeWatchLost(err):
				// etcd3's watcher sends the error etcd's watch channel
				// ended with, as an InternalError (a reflector watches
				// again from its last resourceVersion).
				w.queue = append(w.queue, errorLine(NewInternalError(err)))
			}
			w.done = true // the watcher ended
			continue
		}
		var bookmarkC <-chan time.Time
		if w.bookmarkTimer != nil {
			bookmarkC = w.bookmarkTimer.C()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-w.timeout.C():
			w.done = true
		case <-bookmarkC:
			w.ws.RequestProgress()
			w.bookmarkTimer = w.reg.clock.NewTimer(w.reg.BookmarkInterval())
		case <-w.ws.Ready():
		}
	}
}

func (w *storeWatch) handle(resp mvcc.WatchResponse) {
	if resp.CompactRevision != 0 {
		w.queue = append(w.queue, errorLine(NewExpired(expiredWatchMsg)))
		w.done = true
		return
	}
	if len(resp.Events) == 0 {
		w.lastRev = max(w.lastRev, resp.Header.Revision)
		if w.bookmarks && resp.ProgressNotify {
			w.queue = append(w.queue, bookmarkLine(w.r, w.lastRev, false))
		}
		return
	}
	for _, ev := range resp.Events {
		w.lastRev = ev.Kv.ModRevision
		if !ev.IsCreate() && ev.PrevKv == nil {
			// etcd3's parseEvent: the previous value was compacted.
			w.queue = append(w.queue, errorLine(NewInternalError(fmt.Errorf("etcd event received with PrevKv=nil (key=%q, modRevision=%d, type=%s)",
				string(ev.Kv.Key), ev.Kv.ModRevision, ev.Type))))
			w.done = true
			return
		}
		if l := w.line(w.r.servedEvent(ev)); l != nil {
			w.queue = append(w.queue, l)
		}
	}
}

// line is the event as this watch sees it (etcd3's transform), or nil.
func (w *storeWatch) line(ev *mvcc.Event) []byte {
	rev := ev.Kv.ModRevision
	if w.m.empty() {
		switch {
		case ev.Type == mvcc.EventDelete:
			return watchLine(w.r, Deleted, ev.PrevKv.Value, rev)
		case ev.IsCreate():
			return watchLine(w.r, Added, ev.Kv.Value, rev)
		}
		return watchLine(w.r, Modified, ev.Kv.Value, rev)
	}
	var cur, prev Object
	if ev.Type == mvcc.EventPut {
		o, err := decodeKV(ev.Kv)
		if err != nil {
			return nil
		}
		cur = o
	}
	if ev.PrevKv != nil {
		if o, err := decodeKV(ev.PrevKv); err == nil {
			prev = o
		}
	}
	curOK := cur != nil && w.m.matches(cur)
	prevOK := prev != nil && w.m.matches(prev)
	switch {
	case curOK && prevOK:
		return watchLine(w.r, Modified, ev.Kv.Value, rev)
	case curOK:
		return watchLine(w.r, Added, ev.Kv.Value, rev)
	case prevOK:
		// stopped matching, or deleted: the old content, the new revision
		return watchLine(w.r, Deleted, ev.PrevKv.Value, rev)
	}
	return nil
}

func (w *storeWatch) close() {
	if w.ws != nil {
		w.ws.Cancel()
	}
	if w.timeout != nil {
		w.timeout.Stop()
	}
	if w.bookmarkTimer != nil {
		w.bookmarkTimer.Stop()
	}
	if w.cancel != nil {
		w.cancel()
	}
}
