package mvcc

import "sync"

// Catch-up: a watcher that starts from an old revision, or fell behind,
// reads the revisions it missed back from the backend one page at a time
// (Options.CatchUpPage), and only while it holds one of the slots of its
// CatchUpLimiter, which every store of a server may share. A watcher holds
// at most one page of history, whatever the history's size, and a watcher
// that finds no free slot waits in line without reading anything.

// DefaultCatchUpPage is the page a watcher catching up reads at a time
// when Options.CatchUpPage is zero: about etcd's largest watch response.
var DefaultCatchUpPage = PageLimit{Records: 512, Bytes: 1 << 20}

// DefaultCatchUpConcurrency is how many watchers of a store read history
// at once when Options.CatchUp is nil.
const DefaultCatchUpConcurrency = 4

// CatchUpLimiter bounds how many watchers read history from a backend at
// once. One limiter may serve every store of a process (the server gives
// the same one to every session), so that the pages being read are bounded
// across all of them. A watcher that finds every slot taken joins a queue
// and is woken, holding a slot, when one is released.
type CatchUpLimiter struct {
	mu      mutex
	free    int
	waiting []*Watcher
}

// NewCatchUpLimiter returns a limiter letting n watchers (at least one)
// read history at once.
func NewCatchUpLimiter(n int) *CatchUpLimiter {
	return &CatchUpLimiter{free: max(n, 1)}
}

// acquire takes a slot for w, or queues w for the next free one and
// reports false.
func (l *CatchUpLimiter) acquire(w *Watcher) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case w.holdsSlot: // handed over by release
		return true
	case l.free > 0:
		l.free--
		w.holdsSlot = true
		return true
	case !w.waitsForSlot:
		w.waitsForSlot = true
		l.waiting = append(l.waiting, w)
	}
	return false
}

// release gives w's slot to the first watcher in line, and wakes it, or
// frees it.
func (l *CatchUpLimiter) release(w *Watcher) {
	l.mu.Lock()
	if !w.holdsSlot {
		l.mu.Unlock()
		return
	}
	w.holdsSlot = false
	var next *Watcher
	if len(l.waiting) > 0 {
		next = l.waiting[0]
		l.waiting[0] = nil
		l.waiting = l.waiting[1:]
		next.waitsForSlot = false
		next.holdsSlot = true
	} else {
		l.free++
	}
	l.mu.Unlock()
	if next != nil {
		next.slotGranted()
	}
}

// forget takes an ended watcher out of line and passes on its slot.
func (l *CatchUpLimiter) forget(w *Watcher) {
	l.mu.Lock()
	if w.waitsForSlot {
		w.waitsForSlot = false
		for i, x := range l.waiting {
			if x == w {
				l.waiting = append(l.waiting[:i], l.waiting[i+1:]...)
				break
			}
		}
	}
	l.mu.Unlock()
	l.release(w)
}

// pagePool keeps page buffers between catch-up reads; a buffer is cleared
// before it goes back, so that it keeps no history alive.
var pagePool = sync.Pool{New: func() any { return new([]Record) }}

// historyStep is what one read of history came to.
type historyStep int

const (
	historyEvents    historyStep = iota // resp holds the events of whole revisions
	historyNone                         // the page held no event for the watcher
	historyCaughtUp                     // nothing left up to the visible revision
	historyCompacted                    // resp is the final, compacted response
	historyWaiting                      // no slot was free: w waits in line
	historyFailed                       // the backend failed
)

// readHistory reads the next page of w's history from revision from, and
// returns the response it makes and the revision to continue from. A
// response holds whole revisions, never more than watchBatchMaxRevs of
// them, as etcd's do; its header is the visible revision the page was read
// up to.
func (w *Watcher) readHistory(from int64) (WatchResponse, int64, historyStep) {
	s := w.s
	if cr := s.compactRev.Load(); from < cr {
		return WatchResponse{CompactRevision: cr}, from, historyCompacted
	}
	to := s.visibleRev.Load()
	if from > to {
		return WatchResponse{}, from, historyCaughtUp
	}
	lim := s.hub.catchUp
	if !lim.acquire(w) {
		return WatchResponse{}, from, historyWaiting
	}
	buf := pagePool.Get().(*[]Record)
	recs, next, err := s.readPage(from, to, (*buf)[:0])
	lim.release(w)
	defer func() {
		clear(recs)
		*buf = recs[:0]
		pagePool.Put(buf)
	}()
	// A compaction that overtook the read may have removed records it
	// needed; only a read that began at or after the compact revision is
	// complete.
	cr := s.compactRev.Load()
	if from < cr {
		return WatchResponse{CompactRevision: cr}, from, historyCompacted
	}
	if err != nil {
		return WatchResponse{}, from, historyFailed
	}
	evs, next := w.historyEvents(recs, next, cr)
	if len(evs) == 0 {
		return WatchResponse{}, next, historyNone
	}
	return WatchResponse{Header: ResponseHeader{Revision: to}, Events: evs}, next, historyEvents
}

// readPage reads the records of whole revisions from revision from on, at
// most a page unless one revision is larger than a page, and returns them
// with the revision that follows them.
func (s *Store) readPage(from, to int64, page []Record) ([]Record, int64, error) {
	lim := s.hub.catchUpPage
	page, more, err := s.backend.Scan(Revision{Main: from, Sub: -1}, to, lim, page)
	if err != nil || !more {
		return page, to + 1, err
	}
	// The page ended inside the range, perhaps inside its last revision:
	// that one is read again with the next page.
	last := page[len(page)-1].Rev.Main
	cut := len(page)
	for cut > 0 && page[cut-1].Rev.Main == last {
		cut--
	}
	if cut > 0 {
		clear(page[cut:])
		return page[:cut], last, nil
	}
	// One revision fills the page. It is delivered whole, as etcd never
	// splits a revision across responses.
	for more && err == nil {
		page, more, err = s.backend.Scan(page[len(page)-1].Rev, last, lim, page)
	}
	return page, last + 1, err
}

// historyEvents turns the records of whole revisions into the watcher's
// events, at most watchBatchMaxRevs revisions of them; next is where the
// records end, or the first revision left out. A tombstone at or below
// compacted is left out too: compaction removes it, and whether its
// physical removal has run yet must not change what a watcher sees.
func (w *Watcher) historyEvents(recs []Record, next, compacted int64) ([]*Event, int64) {
	var evs []*Event
	revs, last := 0, int64(0)
	for i := range recs {
		rec := &recs[i]
		if rec.Tombstone && rec.Rev.Main <= compacted {
			continue
		}
		var ev *Event
		if rec.Tombstone {
			ev = &Event{Type: EventDelete, Kv: &KeyValue{Key: rec.KV.Key, ModRevision: rec.Rev.Main}}
		} else {
			kv := rec.KV
			ev = &Event{Type: EventPut, Kv: &kv}
		}
		if !w.wants(ev) {
			continue
		}
		if rec.Rev.Main != last {
			if revs == watchBatchMaxRevs {
				return evs, rec.Rev.Main
			}
			revs++
			last = rec.Rev.Main
		}
		evs = append(evs, ev)
	}
	return evs, next
}
