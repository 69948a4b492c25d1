package etcdgrpc

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
)

// kvServer is etcd's KV service: each call is the gateway's (the shared
// checks, permissions and limits) on the caller's session.
type kvServer struct{ s *Server }

func (kvServer) Range(ctx context.Context, r *pb.RangeRequest) (*pb.RangeResponse, error) {
	c := entered(ctx)
	out, err := c.gw.Range(ctx, rangeRequest(r))
	if err != nil {
		return nil, toStatus(err)
	}
	return rangeResponse(header(c.gw.Header(out.Header.Revision)), out), nil
}

func (kvServer) Put(ctx context.Context, r *pb.PutRequest) (*pb.PutResponse, error) {
	c := entered(ctx)
	out, err := c.gw.Put(ctx, putRequest(r))
	if err != nil {
		return nil, toStatus(err)
	}
	return putResponse(header(c.gw.Header(out.Header.Revision)), out), nil
}

func (kvServer) DeleteRange(ctx context.Context, r *pb.DeleteRangeRequest) (*pb.DeleteRangeResponse, error) {
	c := entered(ctx)
	out, err := c.gw.DeleteRange(ctx, deleteRangeRequest(r))
	if err != nil {
		return nil, toStatus(err)
	}
	return deleteRangeResponse(header(c.gw.Header(out.Header.Revision)), out), nil
}

func (kvServer) Txn(ctx context.Context, r *pb.TxnRequest) (*pb.TxnResponse, error) {
	c := entered(ctx)
	out, err := c.gw.Txn(ctx, txnRequest(r))
	if err != nil {
		return nil, toStatus(err)
	}
	return txnResponse(header(c.gw.Header(out.Header.Revision)), out), nil
}

func (kvServer) Compact(ctx context.Context, r *pb.CompactionRequest) (*pb.CompactionResponse, error) {
	c := entered(ctx)
	out, err := c.gw.Compact(ctx, compactionRequest(r))
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.CompactionResponse{Header: header(c.gw.Header(out.Header.Revision))}, nil
}
