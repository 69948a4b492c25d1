package mvcc

import (
	"bytes"
	"context"
	"errors"
	"sync"
)

// Watch delivery follows etcd's watchable store, without a goroutine per
// watcher and without its timers. The consumer drives delivery: whoever
// takes a watcher's responses (an etcd watch stream, a Kubernetes watch,
// a test) calls Next, and the work of delivering happens in that call.
//
//   - A synced watcher is handed the events of each committed revision by
//     the committer (publish), which never waits: it appends them to the
//     watcher's queue and, if the watcher's consumer is waiting, wakes it.
//     A slow watcher cannot block writers.
//   - When a watcher's queue is full, or it starts from an old revision, it
//     is lagging: its consumer's Next reads the missed revisions back from
//     the backend one page at a time, under a limit on how many watchers
//     read at once (watch_catchup.go), and delivers them in responses of
//     whole revisions; then the watcher rejoins the synced set under the
//     publish lock, so that no revision is missed or repeated.
//   - A lagging watcher whose next revision has been compacted gets one
//     response with CompactRevision set and ends.
//
// Watchers are grouped in a WatchStream (watch_stream.go), whose consumer
// takes their responses in turn: one etcd watch stream with N watches is
// one consumer, and Store.Watch makes a stream of one watcher.

const (
	// watchQueueLimit is how many undelivered revisions a synced watcher
	// may hold before it falls back to catching up from the backend (etcd's
	// chanBufLen).
	watchQueueLimit = 128
	// watchBatchMaxRevs bounds the revisions in one catch-up response, never
	// splitting a revision (etcd's watchBatchMaxRevs).
	watchBatchMaxRevs = 1000
)

// ErrWatcherCanceled is how Next reports the end of a watcher that was
// cancelled, or whose context ended.
var ErrWatcherCanceled = errors.New("mvcc: watcher canceled")

type hub struct {
	s  *Store
	mu mutex // held while publishing a revision
	// watchers is a slice, not a set: publish walks it for every revision,
	// and walking a map costs several times more (most of all in
	// WebAssembly). Each watcher knows its index, so removal is a swap.
	watchers []*Watcher
	closed   bool
	// capped counts the watchers that count against Options.MaxWatchers
	// (all but Uncapped ones), admitted the slots AdmitWatcher holds.
	capped, admitted int

	catchUp     *CatchUpLimiter
	catchUpPage PageLimit
}

func (h *hub) init(s *Store) {
	h.s = s
	h.catchUp = s.opts.CatchUp
	if h.catchUp == nil {
		h.catchUp = NewCatchUpLimiter(DefaultCatchUpConcurrency)
	}
	h.catchUpPage = s.opts.CatchUpPage
	if h.catchUpPage == (PageLimit{}) {
		h.catchUpPage = DefaultCatchUpPage
	}
}

// publish makes rev visible and offers its events to every watcher.
func (h *hub) publish(rev int64, events []*Event) {
	h.mu.Lock()
	h.s.visibleRev.Store(rev)
	for _, w := range h.watchers {
		w.offer(rev, events)
	}
	h.mu.Unlock()
}

// remove takes w out of the watchers, if it is still there (the caller
// holds mu).
func (h *hub) remove(w *Watcher) {
	if w.slot >= 0 && w.capped {
		h.capped--
	}
	h.watchers = removeWatcher(h.watchers, w, func(w *Watcher) *int { return &w.slot })
}

type uncappedKey struct{}

// Uncapped marks a watch as the server's own, not a client's: its watcher
// does not count against Options.MaxWatchers. kube's watch cache watches
// each resource once to serve every Kubernetes watch of it, and takes a
// slot for each of those with AdmitWatcher instead.
func Uncapped(ctx context.Context) context.Context {
	return context.WithValue(ctx, uncappedKey{}, true)
}

func isUncapped(ctx context.Context) bool { return ctx.Value(uncappedKey{}) != nil }

// AdmitWatcher takes one of the store's watcher slots (Options.MaxWatchers)
// for a watcher served from an Uncapped one, or answers ErrTooManyRequests
// when they are all taken, as Watch does; release gives the slot back
// (once, however often it is called).
func (s *Store) AdmitWatcher() (release func(), err error) {
	h := &s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, ErrStopped
	}
	if max := s.opts.MaxWatchers; max > 0 && h.capped+h.admitted >= max {
		return nil, ErrTooManyRequests
	}
	h.admitted++
	var once sync.Once
	return func() {
		once.Do(func() {
			h.mu.Lock()
			h.admitted--
			h.mu.Unlock()
		})
	}, nil
}

