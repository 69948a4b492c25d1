package kube

import (
	"context"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

// cacheWatcher is one Kubernetes watch served from a watch cache (kube's
// cacheWatcher): its start (the initial state, or the window's events
// after its resourceVersion), then what the cacher dispatches to its
// buffer. Like a store watch it costs no goroutine: its client's Next
// takes its events and encodes them (each event's lines are shared by
// every watcher, cache.go).
type cacheWatcher struct {
	c      *cacher
	r      *Resource
	m      *matcher
	prefix string
	// after: events at or before it are in the watcher's start; the
	// cacher gives it only later ones. Set before it joins.
	after int64

	mu    sync.Mutex
	buf   []queued // a ring of n entries from head
	head  int
	n     int
	full  bool // an event found the buffer full: Next signals room
	ended bool // the cacher closed it (slow, a new list, the cache stopped)
	ready chan struct{}
	room  chan struct{}

	// Guarded by the cacher's cache.mu.
	slot       int
	bookmarks  bool
	bookmarkAt time.Time
	deadline   time.Time

	// The consumer's own.
	start      func(ctx context.Context) error // a start that waits for the cache
	startTimer clock.Timer                     // its blockTimeout
	pre        [][]byte                        // lines before everything else (an ERROR)
	fatal      bool                            // the stream ends after pre
	initial    []*cachedObject
	endMark    int64 // the initial-events-end bookmark's revision (0: none)
	window     []*cacheEvent
	// from is the resourceVersion the watch started from (kube's
	// process(resourceVersion)): a bookmark is sent if it is newer, or
	// the first time it equals it.
	from         int64
	bookmarkSent bool
	timeout      clock.Timer
	done         bool
	release      func() // gives the session's watcher slot back
}

// queued is one entry of a watcher's buffer: an event and how this
// watcher sees it, or (ev nil) a bookmark at rev.
type queued struct {
	ev  *cacheEvent
	typ int8
	rev int64
}

// The three lines of an event.
const (
	lineAdded int8 = iota
	lineModified
	lineDeleted
)

var lineTypes = [3]string{Added, Modified, Deleted}

// watch starts a watch served from the cache. ListOptions have been
// checked, and lo.SendInitialEvents defaulted as kube-apiserver does.
func (c *cacher) watch(ctx context.Context, ns string, m *matcher, lo ListOptions, rv int64, timeout time.Duration, release func()) *cacheWatcher {
	now := c.reg.clock.Now()
	w := &cacheWatcher{c: c, r: c.r, m: m, prefix: c.r.Prefix(ns), slot: -1, release: release,
		ready: make(chan struct{}, 1), room: make(chan struct{}, 1),
		bookmarks: lo.AllowWatchBookmarks, deadline: now.Add(timeout)}
	w.timeout = c.reg.clock.NewTimer(timeout)
	initial := lo.SendInitialEvents != nil && *lo.SendInitialEvents
	// The revision the watch starts from (kube's
	// getWatchCacheResourceVersion): the one asked for, the store's
	// current one for "", or the cache's own for "0".
	var required int64
	switch {
	case lo.ResourceVersion == "0":
	case lo.ResourceVersion != "":
		required = rv
	default:
		required = c.reg.kv.Rev()
	}
	if initial && !c.catchUp(ctx, required) {
		// A watch-list waits (blockTimeout from now) for the cache to
		// reach the revision before its state is taken; the stream is
		// open meanwhile, and the wait is its client's, in next.
		w.startTimer = c.reg.clock.NewTimer(blockTimeout)
		w.start = func(ctx context.Context) error {
			if err := c.waitFreshUntil(ctx, required, w.startTimer); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				w.fail(err)
				return nil
			}
			w.join(initial, required)
			return nil
		}
		return w
	}
	if !initial {
		// The window as of every write acknowledged before the watch
		// (lag aside): whether it still reaches back to the revision is
		// decided on what the store has published, not on when the
		// cache's loop last ran.
		c.sync(ctx)
	}
	w.join(initial, required)
	return w
}

