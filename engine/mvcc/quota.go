package mvcc

import "sync/atomic"

// A session's storage is bounded three ways, each checked under the write
// lock after a write txn has run against the index and before it takes a
// revision (chargeLocked), so that a refused write leaves nothing behind:
//
//   - bytes (Options.QuotaBackendBytes, etcd's --quota-backend-bytes): the
//     records the store retains, every revision kept until compaction,
//     counted as RecordSize each. As in etcd, a put that would take the
//     session's dbSize to the quota fails with ErrNoSpace and raises the
//     NOSPACE alarm, which refuses every further write that puts until a
//     client disarms it (alarm.go);
//   - keys (Options.MaxKeys): the keys that exist at once. A write that
//     would create more fails with ErrNoSpace, without an alarm: the cap is
//     rvplay's own, and a delete frees room at once;
//   - memory (Options.Memory, shared by every store of a server): the bytes
//     the key index holds in RAM, that is every key and the newest value of
//     each (IndexMemory). A write beyond the budget fails with ErrNoSpace,
//     without an alarm: the budget is the server's, not the session's.
//
// Each refusal is a *QuotaError, which the etcd gateway answers as
// ErrNoSpace and the Kubernetes API as kube-apiserver's ResourceQuota
// admission words its 403.

// RecordOverhead is what a record costs beyond its key and value: the
// revision, create revision, version and lease beside them, and the
// storage's per-row bookkeeping. It is SQLite's, measured on a filled file
// (engine/sqlite's TestRecordOverheadMatchesTheFile: 50 bytes a record with
// values of 100 to 500 bytes). A record too large for a page of SQLite's
// records b-tree (about 1 KiB) takes an overflow page of its own besides,
// which RecordSize does not count.
const RecordOverhead = 48

// RecordSize is the bytes one record counts against the session's quota.
func RecordSize(r *Record) int64 { return recordSize(len(r.KV.Key), len(r.KV.Value)) }

func recordSize(key, value int) int64 { return int64(key) + int64(value) + RecordOverhead }

// The key index's memory, as the budget counts it: per key in the index
// (live or deleted but not yet compacted) its bytes and keyIndexOverhead,
// plus the newest value of a live key, plus revIndexOverhead per retained
// revision. Measured with runtime.MemStats (TestIndexMemoryEstimate): a
// new key of 20 bytes with a 10-byte value grows the heap by 375 bytes,
// each further retained revision by 16 to 32.
const (
	keyIndexOverhead = 352
	revIndexOverhead = 24
)

// Quota names one of the bounds a write can exceed.
type Quota int

const (
	// QuotaBackendBytes is Options.QuotaBackendBytes; its unit is bytes.
	QuotaBackendBytes Quota = iota
	// QuotaKeys is Options.MaxKeys; its unit is keys.
	QuotaKeys
	// QuotaMemory is Options.Memory; its unit is bytes.
	QuotaMemory
)

// QuotaError is ErrNoSpace with the figures of the bound that refused a
// write. errors.As finds ErrNoSpace in it (Unwrap), so the etcd gateway
// answers it exactly as etcd answers a write beyond its quota.
type QuotaError struct {
	Quota Quota
	// Requested is what the write would have added; Used is what the
	// session (or, for QuotaMemory, the server) holds; Limit is the bound.
	Requested, Used, Limit int64
	// Alarm is set when the write was refused because the NOSPACE alarm
	// is raised, not because it would itself exceed the quota.
	Alarm bool
}

func (e *QuotaError) Error() string { return ErrNoSpace.Message }

// Unwrap makes errors.Is(err, ErrNoSpace) and errors.As(err, **Error) hold.
func (e *QuotaError) Unwrap() error { return ErrNoSpace }

// MemoryBudget is the server-wide bound on the memory of every open store's
// key index: one value handed to every store's Options, so that all
// sessions draw from it together. A store charges its index at Open and
// every write's growth, and gives it all back at Close.
type MemoryBudget struct {
	limit int64
	used  atomic.Int64
}

// NewMemoryBudget returns a budget of limit bytes; limit <= 0 means none.
func NewMemoryBudget(limit int64) *MemoryBudget { return &MemoryBudget{limit: limit} }

// Limit is the budget's size in bytes (<= 0: unbounded).
func (b *MemoryBudget) Limit() int64 { return b.limit }

// Used is what the open stores hold now.
func (b *MemoryBudget) Used() int64 { return b.used.Load() }

