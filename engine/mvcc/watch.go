package mvcc

import (
	"bytes"
	"context"
	"sync"
)

// Watch delivery follows etcd's watchable store, without its timers:
//
//   - A synced watcher is handed the events of each committed revision by
//     the committer (publish), which never waits: when nothing is queued
//     ahead it offers the response straight to the watcher's channel, and
//     when that is full or responses are pending it appends to the
//     watcher's queue, which the watcher's goroutine drains. A slow watcher
//     cannot block writers.
//   - When a watcher's queue is full, or it starts from an old revision, it
//     is lagging: its own goroutine reads the missed revisions back from the
//     backend one page at a time, under a limit on how many watchers read
//     at once (watch_catchup.go), and delivers them in responses of whole
//     revisions; then it rejoins the synced set under the publish lock so
//     that no revision is missed or repeated.
//   - A lagging watcher whose next revision has been compacted gets one
//     response with CompactRevision set and ends.

const (
	// watchQueueLimit is how many undelivered revisions a synced watcher
	// may hold before it falls back to catching up from the backend (etcd's
	// chanBufLen).
	watchQueueLimit = 128
	// watchBatchMaxRevs bounds the revisions in one catch-up response, never
	// splitting a revision (etcd's watchBatchMaxRevs).
	watchBatchMaxRevs = 1000
)

type hub struct {
	s  *Store
	mu mutex // held while publishing a revision
	// watchers is a slice, not a set: publish walks it for every revision,
	// and walking a map costs several times more (most of all in
	// WebAssembly). Each watcher knows its index, so removal is a swap.
	watchers []*Watcher
	closed   bool

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
	if w.slot < 0 {
		return
	}
	last := len(h.watchers) - 1
	moved := h.watchers[last]
	h.watchers[w.slot], moved.slot = moved, w.slot
	h.watchers[last] = nil
	h.watchers = h.watchers[:last]
	w.slot = -1
}

// compacted wakes lagging watchers so they notice a compaction promptly.
func (h *hub) compacted() {
	h.mu.Lock()
	for _, w := range h.watchers {
		w.mu.Lock()
		if w.lagging {
			w.wake()
		}
		w.mu.Unlock()
	}
	h.mu.Unlock()
}

func (h *hub) closeAll() {
	h.mu.Lock()
	h.closed = true
	ws := append([]*Watcher(nil), h.watchers...)
	h.mu.Unlock()
	for _, w := range ws {
		w.Cancel()
	}
}

// Watcher delivers WatchResponses on Chan until it is cancelled, the store
// closes, the context given to Watch ends, or its next revision is compacted
// (after a final response with CompactRevision set); then Chan is closed.
type Watcher struct {
	s            *Store
	key, end     []byte // end: nil for one key, empty for every key >= key
	prevKV       bool
	noPut, noDel bool
	minRev       int64 // events below it are not wanted (future start)

	ch       chan WatchResponse
	stop     chan struct{}
	stopOnce sync.Once
	signal   chan struct{}

	slot int // index in the hub's watchers, -1 once out (guarded by the hub's mu)

	mu      mutex
	queue   []queued
	spare   []queued // the buffer of the items run took last, for the next queue
	lagging bool
	nextRev int64 // with lagging: the first revision not yet delivered
	// busy is set while run holds responses it has not sent yet. A
	// publisher may hand a response straight to ch only when the watcher
	// is synced, nothing is queued and run holds nothing: order is kept.
	busy bool

	// Guarded by the store's CatchUpLimiter.
	holdsSlot    bool // may read history now
	waitsForSlot bool // in the limiter's line
}

type queued struct {
	rev      int64
	events   []*Event
	progress bool
}

// Watch starts a watcher. StartRevision is inclusive; 0 means after the
// current revision; a revision beyond the current one waits for it. An
// empty range is refused with an *Error whose Message is
// ReasonEmptyWatchRange; a negative start with ErrCompacted; a watcher
// beyond Options.MaxWatchers with ErrTooManyRequests.
func (s *Store) Watch(ctx context.Context, r *WatchRequest) (*Watcher, error) {
	key := r.Key
	if len(key) == 0 {
		key = []byte{0}
	}
	end := rangeEnd(r.RangeEnd)
	if len(end) > 0 && bytes.Compare(key, end) >= 0 {
		return nil, &Error{CodeInvalidArgument, ReasonEmptyWatchRange}
	}
	if r.StartRevision < 0 {
		return nil, ErrCompacted
	}
	w := &Watcher{
		s:      s,
		key:    append([]byte(nil), key...),
		end:    end,
		prevKV: r.PrevKv,
		ch:     make(chan WatchResponse, 16),
		stop:   make(chan struct{}),
		signal: make(chan struct{}, 1),
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
		return nil, ErrStopped
	}
	if max := s.opts.MaxWatchers; max > 0 && len(h.watchers) >= max {
		h.mu.Unlock()
		return nil, ErrTooManyRequests
	}
	cur := s.visibleRev.Load()
	if r.StartRevision == 0 || r.StartRevision > cur {
		w.minRev = max(r.StartRevision, cur+1)
	} else {
		w.lagging = true
		w.nextRev = r.StartRevision
		w.wake()
	}
	w.slot = len(h.watchers)
	h.watchers = append(h.watchers, w)
	h.mu.Unlock()
	go w.run(ctx)
	return w, nil
}

