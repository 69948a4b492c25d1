package kube

import (
	"context"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// KV is the part of etcd's API that kube-apiserver's storage layer uses
// (its etcd3 store), with etcd's semantics: *mvcc.Store provides it through
// StoreKV, and any mvcc.KV, such as a session's prefix of a real etcd
// cluster (server/etcdstore, over etcd's client v3), through KVOf. Keys are
// /registry/<resource>/[<namespace>/]<name>; an object's resourceVersion
// is its key's mod revision, a list's the revision it was read at.
type KV interface {
	// Range reads a key or a range as of a revision (0: the current one),
	// as etcd's Range: the header carries the current revision; a
	// revision below the last compaction fails with mvcc.ErrCompacted, one
	// beyond the current revision with mvcc.ErrFutureRev. Gets and lists
	// read through it, a list page by page with Limit. The KeyValues are
	// shared with the store: they are read, never modified.
	Range(ctx context.Context, r *mvcc.RangeRequest) (*mvcc.RangeResponse, error)

	// Txn is etcd's transaction, every write kube makes: a create is
	// "if create_revision == 0 then put", an update or a delete "if
	// mod_revision == the revision read then put (delete)", so that a
	// write made meanwhile fails the compare (the update is read again
	// and retried, as kube-apiserver's GuaranteedUpdate does). Its writes
	// take one new revision; a write beyond a quota fails with
	// mvcc.ErrNoSpace (a *mvcc.QuotaError).
	Txn(ctx context.Context, r *mvcc.TxnRequest) (*mvcc.TxnResponse, error)

	// Watch starts an etcd watcher of a range from StartRevision
	// (inclusive), as etcd's Watch: it delivers every revision's events
	// in order; a start below the last compaction ends it with one
	// response carrying CompactRevision. kube's watches, and the watch
	// cache's timeline, are built on it.
	Watch(ctx context.Context, r *mvcc.WatchRequest) (WatchStream, error)

	// LeaseGrant grants an etcd lease: objects with a TTL (Events) are
	// put with one, and etcd deletes them when it expires (lease.go).
	LeaseGrant(ctx context.Context, r *mvcc.LeaseGrantRequest) (*mvcc.LeaseGrantResponse, error)

	// Rev is the current revision: the newest committed one, which a
	// read without a revision sees. A resourceVersion beyond it is "too
	// large" (kube's 504 with a Retry-After).
	Rev() int64
}

// WatchStream is one etcd watcher, whose consumer takes its responses (as
// *mvcc.Watcher delivers them: the consumer's calls do the delivering,
// and a watcher costs no goroutine of its own).
type WatchStream interface {
	// Next waits for the next response; once the watcher has ended it
	// returns why (mvcc.ErrCompacted after the compacted response).
	Next(ctx context.Context) (mvcc.WatchResponse, error)
	// TryNext takes the next response if there is one now (ok); err is
	// set once the watcher has ended.
	TryNext(ctx context.Context) (resp mvcc.WatchResponse, ok bool, err error)
	// Ready receives when TryNext may have something; a receive may be
	// spurious.
	Ready() <-chan struct{}
	// Cancel stops the watcher; it delivers nothing more.
	Cancel()
	// RequestProgress asks for a progress notification (a response
	// without events at the current revision); it reports whether one was
	// queued (the watcher had delivered everything up to now).
	RequestProgress() bool
}

// KVOf is the KV of a session's store: StoreKV's for an *mvcc.Store, and
// otherwise the store with each watcher alone in a stream of its own (on
// an etcd cluster, a watch stream of its own, so that a progress request
// concerns that watcher alone).
func KVOf(s mvcc.KV) KV {
	if s, ok := s.(*mvcc.Store); ok {
		return StoreKV(s)
	}
	return streamKV{s}
}

// streamKV makes a KV of an mvcc.KV whose watchers come in streams.
type streamKV struct{ mvcc.KV }

func (k streamKV) Watch(ctx context.Context, r *mvcc.WatchRequest) (WatchStream, error) {
	// kube-apiserver's etcd client requires a leader for its watches
	// (etcd3's clientv3.WithRequireLeader): the storage ends them when
	// the member has none, and the registry answers as kube does.
	st := k.NewWatchStream(mvcc.WatchStreamOptions{RequireLeader: true})
	w, err := st.Watch(ctx, r)
	if err != nil {
		st.Close()
		return nil, err
	}
	return soloWatch{st, w}, nil
}

// soloWatch is one watcher alone in its stream.
type soloWatch struct {
	st mvcc.Watches
	w  mvcc.WatchHandle
}

func (s soloWatch) Next(ctx context.Context) (mvcc.WatchResponse, error) {
	_, resp, err := s.st.Next(ctx)
	return resp, err
}

func (s soloWatch) TryNext(ctx context.Context) (mvcc.WatchResponse, bool, error) {
	_, resp, ok, err := s.st.TryNext(ctx)
	return resp, ok, err
}

func (s soloWatch) Ready() <-chan struct{} { return s.st.Ready() }
func (s soloWatch) Cancel()                { s.st.Close() }
func (s soloWatch) RequestProgress() bool  { return s.w.RequestProgress() }

// StoreKV adapts an *mvcc.Store to KV.
func StoreKV(s *mvcc.Store) KV { return storeKV{s} }

// AdmitWatcher takes one of the store's watcher slots for a Kubernetes
// watch the watch cache serves (mvcc.Store.AdmitWatcher).
func (k storeKV) AdmitWatcher() (func(), error) { return k.s.AdmitWatcher() }

type storeKV struct{ s *mvcc.Store }

func (k storeKV) Range(ctx context.Context, r *mvcc.RangeRequest) (*mvcc.RangeResponse, error) {
	return k.s.Range(ctx, r)
}
func (k storeKV) Txn(ctx context.Context, r *mvcc.TxnRequest) (*mvcc.TxnResponse, error) {
	return k.s.Txn(ctx, r)
}
func (k storeKV) Rev() int64 { return k.s.Rev() }
func (k storeKV) LeaseGrant(ctx context.Context, r *mvcc.LeaseGrantRequest) (*mvcc.LeaseGrantResponse, error) {
	return k.s.LeaseGrant(ctx, r)
}
func (k storeKV) Watch(ctx context.Context, r *mvcc.WatchRequest) (WatchStream, error) {
	w, err := k.s.Watch(ctx, r)
	if err != nil {
		return nil, err
	}
	return w, nil
}
