package etcdgw

import (
	"context"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The calls below are etcd's server in front of its store, whatever the
// protocol: each request is checked in etcd's order (the gRPC server's
// receive limit, v3rpc's static checks, the raft entry limit, the caller's
// permissions), served by the store, and its answer held to the send limit
// before a byte of it is encoded. The JSON gateway decodes into them and
// encodes what they return; the gRPC server (server/etcdgrpc) does the
// same with etcd's protobuf messages, so the two protocols share every rule.

// Header is etcdserverpb.ResponseHeader.
type Header struct {
	ClusterID, MemberID uint64
	Revision            int64
	RaftTerm            uint64
}

// Header is the response header of an answer made at revision rev.
func (g *Gateway) Header(rev int64) Header {
	return Header{ClusterID: g.opts.ClusterID, MemberID: g.opts.MemberID, Revision: rev, RaftTerm: g.opts.RaftTerm}
}

// Store is the store the gateway serves.
func (g *Gateway) Store() mvcc.KV { return g.store }

// Range serves a RangeRequest.
func (g *Gateway) Range(ctx context.Context, r *mvcc.RangeRequest) (*mvcc.RangeResponse, error) {
	if err := firstError(checkMessageSize(rangeSize(r)), mvcc.CheckRange(r)); err != nil {
		return nil, err
	}
	out, err := g.store.Range(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := g.checkSend(rangeResponseSize(g.headerSize(out.Header.Revision), out)); err != nil {
		return nil, err
	}
	return out, nil
}

// Put serves a PutRequest.
func (g *Gateway) Put(ctx context.Context, r *mvcc.PutRequest) (*mvcc.PutResponse, error) {
	size := putSize(r)
	if err := firstError(checkMessageSize(size), mvcc.CheckPut(r), checkRaftSize(size), authorizeWrite(ctx, r.Key, nil)); err != nil {
		return nil, err
	}
	if r.Lease != 0 {
		// etcd's checkLeasePuts: a put with a lease needs the right to
		// write every key the lease holds.
		if err := g.authorizeLease(ctx, r.Lease); err != nil {
			return nil, err
		}
	}
	out, err := g.store.Put(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := g.checkSend(putResponseSize(g.headerSize(out.Header.Revision), out)); err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteRange serves a DeleteRangeRequest.
func (g *Gateway) DeleteRange(ctx context.Context, r *mvcc.DeleteRangeRequest) (*mvcc.DeleteRangeResponse, error) {
	size := deleteRangeSize(r)
	if err := firstError(checkMessageSize(size), mvcc.CheckDeleteRange(r), checkRaftSize(size), authorizeWrite(ctx, r.Key, r.RangeEnd)); err != nil {
		return nil, err
	}
	out, err := g.store.DeleteRange(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := g.checkSend(deleteRangeResponseSize(g.headerSize(out.Header.Revision), out)); err != nil {
		return nil, err
	}
	return out, nil
}

// Txn serves a TxnRequest. A txn whose branches only read is served
// without the raft limit and the write permissions, as etcd serves it
// without raft.
func (g *Gateway) Txn(ctx context.Context, r *mvcc.TxnRequest) (*mvcc.TxnResponse, error) {
	size := txnSize(r)
	err := firstError(checkMessageSize(size), mvcc.CheckTxn(r, g.store.MaxTxnOps()))
	if err == nil && !txnIsReadOnly(r) {
		err = firstError(checkRaftSize(size), authorizeTxn(ctx, r))
	}
	if err != nil {
		return nil, err
	}
	out, err := g.store.Txn(ctx, r)
	if err != nil {
		return nil, err
	}
	if err := g.checkSend(txnResponseSize(g.headerSize(out.Header.Revision), out)); err != nil {
		return nil, err
	}
	return out, nil
}

// Compact serves a CompactionRequest (the teacher's alone on a guarded
// session).
func (g *Gateway) Compact(ctx context.Context, r *mvcc.CompactionRequest) (*mvcc.CompactionResponse, error) {
	size := compactionSize(r)
	if err := firstError(checkMessageSize(size), checkRaftSize(size), authorizeCompaction(ctx)); err != nil {
		return nil, err
	}
	return g.store.Compact(ctx, r)
}

// Status is etcdserverpb.StatusResponse as far as one member has it.
type Status struct {
	Header Header
	// Version is the etcd version the protocol emulates.
	Version string
	// DBSize and DBSizeInUse are the session's figures as its bytes quota
	// counts them (mvcc.Usage); DBSizeQuota is the quota (0: none).
	DBSize, DBSizeInUse, DBSizeQuota int64
	// Leader is the member itself: a single member leads.
	Leader uint64
	// RaftIndex and RaftAppliedIndex report the store revision (etcd counts
	// raft entries, which this store does not have).
	RaftIndex, RaftAppliedIndex uint64
	RaftTerm                    uint64
	// Errors are the raised alarms as etcd prints them.
	Errors []string
}

// Status reports the member's status; version is the etcd version the
// caller's protocol emulates.
func (g *Gateway) Status(version string) Status {
	rev := g.store.Rev()
	u := g.store.Usage()
	var errs []string
	for _, a := range g.store.Alarms() {
		errs = append(errs, alarmText(a))
	}
	return Status{
		Header:           g.Header(rev),
		Version:          version,
		DBSize:           u.DBSize,
		DBSizeInUse:      u.DBSizeInUse,
		DBSizeQuota:      g.store.QuotaBackendBytes(),
		Leader:           g.opts.MemberID,
		RaftIndex:        uint64(rev),
		RaftAppliedIndex: uint64(rev),
		RaftTerm:         g.opts.RaftTerm,
		Errors:           errs,
	}
}

func (g *Gateway) headerSize(rev int64) int { return messageFieldSize(1, headerSize(g.Header(rev))) }

// Alarm lists, raises or lifts alarms. Listing is anyone's; raising and
// lifting, like defragmenting, are the teacher's (etcd's root's) on a
// guarded session.
func (g *Gateway) Alarm(ctx context.Context, r *mvcc.AlarmRequest) (*mvcc.AlarmResponse, error) {
	if r.Action != mvcc.AlarmGet {
		if err := authorizeCompaction(ctx); err != nil {
			return nil, err
		}
	}
	return g.store.Alarm(ctx, r)
}

// Defragment gives the room compactions freed back (the teacher's alone on
// a guarded session).
func (g *Gateway) Defragment(ctx context.Context) error {
	if err := authorizeCompaction(ctx); err != nil {
		return err
	}
	g.store.Defragment()
	return nil
}

// LeaseGrant grants a lease (mvcc.Store.LeaseGrant).
func (g *Gateway) LeaseGrant(ctx context.Context, r *mvcc.LeaseGrantRequest) (*mvcc.LeaseGrantResponse, error) {
	return g.store.LeaseGrant(ctx, r)
}

// LeaseRevoke revokes a lease and deletes its keys. As in etcd, whoever
// revokes must be allowed to delete every key the lease holds: a student
// may not revoke a lease that holds a key under /registry/.
func (g *Gateway) LeaseRevoke(ctx context.Context, id int64) (mvcc.ResponseHeader, error) {
	if err := g.authorizeLease(ctx, id); err != nil {
		return mvcc.ResponseHeader{}, err
	}
	return g.store.LeaseRevoke(ctx, id)
}

// authorizeLease is etcd's check that the caller may write every key a
// lease holds (a lease that does not exist holds none).
func (g *Gateway) authorizeLease(ctx context.Context, id int64) error {
	if mayAdmin(ctx) {
		return nil
	}
	ttl, err := g.store.LeaseTimeToLive(ctx, id, true)
	if err != nil {
		return nil
	}
	for _, k := range ttl.Keys {
		if err := authorizeWrite(ctx, k, nil); err != nil {
			return err
		}
	}
	return nil
}
