// Package etcdgrpc serves etcd's v3 gRPC API (etcdserverpb's KV, Watch,
// Lease, Maintenance, Cluster and Auth services, through etcd's own API
// packages and google.golang.org/grpc) over the server's sessions, so that
// etcdctl, clientv3 and a real kube-apiserver talk to rvplay as to an etcd.
//
// Every rule of etcd's server in front of its store is the engine's, shared
// with the JSON gateway (engine/api/etcdgw: request checks in etcd's order,
// size limits, a guarded session's permissions, watch streams with their
// caps and progress notifications); this package converts etcd's protobuf
// messages to the store's mirror of them and back, and answers errors as
// etcd's gRPC status codes with etcd's messages. A Watch call requires a
// leader only when its client asked (clientv3.WithRequireLeader's
// hasleader metadata, as etcd's stream interceptor reads it): on a session
// stored on an etcd cluster its stream then ends with "etcdserver: no
// leader" when the cluster's member has none; otherwise it waits.
//
// A client reaches a session in one of two ways, with no flag etcd's tools
// lack: without credentials it reaches the server's default session
// (--grpc-session); with etcd's own authentication (`etcdctl --user
// <session>:<token>`, clientv3's Username and Password) the user name
// names the session and the password is a token of it (a guarded session's
// teacher or student token; any password for an open session). etcd's
// Authenticate answers a token of its own that the client sends with every
// request, as etcd's simple tokens are sent; it lapses after TokenTTL
// unused, and the client authenticates again.
//
// It is server-only: the WebAssembly build never links gRPC.
package etcdgrpc
