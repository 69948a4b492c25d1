package kube

import (
	"context"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// KV is the part of etcd's API that kube needs. *mvcc.Store provides it
// through StoreKV; an etcd client v3 adapter can provide it too.
type KV interface {
	Range(ctx context.Context, r *mvcc.RangeRequest) (*mvcc.RangeResponse, error)
	Txn(ctx context.Context, r *mvcc.TxnRequest) (*mvcc.TxnResponse, error)
	Watch(ctx context.Context, r *mvcc.WatchRequest) (WatchStream, error)
	Compact(ctx context.Context, r *mvcc.CompactionRequest) (*mvcc.CompactionResponse, error)
	// Rev is the current store revision.
	Rev() int64
}

// WatchStream is one etcd watcher, whose consumer takes its responses (as
// *mvcc.Watcher delivers them: the consumer's calls do the delivering).
type WatchStream interface {
	// Next waits for the next response; once the watcher has ended it
	// returns why (mvcc.ErrCompacted after the compacted response).
	Next(ctx context.Context) (mvcc.WatchResponse, error)
	// TryNext takes the next response if there is one now (ok); err is
	// set once the watcher has ended.
	TryNext(ctx context.Context) (resp mvcc.WatchResponse, ok bool, err error)
	// Ready receives when TryNext may have something.
	Ready() <-chan struct{}
	// Cancel stops the watcher.
	Cancel()
	// RequestProgress asks for a progress notification; it reports whether
	// one was queued (the watcher had delivered everything up to now).
	RequestProgress() bool
}

// StoreKV adapts an *mvcc.Store to KV.
func StoreKV(s *mvcc.Store) KV { return storeKV{s} }

type storeKV struct{ s *mvcc.Store }

func (k storeKV) Range(ctx context.Context, r *mvcc.RangeRequest) (*mvcc.RangeResponse, error) {
	return k.s.Range(ctx, r)
}
func (k storeKV) Txn(ctx context.Context, r *mvcc.TxnRequest) (*mvcc.TxnResponse, error) {
	return k.s.Txn(ctx, r)
}
func (k storeKV) Compact(ctx context.Context, r *mvcc.CompactionRequest) (*mvcc.CompactionResponse, error) {
	return k.s.Compact(ctx, r)
}
func (k storeKV) Rev() int64 { return k.s.Rev() }
func (k storeKV) Watch(ctx context.Context, r *mvcc.WatchRequest) (WatchStream, error) {
	w, err := k.s.Watch(ctx, r)
	if err != nil {
		return nil, err
	}
	return w, nil
}
