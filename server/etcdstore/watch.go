package etcdstore

import (
	"bytes"
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/metadata"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// streamIDs names each watch stream, so that each has a gRPC watch stream
// of its own: etcd's client shares one between the watches whose contexts
// carry the same metadata, and a progress request concerns a whole gRPC
// stream.
var streamIDs atomic.Uint64

// NewWatchStream: see mvcc.Watchable. Its watchers are the cluster's
// watches, on a gRPC watch stream of its own; etcd's client moves it to
// another member, from the revision after the last it delivered, when its
// member goes. With opts.RequireLeader (kube's watches, an etcd client's
// stream that asked) the gRPC stream asks the cluster for a leader too: a
// member without one ends its watchers ("etcdserver: no leader", their
// end). Without it the stream waits across the leaderless window, as the
// cluster keeps a stream that did not ask open.
func (s *Store) NewWatchStream(opts mvcc.WatchStreamOptions) mvcc.Watches {
	ctx := metadata.AppendToOutgoingContext(s.ctx, "rvplay-watch-stream", strconv.FormatUint(streamIDs.Add(1), 10))
	if opts.RequireLeader {
		ctx = clientv3.WithRequireLeader(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	return &watchStream{s: s, ctx: ctx, cancel: cancel, signal: make(chan struct{}, 1), watchers: map[*watcher]struct{}{}}
}

// watchStream queues its watchers' responses, in the order they came, for
// its one consumer.
type watchStream struct {
	s      *Store
	ctx    context.Context
	cancel context.CancelFunc
	signal chan struct{}

	mu       sync.Mutex
	queue    []delivery
	watchers map[*watcher]struct{}
	closed   bool
}

// delivery is one response of a watcher, or (end set) the report of its
// end.
type delivery struct {
	w    *watcher
	resp mvcc.WatchResponse
	end  bool
	err  error
}

// watcher is one watch of the cluster.
type watcher struct {
	st       *watchStream
	cancel   context.CancelFunc
	canceled atomic.Bool
}

// Watch: see mvcc.Watches.
func (st *watchStream) Watch(ctx context.Context, r *mvcc.WatchRequest) (mvcc.WatchHandle, error) {
	key := r.Key
	if len(key) == 0 {
		key = []byte{0}
	}
	if end := r.RangeEnd; len(end) > 0 && !(len(end) == 1 && end[0] == 0) && bytes.Compare(key, end) >= 0 {
		return nil, &mvcc.Error{Code: mvcc.CodeInvalidArgument, Message: mvcc.ReasonEmptyWatchRange}
	}
	if r.StartRevision < 0 {
		return nil, mvcc.ErrCompacted
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.s.ctx.Err() != nil {
		return nil, mvcc.ErrStopped
	}
	wctx, cancel := context.WithCancel(st.ctx)
	w := &watcher{st: st, cancel: cancel}
	stopAfter := context.AfterFunc(ctx, w.Cancel)
	opts := []clientv3.OpOption{clientv3.WithRev(r.StartRevision)}
	if end := st.s.rangeEnd(r.RangeEnd); end != nil {
		opts = append(opts, clientv3.WithRange(string(end)))
	}
	if r.PrevKv {
		opts = append(opts, clientv3.WithPrevKV())
	}
	for _, f := range r.Filters {
		switch f {
		case mvcc.FilterNoPut:
			opts = append(opts, clientv3.WithFilterPut())
		case mvcc.FilterNoDelete:
			opts = append(opts, clientv3.WithFilterDelete())
		}
	}
	ch := st.s.cli.Watch(wctx, string(st.s.key(key)), opts...)
	st.watchers[w] = struct{}{}
	go func() {
		defer stopAfter()
		w.pump(ch)
	}()
	return w, nil
}

// pump moves the cluster's responses into the stream until the watch
// ends, then reports its end: ErrStopped when the store closed,
// ErrWatcherCanceled when it was canceled, else the cluster's reason. A
// compacted watcher's end is its response with CompactRevision set.
func (w *watcher) pump(ch clientv3.WatchChan) {
	st := w.st
	var endErr error
	var last int64 // the revision of the last event delivered
	for wr := range ch {
		if wr.CompactRevision != 0 {
			st.s.sawCompaction(wr.CompactRevision)
			w.cancel()
			st.push(delivery{w: w, resp: mvcc.WatchResponse{Header: header(&wr.Header), CompactRevision: wr.CompactRevision}, end: true})
			return
		}
		if wr.Canceled {
			endErr = wr.Err()
			break
		}
		if wr.Header.Revision != 0 {
			st.s.saw(wr.Header.Revision)
		}
		switch {
		case len(wr.Events) > 0:
			evs := make([]*mvcc.Event, len(wr.Events))
			for i, e := range wr.Events {
				evs[i] = &mvcc.Event{Type: mvcc.EventType(e.Type), Kv: st.s.keyValue(e.Kv), PrevKv: st.s.keyValue(e.PrevKv)}
			}
			last = wr.Events[len(wr.Events)-1].Kv.ModRevision
			st.push(delivery{w: w, resp: mvcc.WatchResponse{Header: header(&wr.Header), Events: evs}})
		case wr.IsProgressNotify():
			// etcd before 3.4.24 and 3.5.8 may send a requested progress
			// notification behind events sent after it (etcd-io/etcd#15220):
			// everything up to the last event was delivered, which is what
			// it then says.
			h := header(&wr.Header)
			h.Revision = max(h.Revision, last)
			st.push(delivery{w: w, resp: mvcc.WatchResponse{Header: h, ProgressNotify: true}})
		}
	}
	w.cancel()
	switch {
	case st.s.ctx.Err() != nil:
		endErr = mvcc.ErrStopped
	case w.canceled.Load() || endErr == nil:
		endErr = mvcc.ErrWatcherCanceled
	default:
		endErr = fromEtcd(context.Background(), endErr)
	}
	st.push(delivery{w: w, end: true, err: endErr})
}

// push queues d and wakes the consumer.
func (st *watchStream) push(d delivery) {
	st.mu.Lock()
	st.queue = append(st.queue, d)
	if d.end {
		delete(st.watchers, d.w)
	}
	st.mu.Unlock()
	select {
	case st.signal <- struct{}{}:
	default:
	}
}

// TryNext: see mvcc.Watches.
func (st *watchStream) TryNext(ctx context.Context) (mvcc.WatchHandle, mvcc.WatchResponse, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, mvcc.WatchResponse{}, false, err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.queue) == 0 {
		return nil, mvcc.WatchResponse{}, false, nil
	}
	d := st.queue[0]
	st.queue[0] = delivery{}
	st.queue = st.queue[1:]
	if len(st.queue) > 0 {
		select {
		case st.signal <- struct{}{}:
		default:
		}
	}
	return d.w, d.resp, true, d.err
}

// Next: see mvcc.Watches.
func (st *watchStream) Next(ctx context.Context) (mvcc.WatchHandle, mvcc.WatchResponse, error) {
	for {
		w, resp, ok, err := st.TryNext(ctx)
		if ok || err != nil {
			return w, resp, err
		}
		select {
		case <-st.signal:
		case <-ctx.Done():
			return nil, mvcc.WatchResponse{}, ctx.Err()
		}
	}
}

// Ready: see mvcc.Watches.
func (st *watchStream) Ready() <-chan struct{} {
	st.mu.Lock()
	if len(st.queue) > 0 {
		select {
		case st.signal <- struct{}{}:
		default:
		}
	}
	st.mu.Unlock()
	return st.signal
}

// Close: see mvcc.Watches.
func (st *watchStream) Close() {
	st.mu.Lock()
	st.closed = true
	ws := make([]*watcher, 0, len(st.watchers))
	for w := range st.watchers {
		ws = append(ws, w)
	}
	st.mu.Unlock()
	for _, w := range ws {
		w.Cancel()
	}
	st.cancel()
}

// Cancel: see mvcc.WatchHandle.
func (w *watcher) Cancel() {
	w.canceled.Store(true)
	w.cancel()
}

// RequestProgress asks the cluster for a progress notification on the
// watcher's gRPC stream (etcd answers for the whole stream, once every
// watch of it has caught up, behind the events it sent before).
func (w *watcher) RequestProgress() bool {
	if w.canceled.Load() {
		return false
	}
	ctx, cancel := context.WithTimeout(w.st.ctx, w.st.s.opts.RequestTimeout)
	defer cancel()
	return w.st.s.cli.RequestProgress(ctx) == nil
}
