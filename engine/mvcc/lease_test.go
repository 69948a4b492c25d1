package mvcc

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

func newLeaseStore(t *testing.T) (*Store, *clock.Fake, Backend) {
	t.Helper()
	clock := clock.NewFake(time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC))
	b := NewMemoryBackend()
	return openMemory(t, b, Options{Clock: clock, MemberID: 0x1234}), clock, b
}

func grant(t *testing.T, s *Store, ttl int64) int64 {
	t.Helper()
	r, err := s.LeaseGrant(context.Background(), &LeaseGrantRequest{TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}

func putLeased(t *testing.T, s *Store, key string, lease int64) int64 {
	t.Helper()
	r, err := s.Put(context.Background(), &PutRequest{Key: []byte(key), Value: []byte("v"), Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	return r.Header.Revision
}

// nextWatch waits for the watcher's next response (the expiry loop runs on
// a goroutine of its own: the test waits for what it does, not for time).
func nextWatch(t *testing.T, w *Watcher) WatchResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := w.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestAnExpiredLeaseDeletesItsKeysInOneRevision(t *testing.T) {
	ctx := context.Background()
	s, clock, _ := newLeaseStore(t)
	id := grant(t, s, 10)
	putLeased(t, s, "b", id)
	putLeased(t, s, "a", id)
	putLeased(t, s, "c", 0)
	w, err := s.Watch(ctx, &WatchRequest{Key: []byte{0}, RangeEnd: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	clock.Step(9 * time.Second)
	if _, err := s.LeaseRenew(ctx, id); err != nil {
		t.Fatalf("a keep-alive before expiry: %v", err)
	}
	clock.Step(9 * time.Second) // 18 s after the grant, 9 after the renewal
	if ttl, err := s.LeaseTimeToLive(ctx, id, true); err != nil || ttl.TTL != 1 || ttl.GrantedTTL != 10 ||
		len(ttl.Keys) != 2 || string(ttl.Keys[0]) != "a" || string(ttl.Keys[1]) != "b" {
		t.Fatalf("time to live: %+v %v", ttl, err)
	}
	clock.Step(time.Second)
	r := nextWatch(t, w)
	if r.Header.Revision != 5 || len(r.Events) != 2 || r.Events[0].Type != EventDelete ||
		string(r.Events[0].Kv.Key) != "a" || string(r.Events[1].Kv.Key) != "b" || r.Events[1].Kv.ModRevision != 5 {
		t.Fatalf("expiry: %+v", r)
	}
	got, _ := s.Range(ctx, &RangeRequest{Key: []byte{0}, RangeEnd: []byte{0}})
	if len(got.Kvs) != 1 || string(got.Kvs[0].Key) != "c" {
		t.Fatalf("left after expiry: %v", got.Kvs)
	}
	if _, err := s.LeaseTimeToLive(ctx, id, false); err != ErrLeaseNotFound {
		t.Fatalf("an expired lease: %v", err)
	}
	if _, err := s.LeaseRenew(ctx, id); err != ErrLeaseNotFound {
		t.Fatalf("a keep-alive after expiry: %v", err)
	}
}

func TestRevokingALeaseWithoutKeysTakesNoRevision(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newLeaseStore(t)
	id := grant(t, s, 60)
	h, err := s.LeaseRevoke(ctx, id)
	if err != nil || h.Revision != 1 || s.Rev() != 1 {
		t.Fatalf("revoke: %+v %v, store at %d", h, err, s.Rev())
	}
	if _, err := s.LeaseRevoke(ctx, id); err != ErrLeaseNotFound {
		t.Fatalf("revoking again: %v", err)
	}
}

func TestLeaseGrantsAsEtcdDoes(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newLeaseStore(t)
	r, err := s.LeaseGrant(ctx, &LeaseGrantRequest{TTL: 1})
	if err != nil || r.TTL != MinLeaseTTL || r.ID>>48 != 0x1234 {
		t.Fatalf("a one-second lease: %+v %v", r, err)
	}
	if _, err := s.LeaseGrant(ctx, &LeaseGrantRequest{ID: r.ID, TTL: 5}); err != ErrLeaseExists {
		t.Fatalf("an ID in use: %v", err)
	}
	if _, err := s.LeaseGrant(ctx, &LeaseGrantRequest{ID: 7, TTL: MaxLeaseTTL + 1}); err != ErrLeaseTTLTooLarge {
		t.Fatalf("too long: %v", err)
	}
	if got, err := s.LeaseGrant(ctx, &LeaseGrantRequest{ID: 7, TTL: 30}); err != nil || got.ID != 7 {
		t.Fatalf("a chosen ID: %+v %v", got, err)
	}
	if _, err := s.Put(ctx, &PutRequest{Key: []byte("k"), Lease: 8}); err != ErrLeaseNotFound {
		t.Fatalf("a put with an unknown lease: %v", err)
	}
	if _, err := s.Txn(ctx, &TxnRequest{Success: []RequestOp{{Put: &PutRequest{Key: []byte("k"), Lease: 8}}}}); err != ErrLeaseNotFound {
		t.Fatalf("a txn put with an unknown lease: %v", err)
	}
	if _, err := s.Txn(ctx, &TxnRequest{Success: []RequestOp{{Put: &PutRequest{Key: []byte("k"), Lease: 7}}}}); err != nil {
		t.Fatalf("a txn put with a lease: %v", err)
	}
	_, ids := s.Leases(ctx)
	if len(ids) != 2 || ids[0] != r.ID || ids[1] != 7 {
		t.Fatalf("leases soonest first: %v", ids)
	}
}

// A put that gives a key another lease (or none) takes it from its old
// lease: revoking that one leaves the key alone.
func TestAKeyBelongsToTheLeaseOfItsLastPut(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newLeaseStore(t)
	a, b := grant(t, s, 60), grant(t, s, 60)
	putLeased(t, s, "k", a)
	putLeased(t, s, "k", b)
	putLeased(t, s, "j", a)
	putLeased(t, s, "j", 0)
	if _, err := s.LeaseRevoke(ctx, a); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Range(ctx, &RangeRequest{Key: []byte{0}, RangeEnd: []byte{0}}); got.Count != 2 || s.Rev() != 5 {
		t.Fatalf("after revoking a: %d keys at revision %d", got.Count, s.Rev())
	}
	if _, err := s.LeaseRevoke(ctx, b); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Range(ctx, &RangeRequest{Key: []byte{0}, RangeEnd: []byte{0}}); got.Count != 1 || string(got.Kvs[0].Key) != "j" {
		t.Fatalf("after revoking b: %v", got.Kvs)
	}
}

// Leases are durable: a store opened again on its backend has them, each
// with its whole TTL ahead, and expires them.
func TestLeasesOutliveTheStoreAndExpireAfterwards(t *testing.T) {
	ctx := context.Background()
	clock := clock.NewFake(time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC))
	b := NewMemoryBackend()
	s, err := Open(b, Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	id := grant(t, s, 30)
	putLeased(t, s, "k", id)
	clock.Step(29 * time.Second)
	s.Close()
	s = openMemory(t, b, Options{Clock: clock})
	if ttl, err := s.LeaseTimeToLive(ctx, id, true); err != nil || ttl.TTL != 30 || len(ttl.Keys) != 1 {
		t.Fatalf("after reopening: %+v %v", ttl, err)
	}
	w, err := s.Watch(ctx, &WatchRequest{Key: []byte("k")})
	if err != nil {
		t.Fatal(err)
	}
	clock.Step(30 * time.Second)
	if r := nextWatch(t, w); len(r.Events) != 1 || r.Events[0].Type != EventDelete {
		t.Fatalf("expiry after reopening: %+v", r)
	}
	if _, ids := s.Leases(ctx); len(ids) != 0 {
		t.Fatalf("leases left: %v", ids)
	}
	if recs, _ := b.(LeaseBackend).LoadLeases(); len(recs) != 0 {
		t.Fatalf("the backend still holds %v", recs)
	}
}

func TestAGrantIsRefusedWhileNOSPACEIsRaised(t *testing.T) {
	ctx := context.Background()
	s, _, _ := newLeaseStore(t)
	if _, err := s.Alarm(ctx, &AlarmRequest{Action: AlarmActivate, MemberID: 1, Alarm: AlarmNoSpace}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LeaseGrant(ctx, &LeaseGrantRequest{TTL: 10}); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("a grant under NOSPACE: %v", err)
	}
}
