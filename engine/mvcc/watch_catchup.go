package mvcc

import (
	"context"
	"sync"
)

// Catch-up: a watcher that starts from an old revision, or fell behind,
// reads the revisions it missed back from the backend one page at a time
// (Options.CatchUpPage), in its consumer's Next, and only while it holds
// one of the slots of its CatchUpLimiter, which every store of a server
// may share. A watcher holds at most one page of history, whatever the
// history's size, and a consumer that finds every slot taken waits for one
// without reading anything.

// DefaultCatchUpPage is the page a watcher catching up reads at a time
// when Options.CatchUpPage is zero: about etcd's largest watch response.
var DefaultCatchUpPage = PageLimit{Records: 512, Bytes: 1 << 20}

// DefaultCatchUpConcurrency is how many watchers of a store read history
// at once when Options.CatchUp is nil.
const DefaultCatchUpConcurrency = 4

// CatchUpLimiter bounds how many watchers read history from a backend at
// once. One limiter may serve every store of a process (the server gives
// the same one to every session), so that the pages being read are bounded
// across all of them. A slot is held only for the read of one page, so a
// consumer that stops reading holds none.
type CatchUpLimiter struct {
	slots chan struct{}
}

// NewCatchUpLimiter returns a limiter letting n watchers (at least one)
// read history at once.
func NewCatchUpLimiter(n int) *CatchUpLimiter {
	return &CatchUpLimiter{slots: make(chan struct{}, max(n, 1))}
}

// acquire waits for a slot, in turn with the others waiting, or for the
// end of ctx.
func (l *CatchUpLimiter) acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *CatchUpLimiter) release() { <-l.slots }

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
	historyFailed                       // the backend failed
)

// catchUp is the consumer's step for a lagging watcher: it reads the next
// page of history from revision from and returns the response it makes,
// or rejoins the synced set once nothing is left. got is false when there
// is nothing to deliver yet: the page held no event for the watcher (it
// stays ready, for the next page). err is set when ctx ended while it
// waited for a slot.
func (w *Watcher) catchUp(ctx context.Context, from int64) (resp WatchResponse, got bool, err error) {
	resp, next, step, err := w.readHistory(ctx, from)
	st := w.st
	if err != nil && step != historyFailed {
		st.mu.Lock()
		if !w.ended {
			st.readyLocked(w) // to go on with at the next call
		}
		st.mu.Unlock()
		return WatchResponse{}, false, err
	}
	switch step {
	case historyCompacted:
		w.finish(ErrCompacted, false)
		return resp, true, nil
	case historyFailed:
		w.finish(&Error{CodeInternal, "etcdserver: " + err.Error()}, true)
		return WatchResponse{}, false, nil
	case historyEvents:
		resp.Events = w.withPrevKV(resp.Events)
		got = true
	}
	h := &w.s.hub
	if step == historyCaughtUp {
		// Rejoining is checked under the publish lock: no revision is
		// published between the check and the change.
		h.mu.Lock()
	}
	st.mu.Lock()
	if !w.ended {
		w.nextRev = next
		if step == historyCaughtUp && w.s.visibleRev.Load() == from-1 {
			w.lagging = false
			for ; w.owedProgress > 0; w.owedProgress-- {
				w.queue.push(queued{rev: from - 1, progress: true})
			}
			if w.pending() > 0 {
				st.readyLocked(w)
			}
		} else {
			st.readyLocked(w)
		}
	}
	st.mu.Unlock()
	if step == historyCaughtUp {
		h.mu.Unlock()
	}
	return resp, got, nil
}

// readHistory reads the next page of w's history from revision from, and
// returns the response it makes and the revision to continue from. A
// response holds whole revisions, never more than watchBatchMaxRevs of
// them, as etcd's do; its header is the visible revision the page was read
// up to.
func (w *Watcher) readHistory(ctx context.Context, from int64) (WatchResponse, int64, historyStep, error) {
	s := w.s
	if cr := s.compactRev.Load(); from < cr {
		return WatchResponse{CompactRevision: cr}, from, historyCompacted, nil
	}
	to := s.visibleRev.Load()
	if from > to {
		return WatchResponse{}, from, historyCaughtUp, nil
	}
	lim := s.hub.catchUp
	if err := lim.acquire(ctx); err != nil {
		return WatchResponse{}, from, historyNone, err
	}
	buf := pagePool.Get().(*[]Record)
	recs, next, err := s.readPage(from, to, (*buf)[:0])
	lim.release()
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
		return WatchResponse{CompactRevision: cr}, from, historyCompacted, nil
	}
	if err != nil {
		return WatchResponse{}, from, historyFailed, err
	}
	evs, next := w.historyEvents(recs, next, cr)
	if len(evs) == 0 {
		return WatchResponse{}, next, historyNone, nil
	}
	return WatchResponse{Header: ResponseHeader{Revision: to}, Events: evs}, next, historyEvents, nil
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