// join gives w its start and makes it one of the cacher's watchers, under
// the cache's lock, so that it misses no event and gets none twice.
func (w *cacheWatcher) join(initial bool, required int64) {
	c := w.c
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	switch {
	case initial:
		// kube's getIntervalFromStoreLocked: the state, then (for a
		// watch-list with bookmarks) the bookmark that ends it.
		for _, o := range c.cache.listLocked(w.prefix, "", c.cache.rev) {
			if w.m.empty() || w.m.matchesAttrs(o.attributes(w.r)) {
				w.initial = append(w.initial, o)
			}
		}
		if w.bookmarks {
			w.endMark = c.cache.rev
		}
		w.after = max(c.cache.rev, required)
		w.from = w.after
	case required == 0:
		// sendInitialEvents=false from "0": from the cache's revision.
		w.after = c.cache.rev
		w.from = w.after
	default:
		evs, err := c.cache.sinceLocked(required)
		if err != nil {
			w.fail(err)
			return
		}
		w.window = evs
		w.after = max(required, c.cache.rev)
		w.from = required
	}
	if w.bookmarks {
		w.bookmarkAt = w.nextBookmarkAfter(c.reg.clock.Now(), c.reg.BookmarkInterval())
	}
	c.addLocked(w)
}

// fail ends the stream with err as an ERROR event (kube's errWatcher).
func (w *cacheWatcher) fail(err error) {
	w.pre = append(w.pre, errorLine(AsStatus(err)))
	w.fatal = true
}

// nextBookmarkAfter is kube's nextBookmarkTime: a bookmark interval from
// now, or 2 s before the watch's deadline if that is sooner; zero when
// that has passed (no more bookmarks).
func (w *cacheWatcher) nextBookmarkAfter(now time.Time, interval time.Duration) time.Time {
	at := now.Add(interval)
	if pre := w.deadline.Add(-2 * time.Second); pre.Before(at) {
		at = pre
	}
	if at.Before(now) {
		return time.Time{}
	}
	return at
}

// match reports whether the watcher sees ev, and as what: kube's
// convertToWatchEvent (selector transitions become ADDED and DELETED).
func (w *cacheWatcher) match(ev *cacheEvent) (int8, bool) {
	if !strings.HasPrefix(ev.key, w.prefix) {
		return 0, false
	}
	if w.m.empty() {
		switch {
		case ev.cur == nil:
			return lineDeleted, true
		case ev.prev == nil:
			return lineAdded, true
		}
		return lineModified, true
	}
	curOK := ev.cur != nil && w.m.matchesAttrs(ev.cur.attributes(w.r))
	prevOK := ev.prev != nil && w.m.matchesAttrs(ev.prev.attributes(w.r))
	switch {
	case curOK && prevOK:
		return lineModified, true
	case curOK:
		return lineAdded, true
	case prevOK:
		return lineDeleted, true
	}
	return 0, false
}

// wants is match for an event the cacher dispatches.
func (w *cacheWatcher) wants(ev *cacheEvent) (int8, bool) {
	if ev.rev <= w.after {
		return 0, false
	}
	return w.match(ev)
}

// offer puts q in the buffer if it has room (fewer than limit entries);
// false when it is full.
func (w *cacheWatcher) offer(q queued, limit int) bool {
	w.mu.Lock()
	if w.ended {
		w.mu.Unlock()
		return true
	}
	if w.n >= limit {
		w.full = true
		w.mu.Unlock()
		return false
	}
	w.pushLocked(q)
	w.mu.Unlock()
	signal(w.ready)
	return true
}

// offerBookmark queues a bookmark if the buffer has room (kube's
// nonblockingAdd: a bookmark never waits).
func (w *cacheWatcher) offerBookmark(rev int64, limit int) {
	w.mu.Lock()
	if w.ended || w.n >= limit {
		w.mu.Unlock()
		return
	}
	w.pushLocked(queued{rev: rev})
	w.mu.Unlock()
	signal(w.ready)
}

