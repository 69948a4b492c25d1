package mvcc

import (
	"context"
	"sort"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

// Leases are etcd's: a lease lives for its TTL unless a keep-alive renews
// it, and when it is revoked, or expires, every key whose current value
// was put with it is deleted, all in one revision (one write txn, keys in
// order), as etcd's lessor revokes a lease. A lease with no keys takes no
// revision. Which keys a lease holds is read from the key index (each
// key's newest put carries its lease) rather than kept beside it, so a
// write that fails half way, or a restart, needs no bookkeeping of its own.
//
// A lease is granted, revoked and kept durably through the committer, in
// order with the writes around it (a put with a lease commits after the
// grant it needs); a renewal is not written, as etcd writes none. After a
// restart (or a session loaded again) every lease has its whole TTL ahead
// of it again, as etcd's new leader gives every lease. Expiry is driven by
// Options.Clock: one goroutine per store that holds leases, asleep until
// the earliest expiry.

// MaxLeaseTTL is etcd's longest lease, in seconds.
const MaxLeaseTTL = 9000000000

// MinLeaseTTL is etcd's shortest lease with its default election timeout
// (1.5 election timeouts, rounded up to seconds): a shorter TTL is raised
// to it.
const MinLeaseTTL = 2

// Errors of the lessor, with etcd's texts.
var (
	ErrLeaseExists      = &Error{CodeFailedPrecondition, "etcdserver: lease already exists"}
	ErrLeaseTTLTooLarge = &Error{CodeOutOfRange, "etcdserver: too large lease TTL"}
)

// LeaseGrantRequest is etcdserverpb.LeaseGrantRequest: TTL in seconds, ID
// 0 for one the store picks.
type LeaseGrantRequest struct{ TTL, ID int64 }

// LeaseGrantResponse is etcdserverpb.LeaseGrantResponse.
type LeaseGrantResponse struct {
	Header  ResponseHeader
	ID, TTL int64
}

// LeaseTimeToLiveResponse is etcdserverpb.LeaseTimeToLiveResponse: the
// seconds left, the TTL granted and, when asked, the keys the lease holds
// (in key order).
type LeaseTimeToLiveResponse struct {
	Header     ResponseHeader
	ID, TTL    int64
	GrantedTTL int64
	Keys       [][]byte
}

// LeaseRecord is what a backend keeps of a lease: its ID and granted TTL.
type LeaseRecord struct{ ID, TTL int64 }

// LeaseBackend is the part of a Backend that keeps leases across
// restarts (etcd's lease bucket). Both of this repository's backends have
// it; a Backend without it keeps leases in memory only. Its writes come
// from the committer, in order with Commit's.
type LeaseBackend interface {
	LoadLeases() ([]LeaseRecord, error)
	SaveLease(l LeaseRecord) error
	DeleteLease(id int64) error
}

// lessor is the store's leases. Its fields are guarded by the store's mu.
type lessor struct {
	clock   clock.Clock
	leases  map[int64]*lease
	lastID  int64
	running bool          // the expiry loop runs
	wake    chan struct{} // tells the loop that the earliest expiry moved
}

type lease struct {
	id, ttl int64
	expiry  time.Time
}

// openLessor loads the backend's leases, each with its whole TTL ahead;
// Open then starts their expiry.
func (s *Store) openLessor() error {
	l := &s.lessor
	l.clock = s.opts.Clock
	if l.clock == nil {
		l.clock = clock.Real{}
	}
	l.leases = map[int64]*lease{}
	l.wake = make(chan struct{}, 1)
	// IDs as etcd's request ID generator makes them: the member in the
	// top 16 bits, the time in milliseconds below, counting up.
	l.lastID = int64(s.opts.MemberID&0xffff)<<48 | (l.clock.Now().UnixMilli()&(1<<40-1))<<8
	lb, ok := s.backend.(LeaseBackend)
	if !ok {
		return nil
	}
	recs, err := lb.LoadLeases()
	if err != nil {
		return err
	}
	now := l.clock.Now()
	for _, r := range recs {
		l.leases[r.ID] = &lease{id: r.ID, ttl: r.TTL, expiry: now.Add(time.Duration(r.TTL) * time.Second)}
	}
	return nil
}

// leaseExistsLocked reports whether lease id is granted (the caller holds
// mu): a put with an unknown lease fails with ErrLeaseNotFound.
func (s *Store) leaseExistsLocked(id int64) bool {
	_, ok := s.lessor.leases[id]
	return ok
}

// leaseCost is what a grant counts against the bytes quota while NOSPACE
// is raised: it writes, so it is refused.
const leaseCost = RecordOverhead

// LeaseGrant grants a lease of r.TTL seconds (at least MinLeaseTTL) with
// ID r.ID, or one the store picks when it is 0. It fails with
// ErrLeaseTTLTooLarge beyond MaxLeaseTTL, ErrLeaseExists for an ID in use,
// and as any write does while an alarm is raised.
func (s *Store) LeaseGrant(ctx context.Context, r *LeaseGrantRequest) (*LeaseGrantResponse, error) {
	s.mu.Lock()
	if len(s.alarms) != 0 {
		if err := s.alarmRefusalLocked(leaseCost); err != nil {
			s.mu.Unlock()
			return nil, err
		}
	}
	l := &s.lessor
	id := r.ID
	for id == 0 || (r.ID == 0 && l.leases[id] != nil) {
		l.lastID = (l.lastID + 1) & (1<<63 - 1)
		id = l.lastID
	}
	if r.TTL > MaxLeaseTTL {
		s.mu.Unlock()
		return nil, ErrLeaseTTLTooLarge
	}
	if l.leases[id] != nil {
		s.mu.Unlock()
		return nil, ErrLeaseExists
	}
	ttl := max(r.TTL, MinLeaseTTL)
	j := &job{kind: jobLease, lease: &LeaseRecord{ID: id, TTL: ttl}}
	if err := s.submitLocked(j); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	ls := &lease{id: id, ttl: ttl, expiry: l.clock.Now().Add(time.Duration(ttl) * time.Second)}
	l.leases[id] = ls
	s.startLessorLocked()
	s.mu.Unlock()
	s.kick()
	if err := s.wait(ctx, j); err != nil {
		return nil, err
	}
	return &LeaseGrantResponse{Header: ResponseHeader{Revision: s.Rev()}, ID: id, TTL: ttl}, nil
}

// LeaseRevoke revokes lease id: its keys are deleted in one revision
// (none when it holds none), and it is gone. It fails with
// ErrLeaseNotFound for an unknown lease.
func (s *Store) LeaseRevoke(ctx context.Context, id int64) (ResponseHeader, error) {
	s.mu.Lock()
	if len(s.alarms) != 0 {
		if err := s.alarmRefusalLocked(0); err != nil {
			s.mu.Unlock()
			return ResponseHeader{}, err
		}
	}
	if !s.leaseExistsLocked(id) {
		s.mu.Unlock()
		return ResponseHeader{}, ErrLeaseNotFound
	}
	tx := s.newWriteTxn()
	for c := s.index.order.seekFirst(); c.valid(); c.next() {
		if ki := c.ki(); ki.latest != nil && ki.latest.Lease == id {
			tx.tombstone(ki)
		}
	}
	j, err := s.queueTxnLocked(tx)
	if err != nil {
		s.mu.Unlock()
		return ResponseHeader{}, err
	}
	drop := &job{kind: jobLease, lease: &LeaseRecord{ID: id}}
	if err := s.submitLocked(drop); err != nil {
		s.mu.Unlock()
		return ResponseHeader{}, err
	}
	delete(s.lessor.leases, id)
	s.mu.Unlock()
	s.kick()
	if err := s.wait(ctx, j); err != nil {
		return ResponseHeader{}, err
	}
	rev := j.rev
	s.recycle(tx)
	if err := s.wait(ctx, drop); err != nil {
		return ResponseHeader{}, err
	}
	return ResponseHeader{Revision: rev}, nil
}

// LeaseRenew is one keep-alive: lease id gets its whole TTL ahead again,
// which it returns. It fails with ErrLeaseNotFound for a lease that is
// unknown or has expired (whose revocation is under way).
func (s *Store) LeaseRenew(ctx context.Context, id int64) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.lessor.leases[id]
	now := s.lessor.clock.Now()
	if l == nil || !now.Before(l.expiry) {
		return 0, ErrLeaseNotFound
	}
	l.expiry = now.Add(time.Duration(l.ttl) * time.Second)
	return l.ttl, nil
}