// compacted makes every lagging watcher ready, so that its consumer learns
// promptly that its next revision may be gone.
func (h *hub) compacted() {
	h.mu.Lock()
	for _, w := range h.watchers {
		st := w.st
		st.mu.Lock()
		if w.lagging {
			st.readyLocked(w)
		}
		st.mu.Unlock()
	}
	h.mu.Unlock()
}

func (h *hub) closeAll() {
	h.mu.Lock()
	h.closed = true
	ws := append([]*Watcher(nil), h.watchers...)
	h.mu.Unlock()
	for _, w := range ws {
		w.finish(ErrStopped, true)
	}
}

// Watcher is one watch of a range of keys from a revision. Its responses
// are taken by its stream's consumer (WatchStream.Next, or Next for a
// watcher made by Store.Watch) until it ends: cancelled, the store closed,
// the context given to Watch ended, or its next revision compacted (after
// a final response with CompactRevision set).
type Watcher struct {
	// What the publisher and the consumer both touch comes first.
	s            *Store
	st           *WatchStream
	minRev       int64 // events below it are not wanted (future start)
	prevKV       bool
	noPut, noDel bool
	// Guarded by st.mu.
	lagging bool
	ended   bool  // no response will follow
	queue   queue // undelivered responses

	key, end []byte // end: nil for one key, empty for every key >= key

	slot   int  // index in the hub's watchers, -1 once out (guarded by the hub's mu)
	capped bool // counts against Options.MaxWatchers

	// Guarded by st.mu.
	nextRev int64 // with lagging: the first revision not yet delivered
	// owedProgress counts the progress notifications the watcher accepted
	// and dropped when it fell behind; they are delivered once it is synced
	// again, so that each accepted request is answered once.
	owedProgress int
	listed       bool  // in st's ready list
	member       int   // index in st's watchers, -1 once out
	endErr       error // why it ended
	endReported  bool  // Next reported endErr
	stopCtx      func() bool
}

type queued struct {
	rev      int64
	events   []*Event
	progress bool
}

// queue is a watcher's undelivered responses, oldest first. The oldest
// sits in the watcher itself: most of the time it is the only one, and the
// publisher and the consumer then touch no memory but the watcher's.
type queue struct {
	first queued
	rest  []queued // after first, from rest[head] on
	head  int
	n     int
}

func (q *queue) push(it queued) {
	if q.n == 0 {
		q.first = it
	} else {
		q.rest = append(q.rest, it)
	}
	q.n++
}

// drop1 removes the oldest response.
func (q *queue) drop1() {
	q.n--
	if q.n == 0 {
		q.first = queued{}
		return
	}
	q.first = q.rest[q.head]
	q.rest[q.head] = queued{}
	q.head++
	if q.head == len(q.rest) {
		q.rest, q.head = q.rest[:0], 0
	}
}

// drop empties the queue and returns the revision of its oldest events
// (0 when it holds none) and how many progress notifications it held.
func (q *queue) drop() (firstRev int64, progress int) {
	for i := 0; i < q.n; i++ {
		it := q.first
		if i > 0 {
			it = q.rest[q.head+i-1]
		}
		if it.progress {
			progress++
		} else if firstRev == 0 {
			firstRev = it.rev
		}
	}
	clear(q.rest)
	*q = queue{rest: q.rest[:0]}
	return firstRev, progress
}

// Watch starts a watcher in a stream of its own, whose responses its own
// Next delivers; see WatchStream.Watch.
func (s *Store) Watch(ctx context.Context, r *WatchRequest) (*Watcher, error) {
	sw := &soloWatch{st: WatchStream{s: s, signal: make(chan struct{}, 1)}}
	sw.st.solo = &sw.w
	if err := sw.st.watch(ctx, r, &sw.w); err != nil {
		return nil, err
	}
	return &sw.w, nil
}

// Watch starts a watcher whose responses st's Next delivers. StartRevision
// is inclusive; 0 means after the current revision; a revision beyond the
// current one waits for it. An empty range is refused with an *Error whose
// Message is ReasonEmptyWatchRange; a negative start with ErrCompacted; a
// watcher beyond Options.MaxWatchers with ErrTooManyRequests. The watcher
// ends when ctx does (a context that is never done costs nothing).
func (st *WatchStream) Watch(ctx context.Context, r *WatchRequest) (WatchHandle, error) {
	w := new(Watcher)
	if err := st.watch(ctx, r, w); err != nil {
		return nil, err
	}
	return w, nil
}

