package etcdgrpc

import (
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// wantStatus checks that err is the gRPC status etcd answers.
func wantStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v %q", code, msg)
	}
	st, ok := status.FromError(err)
	if !ok {
		// clientv3 turns statuses into its own typed errors.
		if ev, ok := err.(rpctypes.EtcdError); ok {
			if ev.Code() != code || ev.Error() != msg {
				t.Fatalf("got %v %q, want %v %q", ev.Code(), ev.Error(), code, msg)
			}
			return
		}
		t.Fatalf("got %T %v, want a gRPC status %v %q", err, err, code, msg)
	}
	if st.Code() != code || st.Message() != msg {
		t.Fatalf("got %v %q, want %v %q", st.Code(), st.Message(), code, msg)
	}
}

func TestPutGetThroughClientv3ReachTheDefaultSession(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	put, err := c.Put(ctx(t), "foo", "bar")
	if err != nil {
		t.Fatal(err)
	}
	if put.Header.Revision != 2 {
		t.Fatalf("first put at revision %d, want 2 (a new store is at 1)", put.Header.Revision)
	}
	get, err := c.Get(ctx(t), "foo")
	if err != nil {
		t.Fatal(err)
	}
	if len(get.Kvs) != 1 || string(get.Kvs[0].Value) != "bar" || get.Kvs[0].CreateRevision != 2 || get.Kvs[0].Version != 1 {
		t.Fatalf("get foo = %+v", get.Kvs)
	}
	// The same store as the session's own: its gateway sees the write.
	l, release, err := e.reg.Acquire(ctx(t), "demo")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if rev := l.Session().Store.Rev(); rev != 2 {
		t.Fatalf("session demo at revision %d, want 2", rev)
	}
	h := l.Session().Gateway.Header(2)
	if get.Header.ClusterId != h.ClusterID || get.Header.MemberId != h.MemberID || get.Header.RaftTerm != h.RaftTerm {
		t.Fatalf("header %+v, want the gateway's %+v", get.Header, h)
	}
}

func TestErrorsAreEtcdsStatuses(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	for i := 0; i < 3; i++ {
		if _, err := c.Put(ctx(t), "k", "v"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Compact(ctx(t), 3); err != nil {
		t.Fatal(err)
	}
	_, err := c.Get(ctx(t), "k", clientv3.WithRev(2))
	wantStatus(t, err, codes.OutOfRange, "etcdserver: mvcc: required revision has been compacted")
	_, err = c.Get(ctx(t), "k", clientv3.WithRev(99))
	wantStatus(t, err, codes.OutOfRange, "etcdserver: mvcc: required revision is a future revision")
	var ops []clientv3.Op
	for i := 0; i < 129; i++ {
		ops = append(ops, clientv3.OpPut("k"+strings.Repeat("x", i), "v"))
	}
	_, err = c.Txn(ctx(t)).Then(ops...).Commit()
	wantStatus(t, err, codes.InvalidArgument, "etcdserver: too many operations in txn request")
	_, err = c.Txn(ctx(t)).Then(clientv3.OpPut("a", "1"), clientv3.OpPut("a", "2")).Commit()
	wantStatus(t, err, codes.InvalidArgument, "etcdserver: duplicate key given in txn request")
	_, err = c.Put(ctx(t), "", "v")
	wantStatus(t, err, codes.InvalidArgument, "etcdserver: key is not provided")
	_, err = c.Put(ctx(t), "k", "v", clientv3.WithLease(42))
	wantStatus(t, err, codes.NotFound, "etcdserver: requested lease not found")
	_, err = c.Put(ctx(t), "k", strings.Repeat("v", 1600*1024))
	wantStatus(t, err, codes.InvalidArgument, "etcdserver: request is too large")
	// Past the receive limit the server's gRPC refuses the message, as
	// etcd's does (a client that may send that much is needed to see it).
	big := e.clientWith(clientv3.Config{MaxCallSendMsgSize: 4 << 20})
	_, err = big.Put(ctx(t), "k", strings.Repeat("v", 2100*1024))
	if st, _ := status.FromError(err); st.Code() != codes.ResourceExhausted || !strings.HasPrefix(st.Message(), "grpc: received message larger than max (") {
		t.Fatalf("a put beyond the receive limit got %v", err)
	}
}

func TestTxnCompareAndSwap(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	put, err := c.Put(ctx(t), "cm", "v1")
	if err != nil {
		t.Fatal(err)
	}
	// kube-apiserver's update: If(MOD == rev) Then(Put) Else(Get).
	cas := func(rev int64, v string) *clientv3.TxnResponse {
		t.Helper()
		r, err := c.Txn(ctx(t)).If(clientv3.Compare(clientv3.ModRevision("cm"), "=", rev)).
			Then(clientv3.OpPut("cm", v)).Else(clientv3.OpGet("cm")).Commit()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ok := cas(put.Header.Revision, "v2")
	if !ok.Succeeded || ok.Header.Revision != put.Header.Revision+1 || ok.Responses[0].GetResponsePut().Header.Revision != ok.Header.Revision {
		t.Fatalf("the swap: %+v", ok)
	}
	stale := cas(put.Header.Revision, "v3")
	got := stale.Responses[0].GetResponseRange()
	if stale.Succeeded || len(got.Kvs) != 1 || string(got.Kvs[0].Value) != "v2" || got.Kvs[0].Version != 2 {
		t.Fatalf("the stale swap: %+v", stale)
	}
}
