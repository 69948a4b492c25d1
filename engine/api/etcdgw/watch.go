package etcdgw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// /v3/watch is a bidirectional gRPC stream behind the gateway: the request
// body is a sequence of JSON WatchRequests, the response a sequence of
// {"result":WatchResponse} lines. With chunked HTTP the requests are all in
// the body; over a WebSocket (etcd wraps its gateway in a websocket proxy)
// each client message is one more request, which the transport hands to
// Receive.
//
// As in etcd's gateway, only the first request is decoded before answering:
// if it is malformed the answer is an HTTP 500 error with gRPC code Unknown;
// a malformed later request silently ends the reading of requests, and the
// watches already created go on.
//
// Per stream, as etcd's serverWatchStream:
//   - watch IDs are assigned from 0 upward, skipping IDs the client chose
//     (a client-chosen ID that is taken gets created+canceled, watch_id -1,
//     "mvcc: duplicate watch ID provided on the WatchStream");
//   - created comes first, with the store revision when the watch was made;
//   - a watch whose events were compacted gets one response with canceled
//     and compact_revision, whose header has no revision;
//   - cancel_request answers canceled for a known ID and nothing otherwise;
//   - progress_request answers one response with watch_id -1 and the
//     revision up to which every watch has delivered its events, if every
//     watch of the stream is synced, and nothing otherwise (etcd 3.5+;
//     etcd 3.4 answered even when a watch was behind, which breaks the
//     guarantee the answer is meant to give: this differs from etcd 3.4);
//   - watches created with progress_notify get a progress response every
//     ProgressInterval unless they received events during the interval.
//
// Beyond etcd, a watch counts against three caps: the stream's
// (Options.MaxWatchersPerStream), the client's (the api.Limiter the
// transport put in the request's context) and the session's
// (mvcc.Options.MaxWatchers). A create_request past any of them is
// answered as etcd answers a watch its server refuses: created and
// canceled, watch_id -1, cancel_reason "etcdserver: too many requests".
//
// fragment is accepted and ignored: responses are never split (etcd only
// splits a response above 2 MiB, for clients that ask).
//
// The stream's watches are one mvcc.WatchStream, and the stream's Next,
// called by the transport that writes to the client, is the consumer that
// drives their delivery: a stream with any number of watches costs no
// goroutine of its own (but one to tick progress_notify watches, while it
// has any), events are turned into frames only as the client takes them,
// and a client that does not read lets its watches fall behind, to catch
// up from history later, without ever holding writers up.

// streamClosingError is grpc-gateway v1's stream error line for a gRPC
// stream broken by the server shutting down, as etcd 3.4 sends it.
const streamClosingError = `{"error":{"grpc_code":14,"http_code":503,"message":"transport is closing","http_status":"Service Unavailable"}}` + "\n"

// maxQueuedFrames bounds the frames a client that sends requests over a
// WebSocket may leave unread: past it the stream stops taking requests
// until the client reads, as a gRPC stream's flow control would. (The
// requests of a chunked body are all taken at once; the body's size bounds
// them.)
const maxQueuedFrames = 256

type watchStream struct {
	g      *Gateway
	ws     *mvcc.WatchStream
	ctx    context.Context // the stream's life
	cancel context.CancelFunc
	client api.Limiter // the client's watchers, across its streams

	mu sync.Mutex
	// queue holds the frames that are not a watch's events (created,
	// canceled, progress answers, errors) and, for as long as it takes to
	// hand them out in order, the event frames Next made.
	queue     [][]byte
	wake      chan struct{} // a frame was queued (one reader: Next)
	room      chan struct{} // closed when the queue falls below maxQueuedFrames
	ended     bool          // no more frames will come (the store stopped)
	watchers  map[int64]*watchEntry
	byWatcher map[*mvcc.Watcher]*watchEntry
	nextID    int64
	noInput   bool // a malformed request ended the reading of requests
	started   bool // a request was read (so a malformed one is not the first)
	ticking   bool
	ticker    Ticker
}

type watchEntry struct {
	id             int64
	w              *mvcc.Watcher
	progressNotify bool
	sawEvents      bool // since the last periodic progress tick
	gone           bool
	counted        bool // holds a unit of the client's limiter
	// pending holds, oldest first, the progress notifications requested
	// from w whose in-band answers have not arrived: a *progressRound for a
	// stream-wide progress_request, or periodicProgress.
	pending []*progressRound
}

// progressRound is one stream-wide progress_request: it is answered once
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

