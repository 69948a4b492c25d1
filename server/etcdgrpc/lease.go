package etcdgrpc

import (
	"context"
	"errors"
	"io"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// leaseServer is etcd's Lease service over the session's leases
// (mvcc.Store's lessor).
type leaseServer struct{ s *Server }

func (leaseServer) LeaseGrant(ctx context.Context, r *pb.LeaseGrantRequest) (*pb.LeaseGrantResponse, error) {
	c := entered(ctx)
	out, err := c.gw.LeaseGrant(ctx, &mvcc.LeaseGrantRequest{TTL: r.TTL, ID: r.ID})
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.LeaseGrantResponse{Header: header(c.gw.Header(out.Header.Revision)), ID: out.ID, TTL: out.TTL}, nil
}

func (leaseServer) LeaseRevoke(ctx context.Context, r *pb.LeaseRevokeRequest) (*pb.LeaseRevokeResponse, error) {
	c := entered(ctx)
	h, err := c.gw.LeaseRevoke(ctx, r.ID)
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.LeaseRevokeResponse{Header: header(c.gw.Header(h.Revision))}, nil
}

// LeaseTimeToLive answers an unknown lease with TTL -1, not an error, as
// etcd does.
func (leaseServer) LeaseTimeToLive(ctx context.Context, r *pb.LeaseTimeToLiveRequest) (*pb.LeaseTimeToLiveResponse, error) {
	c := entered(ctx)
	out, err := c.gw.Store().LeaseTimeToLive(ctx, r.ID, r.Keys)
	if errors.Is(err, mvcc.ErrLeaseNotFound) {
		return &pb.LeaseTimeToLiveResponse{Header: header(c.gw.Header(c.gw.Store().Rev())), ID: r.ID, TTL: -1}, nil
	}
	if err != nil {
		return nil, toStatus(err)
	}
	return &pb.LeaseTimeToLiveResponse{Header: header(c.gw.Header(out.Header.Revision)), ID: out.ID, TTL: out.TTL,
		GrantedTTL: out.GrantedTTL, Keys: out.Keys}, nil
}

func (leaseServer) LeaseLeases(ctx context.Context, _ *pb.LeaseLeasesRequest) (*pb.LeaseLeasesResponse, error) {
	c := entered(ctx)
	h, ids := c.gw.Store().Leases(ctx)
	resp := &pb.LeaseLeasesResponse{Header: header(c.gw.Header(h.Revision)), Leases: make([]*pb.LeaseStatus, len(ids))}
	for i, id := range ids {
		resp.Leases[i] = &pb.LeaseStatus{ID: id}
	}
	return resp, nil
}

// LeaseKeepAlive renews a lease for each request and answers its TTL (0
// for a lease that is unknown or expired), until the client closes its
// side; when the client goes away etcd answers "no leader".
func (leaseServer) LeaseKeepAlive(stream pb.Lease_LeaseKeepAliveServer) error {
	c := entered(stream.Context())
	errc := make(chan error, 1)
	go func() {
		for {
			req, err := stream.Recv()
			if err == io.EOF {
				errc <- nil
				return
			}
			if err != nil {
				errc <- err
				return
			}
			ttl, err := c.gw.Store().LeaseRenew(stream.Context(), req.ID)
			if errors.Is(err, mvcc.ErrLeaseNotFound) {
				ttl, err = 0, nil
			}
			if err != nil {
				errc <- toStatus(err)
				return
			}
			resp := &pb.LeaseKeepAliveResponse{Header: header(c.gw.Header(c.gw.Store().Rev())), ID: req.ID, TTL: ttl}
			if err := stream.Send(resp); err != nil {
				errc <- err
				return
			}
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-stream.Context().Done():
		if errors.Is(stream.Context().Err(), context.Canceled) {
			return toStatus(errNoLeader)
		}
		return stream.Context().Err()
	}
}