// charge takes n bytes (n may be negative, which always succeeds) and
// reports whether they fit.
func (b *MemoryBudget) charge(n int64) bool {
	if b == nil {
		return true
	}
	for {
		used := b.used.Load()
		if n > 0 && b.limit > 0 && used+n > b.limit {
			return false
		}
		if b.used.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// Usage is what a store holds, as its quotas count it.
type Usage struct {
	// DBSize is etcd's dbSize: the largest DBSizeInUse since the last
	// Defragment (a compaction frees room inside, it does not give it
	// back), and what the bytes quota is checked against.
	DBSize int64
	// DBSizeInUse is etcd's dbSizeInUse: the bytes of the records the store
	// retains (RecordSize each).
	DBSizeInUse int64
	// Keys is how many keys exist.
	Keys int64
	// IndexMemory is what the key index holds in RAM, as the memory budget
	// counts it.
	IndexMemory int64
}

// Usage: see Maintenance.
func (s *Store) Usage() Usage {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.usage
}

// Defragment (see Maintenance) is etcd's defragment as far as quotas see
// it. The file's own pages are given back to the file system after every
// compaction already: engine/sqlite vacuums incrementally.
func (s *Store) Defragment() {
	s.mu.Lock()
	s.usage.DBSize = s.usage.DBSizeInUse
	s.mu.Unlock()
}

// usageDelta is what one write txn changes in a store's usage.
type usageDelta struct {
	bytes    int64 // RecordSize of every record, tombstones included
	putBytes int64 // of the puts only: what the bytes quota checks
	keys     int64
	memory   int64
}

func keyIndexMemory(key []byte) int64 { return int64(len(key)) + keyIndexOverhead }

// usageDelta computes tx's effect from its records and from the state of
// every key it touched before (the undo log) and now.
func (tx *writeTxn) usageDelta() usageDelta {
	var d usageDelta
	for i := range tx.records {
		r := &tx.records[i]
		n := RecordSize(r)
		d.bytes += n
		if !r.Tombstone {
			d.putBytes += n
		}
	}
	d.memory = int64(len(tx.records)) * revIndexOverhead
	for i := range tx.undo {
		u := &tx.undo[i]
		ki := u.ki
		wasLive, isLive := u.existed && u.lastRevs > 0, !ki.last().isEmpty()
		switch {
		case isLive && !wasLive:
			d.keys++
		case wasLive && !isLive:
			d.keys--
		}
		if !u.existed {
			d.memory += keyIndexMemory(ki.key)
		}
		if u.latest != nil {
			d.memory -= int64(len(u.latest.Value))
		}
		if ki.latest != nil {
			d.memory += int64(len(ki.latest.Value))
		}
	}
	return d
}

// chargeLocked checks tx against the store's bounds and, when it fits,
// adds it to the store's usage (the caller holds mu, and undoes tx on an
// error). A put that would take the session past its bytes quota raises
// the NOSPACE alarm.
func (s *Store) chargeLocked(tx *writeTxn) (usageDelta, error) {
	d := tx.usageDelta()
	u := &s.usage
	if q := s.opts.QuotaBackendBytes; q > 0 && d.putBytes > 0 && u.DBSize+d.putBytes >= q {
		// etcd's backendQuota.Available: size + cost < quota.
		s.activateLocked(AlarmMember{MemberID: s.opts.MemberID, Alarm: AlarmNoSpace})
		return d, &QuotaError{Quota: QuotaBackendBytes, Requested: d.putBytes, Used: u.DBSize, Limit: q}
	}
	if m := s.opts.MaxKeys; m > 0 && d.keys > 0 && u.Keys+d.keys > m {
		return d, &QuotaError{Quota: QuotaKeys, Requested: d.keys, Used: u.Keys, Limit: m}
	}
	if !s.chargeMemoryLocked(d.memory) {
		b := s.opts.Memory
		return d, &QuotaError{Quota: QuotaMemory, Requested: d.memory, Used: b.Used(), Limit: b.Limit()}
	}
	s.addUsageLocked(d, 1)
	return d, nil
}

// unchargeLocked takes back a charged txn that could not be queued.
func (s *Store) unchargeLocked(d usageDelta) {
	s.chargeMemoryLocked(-d.memory)
	s.addUsageLocked(d, -1)
}

// chargeMemoryLocked charges n bytes of index memory to the server's
// budget, unless Close has already given the store's share back.
func (s *Store) chargeMemoryLocked(n int64) bool {
	if s.released {
		return true
	}
	return s.opts.Memory.charge(n)
}

func (s *Store) addUsageLocked(d usageDelta, sign int64) {
	u := &s.usage
	u.DBSizeInUse += sign * d.bytes
	u.Keys += sign * d.keys
	u.IndexMemory += sign * d.memory
	u.DBSize = max(u.DBSize, u.DBSizeInUse)
}

// compactedLocked takes what a compaction removed off the usage: freed
// bytes of records, and memory of removed revisions and keys.
func (s *Store) compactedLocked(freed, memory int64) {
	s.usage.DBSizeInUse -= freed
	s.usage.IndexMemory -= memory
	s.chargeMemoryLocked(-memory)
}

// measureIndex counts the usage of a freshly loaded index.
func (s *Store) measureIndex() Usage {
	var u Usage
	for c := s.index.order.seekFirst(); c.valid(); c.next() {
		ki := c.ki()
		u.IndexMemory += keyIndexMemory(ki.key)
		if ki.latest != nil {
			u.IndexMemory += int64(len(ki.latest.Value))
		}
		for _, g := range ki.generations {
			u.IndexMemory += int64(len(g.revs)) * revIndexOverhead
			for _, r := range g.revs {
				u.DBSizeInUse += int64(r.size)
			}
		}
		if !ki.last().isEmpty() {
			u.Keys++
		}
	}
	u.DBSize = u.DBSizeInUse
	return u
}

// putCost is etcd's quota cost of a txn (costTxn) in this store's bytes:
// what its puts would add, the larger branch's. Unlike etcd 3.4, whose
// cost skips nested txns so that their puts pass a full store, nested
// txns count.
func putCost(r *TxnRequest) int64 {
	var most int64
	for _, ops := range [][]RequestOp{r.Success, r.Failure} {
		var n int64
		for i := range ops {
			switch op := &ops[i]; {
			case op.Put != nil:
				n += recordSize(len(op.Put.Key), len(op.Put.Value))
			case op.Txn != nil:
				n += putCost(op.Txn)
			}
		}
		most = max(most, n)
	}
	return most
}

// QuotaBackendBytes is the store's bytes quota (Options.QuotaBackendBytes;
// 0: none), which etcd reports as its status' dbSizeQuota.
func (s *Store) QuotaBackendBytes() int64 { return s.opts.QuotaBackendBytes }