func (st *WatchStream) watch(ctx context.Context, r *WatchRequest, w *Watcher) error {
	s := st.s
	key := r.Key
	if len(key) == 0 {
		key = []byte{0}
	}
	end := rangeEnd(r.RangeEnd)
	if len(end) > 0 && bytes.Compare(key, end) >= 0 {
		return &Error{CodeInvalidArgument, ReasonEmptyWatchRange}
	}
	if r.StartRevision < 0 {
		return ErrCompacted
	}
	*w = Watcher{
		s:      s,
		st:     st,
		key:    append([]byte(nil), key...),
		end:    end,
		prevKV: r.PrevKv,
		member: -1,
	}
	if end != nil {
		w.end = append([]byte{}, end...)
	}
	for _, f := range r.Filters {
		switch f {
		case FilterNoPut:
			w.noPut = true
		case FilterNoDelete:
			w.noDel = true
		}
	}
	h := &s.hub
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return ErrStopped
	}
	w.capped = !isUncapped(ctx)
	if max := s.opts.MaxWatchers; w.capped && max > 0 && h.capped+h.admitted >= max {
		h.mu.Unlock()
		return ErrTooManyRequests
	}
	if w.capped {
		h.capped++
	}
	cur := s.visibleRev.Load()
	st.mu.Lock()
	if r.StartRevision == 0 || r.StartRevision > cur {
		w.minRev = max(r.StartRevision, cur+1)
	} else {
		w.lagging = true
		w.nextRev = r.StartRevision
		st.readyLocked(w)
	}
	st.joinLocked(w)
	st.mu.Unlock()
	w.slot = len(h.watchers)
	h.watchers = append(h.watchers, w)
	h.mu.Unlock()
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, w.Cancel)
		st.mu.Lock()
		ended := w.ended
		if !ended {
			w.stopCtx = stop
		}
		st.mu.Unlock()
		if ended {
			stop()
		}
	}
	return nil
}

// Cancel ends the watcher: its stream delivers nothing more of it but the
// report of its end, and it no longer counts against Options.MaxWatchers.
func (w *Watcher) Cancel() { w.finish(ErrWatcherCanceled, true) }

