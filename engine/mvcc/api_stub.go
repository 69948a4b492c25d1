package mvcc

import "context"

// TEMPORARY: the exported API of Store, compiling, while the implementation
// is written. Replaced by store.go.

// Options configure a Store.
type Options struct{}

// Store is etcd's MVCC key-value store over a Backend.
type Store struct{}

// Open rebuilds the key index from b and returns a Store ready for use.
func Open(b Backend, opts Options) (*Store, error) { return &Store{}, nil }

// NewMemoryBackend returns a Backend that keeps every record in memory.
func NewMemoryBackend() Backend { return nil }

func (s *Store) Range(ctx context.Context, r *RangeRequest) (*RangeResponse, error) {
	return nil, ErrStopped
}
func (s *Store) Put(ctx context.Context, r *PutRequest) (*PutResponse, error) { return nil, ErrStopped }
func (s *Store) DeleteRange(ctx context.Context, r *DeleteRangeRequest) (*DeleteRangeResponse, error) {
	return nil, ErrStopped
}
func (s *Store) Txn(ctx context.Context, r *TxnRequest) (*TxnResponse, error) { return nil, ErrStopped }
func (s *Store) Compact(ctx context.Context, r *CompactionRequest) (*CompactionResponse, error) {
	return nil, ErrStopped
}

// Rev is the current store revision; CompactRev the last compaction (-1: none).
func (s *Store) Rev() int64        { return 1 }
func (s *Store) CompactRev() int64 { return -1 }

// Watch starts a watcher. An empty range (key >= range_end) is refused with
// an *Error whose Message is ReasonEmptyWatchRange.
func (s *Store) Watch(ctx context.Context, r *WatchRequest) (*Watcher, error) { return nil, ErrStopped }
func (s *Store) Close() error                                                 { return nil }

// Watcher delivers WatchResponses on Chan until it is cancelled, the store
// closes, ctx ends, or its start revision is compacted (after a final
// response with CompactRevision set); then Chan is closed.
type Watcher struct{}

func (w *Watcher) Chan() <-chan WatchResponse { return nil }

// Cancel stops the watcher and closes Chan.
func (w *Watcher) Cancel() {}

// Synced reports whether the watcher has delivered every event up to the current revision.
func (w *Watcher) Synced() bool { return false }

// RequestProgress queues a progress notification (no events, header revision
// = current revision) if the watcher is synced, and reports whether it did.
func (w *Watcher) RequestProgress() bool { return false }
