package etcdgw

import (
	"context"
	"errors"
	"io"
	"math"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// WatchStream is the server side of one etcd watch stream, whatever its
// protocol: the JSON gateway's /v3/watch (watch.go) and the gRPC Watch
// call (server/etcdgrpc) feed it the client's requests and take its
// answers, which they encode. Per stream, as etcd's serverWatchStream:
//
//   - watch IDs are assigned from 0 upward, skipping IDs the client chose
//     (a client-chosen ID that is taken gets created+canceled, watch_id -1,
//     "mvcc: duplicate watch ID provided on the WatchStream");
//   - created comes first, with the store revision when the watch was made;
//   - a watch whose events were compacted gets one response with canceled
//     and compact_revision, whose header has no revision;
//   - a cancel answers canceled for a known ID and nothing otherwise;
//   - a progress request answers one response with watch_id -1 and the
//     revision up to which every watch has delivered its events, if every
//     watch of the stream is synced, and nothing otherwise (etcd 3.5+;
//     etcd 3.4 answered even when a watch was behind, which breaks the
//     guarantee the answer is meant to give: this differs from etcd 3.4);
//   - watches created with progress_notify get a progress response every
//     ProgressInterval unless they received events during the interval.
//
// Beyond etcd, a watch counts against three caps: the stream's
// (Options.MaxWatchersPerStream), the client's (the api.Limiter the
// transport put in the stream's context) and the session's
// (mvcc.Options.MaxWatchers). A create past any of them is answered as
// etcd answers a watch its server refuses: created and canceled, watch_id
// -1, cancel_reason "etcdserver: too many requests".
//
// The stream's watches are one mvcc.Watches, and the stream's Next,
// called by whoever writes to the client, is the consumer that drives their
// delivery: a stream with any number of watches costs no goroutine of its
// own (but one to tick progress_notify watches, while it has any), and a
// client that does not read lets its watches fall behind, to catch up from
// history later, without ever holding writers up.
type WatchStream struct {
	g      *Gateway
	opts   WatchStreamOptions
	ws     mvcc.Watches
	ctx    context.Context // the stream's life
	cancel context.CancelFunc
	client api.Limiter // the client's watchers, across its streams

	mu sync.Mutex
	// queue holds the answers that are not a watch's events (created,
	// canceled, progress answers) and, for as long as it takes to hand them
	// out in order, the event answers Next made.
	queue     []*WatchResult
	wake      chan struct{} // an answer was queued (one reader: Next)
	room      chan struct{} // closed when the queue falls below maxQueuedFrames
	ended     bool          // no more answers will come
	endErr    error         // why, once the queue is empty: io.EOF or the store's end
	watchers  map[int64]*watchEntry
	byWatcher map[mvcc.WatchHandle]*watchEntry
	nextID    int64
	ticking   bool
	ticker    Ticker
}

// WatchStreamOptions are the differences between the etcd versions the
// protocols emulate.
type WatchStreamOptions struct {
	// RefuseNegativeStart answers a create with a negative start_revision
	// as etcd 3.5+ does: created and canceled, watch_id -1, cancel_reason
	// etcd's "required revision has been compacted". Unset, etcd 3.4's
	// answer: the watch is made and, if the start is below the compacted
	// revision, canceled with compact_revision; otherwise it reads all
	// history.
	RefuseNegativeStart bool
	// RequireLeader: the client asked that the stream end when the
	// store's member has no leader (see mvcc.WatchStreamOptions).
	RequireLeader bool
}

// WatchCreate is etcdserverpb.WatchCreateRequest.
type WatchCreate struct {
	mvcc.WatchRequest
	ProgressNotify bool
	WatchID        int64
	// Fragment asks that an answer too large for one message be split;
	// the transport splits (the JSON gateway never does).
	Fragment bool
}

// WatchResult is etcdserverpb.WatchResponse.
type WatchResult struct {
	Header          Header
	WatchID         int64
	Created         bool
	Canceled        bool
	CompactRevision int64
	CancelReason    string
	// Events are shared with the store and other watchers: read them,
	// never modify them.
	Events []*mvcc.Event
}

// maxQueuedFrames bounds the answers a client that sends requests may
// leave unread: past it the stream takes no more requests until the client
// reads (WaitForRoom), as a gRPC stream's flow control would.
const maxQueuedFrames = 256

type watchEntry struct {
	id             int64
	w              mvcc.WatchHandle
	progressNotify bool
	sawEvents      bool // since the last periodic progress tick
	gone           bool
	counted        bool // holds a unit of the client's limiter
	// pending holds, oldest first, the progress notifications requested
	// from w whose in-band answers have not arrived: a *progressRound for a
	// stream-wide progress request, or periodicProgress.
	pending []*progressRound
}

// progressRound is one stream-wide progress request: it is answered once
// every watch has delivered the progress notification it was asked for.
type progressRound struct {
	waiting int
	failed  bool
	rev     int64
}

// periodicProgress marks a pending notification asked for by the periodic
// progress_notify tick; each request gets its own, so it can be told apart.
func periodicProgress() *progressRound { return &progressRound{waiting: -1} }

func (r *progressRound) periodic() bool { return r.waiting < 0 }

// NewWatchStream starts an empty watch stream. ctx is the request's: its
// client's limiter (api.WatchLimiter) counts the stream's watches; the
// stream itself lives until Close.
func (g *Gateway) NewWatchStream(ctx context.Context, opts WatchStreamOptions) *WatchStream {
	sctx, cancel := context.WithCancel(context.Background())
	return &WatchStream{
		g: g, opts: opts, ws: g.store.NewWatchStream(mvcc.WatchStreamOptions{RequireLeader: opts.RequireLeader}), ctx: sctx, cancel: cancel, client: api.WatchLimiter(ctx),
		wake:      make(chan struct{}, 1),
		watchers:  map[int64]*watchEntry{},
		byWatcher: map[mvcc.WatchHandle]*watchEntry{},
	}
}

// ErrStreamEnded is WaitForRoom's answer once the stream has ended.
var ErrStreamEnded = errors.New("etcdgw: the watch stream has ended")

// WaitForRoom waits while maxQueuedFrames answers wait for the client;
// a transport calls it before handing over the client's next request.
func (s *WatchStream) WaitForRoom() error {
	s.mu.Lock()
	for len(s.queue) >= maxQueuedFrames && !s.ended && s.ctx.Err() == nil {
		if s.room == nil {
			s.room = make(chan struct{})
		}
		room := s.room
		s.mu.Unlock()
		select {
		case <-room:
		case <-s.ctx.Done():
		}
		s.mu.Lock()
	}
	ended := s.ended || s.ctx.Err() != nil
	s.mu.Unlock()
	if ended {
		return ErrStreamEnded
	}
	return nil
}

// Create makes a watch and returns its ID, or -1 when it was refused (the
// answer says why).
func (s *WatchStream) Create(c *WatchCreate) int64 {
	rev := s.g.store.Rev()
	s.mu.Lock()
	defer s.mu.Unlock()
	if max := s.g.opts.MaxWatchersPerStream; max > 0 && len(s.watchers) >= max {
		s.refuseLocked(rev, mvcc.ErrTooManyRequests)
		return -1
	}
	wr := c.WatchRequest
	if wr.StartRevision < 0 && s.opts.RefuseNegativeStart {
		s.refuseLocked(rev, mvcc.ErrCompacted)
		return -1
	}
	id := c.WatchID
	if id != 0 {
		if _, taken := s.watchers[id]; taken {
			s.pushLocked(&WatchResult{Header: s.g.Header(rev), WatchID: -1, Created: true, Canceled: true,
				CancelReason: "mvcc: duplicate watch ID provided on the WatchStream"})
			return -1
		}
	} else {
		for s.watchers[s.nextID] != nil {
			s.nextID++
		}
		id = s.nextID
		s.nextID++
	}
	if wr.StartRevision < 0 {
		// etcd 3.4 makes the watcher, finds its start below the compacted
		// revision (-1 when never compacted) and cancels it with
		// compact_revision; a start not below it reads all history.
		if cr := s.g.store.CompactRev(); wr.StartRevision < cr {
			s.pushLocked(&WatchResult{Header: s.g.Header(rev), WatchID: id, Created: true})
			s.pushLocked(&WatchResult{Header: s.g.Header(0), WatchID: id, Canceled: true, CompactRevision: cr})
			return id
		}
		wr.StartRevision = 1
	}
	if wr.StartRevision == 0 {
		// "From now on" is pinned to the revision the created answer
		// reports, so that a client resuming from it misses nothing.
		wr.StartRevision = rev + 1
	}
	var filters []mvcc.WatchFilter
	for _, f := range wr.Filters {
		if f == mvcc.FilterNoPut || f == mvcc.FilterNoDelete {
			filters = append(filters, f) // etcd ignores unknown filter numbers
		}
	}
	wr.Filters = filters
	if !s.client.Acquire() {
		s.refuseLocked(rev, mvcc.ErrTooManyRequests)
		return -1
	}
	// The watcher is made under the lock, so that its created answer is
	// queued before Next can make an answer of its events.
	w, err := s.ws.Watch(context.Background(), &wr)
	if err != nil {
		s.client.Release()
		s.refuseLocked(rev, err)
		return -1
	}
	e := &watchEntry{id: id, w: w, progressNotify: c.ProgressNotify, counted: true}
	s.watchers[id] = e
	s.byWatcher[w] = e
	s.pushLocked(&WatchResult{Header: s.g.Header(rev), WatchID: id, Created: true})
	if e.progressNotify && !s.ticking {
		s.ticking = true
		s.ticker = s.g.opts.Clock.NewTicker(s.g.opts.ProgressInterval)
		go s.tick(s.ticker)
	}
	return id
}

// refuseLocked answers a create that made no watch, as etcd does: created
// and canceled, watch_id -1, the reason.
func (s *WatchStream) refuseLocked(rev int64, err error) {
	s.pushLocked(&WatchResult{Header: s.g.Header(rev), WatchID: -1, Created: true, Canceled: true, CancelReason: err.Error()})
}

// Cancel ends watch id: it answers canceled, or nothing for an unknown id
// (etcd: "mvcc: watcher does not exist", which it does not send).
func (s *WatchStream) Cancel(id int64) {
	s.mu.Lock()
	e := s.watchers[id]
	if e == nil {
		s.mu.Unlock()
		return
	}
	s.dropLocked(e)
	s.pushLocked(&WatchResult{Header: s.g.Header(s.g.store.Rev()), WatchID: id, Canceled: true})
	s.mu.Unlock()
	e.w.Cancel()
}

// dropLocked forgets a watch: nothing more is sent for it, and the stream
// progress rounds waiting for it will not be answered.
func (s *WatchStream) dropLocked(e *watchEntry) {
	e.gone = true
	s.uncountLocked(e)
	if s.watchers[e.id] == e {
		delete(s.watchers, e.id)
	}
	delete(s.byWatcher, e.w)
	for _, r := range e.pending {
		if !r.periodic() {
			r.failed = true
			r.waiting--
		}
	}
	e.pending = nil
}

// uncountLocked gives back the client's unit e holds.
func (s *WatchStream) uncountLocked(e *watchEntry) {
	if e.counted {
		e.counted = false
		s.client.Release()
	}
}

// RequestProgress answers a progress request.
func (s *WatchStream) RequestProgress() {
	s.mu.Lock()
	entries := make([]*watchEntry, 0, len(s.watchers))
	for _, e := range s.watchers {
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		s.pushLocked(&WatchResult{Header: s.g.Header(s.g.store.Rev()), WatchID: -1})
		s.mu.Unlock()
		return
	}
	round := &progressRound{waiting: len(entries), rev: math.MaxInt64}
	for _, e := range entries {
		e.pending = append(e.pending, round)
	}
	s.mu.Unlock()
	for _, e := range entries {
		if !e.w.RequestProgress() {
			s.mu.Lock()
			if e.removePending(round) {
				round.failed = true
				round.waiting--
			}
			s.mu.Unlock()
		}
	}
}

func (e *watchEntry) removePending(r *progressRound) bool {
	for i, p := range e.pending {
		if p == r {
			e.pending = append(e.pending[:i], e.pending[i+1:]...)
			return true
		}
	}
	return false
}

// tick asks, every interval, a progress notification of each
// progress_notify watch that got no events since the previous tick.
func (s *WatchStream) tick(t Ticker) {
	defer t.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-t.C():
		}
		type ask struct {
			e *watchEntry
			p *progressRound
		}
		var asks []ask
		s.mu.Lock()
		for _, e := range s.watchers {
			if !e.progressNotify {
				continue
			}
			if !e.sawEvents {
				p := periodicProgress()
				e.pending = append(e.pending, p)
				asks = append(asks, ask{e, p})
			}
			e.sawEvents = false
		}
		s.mu.Unlock()
		for _, a := range asks {
			if !a.e.w.RequestProgress() {
				s.mu.Lock()
				a.e.removePending(a.p)
				s.mu.Unlock()
			}
		}
	}
}