func (g *Gateway) serveWatch(rctx context.Context, body []byte) *api.Response {
	dec := json.NewDecoder(bytes.NewReader(body))
	var first json.RawMessage
	var req watchRequest
	haveFirst := false
	if err := dec.Decode(&first); err == nil {
		if err := decodeWatchRequest(first, &req); err != nil {
			return codeError(mvcc.CodeUnknown, err.Error())
		}
		haveFirst = true
	} else if err != io.EOF {
		return codeError(mvcc.CodeUnknown, err.Error())
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &watchStream{
		g: g, ws: g.store.NewWatchStream(), ctx: ctx, cancel: cancel, client: api.WatchLimiter(rctx),
		wake:      make(chan struct{}, 1),
		watchers:  map[int64]*watchEntry{},
		byWatcher: map[*mvcc.Watcher]*watchEntry{},
	}
	if haveFirst {
		s.started = true
		s.handle(&req)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if err != io.EOF {
					s.noInput = true
				}
				break
			}
			if s.receive(raw) != nil {
				break
			}
		}
	}
	h := jsonHeader()
	return &api.Response{Status: 200, Header: h, Stream: s}
}

// Receive takes one more WatchRequest from the client (a WebSocket message).
// After a malformed request it refuses every further one, as etcd's gateway
// stops reading the stream. When the very first request is malformed, the
// stream answers etcd's error (gRPC code Unknown) as its only frame and
// ends, as etcd's websocket proxy relays the gateway's HTTP 500 body and
// hangs up.
func (s *watchStream) Receive(msg []byte) error {
	dec := json.NewDecoder(bytes.NewReader(msg))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return nil
			}
			s.refuse(err)
			return err
		}
		if err := s.waitForRoom(); err != nil {
			return err
		}
		if err := s.receive(raw); err != nil {
			return err
		}
	}
}

var errStreamEnded = errors.New("etcdgw: the watch stream has ended")

// waitForRoom waits while maxQueuedFrames frames wait for the client.
func (s *watchStream) waitForRoom() error {
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
		return errStreamEnded
	}
	return nil
}

var errNoInput = errors.New("etcdgw: the watch stream no longer reads requests")

func (s *watchStream) receive(raw []byte) error {
	s.mu.Lock()
	closed := s.noInput
	s.mu.Unlock()
	if closed {
		return errNoInput
	}
	var req watchRequest
	if err := decodeWatchRequest(raw, &req); err != nil {
		s.refuse(err)
		return err
	}
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	s.handle(&req)
	return nil
}

// refuse stops the reading of requests after a malformed one.
func (s *watchStream) refuse(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noInput {
		return
	}
	s.noInput = true
	if !s.started {
		s.queue = append(s.queue, append(appendError(nil, mvcc.CodeUnknown, err.Error()), '\n'))
		s.ended = true
		s.signalLocked()
		for _, e := range s.watchers {
			e.gone = true
		}
	}
}

func (s *watchStream) handle(req *watchRequest) {
	switch {
	case req.create != nil:
		s.create(req.create)
	case req.cancel != nil:
		s.cancelWatch(*req.cancel)
	case req.progress:
		s.progressAll()
	}
}

func (s *watchStream) header(rev int64) header { return s.g.header(rev) }

