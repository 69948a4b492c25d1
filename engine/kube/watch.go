package kube

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

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
// ({"type":…,"object":…}\n) until the stream ends.
type Watch struct {
	s       *Registry
	r       *Resource
	m       *matcher
	ws      WatchStream
	cancel  context.CancelFunc
	queue   [][]byte
	done    bool
	lastRev int64

	bookmarks     bool
	bookmarkTimer Timer
	timeout       Timer

	// A watch-list asked for a revision the store has not reached: it
	// waits (at most waitTimer) for waitFor, then sends the initial state.
	waitFor   int64
	waitTimer Timer
	waitWS    WatchStream // every key: tells when the store reaches waitFor
	prefix    string
	skipUpTo  int64 // events at or before the initial state are in it
}

// initialStateWait is how long a watch-list waits for a future revision
// (kube's cache blockTimeout).
const initialStateWait = 3 * time.Second

// Watch starts a watch. Errors before the stream (400, 422, the 500 of a
// malformed resourceVersion, the 429 of a session with as many watchers as
// it may hold) are returned; errors after it (a compacted start, a
// too-large watch-list revision) are ERROR events in the stream.
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
	// into one with initial events.
	initial := lo.SendInitialEvents != nil && *lo.SendInitialEvents
	if lo.SendInitialEvents == nil && rv == 0 {
		initial = true
	}
	w := &Watch{s: reg, r: r, m: m, bookmarks: lo.AllowWatchBookmarks}
	wctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	timeout := reg.minTimeout
	if lo.TimeoutSeconds != nil && *lo.TimeoutSeconds > 0 {
		timeout = time.Duration(*lo.TimeoutSeconds) * time.Second
	}
	prefix := r.Prefix(ns)
	var start int64
	switch {
	case initial:
		readRev := int64(0)
		if lo.ResourceVersion == "0" {
			readRev = reg.cacheRev()
		} else if rv > 0 {
			if cur := reg.kv.Rev(); rv > cur {
				// wait for the store to reach rv, then send the state
				ws, err := reg.kv.Watch(wctx, &mvcc.WatchRequest{Key: []byte{0}, RangeEnd: []byte{0}, StartRevision: cur + 1})
				if err != nil {
					cancel()
					return nil, refusedWatch(err)
				}
				w.waitFor, w.prefix, w.waitWS = rv, prefix, ws
				w.waitTimer = reg.clock.NewTimer(initialStateWait)
				w.lastRev = cur
				start = cur + 1
				break
			}
		}
		items, rev, _, _, err := reg.rangeList(ctx, r, m, prefix, prefix, readRev, 0)
		if err != nil && readRev != 0 && isCompacted(err) {
			items, rev, _, _, err = reg.rangeList(ctx, r, m, prefix, prefix, 0, 0)
		}
		if err != nil {
			cancel()
			return nil, err
		}
		for _, it := range items {
			w.queueRaw(Added, it, true)
		}
		if lo.AllowWatchBookmarks {
			w.queueBookmark(rev, true)
		}
		w.lastRev = rev
		start = rev + 1
	case rv == 0:
		// sendInitialEvents=false: start now ("" ) or at the cache ("0")
		cur := reg.kv.Rev()
		if lo.ResourceVersion == "0" {
			cur = reg.cacheRev()
		}
		w.lastRev = cur
		start = cur + 1
	default:
		w.lastRev = rv
		start = rv + 1
	}
	if !w.done {
		ws, err := reg.kv.Watch(wctx, &mvcc.WatchRequest{Key: []byte(prefix), RangeEnd: prefixEnd([]byte(prefix)),
			StartRevision: start, PrevKv: true})
		if err != nil {
			cancel()
			return nil, refusedWatch(err)
		}
		w.ws = ws
		w.timeout = reg.clock.NewTimer(timeout)
		if w.bookmarks {
			w.bookmarkTimer = reg.clock.NewTimer(reg.BookmarkInterval())
		}
	}
	return w, nil
}

// refusedWatch is the Status of a watch the store would not make: a 429
// when the session holds as many watchers as it may.
func refusedWatch(err error) error {
	if err == mvcc.ErrTooManyRequests {
		return NewTooManyRequests()
	}
	return err
}

