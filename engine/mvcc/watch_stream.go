package mvcc

import "context"

// WatchStream is a set of watchers whose responses one consumer takes in
// turn, as etcd's mvcc.WatchStream is: the etcd gateway makes one per
// /v3/watch stream, and Store.Watch one per watcher. It costs no goroutine:
// the publisher queues responses and marks their watchers ready, and the
// consumer's Next takes one response of the next ready watcher, reading
// history itself for a watcher that is catching up. Next, TryNext and
// Ready are for one consumer at a time; Watch, Cancel, RequestProgress and
// Close may be called from anywhere.
type WatchStream struct {
	s  *Store
	mu mutex
	// ready lists, oldest first from ready[head], the watchers that have
	// something for Next: a queued response, history to read, or their
	// end to report. A watcher is listed once; Next puts it back at the
	// end when it has more, so the watchers of a stream take turns.
	ready    []*Watcher
	head     int
	watchers []*Watcher // the live watchers, for Close
	waiting  bool       // the consumer waits on signal
	signal   chan struct{}
	// solo is the watcher of a stream made by Store.Watch, its only one:
	// such a stream keeps no ready list, whether its watcher has something
	// is its own state.
	solo *Watcher
}

// NewWatchStream returns an empty stream of watchers on s (which always
// has a leader: opts change nothing).
func (s *Store) NewWatchStream(WatchStreamOptions) Watches {
	return &WatchStream{s: s, signal: make(chan struct{}, 1)}
}

// soloWatch is the one allocation of a watcher made by Store.Watch and
// its stream, side by side: the publisher and the consumer touch both.
type soloWatch struct {
	st WatchStream
	w  Watcher
}

// readyLocked lists w, if it is not, and wakes the consumer if it waits
// (the caller holds mu).
func (st *WatchStream) readyLocked(w *Watcher) {
	if !w.listed && st.solo == nil {
		w.listed = true
		st.ready = append(st.ready, w)
	}
	if st.waiting {
		st.waiting = false
		select {
		case st.signal <- struct{}{}:
		default:
		}
	}
}

// hasReadyLocked reports whether a watcher has something for TryNext (the
// caller holds mu).
func (st *WatchStream) hasReadyLocked() bool {
	if w := st.solo; w != nil {
		return w.hasWorkLocked()
	}
	return st.head < len(st.ready)
}

// popLocked takes the oldest ready watcher, or nil (the caller holds mu).
func (st *WatchStream) popLocked() *Watcher {
	if w := st.solo; w != nil {
		if w.hasWorkLocked() {
			return w
		}
		return nil
	}
	if st.head == len(st.ready) {
		return nil
	}
	w := st.ready[st.head]
	st.ready[st.head] = nil
	st.head++
	switch {
	case st.head == len(st.ready):
		st.ready, st.head = st.ready[:0], 0
	case st.head >= 64 && st.head*2 >= len(st.ready):
		// Never empty for long: move the rest down rather than grow.
		n := copy(st.ready, st.ready[st.head:])
		clear(st.ready[n:])
		st.ready, st.head = st.ready[:n], 0
	}
	w.listed = false
	return w
}

func (st *WatchStream) joinLocked(w *Watcher) {
	w.member = len(st.watchers)
	st.watchers = append(st.watchers, w)
}

func (st *WatchStream) leaveLocked(w *Watcher) {
	st.watchers = removeWatcher(st.watchers, w, func(w *Watcher) *int { return &w.member })
}

// removeWatcher takes w out of list, where index gives each watcher's
// place (-1 once out), by moving the last watcher into its place.
func removeWatcher(list []*Watcher, w *Watcher, index func(*Watcher) *int) []*Watcher {
	i := *index(w)
	if i < 0 {
		return list
	}
	last := len(list) - 1
	moved := list[last]
	list[i], *index(moved) = moved, i
	list[last] = nil
	*index(w) = -1
	return list[:last]
}