// LeaseTimeToLive reports lease id: the seconds it has left, its granted
// TTL and, with keys, the keys it holds. It fails with ErrLeaseNotFound
// for an unknown lease.
func (s *Store) LeaseTimeToLive(ctx context.Context, id int64, keys bool) (*LeaseTimeToLiveResponse, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	l := s.lessor.leases[id]
	if l == nil {
		return nil, ErrLeaseNotFound
	}
	resp := &LeaseTimeToLiveResponse{Header: ResponseHeader{Revision: s.visibleRev.Load()}, ID: id, GrantedTTL: l.ttl,
		TTL: max(int64(l.expiry.Sub(s.lessor.clock.Now()).Seconds()), 0)}
	if keys {
		for c := s.index.order.seekFirst(); c.valid(); c.next() {
			if ki := c.ki(); ki.latest != nil && ki.latest.Lease == id {
				resp.Keys = append(resp.Keys, append([]byte(nil), ki.key...))
			}
		}
	}
	return resp, nil
}

// Leases lists the leases, soonest to expire first.
func (s *Store) Leases(ctx context.Context) (ResponseHeader, []int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ls := make([]*lease, 0, len(s.lessor.leases))
	for _, l := range s.lessor.leases {
		ls = append(ls, l)
	}
	sort.Slice(ls, func(i, j int) bool {
		if !ls[i].expiry.Equal(ls[j].expiry) {
			return ls[i].expiry.Before(ls[j].expiry)
		}
		return ls[i].id < ls[j].id
	})
	ids := make([]int64, len(ls))
	for i, l := range ls {
		ids[i] = l.id
	}
	return ResponseHeader{Revision: s.visibleRev.Load()}, ids
}

