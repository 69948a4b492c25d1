package mvcc

import "context"

// The store's contract, in the shape of etcd's mvcc/kv.go: what every
// operation of the store means, stated once, before any implementation.
// *Store implements KV; read.go, write.go, txn.go, compact.go, watch.go,
// alarm.go and quota.go hold how, over a Backend (backend.go).
//
// Revisions. The store has one revision counter. Every call that changes
// something takes the next main revision, one per call however many keys
// it changes, and a call that changes nothing takes none. A key has a
// create revision (the put that began its current generation), a mod
// revision (its last change) and a version (puts in its generation, from
// 1); a delete ends the generation with a tombstone. A new store is at
// revision 1, as etcd's is.
//
// Visibility. A write returns once its records are durable in the backend
// and its revision is published: the current revision has moved and every
// watcher whose range it touches has been offered its events. Reads never
// see a revision before that, so nobody observes a write that could still
// be lost. A write whose ctx ends first returns ctx.Err() and may still
// commit, as an etcd request that timed out may.
//
// Errors are etcd's, with etcd's texts (errors.go): the gateway answers
// them as they are.

// ReadView reads the store at its current revision or an older one.
type ReadView interface {
	// Rev is the current revision: the newest one committed and
	// published.
	Rev() int64

	// CompactRev is the revision of the last compaction, -1 before the
	// first: revisions below it are gone, and a read or a watch that asks
	// for one fails with ErrCompacted.
	CompactRev() int64

	// Range reads the keys of a range (one key when RangeEnd is empty,
	// every key from Key on when it is "\x00", else [Key, RangeEnd)) as of
	// Revision, or of Rev when Revision is 0, with etcd's limit, sort,
	// keys-only, count-only and min/max revision filters. The header
	// carries Rev, whatever revision was read. It fails with ErrEmptyKey,
	// ErrInvalidSortOpt, ErrFutureRev for a revision beyond Rev and
	// ErrCompacted for one below CompactRev. The KeyValues it returns are
	// shared with the store: callers read them and never modify them.
	Range(ctx context.Context, r *RangeRequest) (*RangeResponse, error)
}

// WriteView changes the store. Each method is a write transaction: it
// takes at most one new revision, and is refused as a whole (nothing
// written, no revision taken) when it fails.
type WriteView interface {
	// Put writes one key at the next revision: its mod revision is that
	// revision and its version grows by one; a key that did not exist
	// begins a generation (create revision = mod revision, version 1).
	// With PrevKv the response carries the key as it was. IgnoreValue and
	// IgnoreLease keep the key's value or lease, and fail with
	// ErrKeyNotFound on a key that does not exist. A put with a lease
	// that is not granted fails with ErrLeaseNotFound. It fails with
	// ErrEmptyKey, ErrValueProvided, ErrLeaseProvided, and with ErrNoSpace
	// beyond a bound (a *QuotaError, quota.go) or while the NOSPACE alarm
	// is raised (alarm.go). Every write of DeleteRange and Txn is refused
	// the same way.
	Put(ctx context.Context, r *PutRequest) (*PutResponse, error)

	// DeleteRange deletes every key of the range at the next revision,
	// each with a tombstone that ends its generation, and counts them in
	// Deleted (with PrevKv, PrevKvs holds them as they were). Deleting
	// nothing takes no revision.
	DeleteRange(ctx context.Context, r *DeleteRangeRequest) (*DeleteRangeResponse, error)

	// Txn runs a transaction as etcd's applier does: the request is
	// validated first (op counts up to MaxTxnOps, empty keys, one write
	// per key, revisions of ranges, ignore_value on missing keys, leases),
	// the compares of the whole txn tree are evaluated against the state
	// before the txn, and the chosen branches then run in order, each op
	// seeing the writes of the ops before it. Every write of the txn
	// shares one new main revision; a txn that changes nothing takes
	// none, and its header carries the revision its compares saw.
	Txn(ctx context.Context, r *TxnRequest) (*TxnResponse, error)
}

// Watchable delivers the store's changes as events, in revision order,
// each revision's events together.
type Watchable interface {
	// NewWatchStream returns an empty stream: the watches of one etcd
	// watch stream, whose responses one consumer takes with Next. A
	// watcher that starts from an old revision, or falls behind, reads
	// what it missed from the backend in the consumer's calls, one page
	// at a time; a watcher whose start revision is compacted away gets
	// one response with CompactRevision set, and ends. (*Store.Watch
	// makes a watcher alone in a stream of its own.)
	NewWatchStream(opts WatchStreamOptions) Watches
}

// WatchStreamOptions are what the client of an etcd watch stream chose
// for the whole stream, as etcd's gRPC metadata on its Watch call.
type WatchStreamOptions struct {
	// RequireLeader is etcd's clientv3.WithRequireLeader (metadata
	// hasleader: true): a member without a leader refuses the stream,
	// and ends it once it has had none for three election timeouts, its
	// watchers' end being "etcdserver: no leader" (an *Error, code
	// Unavailable). Unset, the stream waits across the leaderless window
	// and its watchers go on with what is written after it, missing and
	// repeating nothing, as etcd's do. Kubernetes' watches require a
	// leader; an etcd client's stream does when it asked. A store that is
	// its own one member (*Store) always has a leader.
	RequireLeader bool
}

