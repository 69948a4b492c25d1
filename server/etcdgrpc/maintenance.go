package etcdgrpc

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// storageVersion is the version of the storage format etcd 3.6 reports.
const storageVersion = "3.6.0"

// maintenanceServer is etcd's Maintenance service as far as one member
// over a session has it: Status, Alarm and Defragment. Hashes, snapshots,
// moving the leader and downgrades are not served.
type maintenanceServer struct {
	pb.UnimplementedMaintenanceServer
	s *Server
}

func (*maintenanceServer) Status(ctx context.Context, _ *pb.StatusRequest) (*pb.StatusResponse, error) {
	st := entered(ctx).gw.Status(EmulatedVersion)
	quota := st.DBSizeQuota
	if quota == 0 {
		quota = defaultQuotaBytes
	}
	return &pb.StatusResponse{
		Header:           header(st.Header),
		Version:          st.Version,
		DbSize:           st.DBSize,
		Leader:           st.Leader,
		RaftIndex:        st.RaftIndex,
		RaftTerm:         st.RaftTerm,
		RaftAppliedIndex: st.RaftAppliedIndex,
		Errors:           st.Errors,
		DbSizeInUse:      st.DBSizeInUse,
		StorageVersion:   storageVersion,
		DbSizeQuota:      quota,
		DowngradeInfo:    &pb.DowngradeInfo{},
	}, nil
}

// defaultQuotaBytes is what etcd reports as its quota when it has none
// configured: its default, 2 GiB.
const defaultQuotaBytes = 2 << 30

func (*maintenanceServer) Alarm(ctx context.Context, r *pb.AlarmRequest) (*pb.AlarmResponse, error) {
	c := entered(ctx)
	out, err := c.gw.Alarm(ctx, &mvcc.AlarmRequest{Action: mvcc.AlarmAction(r.Action), MemberID: r.MemberID, Alarm: mvcc.AlarmType(r.Alarm)})
	if err != nil {
		return nil, toStatus(err)
	}
	resp := &pb.AlarmResponse{Header: header(c.gw.Header(out.Header.Revision))}
	for _, a := range out.Alarms {
		resp.Alarms = append(resp.Alarms, &pb.AlarmMember{MemberID: a.MemberID, Alarm: pb.AlarmType(a.Alarm)})
	}
	return resp, nil
}

func (*maintenanceServer) Defragment(ctx context.Context, _ *pb.DefragmentRequest) (*pb.DefragmentResponse, error) {
	if err := entered(ctx).gw.Defragment(ctx); err != nil {
		return nil, toStatus(err)
	}
	return &pb.DefragmentResponse{}, nil
}

// clusterServer is etcd's Cluster service for a single member: the
// session's own. Membership does not change.
type clusterServer struct {
	pb.UnimplementedClusterServer
	s *Server
}

func (cs *clusterServer) MemberList(ctx context.Context, _ *pb.MemberListRequest) (*pb.MemberListResponse, error) {
	c := entered(ctx)
	h := c.gw.Header(0)
	m := &pb.Member{ID: h.MemberID, Name: c.sess.Name, PeerURLs: []string{peerURL}}
	if cs.s.opts.ClientURL != "" {
		m.ClientURLs = []string{cs.s.opts.ClientURL}
	}
	return &pb.MemberListResponse{Header: header(h), Members: []*pb.Member{m}}, nil
}

// peerURL is the member's peer URL: a single member has no peers, and
// etcd's default is what a fresh etcd advertises.
const peerURL = "http://localhost:2380"
