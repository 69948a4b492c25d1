package mvcc

import (
	"sync"

	"github.com/rvplay/rvplay/engine/clock"
)

// Options configure a Store.
type Options struct {
	// CompactionBatch is how many revisions one physical-compaction step
	// removes before letting queued writes commit (etcd: 1000).
	CompactionBatch int
	// CatchUp bounds how many watchers read history at once; a server
	// gives every session the same one. Nil: a limiter of the store's own
	// with DefaultCatchUpConcurrency slots.
	CatchUp *CatchUpLimiter
	// CatchUpPage is how much history a watcher catching up reads at a
	// time. Zero: DefaultCatchUpPage.
	CatchUpPage PageLimit
	// MaxWatchers caps the store's watchers; Watch refuses one more with
	// ErrTooManyRequests. Zero: no cap.
	MaxWatchers int
	// QuotaBackendBytes bounds the bytes of the records the store retains
	// (etcd's --quota-backend-bytes; quota.go). 0: no bound.
	QuotaBackendBytes int64
	// MaxKeys bounds how many keys exist at once. 0: no bound.
	MaxKeys int64
	// Memory is the server-wide budget the key index draws from, shared by
	// every store of a server. Nil: no budget.
	Memory *MemoryBudget
	// MemberID is the member the store raises its alarms as (etcd's member
	// ID; the etcd gateway reports the same).
	MemberID uint64
	// MaxTxnOps is etcd's --max-txn-ops: the most compares or ops one list
	// of a txn may hold. Zero: DefaultMaxTxnOps.
	MaxTxnOps int
	// Clock is the time source of lease expiry (lease.go). Nil: the wall
	// clock.
	Clock clock.Clock
}

// Store is etcd's MVCC key-value store over a Backend.
//
// Writes are serialised under mu: a write txn reads and changes the key
// index at the newest (possibly not yet committed) revision, takes the next
// main revision, and queues its records for the committer. The committer
// writes everything queued so far to the backend in one commit (group
// commit), then publishes: it advances the visible revision and notifies
// watchers, in revision order, and only then acknowledges the writers. Reads
// outside a write txn happen at the visible revision, so nobody ever
// observes a write that could still be lost.
type Store struct {
	backend Backend
	opts    Options

	mu         rwMutex
	index      *treeIndex
	pendingRev int64         // the newest revision assigned to a write txn
	usage      Usage         // what the quotas count (guarded by mu)
	alarms     []AlarmMember // raised alarms, by type and member (guarded by mu)
	released   bool          // Close gave the index's memory back (guarded by mu)

	inflightMu mutex
	inflight   []*job // write txns queued or committing, in revision order

	spareTxn   atomicPointer[writeTxn] // a finished txn's, for the next write
	visibleRev atomicRev               // the newest committed and published revision
	compactRev atomicRev               // -1 until the first compaction

	queueMu    mutex
	queue      []*job
	spare      []*job        // the buffer of the batch committed last, for the next queue
	committing bool          // someone holds the committer role
	handoff    bool          // a leader passed the role on to commitLoop
	idle       *sync.Cond    // signalled when committing turns false
	queued     chan struct{} // wakes commitLoop for a hand-off
	failed     error         // a failed commit poisons the store (guarded by queueMu)
	// group is the committer's buffer for the records of a group commit,
	// kept from one group to the next (only the committer touches it).
	group []Record

	hub    hub
	lessor lessor // leases (lease.go; guarded by mu)

	closeOnce sync.Once
	closing   chan struct{}
	done      chan struct{}
}

// Open rebuilds the key index from b and returns a Store ready for use. A
// new, empty store is at revision 1, as etcd's is.
func Open(b Backend, opts Options) (*Store, error) {
	if opts.CompactionBatch <= 0 {
		opts.CompactionBatch = 1000
	}
	if opts.MaxTxnOps <= 0 {
		opts.MaxTxnOps = DefaultMaxTxnOps
	}
	s := &Store{
		backend: b,
		opts:    opts,
		index:   newTreeIndex(),
		queued:  make(chan struct{}, 1),
		closing: make(chan struct{}),
		done:    make(chan struct{}),
	}
	s.idle = sync.NewCond(&s.queueMu)
	s.hub.init(s)
	rev := int64(1)
	meta, err := b.Load(func(r Record) error {
		if r.Rev.Main > rev {
			rev = r.Rev.Main
		}
		ki, _ := s.index.keyFor(r.KV.Key)
		if r.Tombstone {
			ki.tombstone(r.Rev, RecordSize(&r))
		} else {
			ki.put(r.Rev, RecordSize(&r), new(storedKV).init(r.KV))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if meta.CompactRevision > rev {
		// Every record up to the compaction may be gone; the revision must
		// still never go backwards.
		rev = meta.CompactRevision
	}
	s.pendingRev = rev
	s.visibleRev.Store(rev)
	s.compactRev.Store(meta.CompactRevision)
	var unfinished []Revision
	if meta.CompactRevision > 0 {
		// The index was built from everything the backend kept, which is a
		// superset of what the compaction keeps: compact it again, and finish
		// the physical removal if the crash interrupted it.
		unfinished, _, _ = s.compactIndex(meta.CompactRevision)
	}
	if err := s.openLessor(); err != nil {
		return nil, err
	}
	s.usage = s.measureIndex()
	if b := opts.Memory; !b.charge(s.usage.IndexMemory) {
		return nil, &QuotaError{Quota: QuotaMemory, Requested: s.usage.IndexMemory, Used: b.Used(), Limit: b.Limit()}
	}
	go s.commitLoop()
	if meta.CompactRevision > meta.FinishedCompactRevision {
		if err := s.submitLocked(removalSteps(unfinished, meta.CompactRevision, opts.CompactionBatch)...); err != nil {
			return nil, err
		}
		s.kick()
	}
	if len(s.lessor.leases) > 0 {
		s.mu.Lock()
		s.startLessorLocked()
		s.mu.Unlock()
	}
	return s, nil
}

// Rev: see ReadView.
func (s *Store) Rev() int64 { return s.visibleRev.Load() }

// MaxTxnOps is the most compares or ops one list of a txn may hold
// (Options.MaxTxnOps, etcd's --max-txn-ops).
func (s *Store) MaxTxnOps() int { return s.opts.MaxTxnOps }

// CompactRev: see ReadView.
func (s *Store) CompactRev() int64 { return s.compactRev.Load() }

// Close (see KV) lets the committer finish what is queued, then ends the
// watchers and closes the backend.
func (s *Store) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.queueMu.Lock()
		if s.failed == nil {
			s.failed = ErrStopped
		}
		s.queueMu.Unlock()
		close(s.closing)
		<-s.done
		s.mu.Lock()
		s.chargeMemoryLocked(-s.usage.IndexMemory)
		s.released = true
		s.mu.Unlock()
		s.hub.closeAll()
		err = s.backend.Close()
	})
	return err
}
