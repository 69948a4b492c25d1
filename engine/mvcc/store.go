package mvcc

import (
	"bytes"
	"context"
	"sort"
	"sync"
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

	hub hub

	closeOnce sync.Once
	closing   chan struct{}
	done      chan struct{}
}

// job is a unit of work for the committer.
type job struct {
	rev     int64
	records []Record
	events  []*Event
	compact int64      // with jobCompact: the compaction to record
	remove  []Revision // physical compaction step
	finish  int64      // with remove: the compaction this step completes, or -1
	kind    jobKind

	mu       mutex // guards the outcome below
	err      error
	finished bool
	wake     chan struct{} // made by a waiter, closed by finish
}

type jobKind int

const (
	jobTxn jobKind = iota
	jobCompact
	jobRemove
)

// Open rebuilds the key index from b and returns a Store ready for use. A
// new, empty store is at revision 1, as etcd's is.
func Open(b Backend, opts Options) (*Store, error) {
	if opts.CompactionBatch <= 0 {
		opts.CompactionBatch = 1000
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
	return s, nil
}

// Rev is the current (visible) store revision.
func (s *Store) Rev() int64 { return s.visibleRev.Load() }

// CompactRev is the revision of the last compaction, -1 when there was none.
func (s *Store) CompactRev() int64 { return s.compactRev.Load() }

// Close stops the committer and every watcher, then closes the backend.
// Writes still queued fail with ErrStopped.
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

// rangeEnd turns a request's range_end into the index's form: nil for a
// single key, empty for "every key >= key" ("\x00").
func rangeEnd(end []byte) []byte {
	if len(end) == 0 {
		return nil
	}
	if len(end) == 1 && end[0] == 0 {
		return []byte{}
	}
	return end
}

// Range reads keys at the visible revision or an older one.
//
// The response's Kvs and KeyValues may be shared with the store and with
// other responses: callers must not modify them. Range itself only
// allocates the response and inlines, so a caller that does not keep the
// response reads a key without any allocation.
func (s *Store) Range(ctx context.Context, r *RangeRequest) (resp *RangeResponse, err error) {
	resp = &RangeResponse{}
	if err = s.rangeInto(r, resp); err != nil {
		resp = nil
	}
	return resp, err
}

func (s *Store) rangeInto(r *RangeRequest, resp *RangeResponse) error {
	if err := checkRange(r); err != nil {
		return err
	}
	s.mu.RLock()
	cur := s.visibleRev.Load()
	err := s.rangeAt(r, cur, resp)
	s.mu.RUnlock()
	if err != nil {
		return err
	}
	resp.Header.Revision = cur
	return nil
}

func checkRange(r *RangeRequest) error {
	if len(r.Key) == 0 {
		return ErrEmptyKey
	}
	if r.SortOrder < SortNone || r.SortOrder > SortDescend || r.SortTarget < SortByKey || r.SortTarget > SortByValue {
		return ErrInvalidSortOpt
	}
	return nil
}

// rangeAt executes a range as etcd's applier does, reading the index as of
// cur (the txn's view), into resp. The caller holds mu.
func (s *Store) rangeAt(r *RangeRequest, cur int64, resp *RangeResponse) error {
	rev := r.Revision
	if rev > cur {
		return ErrFutureRev
	}
	if rev <= 0 {
		rev = cur
	}
	if rev < s.compactRev.Load() {
		return ErrCompacted
	}
	filtered := filtersRevisions(r)
	if len(r.RangeEnd) == 0 && !r.KeysOnly && !r.CountOnly && !filtered {
		// The most common read: one key as it is now. Limit and sort
		// change nothing for one key.
		if ki := s.index.lookup(r.Key); ki != nil {
			if l := ki.newestAt(rev); l != nil {
				resp.Kvs, resp.Count = l.list[:], 1
				return nil
			}
		}
	}
	// Sorting and the min/max filters need every key before the limit is
	// applied; otherwise read one more than the limit to learn "more".
	limit := r.Limit
	if r.SortOrder != SortNone || filtered {
		limit = 0
	}
	if limit > 0 {
		limit++
	}
	var kvs []*KeyValue
	shared := false // kvs is a storedKV's list
	var count int64
	if end := rangeEnd(r.RangeEnd); end == nil {
		if ki := s.index.lookup(r.Key); ki != nil {
			if l := ki.newestAt(rev); l != nil {
				count = 1
				if !r.CountOnly {
					kvs, shared = l.list[:], true
				}
			} else {
				kv, ok, err := s.visible(ki, rev, !r.CountOnly)
				if err != nil {
					return err
				}
				if ok {
					count = 1
					if kv != nil {
						kvs = []*KeyValue{kv}
					}
				}
			}
		}
	} else {
		from, to := s.index.span(r.Key, end)
		if !r.CountOnly {
			// Room for every key the range may return, from the leaves'
			// sizes: one allocation instead of one per doubling. Past
			// 1024 keys appending grows it as usual.
			bound := 1024
			if limit > 0 {
				bound = int(min(limit, int64(bound)))
			}
			if n := span(from, to, bound); n > 1 {
				kvs = make([]*KeyValue, 0, n)
			}
		}
		// A leaf's keys at a time: a plain loop over a slice per leaf.
		for c := from; !c.at(to); {
			var kis []*keyIndex
			kis, c = c.run(to)
			for _, ki := range kis {
				want := !r.CountOnly && (limit <= 0 || int64(len(kvs)) < limit)
				if l := ki.newestAt(rev); l != nil {
					count++
					if want {
						kvs = append(kvs, &l.KeyValue)
					}
					continue
				}
				kv, ok, err := s.visible(ki, rev, want)
				if err != nil {
					return err
				}
				if !ok {
					continue
				}
				count++
				if kv != nil {
					kvs = append(kvs, kv)
				}
			}
		}
	}
	resp.Count = count
	if shared && (r.KeysOnly || filtered) {
		kvs = []*KeyValue{kvs[0]} // about to be edited in place
	}
	if filtered {
		kvs = filterKVs(kvs, r)
	}
	if r.SortTarget != SortByKey || r.SortOrder == SortDescend {
		sortKVs(kvs, r)
	}
	if r.Limit > 0 && int64(len(kvs)) > r.Limit {
		kvs = kvs[:r.Limit]
		resp.More = true
	}
	if r.KeysOnly {
		for i, kv := range kvs {
			c := *kv
			c.Value = nil
			kvs[i] = &c
		}
	}
	if len(kvs) == 0 {
		kvs = nil // as before: no key-values is a nil slice
	}
	resp.Kvs = kvs
	return nil
}

// visible reports whether the key of ki existed at rev and, when want is
// set, returns its key-value then. Callers on hot paths try ki.newestAt
// first, which inlines.
func (s *Store) visible(ki *keyIndex, rev int64, want bool) (*KeyValue, bool, error) {
	if l := ki.newestAt(rev); l != nil {
		if !want {
			return nil, true, nil
		}
		return &l.KeyValue, true, nil
	}
	mod, created, ver, ok := ki.get(rev)
	if !ok || !want {
		return nil, ok, nil
	}
	kv, err := s.valueAt(ki, mod, created, ver)
	return kv, err == nil, err
}

// valueAt returns the key-value the key had at revision mod. The newest put
// is cached in the index; older revisions come from the pending writes or
// the backend. The returned value is shared and must not be modified.
func (s *Store) valueAt(ki *keyIndex, mod Revision, created, ver int64) (*KeyValue, error) {
	if l := ki.latest; l != nil && l.ModRevision == mod.Main {
		return &l.KeyValue, nil
	}
	if rec, ok := s.inflightRecord(mod); ok {
		return &rec.KV, nil
	}
	rec, ok, err := s.backend.Get(mod)
	if err != nil {
		return nil, &Error{CodeInternal, err.Error()}
	}
	if !ok {
		// Removed by a physical compaction that overtook this read.
		return nil, ErrCompacted
	}
	kv := rec.KV
	kv.CreateRevision, kv.Version = created, ver
	return &kv, nil
}

// filtersRevisions reports whether the range has a min/max mod or create
// revision filter.
func filtersRevisions(r *RangeRequest) bool {
	return r.MinModRevision != 0 || r.MaxModRevision != 0 || r.MinCreateRevision != 0 || r.MaxCreateRevision != 0
}

func filterKVs(kvs []*KeyValue, r *RangeRequest) []*KeyValue {
	out := kvs[:0]
	for _, kv := range kvs {
		switch {
		case r.MaxModRevision != 0 && kv.ModRevision > r.MaxModRevision:
		case r.MinModRevision != 0 && kv.ModRevision < r.MinModRevision:
		case r.MaxCreateRevision != 0 && kv.CreateRevision > r.MaxCreateRevision:
		case r.MinCreateRevision != 0 && kv.CreateRevision < r.MinCreateRevision:
		default:
			out = append(out, kv)
		}
	}
	return out
}

// sortKVs sorts as etcd does, with sort.Sort (not stable), so that ties
// come out in the same order as etcd's.
func sortKVs(kvs []*KeyValue, r *RangeRequest) {
	order := r.SortOrder
	if r.SortTarget != SortByKey && order == SortNone {
		order = SortAscend
	} else if r.SortTarget == SortByKey && order == SortAscend {
		// Already in key order.
		order = SortNone
	}
	if order == SortNone {
		return
	}
	var sorter sort.Interface
	switch r.SortTarget {
	case SortByKey:
		sorter = kvSort{kvs, func(a, b *KeyValue) bool { return bytes.Compare(a.Key, b.Key) < 0 }}
	case SortByVersion:
		sorter = kvSort{kvs, func(a, b *KeyValue) bool { return a.Version < b.Version }}
	case SortByCreate:
		sorter = kvSort{kvs, func(a, b *KeyValue) bool { return a.CreateRevision < b.CreateRevision }}
	case SortByMod:
		sorter = kvSort{kvs, func(a, b *KeyValue) bool { return a.ModRevision < b.ModRevision }}
	case SortByValue:
		sorter = kvSort{kvs, func(a, b *KeyValue) bool { return bytes.Compare(a.Value, b.Value) < 0 }}
	}
	if order == SortDescend {
		sorter = sort.Reverse(sorter)
	}
	sort.Sort(sorter)
}

type kvSort struct {
	kvs  []*KeyValue
	less func(a, b *KeyValue) bool
}

func (s kvSort) Len() int           { return len(s.kvs) }
func (s kvSort) Swap(i, j int)      { s.kvs[i], s.kvs[j] = s.kvs[j], s.kvs[i] }
func (s kvSort) Less(i, j int) bool { return s.less(s.kvs[i], s.kvs[j]) }

// Put writes one key. It is a txn of one put, taken without the txn
// machinery: the most frequent write deserves the shortest path. Like
// Range, it allocates only its response itself and inlines, so a caller
// that does not keep the response does not allocate it.
func (s *Store) Put(ctx context.Context, r *PutRequest) (resp *PutResponse, err error) {
	resp = &PutResponse{}
	if err = s.putInto(ctx, r, resp); err != nil {
		resp = nil
	}
	return resp, err
}

func (s *Store) putInto(ctx context.Context, r *PutRequest, resp *PutResponse) error {
	if err := checkPut(r); err != nil {
		return err
	}
	s.mu.Lock()
	if len(s.alarms) != 0 {
		if err := s.alarmRefusalLocked(recordSize(len(r.Key), len(r.Value))); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	if r.Lease != 0 {
		// A unary put looks its lease up before anything else (etcd's
		// applier, after its alarms); this store has no leases, so every
		// lease is unknown.
		s.mu.Unlock()
		return ErrLeaseNotFound
	}
	tx := s.newWriteTxn()
	if err := s.applyPut(r, tx, resp); err != nil {
		tx.rollback()
		s.mu.Unlock()
		return err
	}
	j, err := s.queueTxnLocked(tx)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	s.kick()
	if err := s.wait(ctx, j); err != nil {
		return err
	}
	resp.Header.Revision = j.rev
	s.recycle(tx)
	return nil
}

// queueTxnLocked charges a write txn to the store's bounds, gives it its
// revision (if it changed anything) and queues it for the committer; the
// caller holds mu, so txns queue in revision order. On failure the txn is
// undone.
func (s *Store) queueTxnLocked(tx *writeTxn) (*job, error) {
	var charged usageDelta
	if len(tx.records) > 0 {
		d, err := s.chargeLocked(tx)
		if err != nil {
			tx.rollback()
			return nil, err
		}
		charged = d
	}
	j := &tx.job
	*j = job{kind: jobTxn, records: tx.records, events: tx.events, rev: s.pendingRev}
	if len(tx.records) > 0 {
		j.rev = s.pendingRev + 1
		s.inflightMu.Lock()
		s.inflight = append(s.inflight, j)
		s.inflightMu.Unlock()
	}
	if err := s.submitLocked(j); err != nil {
		tx.rollback()
		s.unchargeLocked(charged)
		if len(tx.records) > 0 {
			s.inflightMu.Lock()
			s.inflight = s.inflight[:len(s.inflight)-1]
			s.inflightMu.Unlock()
		}
		return nil, err
	}
	if len(tx.records) > 0 {
		s.pendingRev++
	}
	return j, nil
}

// DeleteRange deletes every key in the range.
func (s *Store) DeleteRange(ctx context.Context, r *DeleteRangeRequest) (*DeleteRangeResponse, error) {
	if len(r.Key) == 0 {
		return nil, ErrEmptyKey
	}
	resp, err := s.Txn(ctx, &TxnRequest{Success: []RequestOp{{DeleteRange: r}}})
	if err != nil {
		return nil, err
	}
	del := resp.Responses[0].DeleteRange
	del.Header.Revision = resp.Header.Revision
	return del, nil
}

func checkPut(r *PutRequest) error {
	if len(r.Key) == 0 {
		return ErrEmptyKey
	}
	if r.IgnoreValue && len(r.Value) != 0 {
		return ErrValueProvided
	}
	if r.IgnoreLease && r.Lease != 0 {
		return ErrLeaseProvided
	}
	return nil
}

// wait waits for a submitted job. If ctx ends first, the write may still
// commit, as an etcd request that timed out may.
func (s *Store) wait(ctx context.Context, j *job) error {
	j.mu.Lock()
	if j.finished {
		j.mu.Unlock()
		return j.err
	}
	// Only a writer that has to wait makes a channel: one that committed
	// its own batch as the leader never does, and each waiter is woken
	// exactly once, by its own job's end.
	if j.wake == nil {
		j.wake = make(chan struct{})
	}
	wake := j.wake
	j.mu.Unlock()
	select {
	case <-wake:
		return j.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// finish marks a job done and wakes its waiter. It wakes it last, after
// the unlock: the waiter may reuse the job as soon as it wakes (recycle).
func finish(j *job, err error) {
	j.mu.Lock()
	j.err = err
	j.finished = true
	wake := j.wake
	j.mu.Unlock()
	if wake != nil {
		close(wake)
	}
}

// takeQueueLocked takes the queued jobs as a batch and starts an empty queue
// in the buffer of the previous batch: two buffers take turns, so that
// queueing a write allocates nothing (the caller holds queueMu).
func (s *Store) takeQueueLocked() []*job {
	jobs := s.queue
	s.queue, s.spare = s.spare[:0], nil
	return jobs
}

// recycleLocked keeps a committed batch's buffer for the next queue,
// dropping its references to the jobs (the caller holds queueMu).
func (s *Store) recycleLocked(jobs []*job) {
	clear(jobs)
	if s.spare == nil {
		s.spare = jobs[:0]
	}
}

// commitRound runs one batch as the committer (the caller took the role in
// kick), then releases the role or, if more jobs queued meanwhile, hands
// it to the background committer goroutine.
func (s *Store) commitRound() {
	s.queueMu.Lock()
	jobs := s.takeQueueLocked()
	s.queueMu.Unlock()
	s.run(jobs)
	s.queueMu.Lock()
	s.recycleLocked(jobs)
	if len(s.queue) == 0 {
		s.committing = false
		s.idle.Broadcast()
		s.queueMu.Unlock()
		return
	}
	s.handoff = true
	s.idle.Broadcast()
	s.queueMu.Unlock()
	select {
	case s.queued <- struct{}{}:
	default:
	}
}

// commitLoop takes over the committer role when a leader hands it off. At
// Close it waits for an active committer, commits what was accepted before
// the close, and stops.
func (s *Store) commitLoop() {
	defer close(s.done)
	closing := false
	for {
		if !closing {
			select {
			case <-s.queued:
			case <-s.closing:
				closing = true
			}
		}
		s.queueMu.Lock()
		if closing {
			for s.committing && !s.handoff {
				s.idle.Wait()
			}
		} else if !s.handoff {
			s.queueMu.Unlock()
			continue
		}
		s.handoff = false
		s.committing = true
		for len(s.queue) > 0 {
			jobs := s.takeQueueLocked()
			s.queueMu.Unlock()
			s.run(jobs)
			s.queueMu.Lock()
			s.recycleLocked(jobs)
		}
		s.committing = false
		s.idle.Broadcast()
		s.queueMu.Unlock()
		if closing {
			return
		}
	}
}

func (s *Store) run(jobs []*job) {
	// Consecutive txn jobs form one group commit; compaction steps commit
	// on their own, in order with the writes around them.
	for len(jobs) > 0 {
		n := 0
		for n < len(jobs) && jobs[n].kind == jobTxn {
			n++
		}
		records := jobs[0].records
		if n > 1 {
			records = nil
			for _, j := range jobs[:n] {
				records = append(records, j.records...)
			}
		}
		if n > 0 {
			var err error
			if len(records) > 0 {
				err = s.backend.Commit(records)
			}
			s.finishTxns(jobs[:n], err)
			jobs = jobs[n:]
			continue
		}
		j := jobs[0]
		jobs = jobs[1:]
		var err error
		switch j.kind {
		case jobCompact:
			err = s.backend.SetCompactRevision(j.compact)
		case jobRemove:
			err = s.backend.Remove(j.remove, j.finish)
		}
		if err != nil {
			s.fail(err)
		}
		finish(j, err)
	}
}

func (s *Store) finishTxns(jobs []*job, err error) {
	if err != nil {
		s.fail(err)
		for _, j := range jobs {
			finish(j, &Error{CodeInternal, "etcdserver: " + err.Error()})
		}
		return
	}
	s.inflightMu.Lock()
	done := 0
	for _, j := range jobs {
		if done < len(s.inflight) && s.inflight[done] == j {
			done++
		}
	}
	// Shift the rest to the front rather than reslicing past the done
	// ones, so that the buffer is kept and appending allocates nothing.
	n := copy(s.inflight, s.inflight[done:])
	clear(s.inflight[n:])
	s.inflight = s.inflight[:n]
	s.inflightMu.Unlock()
	for _, j := range jobs {
		if len(j.events) > 0 {
			s.hub.publish(j.rev, j.events)
		}
		finish(j, nil)
	}
}

// inflightRecord finds a record written by a txn that is not yet committed
// (a read inside a later write txn may need it before the backend has it).
// It returns a copy: the txn's records are reused once it finishes.
func (s *Store) inflightRecord(rev Revision) (Record, bool) {
	s.inflightMu.Lock()
	defer s.inflightMu.Unlock()
	for i := len(s.inflight) - 1; i >= 0; i-- {
		j := s.inflight[i]
		if j.rev != rev.Main {
			continue
		}
		for k := range j.records {
			if j.records[k].Rev == rev {
				return j.records[k], true
			}
		}
	}
	return Record{}, false
}

// fail poisons the store after a backend write failed: the index may now
// hold revisions the backend does not, so no further write is accepted.
func (s *Store) fail(err error) {
	s.queueMu.Lock()
	if s.failed == nil {
		s.failed = &Error{CodeInternal, "etcdserver: " + err.Error()}
	}
	s.queueMu.Unlock()
}

// Compact discards history before rev: reads below it fail from now on
// (logical), and the superseded records are removed from the backend in
// batches (physical; waited for when r.Physical).
func (s *Store) Compact(ctx context.Context, r *CompactionRequest) (*CompactionResponse, error) {
	rev := r.Revision
	s.mu.Lock()
	if len(s.alarms) != 0 && s.raisedLocked(AlarmCorrupt) {
		s.mu.Unlock()
		return nil, ErrCorrupt
	}
	if rev <= s.compactRev.Load() {
		s.mu.Unlock()
		return nil, ErrCompacted
	}
	cur := s.visibleRev.Load()
	if rev > cur {
		s.mu.Unlock()
		return nil, ErrFutureRev
	}
	s.compactRev.Store(rev)
	removed, freed, memory := s.compactIndex(rev)
	s.compactedLocked(freed, memory)
	logical := &job{kind: jobCompact, compact: rev}
	// Queue the logical record and the removal steps before releasing mu,
	// so they are ordered with the writes around them.
	steps := removalSteps(removed, rev, s.opts.CompactionBatch)
	err := s.submitLocked(append([]*job{logical}, steps...)...)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	s.kick()
	last := steps[len(steps)-1]
	if err := s.wait(ctx, logical); err != nil {
		return nil, err
	}
	// Compacted watchers that are catching up must learn about it.
	s.hub.compacted()
	if r.Physical {
		if err := s.wait(ctx, last); err != nil {
			return nil, err
		}
	}
	return &CompactionResponse{Header: ResponseHeader{Revision: cur}}, nil
}

// compactIndex compacts the key index at rev and returns the revisions the
// backend may remove, the bytes their records hold, and the index memory
// the compaction frees. The caller holds mu (or has exclusive access).
func (s *Store) compactIndex(rev int64) (removed []Revision, freed, memory int64) {
	var empty []*keyIndex
	for c := s.index.order.seekFirst(); c.valid(); c.next() {
		ki := c.ki()
		removed = ki.compact(rev, removed, &freed)
		if ki.isEmpty() {
			empty = append(empty, ki)
		}
	}
	memory = int64(len(removed)) * revIndexOverhead
	for _, ki := range empty {
		s.index.order.remove(ki.key)
		s.index.byKey.remove(ki.key)
		memory += keyIndexMemory(ki.key)
	}
	sort.Slice(removed, func(i, j int) bool { return removed[i].Less(removed[j]) })
	return removed, freed, memory
}

// removalSteps splits a physical compaction into steps, so that writes
// queued meanwhile commit between them; only the last step finishes it.
func removalSteps(revs []Revision, compactRev int64, batch int) []*job {
	var steps []*job
	for {
		n := min(batch, len(revs))
		step := &job{kind: jobRemove, remove: revs[:n], finish: -1}
		steps = append(steps, step)
		revs = revs[n:]
		if len(revs) == 0 {
			step.finish = compactRev
			return steps
		}
	}
}

// submitLocked queues jobs without running them (the caller holds mu, so
// it must not commit); kick then makes sure a committer runs.
func (s *Store) submitLocked(jobs ...*job) error {
	s.queueMu.Lock()
	defer s.queueMu.Unlock()
	if s.failed != nil {
		return s.failed
	}
	s.queue = append(s.queue, jobs...)
	return nil
}

// kick runs a commit round if no committer is active.
func (s *Store) kick() {
	s.queueMu.Lock()
	lead := !s.committing && len(s.queue) > 0
	if lead {
		s.committing = true
	}
	s.queueMu.Unlock()
	if lead {
		s.commitRound()
	}
}
