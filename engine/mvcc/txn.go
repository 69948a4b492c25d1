package mvcc

import (
	"bytes"
	"context"
)

// Txn: see WriteView. A txn without writes reads under the read lock at
// the visible revision; one with writes runs against the index at the
// newest revision taken, under the write lock.
func (s *Store) Txn(ctx context.Context, r *TxnRequest) (*TxnResponse, error) {
	if err := CheckTxn(r, s.opts.MaxTxnOps); err != nil {
		return nil, err
	}
	for _, ops := range [][]RequestOp{r.Success, r.Failure} {
		if len(ops) == 0 || (len(ops) == 1 && ops[0].Txn == nil) {
			// One put or delete cannot overlap itself: skip building the
			// sets on the most common path (every unary Put and DeleteRange).
			continue
		}
		if _, _, err := checkIntervals(ops); err != nil {
			return nil, err
		}
	}
	if !txnHasWrites(r) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.execTxn(r, s.visibleRev.Load(), nil)
	}
	s.mu.Lock()
	if len(s.alarms) != 0 {
		if err := s.alarmRefusalLocked(putCost(r)); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	tx := s.newWriteTxn()
	resp, err := s.execTxn(r, s.pendingRev, tx)
	if err != nil {
		tx.rollback()
		s.mu.Unlock()
		return nil, err
	}
	// A txn that wrote nothing still waits its turn: its compares may have
	// observed writes that are not yet committed.
	j, err := s.queueTxnLocked(tx)
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	resp.Header.Revision = j.rev
	s.kick()
	if err := s.wait(ctx, j); err != nil {
		return nil, err
	}
	s.recycle(tx)
	return resp, nil
}

