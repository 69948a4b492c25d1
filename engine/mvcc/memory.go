package mvcc

import (
	"sort"
	"sync"
)

// memoryBackend keeps every record in memory: the browser's backend, and
// the reference the SQLite backend is tested against.
type memoryBackend struct {
	mu     sync.RWMutex
	byMain map[int64][]Record // the records of one main revision, by sub
	mains  []int64            // ascending
	meta   Meta
}

// NewMemoryBackend returns a Backend that keeps every record in memory.
func NewMemoryBackend() Backend {
	return &memoryBackend{byMain: map[int64][]Record{}, meta: Meta{CompactRevision: -1, FinishedCompactRevision: -1}}
}

func (m *memoryBackend) Load(fn func(Record) error) (Meta, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, main := range m.mains {
		for _, r := range m.byMain[main] {
			if err := fn(r); err != nil {
				return Meta{}, err
			}
		}
	}
	return m.meta, nil
}

func (m *memoryBackend) Commit(records []Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range records {
		if _, ok := m.byMain[r.Rev.Main]; !ok {
			m.mains = append(m.mains, r.Rev.Main)
		}
		m.byMain[r.Rev.Main] = append(m.byMain[r.Rev.Main], r)
	}
	return nil
}

func (m *memoryBackend) Get(rev Revision) (Record, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, r := range m.byMain[rev.Main] {
		if r.Rev.Sub == rev.Sub {
			return r, true, nil
		}
	}
	return Record{}, false, nil
}

func (m *memoryBackend) Scan(from, to int64, fn func(Record) bool) error {
	m.mu.RLock()
	i := sort.Search(len(m.mains), func(i int) bool { return m.mains[i] >= from })
	var out []Record
	for ; i < len(m.mains) && m.mains[i] <= to; i++ {
		out = append(out, m.byMain[m.mains[i]]...)
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
	emptied := false
	for _, rev := range revs {
		rs := m.byMain[rev.Main]
		for i, r := range rs {
			if r.Rev.Sub == rev.Sub {
				rs = append(rs[:i:i], rs[i+1:]...)
				break
			}
		}
		if len(rs) == 0 {
			delete(m.byMain, rev.Main)
			emptied = true
		} else {
			m.byMain[rev.Main] = rs
		}
	}
	if emptied {
		kept := m.mains[:0]
		for _, main := range m.mains {
			if _, ok := m.byMain[main]; ok {
				kept = append(kept, main)
			}
		}
		m.mains = kept
	}
	if finished >= 0 {
		m.meta.FinishedCompactRevision = finished
	}
	return nil
}

func (m *memoryBackend) Close() error { return nil }
