// Package mvcctest is the conformance suite of the store's contract
// (mvcc.KV): etcd's rules for revisions, ranges, transactions, compaction
// and watches, written once and run against every Backend of mvcc.Store
// (memory here, SQLite in engine/sqlite) and against any other mvcc.KV (a
// prefix of a real etcd cluster, server/etcdstore), so that all are held
// to the same behaviour. The cases of a Store's own bounds (watcher caps,
// catch-up pages, quotas) run on a Store only.
package mvcctest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Factory prepares fresh storage for one test and returns its opener. Each
// call of the opener returns a Backend over the same storage; the suite
// closes the previous Store before calling it again (a restart).
type Factory func(t *testing.T) (open func() mvcc.Backend)

// Run runs the whole suite on a Store over the factory's backends. The
// cases run side by side (t.Parallel; each has storage of its own from
// the factory), so that one's waits on its storage (an fsync, a real
// etcd) overlap another's.
func Run(t *testing.T, f Factory) {
	for _, tc := range append(append([]testCase(nil), cases...), storeCases...) {
		t.Run(tc.name, func(t *testing.T) {
			if !alone[tc.name] {
				t.Parallel()
			}
			h := &harness{t: t, open: f(t)}
			h.restart()
			defer func() { h.kv.Close() }()
			tc.fn(h)
		})
	}
}

// alone names the cases that read something of the whole process (how
// many goroutines it runs): each runs while no other case does.
var alone = map[string]bool{"WatchersCostNoGoroutineOfTheirOwn": true}

// KVFactory prepares a fresh store for one test, at revision 1, and
// returns its opener: each call returns an open KV over the same data; the
// suite closes the previous one before calling it again (a restart).
type KVFactory func(t *testing.T) (open func() mvcc.KV)

// RunKV runs the cases of the contract (not those of a Store's own
// bounds) on the KVs of f, but those skip names, each with the reason the
// KV cannot keep it (a known bug of the real thing under it). The cases
// run side by side, as in Run.
func RunKV(t *testing.T, f KVFactory, skip map[string]string) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if why, ok := skip[tc.name]; ok {
				t.Skip(why)
			}
			if !alone[tc.name] {
				t.Parallel()
			}
			h := &harness{t: t, openKV: f(t)}
			h.restart()
			defer func() { h.kv.Close() }()
			tc.fn(h)
		})
	}
}

// storeCases are the cases of a Store's own bounds and options, which Run
// adds to cases.
var storeCases []testCase

type harness struct {
	t      *testing.T
	open   func() mvcc.Backend
	openKV func() mvcc.KV
	// kv is the store under test; s is the same store when it is a
	// Store (Run), nil otherwise (RunKV).
	kv mvcc.KV
	s  *mvcc.Store
	b  mvcc.Backend // the store's
	// bounds are the quotas and member ID every restart opens the store
	// with (the cases of quota.go set them).
	bounds mvcc.Options
}

// options are the suite's store options: small compaction steps and
// small catch-up pages, so that every watch case also pages through
// history.
func options() mvcc.Options {
	return mvcc.Options{CompactionBatch: 3, CatchUpPage: mvcc.PageLimit{Records: 5, Bytes: 64}}
}

func (h *harness) restart() {
	h.t.Helper()
	if h.openKV != nil {
		if h.kv != nil {
			if err := h.kv.Close(); err != nil {
				h.t.Fatalf("close: %v", err)
			}
		}
		h.kv = h.openKV()
		return
	}
	opts := options()
	opts.QuotaBackendBytes, opts.MaxKeys, opts.Memory, opts.MemberID =
		h.bounds.QuotaBackendBytes, h.bounds.MaxKeys, h.bounds.Memory, h.bounds.MemberID
	h.reopen(nil, opts)
}

// reopen restarts the store with opts over its backend, wrapped by wrap
// when it is not nil.
func (h *harness) reopen(wrap func(mvcc.Backend) mvcc.Backend, opts mvcc.Options) {
	h.t.Helper()
	if h.s != nil {
		if err := h.s.Close(); err != nil {
			h.t.Fatalf("close: %v", err)
		}
	}
	h.b = h.open()
	if wrap != nil {
		h.b = wrap(h.b)
	}
	s, err := mvcc.Open(h.b, opts)
	if err != nil {
		h.t.Fatalf("open: %v", err)
	}
	h.s, h.kv = s, s
}

var ctx = context.Background()

func (h *harness) put(key, value string) int64 {
	h.t.Helper()
	resp, err := h.kv.Put(ctx, &mvcc.PutRequest{Key: []byte(key), Value: []byte(value)})
	if err != nil {
		h.t.Fatalf("put %q: %v", key, err)
	}
	return resp.Header.Revision
}

