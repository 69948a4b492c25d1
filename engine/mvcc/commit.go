package mvcc

import "context"

// job is a unit of work for the committer.
type job struct {
	rev     int64
	records []Record
	events  []*Event
	compact int64        // with jobCompact: the compaction to record
	remove  []Revision   // physical compaction step
	finish  int64        // with remove: the compaction this step completes, or -1
	lease   *LeaseRecord // with jobLease: the lease to write (TTL 0: to delete)
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
	jobLease
)

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
			// The group's records go in the committer's own buffer, kept
			// from group to group as the jobs' are (a backend keeps none of
			// what Commit is given), where a new one grew with each group,
			// several allocations on every commit of two writes or more.
			records = s.group[:0]
			for _, j := range jobs[:n] {
				records = append(records, j.records...)
			}
		}
		if n > 0 {
			var err error
			if len(records) > 0 {
				err = s.backend.Commit(records)
			}
			if n > 1 {
				clear(records) // the keys and values are the jobs', not the buffer's to keep
				s.group = records[:0]
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
		case jobLease:
			err = s.commitLease(j.lease)
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