func (w *Watch) encodeEvent(typ string, o Object) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"`)
	b.WriteString(typ)
	b.WriteString(`","object":`)
	o["kind"], o["apiVersion"] = w.r.Kind, w.r.GroupVersion()
	b.Write(w.r.Encode(o))
	b.WriteString("}\n")
	return b.Bytes()
}

func (w *Watch) queueEvent(typ string, o Object) { w.queue = append(w.queue, w.encodeEvent(typ, o)) }

// queueRaw queues an event whose object is a list item's JSON (item) or
// a stored object with its resourceVersion (item false).
func (w *Watch) queueRaw(typ string, obj []byte, item bool) {
	var b bytes.Buffer
	b.Grow(len(obj) + 64)
	b.WriteString(`{"type":"`)
	b.WriteString(typ)
	b.WriteString(`","object":`)
	if item {
		// put kind and apiVersion back in front
		b.WriteString(`{"kind":`)
		writeJSON(&b, w.r.Kind)
		b.WriteString(`,"apiVersion":`)
		writeJSON(&b, w.r.GroupVersion())
		if len(obj) > 2 {
			b.WriteByte(',')
		}
		b.Write(obj[1:])
	} else {
		b.Write(obj)
	}
	b.WriteString("}\n")
	w.queue = append(w.queue, b.Bytes())
}

func (w *Watch) queueBookmark(rev int64, initialEnd bool) {
	o := w.r.Zero()
	m := map[string]any{}
	o["metadata"] = m
	m["resourceVersion"] = formatRV(rev)
	if initialEnd {
		m["annotations"] = map[string]any{InitialEventsAnnotation: "true"}
	}
	w.queueEvent(Bookmark, o)
}

func (w *Watch) queueError(se *StatusError) {
	var b bytes.Buffer
	b.WriteString(`{"type":"ERROR","object":`)
	b.Write(se.JSON())
	b.WriteString("}\n")
	w.queue = append(w.queue, b.Bytes())
}

// Next blocks until the next event, the end of the stream (io.EOF) or the
// end of ctx. The etcd watchers' responses are taken here, as the client
// takes events: a watch costs no goroutine beyond its transport's.
func (w *Watch) Next(ctx context.Context) ([]byte, error) {
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
		if w.waitTimer != nil {
			resp, ok, err := w.waitWS.TryNext(ctx)
			if ok && err == nil {
				w.reached(resp)
				continue
			}
			if err != nil && !ok {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
		} else if w.ws != nil {
			resp, ok, err := w.ws.TryNext(ctx)
			switch {
			case ok && err == nil:
				w.handle(resp)
				continue
			case err != nil:
				if cerr := ctx.Err(); cerr != nil {
					return nil, cerr
				}
				w.done = true // the watcher ended (the store closed)
				continue
			}
		}
		var bookmarkC, waitC <-chan time.Time
		var ready <-chan struct{}
		if w.bookmarkTimer != nil {
			bookmarkC = w.bookmarkTimer.C()
		}
		if w.waitTimer != nil {
			waitC = w.waitTimer.C()
			ready = w.waitWS.Ready()
		} else if w.ws != nil {
			ready = w.ws.Ready()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-waitC:
			w.waitTimer = nil
			w.queueError(NewTooLargeResourceVersion(w.waitFor, w.s.kv.Rev(), 1))
			w.done = true
		case <-w.timeout.C():
			w.done = true
		case <-bookmarkC:
			w.ws.RequestProgress()
			w.bookmarkTimer = w.s.clock.NewTimer(w.s.BookmarkInterval())
		case <-ready:
		}
	}
}

// reached sends the initial state of a watch-list that waited for a
// future revision once the store has reached it.
func (w *Watch) reached(resp mvcc.WatchResponse) {
	for _, ev := range resp.Events {
		if ev.Kv.ModRevision >= w.waitFor {
			w.sendInitialState()
			return
		}
	}
}

