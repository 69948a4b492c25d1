package etcdgrpc

import (
	"context"
	"errors"
	"io"
	"math/bits"
	"sync"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/metadata"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// watchServer is etcd's Watch service: one call is one etcdgw.WatchStream
// (the stream's rules, shared with the JSON gateway's /v3/watch) on the
// caller's session, with etcd 3.6's answers where 3.6 differs from the
// gateway's 3.4. The client's requests are read on a goroutine of their
// own and the answers written on the call's, as etcd's recvLoop and
// sendLoop; answers are encoded only as the client takes them.
type watchServer struct{ s *Server }

// fragmentBytes is where etcd splits an answer of a watch that asked for
// fragments: its max-request-bytes with the gRPC overhead.
const fragmentBytes = maxRecvMsgSize

func (ws watchServer) Watch(stream pb.Watch_WatchServer) error {
	c := entered(stream.Context())
	ctx := c.ctx
	if ws.s.opts.WatchLimiter != nil {
		ctx = api.WithWatchLimiter(ctx, ws.s.opts.WatchLimiter(clientOf(ctx, c.id)))
	}
	st := c.gw.NewWatchStream(ctx, etcdgw.WatchStreamOptions{RefuseNegativeStart: true, RequireLeader: requiresLeader(stream.Context())})
	defer st.Close()
	sendCtx, stop := context.WithCancel(ctx)
	defer stop()
	var fragments sync.Map // watch IDs whose answers may be split
	recvErr := make(chan error, 1)
	go func() {
		defer stop()
		recvErr <- receive(stream, st, &fragments)
	}()
	for {
		r, err := st.Next(sendCtx)
		if err != nil {
			select {
			case rerr := <-recvErr:
				if rerr != nil {
					return rerr
				}
			default:
			}
			switch {
			case errors.Is(err, context.Canceled), errors.Is(err, io.EOF):
				return toStatus(errWatchCanceled)
			}
			return toStatus(err)
		}
		wr := watchResponse(r)
		if r.Canceled && r.WatchID >= 0 {
			fragments.Delete(r.WatchID)
		}
		if _, split := fragments.Load(r.WatchID); split && len(r.Events) > 1 {
			err = sendFragments(wr, fragmentBytes, stream.Send)
		} else {
			err = stream.Send(wr)
		}
		if err != nil {
			return err
		}
	}
}

// requiresLeader reports whether the client asked that the stream end
// when its member has no leader (clientv3.WithRequireLeader's metadata,
// which etcd's stream interceptor reads): on an etcd cluster, the store's
// stream asks it in turn; one that did not ask waits across the window.
func requiresLeader(ctx context.Context) bool {
	md, _ := metadata.FromIncomingContext(ctx)
	ks := md[rpctypes.MetadataRequireLeaderKey]
	return len(ks) > 0 && ks[0] == rpctypes.MetadataHasLeader
}

// receive reads the client's requests until it closes its side (nil: the
// stream goes on, as etcd's does) or the stream breaks.
func receive(stream pb.Watch_WatchServer, st *etcdgw.WatchStream, fragments *sync.Map) error {
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if st.WaitForRoom() != nil {
			return nil
		}
		switch u := req.RequestUnion.(type) {
		case *pb.WatchRequest_CreateRequest:
			if u.CreateRequest == nil {
				break
			}
			cr := u.CreateRequest
			create := &etcdgw.WatchCreate{
				WatchRequest:   mvcc.WatchRequest{Key: cr.Key, RangeEnd: cr.RangeEnd, StartRevision: cr.StartRevision, PrevKv: cr.PrevKv},
				ProgressNotify: cr.ProgressNotify, WatchID: cr.WatchId, Fragment: cr.Fragment,
			}
			for _, f := range cr.Filters {
				create.Filters = append(create.Filters, mvcc.WatchFilter(f))
			}
			if id := st.Create(create); id >= 0 && cr.Fragment {
				fragments.Store(id, true)
			}
		case *pb.WatchRequest_CancelRequest:
			if u.CancelRequest != nil {
				st.Cancel(u.CancelRequest.WatchId)
			}
		case *pb.WatchRequest_ProgressRequest:
			if u.ProgressRequest != nil {
				st.RequestProgress()
			}
		}
		// etcd ignores a request of no known kind.
	}
}

func watchResponse(r *etcdgw.WatchResult) *pb.WatchResponse {
	return &pb.WatchResponse{
		Header:          header(r.Header),
		WatchId:         r.WatchID,
		Created:         r.Created,
		Canceled:        r.Canceled,
		CompactRevision: r.CompactRevision,
		CancelReason:    r.CancelReason,
		Events:          events(r.Events),
	}
}

// sendFragments sends wr in pieces of less than limit bytes, each holding
// at least one event, all flagged fragment but the last, as etcd does for
// a watch created with fragment.
func sendFragments(wr *pb.WatchResponse, limit int, send func(*pb.WatchResponse) error) error {
	if wr.Size() < limit {
		return send(wr)
	}
	all := wr.Events
	head := *wr
	head.Events, head.Fragment = nil, true
	base := head.Size() // with the fragment flag, as every piece but the last
	for len(all) > 0 {
		part := head
		size, n := base, 0
		for n < len(all) {
			es := all[n].Size()
			size += 1 + varintSize(uint64(es)) + es
			if n > 0 && size >= limit {
				break
			}
			n++
		}
		part.Events, all = all[:n], all[n:]
		part.Fragment = len(all) > 0
		if err := send(&part); err != nil {
			return err
		}
	}
	return nil
}

func varintSize(v uint64) int { return (bits.Len64(v|1) + 6) / 7 }