// finish ends the watcher with err, reported by Next when report is set
// (a compacted watcher's final response is its report).
func (w *Watcher) finish(err error, report bool) {
	h := &w.s.hub
	h.mu.Lock()
	h.remove(w)
	h.mu.Unlock()
	st := w.st
	st.mu.Lock()
	if w.ended {
		st.mu.Unlock()
		return
	}
	w.ended, w.endErr, w.endReported = true, err, !report
	w.queue = queue{}
	stop := w.stopCtx
	w.stopCtx = nil
	st.leaveLocked(w)
	if report {
		st.readyLocked(w)
	}
	st.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Synced reports whether the watcher is at the head of the store (not
// catching up from history).
func (w *Watcher) Synced() bool {
	w.st.mu.Lock()
	defer w.st.mu.Unlock()
	return !w.lagging
}

// RequestProgress queues a progress notification (no events, header
// revision = current revision) if the watcher is synced and has room, and
// reports whether it did. Queued behind pending events, it never overtakes
// them.
func (w *Watcher) RequestProgress() bool {
	h := &w.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	st := w.st
	st.mu.Lock()
	defer st.mu.Unlock()
	if w.lagging || w.ended || w.pending() >= watchQueueLimit {
		return false
	}
	w.queue.push(queued{rev: w.s.visibleRev.Load(), progress: true})
	st.readyLocked(w)
	return true
}

// pending is how many responses are queued (the caller holds st.mu).
func (w *Watcher) pending() int { return w.queue.n }

// hasWorkLocked reports whether TryNext has something to do for w: a
// queued response, history to read, or its end to report (the caller
// holds st.mu).
func (w *Watcher) hasWorkLocked() bool {
	if w.ended {
		return !w.endReported
	}
	return w.lagging || w.pending() > 0
}

// takeLocked moves the oldest queued response into resp, field by field
// (copying the queued item whole costs more than the rest of delivery);
// finishResponse completes it once st.mu is released. The caller holds
// st.mu.
func (w *Watcher) takeLocked(resp *WatchResponse) {
	q := &w.queue
	resp.Header.Revision, resp.Events, resp.ProgressNotify = q.first.rev, q.first.events, q.first.progress
	q.drop1()
}

// finishResponse attaches the previous key-values to a response taken by
// takeLocked, when the watcher asked for them.
func (w *Watcher) finishResponse(resp *WatchResponse) {
	if w.prevKV && !resp.ProgressNotify {
		resp.Events = w.withPrevKV(resp.Events)
	}
}

func (w *Watcher) contains(key []byte) bool {
	if w.end == nil {
		return equalKeys(key, w.key)
	}
	if compareKeys(key, w.key) < 0 {
		return false
	}
	return len(w.end) == 0 || compareKeys(key, w.end) < 0
}

func (w *Watcher) match(events []*Event) []*Event {
	n := 0
	for n < len(events) && w.wants(events[n]) {
		n++
	}
	if n == len(events) {
		return events[:n:n]
	}
	out := append([]*Event(nil), events[:n]...)
	for _, ev := range events[n+1:] {
		if w.wants(ev) {
			out = append(out, ev)
		}
	}
	return out
}

func (w *Watcher) wants(ev *Event) bool {
	if (ev.Type == EventPut && w.noPut) || (ev.Type == EventDelete && w.noDel) {
		return false
	}
	if w.end == nil {
		// One key, the most common watch: compared here rather than
		// through contains, one call less per watcher and event.
		return equalKeys(ev.Kv.Key, w.key)
	}
	return w.contains(ev.Kv.Key)
}

// offer is called by publish with the hub lock held; it must not block.
func (w *Watcher) offer(rev int64, events []*Event) {
	if rev < w.minRev {
		return
	}
	evs := events
	if len(events) != 1 {
		evs = w.match(events)
	} else if !w.wants(events[0]) {
		// Most revisions are one write: no loop, no copy.
		return
	}
	if len(evs) == 0 {
		return
	}
	st := w.st
	st.mu.Lock()
	w.enqueueLocked(rev, evs)
	st.mu.Unlock()
}

// enqueueLocked queues the events of revision rev for the consumer and
// wakes it; a watcher whose queue is full falls back to catching up from
// the backend. The caller holds st.mu.
func (w *Watcher) enqueueLocked(rev int64, evs []*Event) {
	if w.lagging || w.ended {
		return
	}
	if w.pending() >= watchQueueLimit {
		first, progress := w.queue.drop()
		w.lagging = true
		w.nextRev = rev
		if first != 0 {
			w.nextRev = first
		}
		w.owedProgress += progress
	} else {
		w.queue.push(queued{rev: rev, events: evs})
	}
	w.st.readyLocked(w)
}

// take is the consumer's share of delivery: it takes w's next response,
// reading history if w is lagging. got is false when w had nothing after
// all (the page of history it read held no event for it).
func (w *Watcher) take(ctx context.Context) (resp WatchResponse, got bool, err error) {
	st := w.st
	st.mu.Lock()
	switch {
	case w.ended:
		got = !w.endReported
		w.endReported = true
		err = w.endErr
		st.mu.Unlock()
		return WatchResponse{}, got, err
	case w.lagging:
		from := w.nextRev
		st.mu.Unlock()
		return w.catchUp(ctx, from)
	case w.pending() == 0:
		st.mu.Unlock()
		return WatchResponse{}, false, nil
	}
	w.takeLocked(&resp)
	if w.pending() > 0 {
		st.readyLocked(w)
	}
	st.mu.Unlock()
	w.finishResponse(&resp)
	return resp, true, nil
}

// withPrevKV attaches, when asked for, the key-value each event replaced,
// read at the revision before the event (omitted for creates and when that
// revision is compacted, as etcd does).
func (w *Watcher) withPrevKV(evs []*Event) []*Event {
	if !w.prevKV {
		return evs
	}
	out := make([]*Event, len(evs))
	s := w.s
	for i, ev := range evs {
		e := *ev
		if !ev.IsCreate() {
			s.mu.RLock()
			var rr RangeResponse
			err := s.rangeAt(&RangeRequest{Key: ev.Kv.Key, Revision: ev.Kv.ModRevision - 1}, s.visibleRev.Load(), &rr)
			s.mu.RUnlock()
			if err == nil && len(rr.Kvs) > 0 {
				e.PrevKv = rr.Kvs[0].Clone()
			}
		}
		out[i] = &e
	}
	return out
}
