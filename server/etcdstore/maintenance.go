package etcdstore

import (
	"context"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/mvcc"
)

func clientLeaseID(id int64) clientv3.LeaseID { return clientv3.LeaseID(id) }

func prefixEnd(p string) string { return clientv3.GetPrefixRangeEnd(p) }

// Compact compacts the cluster with Options.CompactCluster, and refuses a
// session's compaction with ErrClusterCompaction otherwise: etcd compacts
// every key of the cluster, not one prefix.
func (s *Store) Compact(ctx context.Context, r *mvcc.CompactionRequest) (*mvcc.CompactionResponse, error) {
	if !s.opts.CompactCluster {
		return nil, ErrClusterCompaction
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	resp, err := s.kv.Compact(ctx, &pb.CompactionRequest{Revision: r.Revision, Physical: r.Physical})
	if err != nil {
		return nil, fromEtcd(ctx, err)
	}
	s.saw(resp.Header.Revision)
	s.sawCompaction(r.Revision)
	return &mvcc.CompactionResponse{Header: header(resp.Header)}, nil
}

// ClusterCompaction says who compacts the store's history, and when, for a
// session that would time compactions of its own (its compactionInterval):
// the cluster, every session's history at once. Empty with
// Options.CompactCluster, where the session's compaction is the cluster's.
func (s *Store) ClusterCompaction() string {
	if s.opts.CompactCluster {
		return ""
	}
	when := "this server leaves it to the cluster's operator (--etcd-compaction-interval=0: etcdctl compact)"
	if d := s.opts.CompactionInterval; d > 0 {
		when = "this server compacts it every " + d.String() + " (--etcd-compaction-interval), to the revision of the interval before, as kube-apiserver does"
	}
	return "this session is stored on an etcd cluster, where compaction is the cluster's, every session's history at once: " +
		when + "; a session's own compactionInterval can only be 0s (no compaction of its own)"
}

// Alarm lists the cluster's alarms; raising or lifting one is an
// operator's (ErrClusterAlarm).
func (s *Store) Alarm(ctx context.Context, r *mvcc.AlarmRequest) (*mvcc.AlarmResponse, error) {
	if r.Action != mvcc.AlarmGet {
		return nil, ErrClusterAlarm
	}
	if err := s.enter(); err != nil {
		return nil, err
	}
	defer s.leave()
	resp, err := s.cli.AlarmList(ctx)
	if err != nil {
		return nil, fromEtcd(ctx, err)
	}
	// etcd 3.4 answers an alarm list without a header.
	out := &mvcc.AlarmResponse{Header: header(resp.Header)}
	if out.Header.Revision == 0 {
		out.Header.Revision = s.Rev()
	}
	for _, a := range resp.Alarms {
		if r.Alarm == mvcc.AlarmNone || mvcc.AlarmType(a.Alarm) == r.Alarm {
			out.Alarms = append(out.Alarms, mvcc.AlarmMember{MemberID: a.MemberID, Alarm: mvcc.AlarmType(a.Alarm)})
		}
	}
	return out, nil
}

// Alarms lists the cluster's alarms (none when it does not answer within
// Options.RequestTimeout).
func (s *Store) Alarms() []mvcc.AlarmMember {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.RequestTimeout)
	defer cancel()
	resp, err := s.Alarm(ctx, &mvcc.AlarmRequest{Action: mvcc.AlarmGet})
	if err != nil {
		return nil
	}
	return resp.Alarms
}

// Usage is the size of the database of the member the client talks to
// (the cluster's, every session's) and the session's keys; no index is
// held in this process's memory.
func (s *Store) Usage() mvcc.Usage {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.RequestTimeout)
	defer cancel()
	var u mvcc.Usage
	if eps := s.cli.Endpoints(); len(eps) > 0 {
		if st, err := s.cli.Status(ctx, eps[0]); err == nil {
			u.DBSize, u.DBSizeInUse = st.DbSize, st.DbSizeInUse
		}
	}
	if resp, err := s.kv.Range(ctx, &pb.RangeRequest{Key: s.prefix, RangeEnd: s.end, CountOnly: true}); err == nil {
		u.Keys = resp.Count
	}
	return u
}

// Defragment leaves the cluster as it is: defragmenting a member blocks
// it while it rewrites its whole file, which is an operator's decision
// (etcdctl defrag), not a session's.
func (s *Store) Defragment() {}
