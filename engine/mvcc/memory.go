package mvcc

import (
	"sort"
	"sync"
)

// memoryBackend keeps every record in memory: the browser's backend, and
// the reference the SQLite backend is tested against. Records sit in one
// slice in revision order (they are committed in that order), so Get and
// Scan are binary searches; compaction marks records removed and the slice
// is packed once most of it is dead.
type memoryBackend struct {
	mu      sync.RWMutex
	recs    []memRecord
	removed int
	meta    Meta
}

type memRecord struct {
	Record
	gone bool
}

// NewMemoryBackend returns a Backend that keeps every record in memory.
func NewMemoryBackend() Backend {
	return &memoryBackend{meta: Meta{CompactRevision: -1, FinishedCompactRevision: -1}}
}

func (m *memoryBackend) Load(fn func(Record) error) (Meta, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for i := range m.recs {
		if m.recs[i].gone {
			continue
		}
		if err := fn(m.recs[i].Record); err != nil {
			return Meta{}, err
		}
	}
	return m.meta, nil
}

func (m *memoryBackend) Commit(records []Record) error {
	m.mu.Lock()
	for _, r := range records {
		m.recs = append(m.recs, memRecord{Record: r})
	}
	m.mu.Unlock()
	return nil
}

// find returns the index of the first record at or after rev.
func (m *memoryBackend) find(rev Revision) int {
	return sort.Search(len(m.recs), func(i int) bool { return !m.recs[i].Rev.Less(rev) })
}

func (m *memoryBackend) Get(rev Revision) (Record, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if i := m.find(rev); i < len(m.recs) && m.recs[i].Rev == rev && !m.recs[i].gone {
		return m.recs[i].Record, true, nil
	}
	return Record{}, false, nil
}

func (m *memoryBackend) Scan(from, to int64, fn func(Record) bool) error {
	m.mu.RLock()
	var out []Record
	for i := m.find(Revision{Main: from}); i < len(m.recs) && m.recs[i].Rev.Main <= to; i++ {
		if !m.recs[i].gone {
			out = append(out, m.recs[i].Record)
		}
	}
	m.mu.RUnlock()
	// fn runs without the lock: it may read the store.
	for _, r := range out {
		if !fn(r) {
			break
		}
	}
	return nil
}

func (m *memoryBackend) SetCompactRevision(rev int64) error {
	m.mu.Lock()
	m.meta.CompactRevision = rev
	m.mu.Unlock()
	return nil
}

func (m *memoryBackend) Remove(revs []Revision, finished int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, rev := range revs {
		if i := m.find(rev); i < len(m.recs) && m.recs[i].Rev == rev && !m.recs[i].gone {
			m.recs[i].gone = true
			m.recs[i].KV = KeyValue{}
			m.removed++
		}
	}
	if m.removed > len(m.recs)/2 {
		kept := make([]memRecord, 0, len(m.recs)-m.removed)
		for _, r := range m.recs {
			if !r.gone {
				kept = append(kept, r)
			}
		}
		m.recs, m.removed = kept, 0
	}
	if finished >= 0 {
		m.meta.FinishedCompactRevision = finished
	}
	return nil
}

func (m *memoryBackend) Close() error { return nil }
