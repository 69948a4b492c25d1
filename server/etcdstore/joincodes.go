package etcdstore

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/sqlite"
)

// A join code a teacher renews on one replica must reach the teacher's
// dashboards on every replica (the projector's browser may be served by
// another than the teacher's laptop), and the replicas share nothing but
// the cluster. The session's record keeps only the code's hash, which
// cannot be shown, so the renewing replica also puts the code itself,
// in clear, under <root>joincodes/<name>, on a lease of its own of
// JoinCodeNoticeTTL: every replica watches that prefix and relays a
// notice to its dashboards of the session once the session's record
// holds the notice's hash (classroom.Registry.FollowJoinCodes).
//
// The plaintext window, and why it is acceptable: the code is there for
// JoinCodeNoticeTTL at most (the lease deletes it even if the replica
// that put it is gone; ending the session deletes it at once), long
// enough for every watching replica to take it, also one whose watch the
// cluster moves to another member. After that it stays only in the
// cluster's history until a compaction passes it (with
// --etcd-compaction-interval, within two intervals) and in the members'
// write-ahead logs and snapshots until etcd rotates them. Whoever can read
// the cluster can read every session's keys and records anyway; the code
// adds only a way in as a student of that class, which the teacher
// closes by renewing it again, and it is shown on the projector to the
// room in the meantime. A code that was never renewed (the one given at
// creation) is never on the cluster.

// JoinCodeNoticeTTL is how long a renewed join code stays on the cluster
// in clear.
const JoinCodeNoticeTTL = 2 * time.Minute

// AnnounceJoinCode puts code, the join code session name was just given,
// on the cluster for JoinCodeNoticeTTL, for the other replicas'
// dashboards; sqlite.ErrNoSession if there is no such session (then
// nothing is put).
func (s *Sessions) AnnounceJoinCode(name, code string) error {
	ctx, cancel := s.ctx()
	defer cancel()
	lease, err := s.cli.Grant(ctx, int64(JoinCodeNoticeTTL/time.Second))
	if err != nil {
		return fmt.Errorf("etcd: announce the join code of %q: %w", name, err)
	}
	resp, err := s.cli.Txn(ctx).If(s.exists(name)).
		Then(clientv3.OpPut(s.key("joincodes", name), code, clientv3.WithLease(lease.ID))).Commit()
	if err == nil && resp.Succeeded {
		return nil
	}
	// Nothing holds the lease: it would expire by itself, but need not
	// wait for it.
	if _, rerr := s.cli.Revoke(ctx, lease.ID); rerr != nil && err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("etcd: announce the join code of %q: %w", name, err)
	}
	return fmt.Errorf("etcd: announce the join code of %q: %w", name, sqlite.ErrNoSession)
}

// WatchJoinCodes calls renewed, from a goroutine of its own, with each
// join code announced (AnnounceJoinCode, by whichever replica) after
// WatchJoinCodes returned, in the order of the cluster's revisions, until
// ctx ends. A notice may come again, or late (a watch started again from
// a compaction): renewed checks it against the session's record.
func (s *Sessions) WatchJoinCodes(ctx context.Context, renewed func(name, code string)) {
	prefix := s.root + "joincodes/"
	s.follow(ctx, prefix, clientv3.WithFilterDelete(), func(ev *clientv3.Event) {
		if name, err := url.PathUnescape(strings.TrimPrefix(string(ev.Kv.Key), prefix)); err == nil && ev.Type == clientv3.EventTypePut {
			renewed(name, string(ev.Kv.Value))
		}
	})
}
