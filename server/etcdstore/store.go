package etcdstore

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// CompactRevKey is the key whose versions order the compactions of every
// replica (and every kube-apiserver) on a cluster, and whose value is the
// revision the last one compacted to: kube-apiserver's own key, at the
// root of the keyspace, so that both coordinate.
const CompactRevKey = "compact_rev_key"

// DefaultRequestTimeout bounds the calls of the contract that take no
// context (Rev, CompactRev, Alarms, Usage).
const DefaultRequestTimeout = 5 * time.Second

// Options shape a Store.
type Options struct {
	// Prefix is the session's part of the keyspace: key k of the session
	// is Prefix+k on the cluster. It must not be a prefix of another
	// session's (end it with a separator the names do not hold).
	Prefix string
	// LeasePrefix holds one key per lease the session granted.
	LeasePrefix string
	// MaxTxnOps is the cluster's --max-txn-ops (mvcc.DefaultMaxTxnOps, etcd's
	// default, when 0).
	MaxTxnOps int
	// QuotaBackendBytes is the cluster's --quota-backend-bytes, as its
	// operator gave it (0: unknown), for the gateway's status.
	QuotaBackendBytes int64
	// CompactCluster makes Compact compact the cluster, for a store alone
	// on its cluster (tests) or an operator's tool; otherwise a session's
	// compaction is refused with ErrClusterCompaction.
	CompactCluster bool
	// CompactionInterval is the server's --etcd-compaction-interval (0:
	// the cluster is compacted by its operator), which ClusterCompaction
	// names.
	CompactionInterval time.Duration
	// RequestTimeout bounds the calls without a context
	// (DefaultRequestTimeout when 0).
	RequestTimeout time.Duration
}

// Store is one session's prefix of an etcd cluster, as an mvcc.KV.
type Store struct {
	cli    *clientv3.Client
	kv     pb.KVClient
	lease  pb.LeaseClient
	opts   Options
	prefix []byte
	end    []byte // the first key after every key of prefix

	// rev and compactRev are the newest revision and compaction this
	// store has seen; Rev and CompactRev ask the cluster for newer ones.
	rev        atomic.Int64
	compactRev atomic.Int64

	// ctx ends at Close, and with it every watch.
	ctx  context.Context
	stop context.CancelFunc

	mu       sync.RWMutex
	closed   bool
	inFlight sync.WaitGroup
}

var _ mvcc.KV = (*Store)(nil)

// Open returns the store of opts.Prefix on the cluster cli reaches, once
// it has learnt the cluster's revision and its last compaction. The client
// is the caller's: Close leaves it open, so that every session of a server
// shares one.
func Open(ctx context.Context, cli *clientv3.Client, opts Options) (*Store, error) {
	if opts.MaxTxnOps == 0 {
		opts.MaxTxnOps = mvcc.DefaultMaxTxnOps
	}
	if opts.RequestTimeout == 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	s := &Store{cli: cli, kv: clientv3.RetryKVClient(cli), lease: clientv3.RetryLeaseClient(cli), opts: opts,
		prefix: []byte(opts.Prefix), end: []byte(clientv3.GetPrefixRangeEnd(opts.Prefix))}
	s.compactRev.Store(-1)
	s.ctx, s.stop = context.WithCancel(context.Background())
	if err := s.learnCompaction(ctx); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// learnCompaction finds the cluster's compaction revision, which etcd
// tells no client directly: the oldest revision a read may ask for, found
// by bisection (a read below it fails with ErrCompacted), a few dozen
// small reads at most.
func (s *Store) learnCompaction(ctx context.Context) error {
	resp, err := s.kv.Range(ctx, &pb.RangeRequest{Key: []byte(CompactRevKey), CountOnly: true})
	if err != nil {
		return fromEtcd(ctx, err)
	}
	s.saw(resp.Header.Revision)
	lo, hi := int64(1), resp.Header.Revision // a read at hi succeeds
	for lo < hi {
		mid := lo + (hi-lo)/2
		_, err := s.kv.Range(ctx, &pb.RangeRequest{Key: []byte(CompactRevKey), CountOnly: true, Revision: mid})
		switch fromEtcd(ctx, err) {
		case nil:
			hi = mid
		case mvcc.ErrCompacted:
			lo = mid + 1
		default:
			return fromEtcd(ctx, err)
		}
	}
	if lo > 1 {
		s.sawCompaction(lo)
	}
	return nil
}

// enter admits a call until Close; leave ends it.
func (s *Store) enter() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return mvcc.ErrStopped
	}
	s.inFlight.Add(1)
	return nil
}

func (s *Store) leave() { s.inFlight.Done() }

// Close waits for the calls in flight (a write the cluster accepted is
// committed there), refuses later ones with ErrStopped and ends every
// watcher with ErrStopped. The client stays open.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.inFlight.Wait()
	s.stop()
	return nil
}

// saw records a revision the cluster answered with.
func (s *Store) saw(rev int64) {
	for {
		cur := s.rev.Load()
		if rev <= cur || s.rev.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// sawCompaction records a compaction the cluster reported.
func (s *Store) sawCompaction(rev int64) {
	for {
		cur := s.compactRev.Load()
		if rev <= cur || s.compactRev.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// probe reads the cluster's current revision and the revision of the last
// compaction CompactRevKey records, in one linearizable read.
func (s *Store) probe() {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.kv.Range(ctx, &pb.RangeRequest{Key: []byte(CompactRevKey)})
	if err != nil {
		return
	}
	s.saw(resp.Header.Revision)
	if len(resp.Kvs) == 1 {
		if rev, err := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64); err == nil && rev > 0 {
			s.sawCompaction(rev)
		}
	}
}

// Rev is the cluster's current revision (a read of the cluster: a write
// anywhere on it moves it); the newest one this store saw when the cluster
// does not answer within Options.RequestTimeout.
func (s *Store) Rev() int64 {
	s.probe()
	return s.rev.Load()
}

// CompactRev is the newest compaction this store knows of: the one
// CompactRevKey records (the compactors', this server's and
// kube-apiserver's), its own, and one a watcher or a read was refused
// for. A compaction made by hand (etcdctl compact) shows when a read
// below it fails.
func (s *Store) CompactRev() int64 {
	s.probe()
	return s.compactRev.Load()
}

// MaxTxnOps is Options.MaxTxnOps.
func (s *Store) MaxTxnOps() int { return s.opts.MaxTxnOps }

// QuotaBackendBytes is Options.QuotaBackendBytes.
func (s *Store) QuotaBackendBytes() int64 { return s.opts.QuotaBackendBytes }