func (s *watchStream) create(c *watchCreate) {
	rev := s.g.store.Rev()
	s.mu.Lock()
	if max := s.g.opts.MaxWatchersPerStream; max > 0 && len(s.watchers) >= max {
		s.refuseLocked(rev, mvcc.ErrTooManyRequests)
		s.mu.Unlock()
		return
	}
	id := c.WatchID
	if id != 0 {
		if _, taken := s.watchers[id]; taken {
			s.pushLocked(&watchResult{header: s.header(rev), watchID: -1, created: true, canceled: true,
				cancelReason: "mvcc: duplicate watch ID provided on the WatchStream"})
			s.mu.Unlock()
			return
		}
	} else {
		for s.watchers[s.nextID] != nil {
			s.nextID++
		}
		id = s.nextID
		s.nextID++
	}
	wr := c.WatchRequest
	if wr.StartRevision < 0 {
		// etcd 3.4 makes the watcher, finds its start below the compacted
		// revision (-1 when never compacted) and cancels it with
		// compact_revision; a start not below it reads all history.
		if cr := s.g.store.CompactRev(); wr.StartRevision < cr {
			s.pushLocked(&watchResult{header: s.header(rev), watchID: id, created: true})
			s.pushLocked(&watchResult{header: s.header(0), watchID: id, canceled: true, compactRevision: cr})
			s.mu.Unlock()
			return
		}
		wr.StartRevision = 1
	}
	if wr.StartRevision == 0 {
		// "From now on" is pinned to the revision the created response
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
	defer s.mu.Unlock()
	if !s.client.Acquire() {
		s.refuseLocked(rev, mvcc.ErrTooManyRequests)
		return
	}
	// The watcher is made under the lock, so that its created frame is
	// queued before Next can make a frame of its events.
	w, err := s.ws.Watch(context.Background(), &wr)
	if err != nil {
		s.client.Release()
		s.refuseLocked(rev, err)
		return
	}
	e := &watchEntry{id: id, w: w, progressNotify: c.ProgressNotify, counted: true}
	s.watchers[id] = e
	s.byWatcher[w] = e
	s.pushLocked(&watchResult{header: s.header(rev), watchID: id, created: true})
	if e.progressNotify && !s.ticking {
		s.ticking = true
		s.ticker = s.g.opts.Clock.NewTicker(s.g.opts.ProgressInterval)
		go s.tick(s.ticker)
	}
}

// refuseLocked answers a create_request that made no watch, as etcd does:
// created and canceled, watch_id -1, the reason.
func (s *watchStream) refuseLocked(rev int64, err error) {
	s.pushLocked(&watchResult{header: s.header(rev), watchID: -1, created: true, canceled: true, cancelReason: err.Error()})
}

func (s *watchStream) cancelWatch(id int64) {
	s.mu.Lock()
	e := s.watchers[id]
	if e == nil {
		s.mu.Unlock()
		return // etcd: "mvcc: watcher does not exist", nothing is sent
	}
	s.dropLocked(e)
	s.pushLocked(&watchResult{header: s.header(s.g.store.Rev()), watchID: id, canceled: true})
	s.mu.Unlock()
	e.w.Cancel()
}

// dropLocked forgets a watch: nothing more is sent for it, and the stream
// progress rounds waiting for it will not be answered.
func (s *watchStream) dropLocked(e *watchEntry) {
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
func (s *watchStream) uncountLocked(e *watchEntry) {
	if e.counted {
		e.counted = false
		s.client.Release()
	}
}

// progressAll answers a progress_request.
func (s *watchStream) progressAll() {
	s.mu.Lock()
	entries := make([]*watchEntry, 0, len(s.watchers))
	for _, e := range s.watchers {
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		s.pushLocked(&watchResult{header: s.header(s.g.store.Rev()), watchID: -1})
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
func (s *watchStream) tick(t Ticker) {
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

// deliver turns a response of the stream's mvcc watchers into a frame, or
// reports the end of one (the caller holds mu).
func (s *watchStream) deliverLocked(w *mvcc.Watcher, resp *mvcc.WatchResponse, err error) {
	e := s.byWatcher[w]
	if e == nil || e.gone {
		return // cancelled by the client: nothing more is sent for it
	}
	switch {
	case err != nil:
		// The store stopped under a live watch (or failed): the stream ends
		// with the error line etcd's gateway sends when its server goes away.
		s.dropLocked(e)
		if !s.ended && s.ctx.Err() == nil {
			s.queue = append(s.queue, []byte(streamClosingError))
			s.ended = true
		}
	case resp.CompactRevision != 0:
		s.dropLocked(e)
		s.pushLocked(&watchResult{header: s.header(0), watchID: e.id, canceled: true,
			compactRevision: resp.CompactRevision})
	case resp.ProgressNotify && len(resp.Events) == 0:
		var p *progressRound
		if len(e.pending) > 0 {
			p = e.pending[0]
			e.pending = e.pending[1:]
		}
		if p == nil || p.periodic() {
			s.pushLocked(&watchResult{header: s.header(resp.Header.Revision), watchID: e.id})
			return
		}
		p.waiting--
		p.rev = min(p.rev, resp.Header.Revision)
		if p.waiting == 0 && !p.failed {
			s.pushLocked(&watchResult{header: s.header(p.rev), watchID: -1})
		}
	case len(resp.Events) > 0:
		e.sawEvents = true
		s.pushLocked(&watchResult{header: s.header(resp.Header.Revision), watchID: e.id, events: resp.Events})
	}
}

func (s *watchStream) pushLocked(r *watchResult) {
	s.queue = append(s.queue, appendWatchFrame(nil, r))
	s.signalLocked()
}

func (s *watchStream) signalLocked() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Next returns the next frame: one {"result":...} line. Frames queued
// first (a watch's created frame among them) come first; then it takes
// the next response of the stream's watches, in turn, and makes its frame.
func (s *watchStream) Next(ctx context.Context) ([]byte, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			f := s.queue[0]
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
			return f, nil
		}
		if s.ended || s.ctx.Err() != nil {
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
func (s *watchStream) Close() {
	s.cancel()
	s.mu.Lock()
	for _, e := range s.watchers {
		e.gone = true
		s.uncountLocked(e)
	}
	s.watchers = map[int64]*watchEntry{}
	s.byWatcher = map[*mvcc.Watcher]*watchEntry{}
	s.mu.Unlock()
	s.ws.Close()
}