func (w *Watch) handle(resp mvcc.WatchResponse) {
	if resp.CompactRevision != 0 {
		w.queueError(NewExpired(expiredWatchMsg))
		w.done = true
		return
	}
	if w.waitFor > 0 {
		return // part of the initial state, sent once the store reaches waitFor
	}
	if len(resp.Events) == 0 {
		if resp.Header.Revision > w.lastRev {
			w.lastRev = resp.Header.Revision
		}
		if w.bookmarks && resp.ProgressNotify {
			w.queueBookmark(w.lastRev, false)
		}
		return
	}
	for _, ev := range resp.Events {
		if ev.Kv.ModRevision <= w.skipUpTo {
			continue
		}
		w.lastRev = ev.Kv.ModRevision
		if w.m.empty() && w.fastEvent(ev) {
			continue
		}
		var cur, prev Object
		if ev.Type == mvcc.EventPut {
			o, err := decodeKV(ev.Kv)
			if err != nil {
				continue
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
		case ev.Type == mvcc.EventDelete:
			if prevOK {
				meta(prev)["resourceVersion"] = formatRV(ev.Kv.ModRevision)
				w.queueEvent(Deleted, prev)
			}
		case curOK && prevOK:
			w.queueEvent(Modified, cur)
		case curOK:
			w.queueEvent(Added, cur)
		case prevOK:
			// stopped matching: DELETED with the old content, new revision
			meta(prev)["resourceVersion"] = formatRV(ev.Kv.ModRevision)
			w.queueEvent(Deleted, prev)
		}
	}
}

// fastEvent queues the event of a watch without selectors straight from
// the stored bytes; false when they are not in the canonical form.
func (w *Watch) fastEvent(ev *mvcc.Event) bool {
	typ, value := Modified, ev.Kv.Value
	switch {
	case ev.Type == mvcc.EventDelete:
		if ev.PrevKv == nil {
			return false
		}
		typ, value = Deleted, ev.PrevKv.Value
	case ev.IsCreate():
		typ = Added
	}
	// every watcher without selectors sends the same line: make it once
	k := eventKey{rev: ev.Kv.ModRevision, key: string(ev.Kv.Key), typ: typ}
	if line, ok := w.s.events.get(k); ok {
		w.queue = append(w.queue, line)
		return true
	}
	b, ok := spliceRV(value, formatRV(ev.Kv.ModRevision), false)
	if !ok {
		return false
	}
	w.queueRaw(typ, b, false)
	w.s.events.put(k, w.queue[len(w.queue)-1])
	return true
}

// eventKey names one watch event line of a watch without selectors.
type eventKey struct {
	rev int64
	key string
	typ string
}

// eventLines remembers the latest event lines, shared by the watchers of
// a resource (fan-out encodes each event once, not once per watcher).
type eventLines struct {
	mu    sync.Mutex
	m     map[eventKey][]byte
	order []eventKey
}

const eventLinesKept = 1024

func (e *eventLines) get(k eventKey) ([]byte, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.m[k]
	return b, ok
}

func (e *eventLines) put(k eventKey, line []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.m == nil {
		e.m = make(map[eventKey][]byte, eventLinesKept)
	}
	if _, ok := e.m[k]; ok {
		return
	}
	if len(e.order) >= eventLinesKept {
		delete(e.m, e.order[0])
		e.order = e.order[1:]
	}
	e.m[k] = line
	e.order = append(e.order, k)
}

// sendInitialState queues the state of a watch-list that waited for a
// future revision, and the bookmark ending it.
func (w *Watch) sendInitialState() {
	w.waitFor = 0
	w.waitTimer.Stop()
	w.waitTimer = nil
	w.waitWS.Cancel()
	items, rev, _, _, err := w.s.rangeList(context.Background(), w.r, w.m, w.prefix, w.prefix, 0, 0)
	if err != nil {
		w.queueError(AsStatus(err))
		w.done = true
		return
	}
	for _, it := range items {
		w.queueRaw(Added, it, true)
	}
	if w.bookmarks {
		w.queueBookmark(rev, true)
	}
	w.lastRev, w.skipUpTo = rev, rev
}

// Close ends the watch.
func (w *Watch) Close() {
	if w.ws != nil {
		w.ws.Cancel()
	}
	if w.timeout != nil {
		w.timeout.Stop()
	}
	if w.bookmarkTimer != nil {
		w.bookmarkTimer.Stop()
	}
	if w.waitTimer != nil {
		w.waitTimer.Stop()
		w.waitWS.Cancel()
	}
	w.cancel()
}