// deliverLocked turns a response of the stream's mvcc watchers into an
// answer, or reports the end of one (the caller holds mu).
func (s *WatchStream) deliverLocked(w mvcc.WatchHandle, resp *mvcc.WatchResponse, err error) {
	e := s.byWatcher[w]
	if e == nil || e.gone {
		return // cancelled by the client: nothing more is sent for it
	}
	switch {
	case err != nil:
		// The store stopped under a live watch (or failed): the stream
		// ends, in each protocol's words for a server going away.
		s.dropLocked(e)
		s.endLocked(err)
	case resp.CompactRevision != 0:
		s.dropLocked(e)
		s.pushLocked(&WatchResult{Header: s.g.Header(0), WatchID: e.id, Canceled: true,
			CompactRevision: resp.CompactRevision})
	case resp.ProgressNotify && len(resp.Events) == 0:
		var p *progressRound
		if len(e.pending) > 0 {
			p = e.pending[0]
			e.pending = e.pending[1:]
		}
		if p == nil || p.periodic() {
			s.pushLocked(&WatchResult{Header: s.g.Header(resp.Header.Revision), WatchID: e.id})
			return
		}
		p.waiting--
		p.rev = min(p.rev, resp.Header.Revision)
		if p.waiting == 0 && !p.failed {
			s.pushLocked(&WatchResult{Header: s.g.Header(p.rev), WatchID: -1})
		}
	case len(resp.Events) > 0:
		e.sawEvents = true
		s.pushLocked(&WatchResult{Header: s.g.Header(resp.Header.Revision), WatchID: e.id, Events: resp.Events})
	}
}

