package mvcc

import (
	"context"
	"sort"
)

// Compact (see Maintenance) moves the compaction line and compacts the
// key index under the write lock, and queues the logical record and the
// removal steps behind the writes before it.
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
