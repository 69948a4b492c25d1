package mvcc

import "sort"

// memoryBackend keeps every record in memory: the browser's backend, and
// the reference the SQLite backend is tested against. Records are committed
// in revision order, so they sit in revision order in fixed-size chunks
// (appending never copies what is already stored, and the garbage collector
// scans small arrays); Get and Scan are binary searches. Compaction marks
// records removed, and the chunks are repacked once most records are dead.
type memoryBackend struct {
	mu      rwMutex
	chunks  [][]memRecord // every chunk but the last is full
	n       int
	removed int
	meta    Meta
	leases  map[int64]int64 // lease ID -> granted TTL
}

const memChunk = 1024

type memRecord struct {
	Record
	gone bool
}

// NewMemoryBackend returns a Backend that keeps every record in memory.
func NewMemoryBackend() Backend {
	return &memoryBackend{meta: Meta{CompactRevision: -1, FinishedCompactRevision: -1}}
}

func (m *memoryBackend) at(i int) *memRecord { return &m.chunks[i/memChunk][i%memChunk] }

func (m *memoryBackend) push(r memRecord) {
	if len(m.chunks) == 0 || len(m.chunks[len(m.chunks)-1]) == memChunk {
		m.chunks = append(m.chunks, make([]memRecord, 0, memChunk))
	}
	last := &m.chunks[len(m.chunks)-1]
	*last = append(*last, r)
	m.n++
}

func (m *memoryBackend) Load(fn func(Record) error) (Meta, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for i := 0; i < m.n; i++ {
		if r := m.at(i); !r.gone {
			if err := fn(r.Record); err != nil {
				return Meta{}, err
			}
		}
	}
	return m.meta, nil
}

func (m *memoryBackend) Commit(records []Record) error {
	m.mu.Lock()
	for _, r := range records {
		m.push(memRecord{Record: r})
	}
	m.mu.Unlock()
	return nil
}

// find returns the index of the first record at or after rev.
func (m *memoryBackend) find(rev Revision) int {
	return sort.Search(m.n, func(i int) bool { return !m.at(i).Rev.Less(rev) })
}

func (m *memoryBackend) Get(rev Revision) (Record, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if i := m.find(rev); i < m.n {
		if r := m.at(i); r.Rev == rev && !r.gone {
			return r.Record, true, nil
		}
	}
	return Record{}, false, nil
}

// Scan copies at most one page of records under the read lock: a watcher
// catching up holds a page, never the history, and writers wait for one
// page at most.
func (m *memoryBackend) Scan(after Revision, to int64, limit PageLimit, page []Record) ([]Record, bool, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	n, size := 0, 0
	for i := sort.Search(m.n, func(i int) bool { return after.Less(m.at(i).Rev) }); i < m.n; i++ {
		r := m.at(i)
		if r.Rev.Main > to {
			break
		}
		if r.gone {
			continue
		}
		if limit.Full(n, size) {
			return page, true, nil
		}
		page = append(page, r.Record)
		n++
		size += r.Size()
	}
	return page, false, nil
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
		if i := m.find(rev); i < m.n {
			if r := m.at(i); r.Rev == rev && !r.gone {
				r.gone = true
				r.KV = KeyValue{}
				m.removed++
			}
		}
	}
	if m.removed > m.n/2 {
		old, n := m.chunks, m.n
		m.chunks, m.n, m.removed = nil, 0, 0
		for i := 0; i < n; i++ {
			if r := old[i/memChunk][i%memChunk]; !r.gone {
				m.push(r)
			}
		}
	}
	if finished >= 0 {
		m.meta.FinishedCompactRevision = finished
	}
	return nil
}

func (m *memoryBackend) Close() error { return nil }

func (m *memoryBackend) LoadLeases() ([]LeaseRecord, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]LeaseRecord, 0, len(m.leases))
	for id, ttl := range m.leases {
		out = append(out, LeaseRecord{ID: id, TTL: ttl})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (m *memoryBackend) SaveLease(l LeaseRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.leases == nil {
		m.leases = map[int64]int64{}
	}
	m.leases[l.ID] = l.TTL
	return nil
}

func (m *memoryBackend) DeleteLease(id int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.leases, id)
	return nil
}
