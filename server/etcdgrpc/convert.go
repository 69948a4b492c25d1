package etcdgrpc

import (
	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"

	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// Conversions between etcd's protobuf messages and the store's mirror of
// them (mvcc.RangeRequest is etcdserverpb.RangeRequest field for field).
// Requests are converted without copying their bytes: the store copies
// what it keeps. Responses get fresh messages, since the store's key-values
// are shared and a message is encoded after the call returns.

func header(h etcdgw.Header) *pb.ResponseHeader {
	return &pb.ResponseHeader{ClusterId: h.ClusterID, MemberId: h.MemberID, Revision: h.Revision, RaftTerm: h.RaftTerm}
}

func rangeRequest(r *pb.RangeRequest) *mvcc.RangeRequest {
	return &mvcc.RangeRequest{
		Key:               r.Key,
		RangeEnd:          r.RangeEnd,
		Limit:             r.Limit,
		Revision:          r.Revision,
		SortOrder:         mvcc.SortOrder(r.SortOrder),
		SortTarget:        mvcc.SortTarget(r.SortTarget),
		Serializable:      r.Serializable,
		KeysOnly:          r.KeysOnly,
		CountOnly:         r.CountOnly,
		MinModRevision:    r.MinModRevision,
		MaxModRevision:    r.MaxModRevision,
		MinCreateRevision: r.MinCreateRevision,
		MaxCreateRevision: r.MaxCreateRevision,
	}
}

func putRequest(r *pb.PutRequest) *mvcc.PutRequest {
	return &mvcc.PutRequest{Key: r.Key, Value: r.Value, Lease: r.Lease, PrevKv: r.PrevKv,
		IgnoreValue: r.IgnoreValue, IgnoreLease: r.IgnoreLease}
}

func deleteRangeRequest(r *pb.DeleteRangeRequest) *mvcc.DeleteRangeRequest {
	return &mvcc.DeleteRangeRequest{Key: r.Key, RangeEnd: r.RangeEnd, PrevKv: r.PrevKv}
}

func txnRequest(r *pb.TxnRequest) *mvcc.TxnRequest {
	t := &mvcc.TxnRequest{
		Compare: make([]mvcc.Compare, len(r.Compare)),
		Success: requestOps(r.Success),
		Failure: requestOps(r.Failure),
	}
	for i, c := range r.Compare {
		if c == nil {
			continue // an empty message: its key is empty, which the checks refuse
		}
		mc := &t.Compare[i]
		mc.Result, mc.Target, mc.Key, mc.RangeEnd = mvcc.CompareResult(c.Result), mvcc.CompareTarget(c.Target), c.Key, c.RangeEnd
		switch u := c.TargetUnion.(type) {
		case *pb.Compare_Version:
			mc.Version = u.Version
		case *pb.Compare_CreateRevision:
			mc.CreateRevision = u.CreateRevision
		case *pb.Compare_ModRevision:
			mc.ModRevision = u.ModRevision
		case *pb.Compare_Value:
			mc.Value = u.Value
		case *pb.Compare_Lease:
			mc.Lease = u.Lease
		}
	}
	return t
}

// requestOps converts a branch. An op whose request is unset (or set to
// an empty oneof) stays empty, which etcd's checks refuse with "key not
// found" as the store's do.
func requestOps(ops []*pb.RequestOp) []mvcc.RequestOp {
	if len(ops) == 0 {
		return nil
	}
	out := make([]mvcc.RequestOp, len(ops))
	for i, op := range ops {
		if op == nil {
			continue
		}
		switch u := op.Request.(type) {
		case *pb.RequestOp_RequestRange:
			if u.RequestRange != nil {
				out[i].Range = rangeRequest(u.RequestRange)
			}
		case *pb.RequestOp_RequestPut:
			if u.RequestPut != nil {
				out[i].Put = putRequest(u.RequestPut)
			}
		case *pb.RequestOp_RequestDeleteRange:
			if u.RequestDeleteRange != nil {
				out[i].DeleteRange = deleteRangeRequest(u.RequestDeleteRange)
			}
		case *pb.RequestOp_RequestTxn:
			if u.RequestTxn != nil {
				out[i].Txn = txnRequest(u.RequestTxn)
			}
		}
	}
	return out
}

func keyValue(kv *mvcc.KeyValue) *mvccpb.KeyValue {
	if kv == nil {
		return nil
	}
	return &mvccpb.KeyValue{Key: kv.Key, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision,
		Version: kv.Version, Value: kv.Value, Lease: kv.Lease}
}

// keyValues converts a list in two allocations, however long.
func keyValues(kvs []*mvcc.KeyValue) []*mvccpb.KeyValue {
	if len(kvs) == 0 {
		return nil
	}
	vals := make([]mvccpb.KeyValue, len(kvs))
	out := make([]*mvccpb.KeyValue, len(kvs))
	for i, kv := range kvs {
		vals[i] = mvccpb.KeyValue{Key: kv.Key, CreateRevision: kv.CreateRevision, ModRevision: kv.ModRevision,
			Version: kv.Version, Value: kv.Value, Lease: kv.Lease}
		out[i] = &vals[i]
	}
	return out
}

func rangeResponse(h *pb.ResponseHeader, r *mvcc.RangeResponse) *pb.RangeResponse {
	return &pb.RangeResponse{Header: h, Kvs: keyValues(r.Kvs), More: r.More, Count: r.Count}
}

func putResponse(h *pb.ResponseHeader, r *mvcc.PutResponse) *pb.PutResponse {
	return &pb.PutResponse{Header: h, PrevKv: keyValue(r.PrevKv)}
}

func deleteRangeResponse(h *pb.ResponseHeader, r *mvcc.DeleteRangeResponse) *pb.DeleteRangeResponse {
	return &pb.DeleteRangeResponse{Header: h, Deleted: r.Deleted, PrevKvs: keyValues(r.PrevKvs)}
}

// txnResponse converts a TxnResponse. Inside a txn etcd fills only the
// revision of each op's header, and leaves a nested txn's header empty.
func txnResponse(h *pb.ResponseHeader, r *mvcc.TxnResponse) *pb.TxnResponse {
	out := &pb.TxnResponse{Header: h, Succeeded: r.Succeeded}
	if len(r.Responses) == 0 {
		return out
	}
	out.Responses = make([]*pb.ResponseOp, len(r.Responses))
	for i := range r.Responses {
		op := &r.Responses[i]
		var resp pb.ResponseOp
		switch {
		case op.Range != nil:
			resp.Response = &pb.ResponseOp_ResponseRange{ResponseRange: rangeResponse(
				&pb.ResponseHeader{Revision: op.Range.Header.Revision}, op.Range)}
		case op.Put != nil:
			resp.Response = &pb.ResponseOp_ResponsePut{ResponsePut: putResponse(
				&pb.ResponseHeader{Revision: op.Put.Header.Revision}, op.Put)}
		case op.DeleteRange != nil:
			resp.Response = &pb.ResponseOp_ResponseDeleteRange{ResponseDeleteRange: deleteRangeResponse(
				&pb.ResponseHeader{Revision: op.DeleteRange.Header.Revision}, op.DeleteRange)}
		case op.Txn != nil:
			resp.Response = &pb.ResponseOp_ResponseTxn{ResponseTxn: txnResponse(&pb.ResponseHeader{}, op.Txn)}
		}
		out.Responses[i] = &resp
	}
	return out
}

func compactionRequest(r *pb.CompactionRequest) *mvcc.CompactionRequest {
	return &mvcc.CompactionRequest{Revision: r.Revision, Physical: r.Physical}
}
func event(e *mvcc.Event) *mvccpb.Event {
	return &mvccpb.Event{Type: mvccpb.Event_EventType(e.Type), Kv: keyValue(e.Kv), PrevKv: keyValue(e.PrevKv)}
}

func events(evs []*mvcc.Event) []*mvccpb.Event {
	if len(evs) == 0 {
		return nil
	}
	out := make([]*mvccpb.Event, len(evs))
	for i, e := range evs {
		out[i] = event(e)
	}
	return out
}
