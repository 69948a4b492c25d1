package etcdstore

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The session's requests go to the cluster with its prefix before every
// key and range end, and its answers come back with the prefix taken off:
// the session never sees another's keys, nor its own prefix.

// key is k on the cluster.
func (s *Store) key(k []byte) []byte {
	out := make([]byte, 0, len(s.prefix)+len(k))
	return append(append(out, s.prefix...), k...)
}

// rangeEnd is a range's end on the cluster: none for a single key, the end
// of the prefix for "\x00" (every key from the first on), else the end
// under the prefix.
func (s *Store) rangeEnd(end []byte) []byte {
	switch {
	case len(end) == 0:
		return nil
	case len(end) == 1 && end[0] == 0:
		return s.end
	}
	return s.key(end)
}

// Range: see mvcc.ReadView.
func (s *Store) Range(ctx context.Context, r *mvcc.RangeRequest) (*mvcc.RangeResponse, error) {
	if len(r.Key) == 0 {
		return nil, mvcc.ErrEmptyKey
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	resp, err := s.kv.Range(ctx, s.rangeRequest(r))
	if err != nil {
		err = fromEtcd(ctx, err)
		if err == mvcc.ErrCompacted && r.Revision > s.compactRev.Load() {
			// A compaction this store did not hear of (etcdctl compact).
			_ = s.learnCompaction(ctx)
		}
		return nil, err
	}
	s.saw(resp.Header.Revision)
	return s.rangeResponse(resp), nil
}

// Put: see mvcc.WriteView.
func (s *Store) Put(ctx context.Context, r *mvcc.PutRequest) (*mvcc.PutResponse, error) {
	if len(r.Key) == 0 {
		return nil, mvcc.ErrEmptyKey
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	resp, err := s.kv.Put(ctx, s.putRequest(r))
	if err != nil {
		return nil, fromEtcd(ctx, err)
	}
	s.saw(resp.Header.Revision)
	return &mvcc.PutResponse{Header: header(resp.Header), PrevKv: s.keyValue(resp.PrevKv)}, nil
}

// DeleteRange: see mvcc.WriteView.
func (s *Store) DeleteRange(ctx context.Context, r *mvcc.DeleteRangeRequest) (*mvcc.DeleteRangeResponse, error) {
	if len(r.Key) == 0 {
		return nil, mvcc.ErrEmptyKey
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	resp, err := s.kv.DeleteRange(ctx, s.deleteRequest(r))
	if err != nil {
		return nil, fromEtcd(ctx, err)
	}
	s.saw(resp.Header.Revision)
	return s.deleteResponse(resp), nil
}

// Txn: see mvcc.WriteView. The store's own checks run first (an empty key
// would no longer be empty once prefixed); the cluster runs its own again.
func (s *Store) Txn(ctx context.Context, r *mvcc.TxnRequest) (*mvcc.TxnResponse, error) {
	if err := mvcc.CheckTxn(r, s.opts.MaxTxnOps); err != nil {
		return nil, err
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	resp, err := s.kv.Txn(ctx, s.txnRequest(r))
	if err != nil {
		return nil, fromEtcd(ctx, err)
	}
	s.saw(resp.Header.Revision)
	return s.txnResponse(resp), nil
}

func header(h *pb.ResponseHeader) mvcc.ResponseHeader {
	if h == nil {
		return mvcc.ResponseHeader{}
	}
	return mvcc.ResponseHeader{Revision: h.Revision}
}

func (s *Store) rangeRequest(r *mvcc.RangeRequest) *pb.RangeRequest {
	return &pb.RangeRequest{
		Key:               s.key(r.Key),
		RangeEnd:          s.rangeEnd(r.RangeEnd),
		Limit:             r.Limit,
		Revision:          r.Revision,
		SortOrder:         pb.RangeRequest_SortOrder(r.SortOrder),
		SortTarget:        pb.RangeRequest_SortTarget(r.SortTarget),
		Serializable:      r.Serializable,
		KeysOnly:          r.KeysOnly,
		CountOnly:         r.CountOnly,
		MinModRevision:    r.MinModRevision,
		MaxModRevision:    r.MaxModRevision,
		MinCreateRevision: r.MinCreateRevision,
		MaxCreateRevision: r.MaxCreateRevision,
	}
}

func (s *Store) putRequest(r *mvcc.PutRequest) *pb.PutRequest {
	return &pb.PutRequest{Key: s.key(r.Key), Value: r.Value, Lease: r.Lease, PrevKv: r.PrevKv,
		IgnoreValue: r.IgnoreValue, IgnoreLease: r.IgnoreLease}
}

func (s *Store) deleteRequest(r *mvcc.DeleteRangeRequest) *pb.DeleteRangeRequest {
	return &pb.DeleteRangeRequest{Key: s.key(r.Key), RangeEnd: s.rangeEnd(r.RangeEnd), PrevKv: r.PrevKv}
}

func (s *Store) txnRequest(r *mvcc.TxnRequest) *pb.TxnRequest {
	out := &pb.TxnRequest{Success: s.requestOps(r.Success), Failure: s.requestOps(r.Failure)}
	for _, c := range r.Compare {
		pc := &pb.Compare{Result: pb.Compare_CompareResult(c.Result), Target: pb.Compare_CompareTarget(c.Target),
			Key: s.key(c.Key), RangeEnd: s.rangeEnd(c.RangeEnd)}
		switch c.Target {
		case mvcc.CompareVersion:
			pc.TargetUnion = &pb.Compare_Version{Version: c.Version}
		case mvcc.CompareCreate:
			pc.TargetUnion = &pb.Compare_CreateRevision{CreateRevision: c.CreateRevision}
		case mvcc.CompareMod:
			pc.TargetUnion = &pb.Compare_ModRevision{ModRevision: c.ModRevision}
		case mvcc.CompareValue:
			pc.TargetUnion = &pb.Compare_Value{Value: c.Value}
		case mvcc.CompareLease:
			pc.TargetUnion = &pb.Compare_Lease{Lease: c.Lease}
		}
		out.Compare = append(out.Compare, pc)
	}
	return out
}

func (s *Store) requestOps(ops []mvcc.RequestOp) []*pb.RequestOp {
	if len(ops) == 0 {
		return nil
	}
	out := make([]*pb.RequestOp, len(ops))
	for i, op := range ops {
		var o pb.RequestOp
		switch {
		case op.Range != nil:
			o.Request = &pb.RequestOp_RequestRange{RequestRange: s.rangeRequest(op.Range)}
		case op.Put != nil:
			o.Request = &pb.RequestOp_RequestPut{RequestPut: s.putRequest(op.Put)}
		case op.DeleteRange != nil:
			o.Request = &pb.RequestOp_RequestDeleteRange{RequestDeleteRange: s.deleteRequest(op.DeleteRange)}
		case op.Txn != nil:
			o.Request = &pb.RequestOp_RequestTxn{RequestTxn: s.txnRequest(op.Txn)}
		}
		out[i] = &o
	}
	return out
}

// keyValue is kv without the prefix (nil for nil).
func (s *Store) keyValue(kv *mvccpb.KeyValue) *mvcc.KeyValue {
	if kv == nil {
		return nil
	}
	return &mvcc.KeyValue{Key: kv.Key[min(len(s.prefix), len(kv.Key)):], CreateRevision: kv.CreateRevision,
		ModRevision: kv.ModRevision, Version: kv.Version, Value: kv.Value, Lease: kv.Lease}
}

// keyValues converts a list in two allocations, however long.
func (s *Store) keyValues(kvs []*mvccpb.KeyValue) []*mvcc.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	vals := make([]mvcc.KeyValue, len(kvs))
	out := make([]*mvcc.KeyValue, len(kvs))
	for i, kv := range kvs {
		vals[i] = mvcc.KeyValue{Key: kv.Key[min(len(s.prefix), len(kv.Key)):], CreateRevision: kv.CreateRevision,
			ModRevision: kv.ModRevision, Version: kv.Version, Value: kv.Value, Lease: kv.Lease}
		out[i] = &vals[i]
	}
	return out
}

func (s *Store) rangeResponse(r *pb.RangeResponse) *mvcc.RangeResponse {
	return &mvcc.RangeResponse{Header: header(r.Header), Kvs: s.keyValues(r.Kvs), More: r.More, Count: r.Count}
}

func (s *Store) deleteResponse(r *pb.DeleteRangeResponse) *mvcc.DeleteRangeResponse {
	return &mvcc.DeleteRangeResponse{Header: header(r.Header), Deleted: r.Deleted, PrevKvs: s.keyValues(r.PrevKvs)}
}

func (s *Store) txnResponse(r *pb.TxnResponse) *mvcc.TxnResponse {
	out := &mvcc.TxnResponse{Header: header(r.Header), Succeeded: r.Succeeded}
	if len(r.Responses) == 0 {
		return out
	}
	out.Responses = make([]mvcc.ResponseOp, len(r.Responses))
	for i, op := range r.Responses {
		switch u := op.Response.(type) {
		case *pb.ResponseOp_ResponseRange:
			out.Responses[i].Range = s.rangeResponse(u.ResponseRange)
		case *pb.ResponseOp_ResponsePut:
			out.Responses[i].Put = &mvcc.PutResponse{Header: header(u.ResponsePut.Header), PrevKv: s.keyValue(u.ResponsePut.PrevKv)}
		case *pb.ResponseOp_ResponseDeleteRange:
			out.Responses[i].DeleteRange = s.deleteResponse(u.ResponseDeleteRange)
		case *pb.ResponseOp_ResponseTxn:
			out.Responses[i].Txn = s.txnResponse(u.ResponseTxn)
		}
	}
	return out
}