func (h *harness) del(key, end string) *mvcc.DeleteRangeResponse {
	h.t.Helper()
	req := &mvcc.DeleteRangeRequest{Key: []byte(key)}
	if end != "" {
		req.RangeEnd = []byte(end)
	}
	resp, err := h.kv.DeleteRange(ctx, req)
	if err != nil {
		h.t.Fatalf("delete %q: %v", key, err)
	}
	return resp
}

func (h *harness) rng(req *mvcc.RangeRequest) *mvcc.RangeResponse {
	h.t.Helper()
	resp, err := h.kv.Range(ctx, req)
	if err != nil {
		h.t.Fatalf("range %q: %v", req.Key, err)
	}
	return resp
}

func (h *harness) get(key string, rev int64) *mvcc.KeyValue {
	h.t.Helper()
	resp := h.rng(&mvcc.RangeRequest{Key: []byte(key), Revision: rev})
	if len(resp.Kvs) == 0 {
		return nil
	}
	return resp.Kvs[0]
}

// kv renders a KeyValue compactly for comparisons: key=value@c/m/v.
func kv(k *mvcc.KeyValue) string {
	if k == nil {
		return "<none>"
	}
	return fmt.Sprintf("%s=%s@%d/%d/%d", k.Key, k.Value, k.CreateRevision, k.ModRevision, k.Version)
}

func kvs(list []*mvcc.KeyValue) []string {
	out := []string{}
	for _, k := range list {
		out = append(out, kv(k))
	}
	return out
}

func (h *harness) equal(what string, got, want any) {
	h.t.Helper()
	if !reflect.DeepEqual(got, want) {
		h.t.Fatalf("%s:\n got  %v\n want %v", what, got, want)
	}
}

func (h *harness) wantErr(what string, err, want error) {
	h.t.Helper()
	if err != want {
		h.t.Fatalf("%s: got error %v, want %v", what, err, want)
	}
}

// watcher is a watcher of the store under test: a *mvcc.Watcher on a
// Store, one alone in a watch stream on any other KV.
type watcher interface {
	mvcc.WatchHandle
	Next(ctx context.Context) (mvcc.WatchResponse, error)
}

// watch starts a watcher: Store.Watch on a Store, else one watcher alone
// in a stream of its own.
func (h *harness) watch(c context.Context, r *mvcc.WatchRequest) (watcher, error) {
	if h.s != nil {
		w, err := h.s.Watch(c, r)
		if err != nil {
			return nil, err
		}
		return w, nil
	}
	st := h.kv.NewWatchStream(mvcc.WatchStreamOptions{})
	w, err := st.Watch(c, r)
	if err != nil {
		st.Close()
		return nil, err
	}
	return &soloWatcher{WatchHandle: w, st: st}, nil
}

// soloWatcher is a watcher alone in its stream, whose Next, as a
// *mvcc.Watcher's, keeps answering the reason of its end once it has
// ended (ErrCompacted after the response with CompactRevision set).
type soloWatcher struct {
	mvcc.WatchHandle
	st  mvcc.Watches
	end error
}

func (w *soloWatcher) Next(c context.Context) (mvcc.WatchResponse, error) {
	if w.end != nil {
		return mvcc.WatchResponse{}, w.end
	}
	_, resp, err := w.st.Next(c)
	switch {
	case err != nil && c.Err() == nil:
		w.end = err
	case resp.CompactRevision != 0:
		w.end = mvcc.ErrCompacted
	}
	return resp, err
}

func (w *soloWatcher) Cancel() { w.st.Close() }

// next reads one watch response, failing if none arrives in a generous
// bound (the bound only turns a hang into a failure; it is not a sleep).
func next(t *testing.T, w watcher) mvcc.WatchResponse {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := w.Next(c)
	if err != nil {
		t.Fatalf("no watch response: %v", err)
	}
	return resp
}

// ended checks that w has ended, with the given reason.
func ended(t *testing.T, w watcher, want error) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if resp, err := w.Next(c); err != want {
		t.Fatalf("after the end: %+v, %v; want %v", resp, err, want)
	}
}

// events renders watch events as TYPE key@mod[/prev=value].
func events(evs []*mvcc.Event) []string {
	var out []string
	for _, e := range evs {
		s := fmt.Sprintf("%s %s@%d", e.Type, e.Kv.Key, e.Kv.ModRevision)
		if e.PrevKv != nil {
			s += "/prev=" + string(e.PrevKv.Value)
		}
		out = append(out, s)
	}
	return out
}

// collect reads watch responses until it has seen n events.
func collect(t *testing.T, w watcher, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		out = append(out, events(next(t, w).Events)...)
	}
	return out
}
