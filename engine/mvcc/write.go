package mvcc

import "context"

// Put (see WriteView) is a txn of one put, taken without the txn
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
	if err := CheckPut(r); err != nil {
		return err
	}
	s.mu.Lock()
	if len(s.alarms) != 0 {
		if err := s.alarmRefusalLocked(recordSize(len(r.Key), len(r.Value))); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	if r.Lease != 0 && !s.leaseExistsLocked(r.Lease) {
		// A unary put looks its lease up before anything else (etcd's
		// applier, after its alarms).
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

// DeleteRange (see WriteView) is a txn of one delete.
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

// CheckPut is etcd's checkPutRequest: a key, and no value or lease given
// with ignore_value or ignore_lease.
func CheckPut(r *PutRequest) error {
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
