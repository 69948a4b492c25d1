package etcddiff

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
	"github.com/rvplay/rvplay/server/etcdgrpc"
)

// oneSession is etcdgrpc.Sessions for a single open session.
type oneSession struct{ s *session.Session }

func (o oneSession) Lookup(name string) (bool, bool) { return false, name == o.s.Name }

func (o oneSession) Authenticate(name, _ string) (api.Principal, bool) {
	return api.Principal{ID: "teacher", Role: api.RoleTeacher}, name == o.s.Name
}

func (o oneSession) Acquire(_ context.Context, name string) (*session.Session, func(), error) {
	if name != o.s.Name {
		return nil, nil, etcdgrpc.ErrSessionGone
	}
	return o.s, func() {}, nil
}

// grpcTarget connects clientv3 to endpoint.
func grpcTarget(t *testing.T, name, endpoint string) *Target {
	t.Helper()
	tg, err := NewGRPCTarget(name, endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

// memoryGRPCTarget serves a session on the memory backend through etcd's
// gRPC API (server/etcdgrpc) on a loopback port.
func memoryGRPCTarget(t *testing.T) *Target {
	sess, err := session.New("diff", mvcc.NewMemoryBackend(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := etcdgrpc.New(etcdgrpc.Options{Sessions: oneSession{sess}, DefaultSession: "diff"})
	go srv.Serve(ln)
	t.Cleanup(func() {
		srv.Stop()
		sess.Close()
	})
	return grpcTarget(t, "rvplay-memory-grpc", ln.Addr().String())
}

// TestGRPCMatchesEtcd runs every seed through etcd's gRPC API with
// clientv3 against a real etcd (the reference) and rvplay on the memory
// backend and on SQLite (the server binary's --grpc-addr), comparing every
// answer.
func TestGRPCMatchesEtcd(t *testing.T) {
	for _, seed := range seeds() {
		t.Run(fmtSeed(seed), func(t *testing.T) {
			t.Parallel()
			ref := etcdtest.Start(t, etcdtest.Options{})
			sqlite := rvplaytest.StartGRPC(t, "diff")
			checkSeed(t, seed, grpcTarget(t, "etcd-grpc", strings.TrimPrefix(ref.URL, "http://")),
				memoryGRPCTarget(t), grpcTarget(t, "rvplay-sqlite-grpc", sqlite.GRPCAddr))
		})
	}
}
