// Package mvcctest is the conformance suite of mvcc.Store: etcd's rules for
// revisions, ranges, transactions, compaction and watches, written once and
// run against every Backend (memory here, SQLite in engine/sqlite), so that
// both backends are held to the same behaviour.
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

// Run runs the whole suite.
func Run(t *testing.T, f Factory) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := &harness{t: t, open: f(t)}
			h.restart()
			defer func() { h.s.Close() }()
			tc.fn(h)
		})
	}
}

type harness struct {
	t    *testing.T
	open func() mvcc.Backend
	s    *mvcc.Store
	b    mvcc.Backend // the store's
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
	h.s = s
}

var ctx = context.Background()

func (h *harness) put(key, value string) int64 {
	h.t.Helper()
	resp, err := h.s.Put(ctx, &mvcc.PutRequest{Key: []byte(key), Value: []byte(value)})
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
	resp, err := h.s.DeleteRange(ctx, req)
	if err != nil {
		h.t.Fatalf("delete %q: %v", key, err)
	}
	return resp
}

func (h *harness) rng(req *mvcc.RangeRequest) *mvcc.RangeResponse {
	h.t.Helper()
	resp, err := h.s.Range(ctx, req)
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

// next reads one watch response, failing if none arrives in a generous
// bound (the bound only turns a hang into a failure; it is not a sleep).
func next(t *testing.T, w *mvcc.Watcher) mvcc.WatchResponse {
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
func ended(t *testing.T, w *mvcc.Watcher, want error) {
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
func collect(t *testing.T, w *mvcc.Watcher, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		out = append(out, events(next(t, w).Events)...)
	}
	return out
}
