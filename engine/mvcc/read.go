package mvcc

import (
	"bytes"
	"context"
	"sort"
)

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

// Range (see ReadView) only allocates the response and inlines, so a
// caller that does not keep the response reads a key without any
// allocation.
func (s *Store) Range(ctx context.Context, r *RangeRequest) (resp *RangeResponse, err error) {
	resp = &RangeResponse{}
	if err = s.rangeInto(r, resp); err != nil {
		resp = nil
	}
	return resp, err
}

func (s *Store) rangeInto(r *RangeRequest, resp *RangeResponse) error {
	if err := CheckRange(r); err != nil {
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

// CheckRange is etcd's checkRangeRequest: a key, and sort options it knows.
func CheckRange(r *RangeRequest) error {
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

func (s kvSort) Len() int { return len(s.kvs) }

func (s kvSort) Swap(i, j int) { s.kvs[i], s.kvs[j] = s.kvs[j], s.kvs[i] }

func (s kvSort) Less(i, j int) bool { return s.less(s.kvs[i], s.kvs[j]) }