// waitForRoom offers q until it fits or expired fires.
func (w *cacheWatcher) waitForRoom(q queued, limit int, expired <-chan time.Time) bool {
	for {
		if w.offer(q, limit) {
			return true
		}
		select {
		case <-w.room:
		case <-expired:
			return false
		}
	}
}

func (w *cacheWatcher) pushLocked(q queued) {
	if w.n == len(w.buf) {
		grown := make([]queued, max(8, 2*len(w.buf)))
		for i := 0; i < w.n; i++ {
			grown[i] = w.buf[(w.head+i)%len(w.buf)]
		}
		w.buf, w.head = grown, 0
	}
	w.buf[(w.head+w.n)%len(w.buf)] = q
	w.n++
}

// end closes the watcher from the cacher's side: its stream ends, what
// its buffer held is dropped (kube's forget).
func (w *cacheWatcher) end() {
	w.mu.Lock()
	w.ended = true
	clear(w.buf)
	w.n = 0
	w.mu.Unlock()
	signal(w.ready)
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// next is the consumer's: the watch's next line.
func (w *cacheWatcher) next(ctx context.Context) ([]byte, error) {
	if start := w.start; start != nil {
		if err := start(ctx); err != nil {
			return nil, err
		}
		w.start = nil
		w.startTimer.Stop()
	}
	for {
		switch {
		case w.done:
			return nil, io.EOF
		case len(w.pre) > 0:
			l := w.pre[0]
			w.pre = w.pre[1:]
			return l, nil
		case w.fatal:
			w.finish()
			return nil, io.EOF
		case len(w.initial) > 0:
			o := w.initial[0]
			w.initial[0] = nil
			w.initial = w.initial[1:]
			if l := watchLine(w.r, Added, o.kv.Value, o.kv.ModRevision); l != nil {
				return l, nil
			}
			continue
		case w.endMark > 0:
			rev := w.endMark
			w.endMark = 0
			return bookmarkLine(w.r, rev, true), nil
		case len(w.window) > 0:
			ev := w.window[0]
			w.window[0] = nil
			w.window = w.window[1:]
			if typ, ok := w.match(ev); ok {
				if l := ev.line(w.r, typ); l != nil {
					return l, nil
				}
			}
			continue
		}
		w.mu.Lock()
		if w.n > 0 {
			q := w.buf[w.head]
			w.buf[w.head] = queued{}
			w.head = (w.head + 1) % len(w.buf)
			w.n--
			wasFull := w.full
			w.full = false
			w.mu.Unlock()
			if wasFull {
				signal(w.room)
			}
			if q.ev == nil {
				if q.rev < w.from || q.rev == w.from && w.bookmarkSent {
					continue
				}
				w.bookmarkSent = true
				return bookmarkLine(w.r, q.rev, false), nil
			}
			if l := q.ev.line(w.r, q.typ); l != nil {
				return l, nil
			}
			continue
		}
		if w.ended {
			w.mu.Unlock()
			w.finish()
			return nil, io.EOF
		}
		w.mu.Unlock()
		select {
		case <-w.ready:
		case <-w.timeout.C():
			w.finish()
			return nil, io.EOF
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// finish leaves the cacher: the stream has ended.
func (w *cacheWatcher) finish() {
	if w.done {
		return
	}
	w.done = true
	w.c.remove(w)
	w.timeout.Stop()
	if w.startTimer != nil {
		w.startTimer.Stop()
	}
	if w.release != nil {
		w.release()
		w.release = nil
	}
}

func (w *cacheWatcher) close() {
	w.finish()
	w.end()
}

// line is ev's watch line of type typ, encoded once for every watcher.
func (ev *cacheEvent) line(r *Resource, typ int8) []byte {
	if p := ev.lines[typ].Load(); p != nil {
		return *p
	}
	var l []byte
	if typ == lineDeleted {
		// the last state, with the delete's (or the update's) revision
		l = watchLine(r, Deleted, ev.prev.kv.Value, ev.rev)
	} else {
		l = watchLine(r, lineTypes[typ], ev.cur.kv.Value, ev.rev)
	}
	if l != nil {
		ev.lines[typ].Store(&l)
	}
	return l
}
