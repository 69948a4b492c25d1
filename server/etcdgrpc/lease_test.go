package etcdgrpc

import (
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
)

func TestLeasesThroughClientv3(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	g, err := c.Grant(ctx(t), 60)
	if err != nil {
		t.Fatal(err)
	}
	if g.TTL != 60 || g.ID == 0 {
		t.Fatalf("grant: %+v", g)
	}
	if _, err := c.Put(ctx(t), "/lab/a", "1", clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Put(ctx(t), "/lab/b", "1", clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	ttl, err := c.TimeToLive(ctx(t), g.ID, clientv3.WithAttachedKeys())
	if err != nil || ttl.GrantedTTL != 60 || ttl.TTL != 60 || len(ttl.Keys) != 2 || string(ttl.Keys[0]) != "/lab/a" {
		t.Fatalf("time to live: %+v %v", ttl, err)
	}
	e.clock.Step(30 * time.Second)
	ka, err := c.KeepAliveOnce(ctx(t), g.ID)
	if err != nil || ka.TTL != 60 {
		t.Fatalf("keep-alive: %+v %v", ka, err)
	}
	ls, err := c.Leases(ctx(t))
	if err != nil || len(ls.Leases) != 1 || ls.Leases[0].ID != g.ID {
		t.Fatalf("leases: %+v %v", ls, err)
	}
	rev, err := c.Revoke(ctx(t), g.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rev.Header.Revision != 4 {
		t.Fatalf("the revocation's revision %d, want 4: one for both keys", rev.Header.Revision)
	}
	if got, _ := c.Get(ctx(t), "/lab/", clientv3.WithPrefix()); got.Count != 0 {
		t.Fatalf("%d keys left", got.Count)
	}
	gone, err := c.TimeToLive(ctx(t), g.ID)
	if err != nil || gone.TTL != -1 {
		t.Fatalf("a revoked lease's time to live: %+v %v", gone, err)
	}
	_, err = c.Revoke(ctx(t), g.ID)
	wantStatus(t, err, codes.NotFound, "etcdserver: requested lease not found")
}

func TestAnExpiredLeasesKeysAreDeletedAndWatchersSeeOneRevision(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	g, err := c.Grant(ctx(t), 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"e/2", "e/1"} {
		if _, err := c.Put(ctx(t), k, "v", clientv3.WithLease(g.ID)); err != nil {
			t.Fatal(err)
		}
	}
	ch := c.Watch(ctx(t), "e/", clientv3.WithPrefix(), clientv3.WithCreatedNotify())
	next(t, ch)
	e.clock.Step(10 * time.Second)
	r := next(t, ch)
	if len(r.Events) != 2 || r.Events[0].Kv.ModRevision != 4 || string(r.Events[0].Kv.Key) != "e/1" || string(r.Events[1].Kv.Key) != "e/2" {
		t.Fatalf("expiry: %+v", r.Events)
	}
}

func TestAStudentMayNotRevokeALeaseOfTheRegistry(t *testing.T) {
	e := newEnv(t, Options{})
	teacher := e.client("class", e.teacher)
	student := e.client("class", e.student)
	g, err := teacher.Grant(ctx(t), 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := teacher.Put(ctx(t), "/registry/events/default/e1", "v", clientv3.WithLease(g.ID)); err != nil {
		t.Fatal(err)
	}
	_, err = student.Revoke(ctx(t), g.ID)
	wantStatus(t, err, codes.PermissionDenied, "etcdserver: permission denied")
	_, err = student.Put(ctx(t), "/mine", "v", clientv3.WithLease(g.ID))
	wantStatus(t, err, codes.PermissionDenied, "etcdserver: permission denied")
	mine, err := student.Grant(ctx(t), 60)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := student.Put(ctx(t), "/mine", "v", clientv3.WithLease(mine.ID)); err != nil {
		t.Fatal(err)
	}
	if _, err := student.Revoke(ctx(t), mine.ID); err != nil {
		t.Fatal(err)
	}
}