// CheckTxn is etcd's checkTxnRequest: the widest of compare, success and
// failure counts against maxOps (its --max-txn-ops; Store.MaxTxnOps), nested
// txns against what is left; compares need a key and so does every op.
func CheckTxn(r *TxnRequest, maxOps int) error {
	opc := max(len(r.Compare), len(r.Success), len(r.Failure))
	if opc > maxOps {
		return ErrTooManyOps
	}
	for i := range r.Compare {
		if len(r.Compare[i].Key) == 0 {
			return ErrEmptyKey
		}
	}
	for _, ops := range [][]RequestOp{r.Success, r.Failure} {
		for i := range ops {
			if err := checkRequestOp(&ops[i], maxOps-opc); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckDeleteRange is etcd's checkDeleteRequest: a key.
func CheckDeleteRange(r *DeleteRangeRequest) error {
	if len(r.Key) == 0 {
		return ErrEmptyKey
	}
	return nil
}

func checkRequestOp(op *RequestOp, maxOps int) error {
	switch {
	case op.Range != nil:
		return CheckRange(op.Range)
	case op.Put != nil:
		return CheckPut(op.Put)
	case op.DeleteRange != nil:
		return CheckDeleteRange(op.DeleteRange)
	case op.Txn != nil:
		return CheckTxn(op.Txn, maxOps)
	}
	// An op with no request: etcd answers this, oddly, with "key not found".
	return ErrKeyNotFound
}

// interval is a half-open key interval [begin, end), compared as etcd's
// interval tree compares string-affine intervals: an end that sorts before
// the begin (such as "\x00") makes an interval that contains nothing.
type interval struct{ begin, end []byte }

func (iv interval) contains(k []byte) bool {
	return bytes.Compare(iv.begin, k) <= 0 && (iv.end == nil || bytes.Compare(k, iv.end) < 0)
}

// checkIntervals is etcd's duplicate-key rule: within the ops that may run
// together, no key is put twice or put inside a deleted range. Puts in the
// then and else branches of a nested txn may repeat each other.
func checkIntervals(ops []RequestOp) (map[string]struct{}, []interval, error) {
	var dels []interval
	for i := range ops {
		d := ops[i].DeleteRange
		if d == nil {
			continue
		}
		if len(d.RangeEnd) != 0 {
			dels = append(dels, interval{d.Key, d.RangeEnd})
		} else {
			dels = append(dels, interval{d.Key, append(append([]byte(nil), d.Key...), 0)})
		}
	}
	intersects := func(dels []interval, k string) bool {
		for _, iv := range dels {
			if iv.contains([]byte(k)) {
				return true
			}
		}
		return false
	}
	puts := map[string]struct{}{}
	for i := range ops {
		t := ops[i].Txn
		if t == nil {
			continue
		}
		putsThen, delsThen, err := checkIntervals(t.Success)
		if err != nil {
			return nil, dels, err
		}
		putsElse, delsElse, err := checkIntervals(t.Failure)
		if err != nil {
			return nil, dels, err
		}
		for k := range putsThen {
			if _, ok := puts[k]; ok || intersects(dels, k) {
				return nil, dels, ErrDuplicateKey
			}
			puts[k] = struct{}{}
		}
		for k := range putsElse {
			if _, ok := puts[k]; ok {
				if _, safe := putsThen[k]; !safe {
					return nil, dels, ErrDuplicateKey
				}
			}
			if intersects(dels, k) {
				return nil, dels, ErrDuplicateKey
			}
			puts[k] = struct{}{}
		}
		dels = append(dels, delsThen...)
		dels = append(dels, delsElse...)
	}
	for i := range ops {
		p := ops[i].Put
		if p == nil {
			continue
		}
		k := string(p.Key)
		if _, ok := puts[k]; ok || intersects(dels, k) {
			return nil, dels, ErrDuplicateKey
		}
		puts[k] = struct{}{}
	}
	return puts, dels, nil
}

func txnHasWrites(r *TxnRequest) bool {
	for _, ops := range [][]RequestOp{r.Success, r.Failure} {
		for i := range ops {
			if ops[i].Put != nil || ops[i].DeleteRange != nil || (ops[i].Txn != nil && txnHasWrites(ops[i].Txn)) {
				return true
			}
		}
	}
	return false
}

// writeTxn collects the changes of one write txn and can undo its index
// changes if the txn fails half way.
type writeTxn struct {
	s       *Store
	begin   int64
	records []Record
	events  []*Event
	undo    []keyIndexUndo // one per key the txn touched

	// Room for the common txn of one change, and its job: one allocation,
	// reused by the store's next write once this one has finished (see
	// recycle). The events are not kept here: watchers keep them.
	recordBuf [1]Record
	undoBuf   [1]keyIndexUndo
	job       job
}

// newWriteTxn starts a write txn; the caller holds mu.
func (s *Store) newWriteTxn() *writeTxn {
	tx := s.spareTxn.Swap(nil)
	if tx == nil {
		tx = &writeTxn{s: s}
	}
	tx.begin = s.pendingRev
	tx.records, tx.events, tx.undo = tx.recordBuf[:0], nil, tx.undoBuf[:0]
	return tx
}

// recycle keeps tx for a later write once its job has finished and its
// caller has the response. Nothing else holds it by then: the committer is
// done with the job (finish touches it no more once it wakes the waiter),
// readers copy in-flight records, and the events that watchers keep live in
// each put's own allocation. A writeTxn with its job is 400 bytes of
// pointers to allocate and scan per write, which the browser's single
// thread feels most.
func (s *Store) recycle(tx *writeTxn) {
	clear(tx.recordBuf[:])
	clear(tx.undoBuf[:])
	tx.records, tx.events, tx.undo = nil, nil, nil
	tx.job = job{}
	s.spareTxn.CompareAndSwap(nil, tx)
}

func (tx *writeTxn) rev() int64 {
	if len(tx.records) > 0 {
		return tx.begin + 1
	}
	return tx.begin
}

func (tx *writeTxn) touch(key []byte) *keyIndex {
	ki, u := tx.s.index.keyFor(key)
	for i := range tx.undo {
		if tx.undo[i].ki == ki {
			return ki
		}
	}
	tx.undo = append(tx.undo, u)
	return ki
}

func (tx *writeTxn) rollback() {
	for i := len(tx.undo) - 1; i >= 0; i-- {
		tx.undo[i].restore(tx.s.index)
	}
	tx.undo = nil
}

func (tx *writeTxn) put(key, value []byte, lease int64) {
	rev := Revision{Main: tx.begin + 1, Sub: int64(len(tx.records))}
	ki := tx.touch(key)
	// The new KeyValue and its event share one allocation.
	c := &struct {
		kv  storedKV
		ev  Event
		evs [1]*Event // the txn's event list while it has one event
	}{}
	kv := &c.kv.init(KeyValue{Key: ki.key, ModRevision: rev.Main, Value: append([]byte(nil), value...), Lease: lease}).KeyValue
	if l := ki.newestAt(tx.begin + 1); l != nil {
		kv.CreateRevision, kv.Version = l.CreateRevision, l.Version+1
	} else if _, created, ver, ok := ki.get(tx.begin + 1); ok {
		kv.CreateRevision, kv.Version = created, ver+1
	} else {
		kv.CreateRevision, kv.Version = rev.Main, 1
	}
	ki.put(rev, recordSize(len(kv.Key), len(kv.Value)), &c.kv)
	tx.records = append(tx.records, Record{Rev: rev, KV: *kv})
	c.ev = Event{Type: EventPut, Kv: kv}
	if tx.events == nil {
		c.evs[0] = &c.ev
		tx.events = c.evs[:]
	} else {
		tx.events = append(tx.events, &c.ev)
	}
}

func (tx *writeTxn) tombstone(ki *keyIndex) {
	rev := Revision{Main: tx.begin + 1, Sub: int64(len(tx.records))}
	tx.touch(ki.key)
	ki.tombstone(rev, recordSize(len(ki.key), 0))
	kv := &KeyValue{Key: ki.key, ModRevision: rev.Main}
	tx.records = append(tx.records, Record{Rev: rev, Tombstone: true, KV: *kv})
	tx.events = append(tx.events, &Event{Type: EventDelete, Kv: kv})
}

// execTxn evaluates compares against the view before the txn (cur), checks
// the chosen paths, and applies them. tx is nil for a read-only txn.
func (s *Store) execTxn(r *TxnRequest, cur int64, tx *writeTxn) (*TxnResponse, error) {
	path, err := s.comparePath(r, cur)
	if err != nil {
		return nil, err
	}
	if err := s.checkPath(r, path, cur, tx != nil); err != nil {
		return nil, err
	}
	// The response and the room for one op's response come in one
	// allocation, with the put's response when that op is a put: most txns
	// (kube-apiserver's updates among them) run one op on the branch taken.
	res := &struct {
		resp TxnResponse
		one  [1]ResponseOp
		put  PutResponse
	}{}
	resp := &res.resp
	ops := r.Success
	if !path[0] {
		ops = r.Failure
	}
	if len(ops) == 1 {
		resp.Responses = res.one[:]
		if ops[0].Put != nil {
			res.one[0].Put = &res.put
		}
	}
	if _, err := s.applyTxn(r, path, cur, tx, resp); err != nil {
		return nil, err
	}
	resp.Header.Revision = cur
	return resp, nil
}

// comparePath evaluates the compares of the txn and of every nested txn on
// the chosen branches, all against the state before the txn, as etcd does.
func (s *Store) comparePath(r *TxnRequest, cur int64) ([]bool, error) {
	ok, err := s.compareAll(r.Compare, cur)
	if err != nil {
		return nil, err
	}
	path := []bool{ok}
	ops := r.Success
	if !ok {
		ops = r.Failure
	}
	for i := range ops {
		if ops[i].Txn == nil {
			continue
		}
		sub, err := s.comparePath(ops[i].Txn, cur)
		if err != nil {
			return nil, err
		}
		path = append(path, sub...)
	}
	return path, nil
}

func (s *Store) compareAll(cs []Compare, cur int64) (bool, error) {
	for i := range cs {
		ok, err := s.compare(&cs[i], cur)
		if err != nil || !ok {
			return false, err
		}
	}
	return true, nil
}

// compare is etcd's applyCompare: over a range, every existing key must
// pass; a missing key compares as a zero KeyValue, except that a VALUE
// compare on missing keys always fails.
func (s *Store) compare(c *Compare, cur int64) (bool, error) {
	// Each key is compared as it is read (no list of them is built), but
	// the walk goes on after a failed compare so that a read error on a
	// later key still wins, as when etcd reads the range first.
	var err error
	found, pass := false, true
	s.index.visit(c.Key, rangeEnd(c.RangeEnd), func(ki *keyIndex) bool {
		var kv *KeyValue
		var ok bool
		if kv, ok, err = s.visible(ki, cur, true); err != nil {
			return false
		}
		if ok {
			found = true
			pass = pass && compareKV(c, kv)
		}
		return true
	})
	if err != nil {
		return false, err
	}
	if !found {
		if c.Target == CompareValue {
			return false, nil
		}
		return compareKV(c, &KeyValue{}), nil
	}
	return pass, nil
}

func compareKV(c *Compare, kv *KeyValue) bool {
	var result int
	switch c.Target {
	case CompareValue:
		v := c.Value
		if v == nil {
			v = []byte{}
		}
		result = bytes.Compare(kv.Value, v)
	case CompareCreate:
		result = cmpInt64(kv.CreateRevision, c.CreateRevision)
	case CompareMod:
		result = cmpInt64(kv.ModRevision, c.ModRevision)
	case CompareVersion:
		result = cmpInt64(kv.Version, c.Version)
	case CompareLease:
		result = cmpInt64(kv.Lease, c.Lease)
	}
	switch c.Result {
	case CompareEqual:
		return result == 0
	case CompareNotEqual:
		return result != 0
	case CompareGreater:
		return result > 0
	case CompareLess:
		return result < 0
	}
	return true
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// checkPath validates the ops on the chosen path before anything is
// applied, in etcd's order: first every put of a write txn (ignore_value or
// ignore_lease on a missing key, unknown leases), then every range's
// revision.
func (s *Store) checkPath(r *TxnRequest, path []bool, cur int64, write bool) error {
	if write {
		if _, err := s.checkOps(r, path, cur, checkPuts); err != nil {
			return err
		}
	}
	_, err := s.checkOps(r, path, cur, checkRanges)
	return err
}

// pathCheck names the passes of checkPath. They are not callbacks: a
// function value that receives the request's ops would make every
// caller's request escape to the heap.
type pathCheck int

const (
	checkPuts pathCheck = iota
	checkRanges
)

// checkOps runs one pass of checkPath over every non-txn op on the chosen
// path, depth first, and returns how many nested txns it consumed from path.
func (s *Store) checkOps(r *TxnRequest, path []bool, cur int64, pass pathCheck) (int, error) {
	ops := r.Success
	if !path[0] {
		ops = r.Failure
	}
	used := 0
	for i := range ops {
		if t := ops[i].Txn; t != nil {
			n, err := s.checkOps(t, path[1+used:], cur, pass)
			if err != nil {
				return 0, err
			}
			used += n + 1
			continue
		}
		if err := s.checkOp(&ops[i], cur, pass); err != nil {
			return 0, err
		}
	}
	return used, nil
}

func (s *Store) checkOp(op *RequestOp, cur int64, pass pathCheck) error {
	if pass == checkRanges {
		if op.Range == nil {
			return nil
		}
		switch rev := op.Range.Revision; {
		case rev == 0:
		case rev > cur:
			return ErrFutureRev
		case rev < s.compactRev.Load():
			return ErrCompacted
		}
		return nil
	}
	p := op.Put
	if p == nil {
		return nil
	}
	if p.IgnoreValue || p.IgnoreLease {
		ki := s.index.lookup(p.Key)
		if ki == nil {
			return ErrKeyNotFound
		}
		if _, _, _, ok := ki.get(cur); !ok {
			return ErrKeyNotFound
		}
	}
	if p.Lease != 0 && !s.leaseExistsLocked(p.Lease) {
		return ErrLeaseNotFound
	}
	return nil
}

// applyTxn runs the chosen branch. Responses of ops inside the txn carry
// only a revision in their header (the txn's view at that op); nested txn
// responses carry an empty header, as etcd's do.
func (s *Store) applyTxn(r *TxnRequest, path []bool, cur int64, tx *writeTxn, resp *TxnResponse) (int, error) {
	ops := r.Success
	resp.Succeeded = path[0]
	if !path[0] {
		ops = r.Failure
	}
	if resp.Responses == nil || len(resp.Responses) != len(ops) {
		resp.Responses = make([]ResponseOp, len(ops))
	}
	used := 0
	view := func() int64 {
		if tx != nil {
			return tx.rev()
		}
		return cur
	}
	for i := range ops {
		op := &ops[i]
		switch {
		case op.Range != nil:
			rr := &RangeResponse{}
			if err := s.rangeAt(op.Range, view(), rr); err != nil {
				return 0, err
			}
			rr.Header.Revision = view()
			resp.Responses[i].Range = rr
		case op.Put != nil:
			pr := resp.Responses[i].Put // room the caller made, if any
			if pr == nil {
				pr = &PutResponse{}
			}
			if err := s.applyPut(op.Put, tx, pr); err != nil {
				return 0, err
			}
			resp.Responses[i].Put = pr
		case op.DeleteRange != nil:
			dr, err := s.applyDelete(op.DeleteRange, tx)
			if err != nil {
				return 0, err
			}
			resp.Responses[i].DeleteRange = dr
		case op.Txn != nil:
			sub := &TxnResponse{}
			n, err := s.applyTxn(op.Txn, path[1+used:], cur, tx, sub)
			if err != nil {
				return 0, err
			}
			used += n + 1
			resp.Responses[i].Txn = sub
		}
	}
	return used, nil
}

func (s *Store) applyPut(p *PutRequest, tx *writeTxn, resp *PutResponse) error {
	value, lease := p.Value, p.Lease
	if p.IgnoreValue || p.IgnoreLease || p.PrevKv {
		var prev *KeyValue
		if ki := s.index.lookup(p.Key); ki != nil {
			if mod, created, ver, ok := ki.get(tx.rev()); ok {
				var err error
				if prev, err = s.valueAt(ki, mod, created, ver); err != nil {
					return err
				}
			}
		}
		if (p.IgnoreValue || p.IgnoreLease) && prev == nil {
			return ErrKeyNotFound
		}
		if p.IgnoreValue {
			value = prev.Value
		}
		if p.IgnoreLease {
			lease = prev.Lease
		}
		if p.PrevKv && prev != nil {
			resp.PrevKv = prev.Clone()
		}
	}
	tx.put(p.Key, value, lease)
	resp.Header.Revision = tx.rev()
	return nil
}

func (s *Store) applyDelete(d *DeleteRangeRequest, tx *writeTxn) (*DeleteRangeResponse, error) {
	resp := &DeleteRangeResponse{}
	view := tx.rev()
	var victims []*keyIndex
	var err error
	s.index.visit(d.Key, rangeEnd(d.RangeEnd), func(ki *keyIndex) bool {
		var kv *KeyValue
		var ok bool
		if kv, ok, err = s.visible(ki, view, d.PrevKv); err != nil {
			return false
		}
		if !ok {
			return true
		}
		if d.PrevKv {
			resp.PrevKvs = append(resp.PrevKvs, kv.Clone())
		}
		victims = append(victims, ki)
		return true
	})
	if err != nil {
		return nil, err
	}
	// Tombstone after the walk: the index must not change under the B-tree
	// iteration.
	for _, ki := range victims {
		tx.tombstone(ki)
	}
	resp.Deleted = int64(len(victims))
	resp.Header.Revision = tx.rev()
	return resp, nil
}