// TryNext takes the next response without waiting for a write: ok is
// false when no watcher has one now. A watcher's end is reported once, as
// a response with ok set and err the reason: ErrWatcherCanceled,
// ErrStopped when the store closed, or the backend's failure. A watcher
// that gets a response with CompactRevision set has ended too, and is not
// reported again. Reading history may take a while, and wait for a
// catch-up slot; only a ctx that ended makes TryNext return err with ok
// false.
func (st *WatchStream) TryNext(ctx context.Context) (w WatchHandle, resp WatchResponse, ok bool, err error) {
	for {
		st.mu.Lock()
		w := st.popLocked()
		if w == nil {
			st.mu.Unlock()
			return nil, WatchResponse{}, false, nil
		}
		if !w.lagging && !w.ended {
			// The common case, a synced watcher's queued response, is
			// taken under the one lock.
			if w.pending() == 0 {
				st.mu.Unlock()
				continue
			}
			w.takeLocked(&resp)
			if w.pending() > 0 {
				st.readyLocked(w)
			}
			st.mu.Unlock()
			w.finishResponse(&resp)
			return w, resp, true, nil
		}
		st.mu.Unlock()
		resp, got, err := w.take(ctx)
		if got {
			return w, resp, true, err
		}
		if err != nil {
			return nil, WatchResponse{}, false, err
		}
	}
}

// Next waits for the next response (see TryNext) or the end of ctx.
func (st *WatchStream) Next(ctx context.Context) (WatchHandle, WatchResponse, error) {
	for {
		w, resp, ok, err := st.TryNext(ctx)
		if ok || err != nil {
			return w, resp, err
		}
		select {
		case <-st.Ready():
		case <-ctx.Done():
			return nil, WatchResponse{}, ctx.Err()
		}
	}
}

// Ready returns a channel that receives when TryNext may have something:
// a consumer that also waits for other things (timers) selects on it. A
// receive may be spurious; TryNext says.
func (st *WatchStream) Ready() <-chan struct{} {
	st.mu.Lock()
	if st.hasReadyLocked() {
		select {
		case st.signal <- struct{}{}:
		default:
		}
	} else {
		st.waiting = true
	}
	st.mu.Unlock()
	return st.signal
}

// Close cancels every watcher of the stream.
func (st *WatchStream) Close() {
	st.mu.Lock()
	ws := append([]*Watcher(nil), st.watchers...)
	st.mu.Unlock()
	for _, w := range ws {
		w.Cancel()
	}
}

// Next waits for the next response of a watcher made by Store.Watch (alone
// in its stream), or the end of ctx. Once the watcher has ended it returns
// the reason (ErrWatcherCanceled, ErrStopped, ErrCompacted after the
// response with CompactRevision set, or the backend's failure).
func (w *Watcher) Next(ctx context.Context) (resp WatchResponse, err error) {
	if w.takeQueued(&resp) {
		return resp, nil
	}
	for {
		resp, ok, err := w.TryNext(ctx)
		if ok || err != nil {
			return resp, err
		}
		select {
		case <-w.st.Ready():
		case <-ctx.Done():
			return WatchResponse{}, ctx.Err()
		}
	}
}

// TryNext is WatchStream.TryNext for a watcher made by Store.Watch: ok is
// false when there is nothing now; err is set once the watcher has ended.
func (w *Watcher) TryNext(ctx context.Context) (resp WatchResponse, ok bool, err error) {
	if w.takeQueued(&resp) {
		return resp, true, nil
	}
	st := w.st
	if _, resp, ok, err = st.TryNext(ctx); ok || err != nil {
		return resp, ok, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if w.ended && w.endReported {
		return WatchResponse{}, false, w.endErr
	}
	return WatchResponse{}, false, nil
}

// takeQueued takes a synced watcher's oldest queued response into resp,
// the common case of delivery, with nothing else on the way.
func (w *Watcher) takeQueued(resp *WatchResponse) bool {
	st := w.st
	st.mu.Lock()
	if w.lagging || w.ended || w.pending() == 0 {
		st.mu.Unlock()
		return false
	}
	w.takeLocked(resp)
	st.mu.Unlock()
	w.finishResponse(resp)
	return true
}

// Ready is WatchStream.Ready for a watcher made by Store.Watch.
func (w *Watcher) Ready() <-chan struct{} { return w.st.Ready() }