// endLocked ends the stream with err once its queued answers are taken
// (the caller holds mu). The first reason stays.
func (s *WatchStream) endLocked(err error) {
	if !s.ended {
		s.ended, s.endErr = true, err
		s.signalLocked()
	}
}

func (s *WatchStream) pushLocked(r *WatchResult) {
	s.queue = append(s.queue, r)
	s.signalLocked()
}

func (s *WatchStream) signalLocked() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Next returns the next answer. Answers queued first (a watch's created
// answer among them) come first; then it takes the next response of the
// stream's watches, in turn, and makes its answer. At the end it returns
// io.EOF once the stream was closed, the store's error (mvcc.ErrStopped)
// when the store stopped under it, or ctx's error.
func (s *WatchStream) Next(ctx context.Context) (*WatchResult, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			r := s.queue[0]
			s.queue[0] = nil
			s.queue = s.queue[1:]
			if len(s.queue) == 0 {
				s.queue = nil // let a burst's array go
			}
			if s.room != nil && len(s.queue) < maxQueuedFrames {
				close(s.room)
				s.room = nil
			}
			s.mu.Unlock()
			return r, nil
		}
		if s.ended {
			err := s.endErr
			s.mu.Unlock()
			return nil, err
		}
		if s.ctx.Err() != nil {
			s.mu.Unlock()
			return nil, io.EOF
		}
		s.mu.Unlock()
		w, resp, ok, err := s.ws.TryNext(ctx)
		if ok {
			s.mu.Lock()
			s.deliverLocked(w, &resp, err)
			s.mu.Unlock()
			continue
		}
		if err != nil {
			return nil, err
		}
		select {
		case <-s.wake:
		case <-s.ws.Ready():
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-s.ctx.Done():
		}
	}
}

// Close cancels every watch of the stream.
func (s *WatchStream) Close() {
	s.cancel()
	s.mu.Lock()
	for _, e := range s.watchers {
		e.gone = true
		s.uncountLocked(e)
	}
	s.watchers = map[int64]*watchEntry{}
	s.byWatcher = map[mvcc.WatchHandle]*watchEntry{}
	s.mu.Unlock()
	s.ws.Close()
}
