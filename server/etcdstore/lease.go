package etcdstore

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strconv"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// A session's leases are the cluster's leases it granted: each holds a
// key LeasePrefix+<id in hex>, which goes with it, so that every replica
// knows them and a session can neither see nor revoke another's.

func (s *Store) leaseKey(id int64) []byte {
	return []byte(s.opts.LeasePrefix + strconv.FormatInt(id, 16))
}

// owns reports whether the session granted lease id (and it still lives).
func (s *Store) owns(ctx context.Context, id int64) (bool, error) {
	resp, err := s.kv.Range(ctx, &pb.RangeRequest{Key: s.leaseKey(id), CountOnly: true})
	if err != nil {
		return false, fromEtcd(ctx, err)
	}
	s.saw(resp.Header.Revision)
	return resp.Count == 1, nil
}

// LeaseGrant: see mvcc.Lessor. The lease is the cluster's; its mark takes
// a revision.
func (s *Store) LeaseGrant(ctx context.Context, r *mvcc.LeaseGrantRequest) (*mvcc.LeaseGrantResponse, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	resp, err := s.lease.LeaseGrant(ctx, &pb.LeaseGrantRequest{TTL: r.TTL, ID: r.ID})
	if err == nil && resp.Error != "" {
		err = &mvcc.Error{Code: mvcc.CodeUnknown, Message: resp.Error}
	}
	if err != nil {
		return nil, fromEtcd(ctx, err)
	}
	put, err := s.kv.Put(ctx, &pb.PutRequest{Key: s.leaseKey(resp.ID), Lease: resp.ID})
	if err != nil {
		// Without its mark the lease is nobody's: give it back.
		_, _ = s.lease.LeaseRevoke(context.WithoutCancel(ctx), &pb.LeaseRevokeRequest{ID: resp.ID})
		return nil, fromEtcd(ctx, err)
	}
	s.saw(put.Header.Revision)
	return &mvcc.LeaseGrantResponse{Header: header(put.Header), ID: resp.ID, TTL: resp.TTL}, nil
}

// LeaseRevoke: see mvcc.Lessor.
func (s *Store) LeaseRevoke(ctx context.Context, id int64) (mvcc.ResponseHeader, error) {
	if err := s.enter(); err != nil {
		return mvcc.ResponseHeader{}, err
	}
	defer s.leave()
	if ok, err := s.owns(ctx, id); err != nil || !ok {
		return mvcc.ResponseHeader{}, orNotFound(err)
	}
	resp, err := s.lease.LeaseRevoke(ctx, &pb.LeaseRevokeRequest{ID: id})
	if err != nil {
		return mvcc.ResponseHeader{}, fromEtcd(ctx, err)
	}
	s.saw(resp.Header.Revision)
	return header(resp.Header), nil
}

// LeaseRenew: see mvcc.Lessor.
func (s *Store) LeaseRenew(ctx context.Context, id int64) (int64, error) {
	if err := s.enter(); err != nil {
		return 0, err
	}
	defer s.leave()
	if ok, err := s.owns(ctx, id); err != nil || !ok {
		return 0, orNotFound(err)
	}
	resp, err := s.cli.KeepAliveOnce(ctx, clientLeaseID(id))
	if err != nil {
		return 0, fromEtcd(ctx, err)
	}
	return resp.TTL, nil
}

// LeaseTimeToLive: see mvcc.Lessor. The keys are the session's, without
// the lease's mark.
func (s *Store) LeaseTimeToLive(ctx context.Context, id int64, keys bool) (*mvcc.LeaseTimeToLiveResponse, error) {
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	if ok, err := s.owns(ctx, id); err != nil || !ok {
		return nil, orNotFound(err)
	}
	resp, err := s.lease.LeaseTimeToLive(ctx, &pb.LeaseTimeToLiveRequest{ID: id, Keys: keys})
	if err != nil {
		return nil, fromEtcd(ctx, err)
	}
	if resp.TTL == -1 {
		return nil, mvcc.ErrLeaseNotFound
	}
	out := &mvcc.LeaseTimeToLiveResponse{Header: header(resp.Header), ID: id, TTL: resp.TTL, GrantedTTL: resp.GrantedTTL}
	for _, k := range resp.Keys {
		if bytes.HasPrefix(k, s.prefix) {
			out.Keys = append(out.Keys, k[len(s.prefix):])
		}
	}
	slices.SortFunc(out.Keys, bytes.Compare)
	return out, nil
}

// Leases: see mvcc.Lessor.
func (s *Store) Leases(ctx context.Context) (mvcc.ResponseHeader, []int64) {
	if s.enter() != nil {
		return mvcc.ResponseHeader{Revision: s.rev.Load()}, nil
	}
	defer s.leave()
	resp, err := s.kv.Range(ctx, &pb.RangeRequest{Key: []byte(s.opts.LeasePrefix),
		RangeEnd: []byte(prefixEnd(s.opts.LeasePrefix)), KeysOnly: true})
	if err != nil {
		return mvcc.ResponseHeader{Revision: s.rev.Load()}, nil
	}
	s.saw(resp.Header.Revision)
	type left struct{ id, ttl int64 }
	var ls []left
	for _, kv := range resp.Kvs {
		id, err := strconv.ParseInt(string(kv.Key[len(s.opts.LeasePrefix):]), 16, 64)
		if err != nil {
			continue
		}
		ttl, err := s.lease.LeaseTimeToLive(ctx, &pb.LeaseTimeToLiveRequest{ID: id})
		if err != nil || ttl.TTL < 0 {
			continue
		}
		ls = append(ls, left{id, ttl.TTL})
	}
	slices.SortFunc(ls, func(a, b left) int { return cmp.Or(cmp.Compare(a.ttl, b.ttl), cmp.Compare(a.id, b.id)) })
	ids := make([]int64, len(ls))
	for i, l := range ls {
		ids[i] = l.id
	}
	return header(resp.Header), ids
}

// orNotFound is err, or ErrLeaseNotFound for a lease that is not the
// session's.
func orNotFound(err error) error {
	if err != nil {
		return err
	}
	return mvcc.ErrLeaseNotFound
}