// Watches is the consumer's side of a stream of watchers, etcd's
// mvcc.WatchStream: *WatchStream on a Store; a store that lives elsewhere
// (a prefix of an etcd cluster, server/etcdstore) brings its own. Next,
// TryNext and Ready are for one consumer at a time; Watch, Close and the
// watchers' Cancel and RequestProgress may be called from anywhere.
type Watches interface {
	// Watch starts a watcher of a range from StartRevision (inclusive; 0:
	// after the current revision; beyond it: waits for it). An empty range
	// is refused with an *Error whose Message is ReasonEmptyWatchRange, a
	// negative start with ErrCompacted, a watcher beyond the store's cap
	// with ErrTooManyRequests. The watcher ends when ctx does.
	Watch(ctx context.Context, r *WatchRequest) (WatchHandle, error)

	// TryNext takes the next response of one of the stream's watchers
	// without waiting for a write: ok is false when none has one now. A
	// watcher's end is reported once, as a response with ok set and err
	// the reason (ErrWatcherCanceled, ErrStopped, the storage's failure);
	// a watcher that gets a response with CompactRevision set has ended
	// too, and is not reported again. Only a ctx that ended makes it
	// return err with ok false.
	TryNext(ctx context.Context) (w WatchHandle, resp WatchResponse, ok bool, err error)

	// Next waits for the next response (see TryNext) or the end of ctx.
	Next(ctx context.Context) (WatchHandle, WatchResponse, error)

	// Ready returns a channel that receives when TryNext may have
	// something; a receive may be spurious.
	Ready() <-chan struct{}

	// Close cancels every watcher of the stream.
	Close()
}

// WatchHandle is one watcher of a stream, as the stream's consumer knows
// it (a *Watcher on a Store).
type WatchHandle interface {
	// Cancel ends the watcher: its stream delivers nothing more of it but
	// the report of its end.
	Cancel()

	// RequestProgress queues a progress notification (no events, header
	// revision up to which the watcher has delivered everything) behind
	// its pending events, if the watcher is synced, and reports whether it
	// did.
	RequestProgress() bool
}

// Maintenance is etcd's maintenance service as far as one store has it.
type Maintenance interface {
	// Compact discards the history before Revision: from now on a read or
	// a watch below it fails with ErrCompacted (logical), and the records
	// no revision at or above it needs are removed from the backend in
	// batches, writes committing between them (physical; with Physical,
	// Compact returns once they are gone). The keys' current values are
	// kept. It fails with ErrCompacted at or below CompactRev, with
	// ErrFutureRev beyond Rev, and with ErrCorrupt while the CORRUPT alarm
	// is raised.
	Compact(ctx context.Context, r *CompactionRequest) (*CompactionResponse, error)

	// Alarm lists, raises or lifts alarms as etcd's applier does: a GET
	// lists the alarms of a type (all for AlarmNone); an ACTIVATE answers
	// the alarm it raised, or the one already raised; a DEACTIVATE answers
	// the alarm it lifted, or nothing when there was none.
	Alarm(ctx context.Context, r *AlarmRequest) (*AlarmResponse, error)

	// Alarms lists every raised alarm, ordered by type and member.
	Alarms() []AlarmMember

	// Usage reports what the store's bounds count: the bytes of the
	// records it retains (DBSize keeps its high-water mark until a
	// defragment, as etcd's file does), its keys and its key index's
	// memory.
	Usage() Usage

	// Defragment gives back the room compactions freed: DBSize drops to
	// DBSizeInUse.
	Defragment()
}

// Lessor is etcd's leases (lease.go).
type Lessor interface {
	// LeaseGrant grants a lease of TTL seconds (raised to MinLeaseTTL) with
	// the ID asked for, or one the store picks. It fails with
	// ErrLeaseTTLTooLarge beyond MaxLeaseTTL, ErrLeaseExists for an ID in
	// use, and as a write does while an alarm is raised. It takes no
	// revision.
	LeaseGrant(ctx context.Context, r *LeaseGrantRequest) (*LeaseGrantResponse, error)

	// LeaseRevoke ends a lease: every key whose current value was put
	// with it is deleted, all at the next revision (none when it holds
	// no key). A lease that expires is revoked the same way, by the store
	// itself, on its Clock. It fails with ErrLeaseNotFound.
	LeaseRevoke(ctx context.Context, id int64) (ResponseHeader, error)

	// LeaseRenew is a keep-alive: the lease's whole TTL is ahead of it
	// again. It fails with ErrLeaseNotFound for a lease unknown or
	// expired.
	LeaseRenew(ctx context.Context, id int64) (int64, error)

	// LeaseTimeToLive reports the seconds a lease has left, its granted
	// TTL and, with keys, the keys it holds, in key order.
	LeaseTimeToLive(ctx context.Context, id int64, keys bool) (*LeaseTimeToLiveResponse, error)

	// Leases lists every lease, soonest to expire first.
	Leases(ctx context.Context) (ResponseHeader, []int64)
}

// KV is the whole store, what a session runs on: *Store over a Backend,
// or (on the server) a prefix of a real etcd cluster (server/etcdstore).
type KV interface {
	ReadView
	WriteView
	Watchable
	Maintenance
	Lessor

	// MaxTxnOps is the most compares or operations one list of a txn may
	// hold (etcd's --max-txn-ops).
	MaxTxnOps() int

	// QuotaBackendBytes is the bytes quota (0: none).
	QuotaBackendBytes() int64

	// Close commits the writes it accepted before it was called, refuses
	// later ones with ErrStopped, ends every watcher (ErrStopped) and
	// closes the backend. Calling it again does nothing.
	Close() error
}

var _ KV = (*Store)(nil)