// startLessorLocked starts the expiry loop if it does not run, or wakes it
// to look at the leases again (the caller holds mu).
func (s *Store) startLessorLocked() {
	l := &s.lessor
	if !l.running {
		l.running = true
		go s.expireLeases()
		return
	}
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// expireLeases sleeps until the earliest expiry, revokes every lease that
// has expired by then (each in its own revision), and sleeps again; it
// stops when the store closes or holds no lease.
func (s *Store) expireLeases() {
	l := &s.lessor
	for {
		s.mu.Lock()
		var next time.Time
		for _, ls := range l.leases {
			if next.IsZero() || ls.expiry.Before(next) {
				next = ls.expiry
			}
		}
		if next.IsZero() {
			l.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		t := l.clock.NewTimer(next.Sub(l.clock.Now()))
		select {
		case <-t.C():
			s.revokeExpired()
		case <-l.wake:
			t.Stop()
		case <-s.closing:
			t.Stop()
			s.mu.Lock()
			l.running = false
			s.mu.Unlock()
			return
		}
	}
}

// revokeExpired revokes the leases whose time is up, soonest first.
func (s *Store) revokeExpired() {
	s.mu.RLock()
	now := s.lessor.clock.Now()
	var due []*lease
	for _, ls := range s.lessor.leases {
		if !now.Before(ls.expiry) {
			due = append(due, ls)
		}
	}
	s.mu.RUnlock()
	sort.Slice(due, func(i, j int) bool { return due[i].expiry.Before(due[j].expiry) })
	for _, ls := range due {
		// A revocation that fails (the store stopped, an alarm) is tried
		// again after etcd's retry interval; one that finds the lease gone
		// (a client revoked it meanwhile) has nothing to do.
		if _, err := s.LeaseRevoke(context.Background(), ls.id); err != nil && err != ErrLeaseNotFound {
			s.mu.Lock()
			ls.expiry = s.lessor.clock.Now().Add(expiredLeaseRetryInterval)
			s.mu.Unlock()
		}
	}
}

// expiredLeaseRetryInterval is how long etcd waits to revoke again an
// expired lease whose revocation failed.
const expiredLeaseRetryInterval = 3 * time.Second

// commitLease writes or deletes a lease record (TTL 0: deleted) for the
// committer, if the backend keeps leases.
func (s *Store) commitLease(r *LeaseRecord) error {
	lb, ok := s.backend.(LeaseBackend)
	if !ok {
		return nil
	}
	if r.TTL == 0 {
		return lb.DeleteLease(r.ID)
	}
	return lb.SaveLease(*r)
}