// Chan is where the watcher's responses arrive.
func (w *Watcher) Chan() <-chan WatchResponse { return w.ch }

// Cancel stops the watcher; Chan is closed soon after. It no longer
// counts against Options.MaxWatchers once Cancel returns.
func (w *Watcher) Cancel() {
	w.stopOnce.Do(func() {
		close(w.stop)
		h := &w.s.hub
		h.mu.Lock()
		h.remove(w)
		h.mu.Unlock()
	})
}

// Synced reports whether the watcher is at the head of the store (not
// catching up from history).
func (w *Watcher) Synced() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.lagging
}

// RequestProgress queues a progress notification (no events, header
// revision = current revision) if the watcher is synced, and reports
// whether it did. Queued behind pending events, it never overtakes them.
func (w *Watcher) RequestProgress() bool {
	h := &w.s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lagging {
		return false
	}
	w.queue = append(w.queue, queued{rev: w.s.visibleRev.Load(), progress: true})
	w.wake()
	return true
}

// slotGranted wakes a watcher that waited for a catch-up slot.
func (w *Watcher) slotGranted() { w.wake() }

func (w *Watcher) wake() {
	select {
	case w.signal <- struct{}{}:
	default:
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
	w.mu.Lock()
	if !w.lagging && !w.busy && len(w.queue) == 0 && !w.prevKV {
		// Nothing is ahead of this response, and it needs no read (prevKV
		// would), so the publisher delivers it itself if ch has room: no
		// wake-up of the watcher's goroutine, which in the browser's
		// single-threaded WebAssembly is most of a fan-out's cost.
		select {
		case w.ch <- WatchResponse{Header: ResponseHeader{Revision: rev}, Events: evs}:
			w.mu.Unlock()
			return
		default:
		}
	}
	w.enqueueLocked(rev, evs)
	w.mu.Unlock()
}

// enqueueLocked queues a response for the watcher's goroutine and wakes
// it; a watcher whose queue is full falls back to catching up from the
// backend. The caller holds w.mu.
func (w *Watcher) enqueueLocked(rev int64, evs []*Event) {
	if w.lagging {
		return
	}
	if len(w.queue) >= watchQueueLimit {
		w.lagging = true
		w.nextRev = rev
		for _, q := range w.queue {
			if !q.progress {
				w.nextRev = q.rev
				break
			}
		}
		w.queue = nil
	} else {
		w.queue = append(w.queue, queued{rev: rev, events: evs})
	}
	w.wake()
}

func (w *Watcher) run(ctx context.Context) {
	defer func() {
		h := &w.s.hub
		h.catchUp.forget(w)
		h.mu.Lock()
		h.remove(w)
		h.mu.Unlock()
		close(w.ch)
	}()
	for {
		select {
		case <-w.signal:
		case <-w.stop:
			return
		case <-ctx.Done():
			return
		}
		for {
			w.mu.Lock()
			if w.lagging {
				from := w.nextRev
				w.mu.Unlock()
				if !w.catchUp(ctx, from) {
					return
				}
				continue
			}
			items := w.queue
			w.queue, w.spare = w.spare[:0], nil
			w.busy = len(items) > 0
			w.mu.Unlock()
			if len(items) == 0 {
				break
			}
			for _, it := range items {
				resp := WatchResponse{Header: ResponseHeader{Revision: it.rev}, ProgressNotify: it.progress}
				if !it.progress {
					resp.Events = w.withPrevKV(it.events)
				}
				if !w.send(ctx, resp) {
					return
				}
			}
			clear(items)
			w.mu.Lock()
			if w.spare == nil {
				w.spare = items[:0]
			}
			w.mu.Unlock()
		}
	}
}

func (w *Watcher) send(ctx context.Context, resp WatchResponse) bool {
	select {
	case w.ch <- resp:
		return true
	case <-w.stop:
	case <-ctx.Done():
	}
	return false
}

// catchUp delivers the history from `from` to the visible revision, page
// by page, then rejoins the synced set. It returns false when the watcher
// has ended.
func (w *Watcher) catchUp(ctx context.Context, from int64) bool {
	s := w.s
	for {
		resp, next, step := w.readHistory(from)
		switch step {
		case historyCompacted:
			w.send(ctx, resp)
			return false
		case historyFailed:
			// The backend failed; the watcher cannot continue reliably.
			return false
		case historyEvents:
			resp.Events = w.withPrevKV(resp.Events)
			if !w.send(ctx, resp) {
				return false
			}
		case historyWaiting:
			// In line for a slot: release hands it over with a wake-up.
			select {
			case <-w.signal:
			case <-w.stop:
				return false
			case <-ctx.Done():
				return false
			}
			continue
		case historyCaughtUp:
			h := &s.hub
			h.mu.Lock()
			if s.visibleRev.Load() == from-1 {
				w.mu.Lock()
				w.lagging = false
				w.mu.Unlock()
				h.mu.Unlock()
				return true
			}
			h.mu.Unlock()
		}
		from = next
		select {
		case <-w.stop:
			return false
		case <-ctx.Done():
			return false
		default:
		}
	}
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
