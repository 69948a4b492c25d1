// Package etcdstore is an mvcc.KV on a real etcd cluster, through etcd's
// official Go client (go.etcd.io/etcd/client/v3): a session's keys live
// under its own prefix of the cluster's keyspace and are shown without it,
// so that the gateway, the Kubernetes layer and the lessons run on the
// cluster exactly as they run on the embedded engine.
//
// What changes on a cluster, and why:
//
//   - Revisions are etcd's, global to the cluster: a session's revision
//     jumps when another session (or anything else on the cluster)
//     writes. A new session is not at revision 1.
//   - Compaction is etcd's, and etcd compacts the whole keyspace, not one
//     prefix. Compact therefore refuses a session's own request
//     (ErrClusterCompaction says why) unless the store was opened with
//     CompactCluster; the server compacts the cluster itself with
//     Compactor, kube-apiserver's --etcd-compaction-interval algorithm,
//     which any number of replicas (and kube-apiservers) may run at once.
//     A session on the store times no compaction of its own either
//     (Store.ClusterCompaction says why: server/classroom refuses a
//     compactionInterval other than 0s with it).
//   - Leases are the cluster's: a session's leases are those it granted,
//     each marked by a key under Options.LeasePrefix that the lease itself
//     holds (so the mark goes when the lease does); granting one therefore
//     takes a revision, where etcd's takes none.
//   - Watches require a leader when their stream asks for one
//     (mvcc.WatchStreamOptions): kube-apiserver's always do, an etcd
//     client's stream when it asked (clientv3.WithRequireLeader). A member
//     without one (in an election, or cut off from its quorum) ends them
//     with "etcdserver: no leader" where the embedded engine's never end
//     on their own (engine/kube watches again, or ends a Kubernetes watch
//     with kube's 500, as kube-apiserver does; rvplay's etcd API ends the
//     client's stream with etcd's error). A stream that did not ask waits
//     across the leaderless window, as on an etcd member.
//   - Alarms are the cluster's members': listed as they are, and raised
//     or lifted only by an operator (etcdctl alarm), never by a session.
//
// The package is the server's: the browser's build never links etcd's
// client (engine/layering_test.go).
package etcdstore
