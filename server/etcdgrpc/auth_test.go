package etcdgrpc

import (
	"context"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
)

func TestWithoutADefaultSessionACallNeedsAUser(t *testing.T) {
	e := newEnv(t, Options{DefaultSession: "-"})
	e.srv.opts.DefaultSession = ""
	_, err := e.client("", "").Get(ctx(t), "k")
	wantStatus(t, err, codes.InvalidArgument, "etcdserver: user name is empty")
}

func TestTheUserNamesTheSessionAndThePasswordIsItsToken(t *testing.T) {
	e := newEnv(t, Options{})
	teacher := e.client("class", e.teacher)
	student := e.client("class", e.student)
	anonymous := e.client("", "")

	if _, err := teacher.Put(ctx(t), "/registry/configmaps/default/a", "1"); err != nil {
		t.Fatalf("the teacher writes under /registry/: %v", err)
	}
	if _, err := student.Put(ctx(t), "/lab/ada", "1"); err != nil {
		t.Fatalf("a student writes outside /registry/: %v", err)
	}
	// Both reached "class" (revision 2 was the namespace Ada's join made):
	// "demo", the default session, is untouched.
	got, err := student.Get(ctx(t), "/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) < 2 {
		t.Fatalf("class holds %d keys under /, want the teacher's and the student's", len(got.Kvs))
	}
	if demo, err := anonymous.Get(ctx(t), "/", clientv3.WithPrefix(), clientv3.WithCountOnly()); err != nil || demo.Count != 0 {
		t.Fatalf("demo holds %v keys (%v), want none", demo, err)
	}

	// A student's rights are the JSON gateway's: no writes under
	// /registry/, no compaction, no alarms changed, no defragmenting.
	_, err = student.Put(ctx(t), "/registry/configmaps/default/a", "2")
	wantStatus(t, err, codes.PermissionDenied, "etcdserver: permission denied")
	_, err = student.Delete(ctx(t), "/registry/", clientv3.WithPrefix())
	wantStatus(t, err, codes.PermissionDenied, "etcdserver: permission denied")
	_, err = student.Txn(ctx(t)).Then(clientv3.OpPut("/registry/x", "1")).Commit()
	wantStatus(t, err, codes.PermissionDenied, "etcdserver: permission denied")
	_, err = student.Compact(ctx(t), 2)
	wantStatus(t, err, codes.PermissionDenied, "etcdserver: permission denied")
	_, err = pb.NewMaintenanceClient(student.ActiveConnection()).Alarm(ctx(t),
		&pb.AlarmRequest{Action: pb.AlarmRequest_DEACTIVATE, Alarm: pb.AlarmType_NOSPACE})
	wantStatus(t, err, codes.PermissionDenied, "etcdserver: permission denied")
	_, err = student.Defragment(ctx(t), e.addr)
	wantStatus(t, err, codes.PermissionDenied, "etcdserver: permission denied")
	if _, err := student.AlarmList(ctx(t)); err != nil {
		t.Fatalf("a student lists the alarms: %v", err)
	}
	if _, err := teacher.Compact(ctx(t), 2); err != nil {
		t.Fatalf("the teacher compacts: %v", err)
	}
	if _, err := teacher.Defragment(ctx(t), e.addr); err != nil {
		t.Fatalf("the teacher defragments: %v", err)
	}

	// An open session takes any password: the name chooses it.
	if _, err := e.client("demo", "anything").Put(ctx(t), "/registry/x", "1"); err != nil {
		t.Fatalf("everyone is the teacher of an open session: %v", err)
	}
}

func TestAWrongPasswordOrSessionFailsAuthentication(t *testing.T) {
	e := newEnv(t, Options{})
	for _, c := range []struct{ user, password string }{
		{"class", "not-a-token"},
		{"class", ""},
		{"nosuch", e.teacher},
	} {
		_, err := e.authClient().Authenticate(ctx(t), &pb.AuthenticateRequest{Name: c.user, Password: c.password})
		wantStatus(t, err, codes.InvalidArgument, "etcdserver: authentication failed, invalid user ID or password")
	}
	_, err := e.authClient().Authenticate(ctx(t), &pb.AuthenticateRequest{Password: e.teacher})
	wantStatus(t, err, codes.InvalidArgument, "etcdserver: user name is empty")
}

// authClient is etcd's Auth service through a bare gRPC connection.
func (e *env) authClient() pb.AuthClient { return pb.NewAuthClient(e.conn()) }

// conn is a bare gRPC connection to e, as a client that is not clientv3
// makes it (one that takes answers of any size).
func (e *env) conn() *grpc.ClientConn {
	e.t.Helper()
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(1<<30)))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { conn.Close() })
	return conn
}

func TestATokenLapsesUnusedAndTheClientAuthenticatesAgain(t *testing.T) {
	e := newEnv(t, Options{Now: func() time.Time { return time.Time{} }})
	e.srv.tokens.now = e.clock.Now
	auth := e.authClient()
	resp, err := auth.Authenticate(ctx(t), &pb.AuthenticateRequest{Name: "class", Password: e.student})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	kv := pb.NewKVClient(conn)
	withToken := metadata.AppendToOutgoingContext(ctx(t), "token", resp.Token)
	get := func() error {
		_, err := kv.Range(withToken, &pb.RangeRequest{Key: []byte("k")})
		return err
	}
	e.clock.Step(DefaultTokenTTL - time.Second)
	if err := get(); err != nil {
		t.Fatalf("a token used within its TTL: %v", err)
	}
	e.clock.Step(DefaultTokenTTL - time.Second)
	if err := get(); err != nil {
		t.Fatalf("each use renews the token: %v", err)
	}
	e.clock.Step(DefaultTokenTTL)
	wantStatus(t, get(), codes.Unauthenticated, "etcdserver: invalid auth token")

	// clientv3 authenticates again on that answer, and its call succeeds.
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{e.addr}, Username: "class", Password: e.student,
		DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Get(ctx(t), "k"); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(2 * DefaultTokenTTL)
	if _, err := c.Get(ctx(t), "k"); err != nil {
		t.Fatalf("clientv3 after its token lapsed: %v", err)
	}
}

func TestTokensOfAnEndedSessionAreInvalid(t *testing.T) {
	e := newEnv(t, Options{})
	student := e.client("class", e.student)
	if _, err := student.Get(ctx(t), "k"); err != nil {
		t.Fatal(err)
	}
	if err := e.reg.End(ctx(t), "class"); err != nil {
		t.Fatal(err)
	}
	_, err := student.Get(ctx(t), "k")
	wantStatus(t, err, codes.InvalidArgument, "etcdserver: authentication failed, invalid user ID or password")
}

// Every request is identified: by its token, or as the default session's
// teacher when it has none (clientv3 without a user), among the headers
// clientv3 sends.
func BenchmarkIdentify(b *testing.B) {
	s := New(Options{DefaultSession: "demo"})
	in := metadata.NewIncomingContext(context.Background(), metadata.Pairs(
		":authority", "127.0.0.1:2379", "content-type", "application/grpc",
		"user-agent", "grpc-go/1.79.1", "te", "trailers"))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.identify(in); err != nil {
			b.Fatal(err)
		}
	}
}
