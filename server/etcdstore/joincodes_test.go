package etcdstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/server/etcdstore"
)

// A renewed join code is on the cluster in clear only under a lease of
// JoinCodeNoticeTTL, only for a session there is, and goes with its
// session; every watcher hears of each one put after it started, in order.
func TestAJoinCodeNoticeLivesOnAShortLease(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	s := etcdstore.NewSessions(cli, "", etcdstore.Options{})
	for _, name := range []string{"a", "b"} {
		if err := s.CreateSession(sqlite.SessionInfo{Name: name, Guarded: true}); err != nil {
			t.Fatal(err)
		}
	}
	watchCtx, stop := context.WithCancel(context.Background())
	defer stop()
	heard := make(chan string, 10)
	s.WatchJoinCodes(watchCtx, func(name, code string) { heard <- name + "=" + code })

	if err := s.AnnounceJoinCode("nope", "AAAA-BBBB"); !errors.Is(err, sqlite.ErrNoSession) {
		t.Fatalf("a notice for no session: %v, want ErrNoSession", err)
	}
	for _, n := range [][2]string{{"a", "CCCC-DDDD"}, {"b", "EEEE-FFFF"}, {"a", "GGGG-HHHH"}} {
		if err := s.AnnounceJoinCode(n[0], n[1]); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := cli.Get(ctx, "/rvplay/joincodes/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 2 || string(resp.Kvs[0].Value) != "GGGG-HHHH" {
		t.Fatalf("notices on the cluster: %v (one per session, the last)", resp.Kvs)
	}
	for _, kv := range resp.Kvs {
		ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(kv.Lease))
		if err != nil {
			t.Fatal(err)
		}
		if kv.Lease == 0 || ttl.GrantedTTL != int64(etcdstore.JoinCodeNoticeTTL/time.Second) || ttl.TTL <= 0 {
			t.Fatalf("%s: lease %x, granted %d s, left %d s: want its own lease of %v", kv.Key, kv.Lease, ttl.GrantedTTL, ttl.TTL, etcdstore.JoinCodeNoticeTTL)
		}
	}
	for _, want := range []string{"a=CCCC-DDDD", "b=EEEE-FFFF", "a=GGGG-HHHH"} {
		select {
		case got := <-heard:
			if got != want {
				t.Fatalf("heard %q, want %q", got, want)
			}
		case <-time.After(30 * time.Second): // only turns a hang into a failure
			t.Fatalf("not told %q", want)
		}
	}
	if err := s.DeleteSession("a"); err != nil {
		t.Fatal(err)
	}
	if resp, err := cli.Get(ctx, "/rvplay/joincodes/", clientv3.WithPrefix(), clientv3.WithKeysOnly()); err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Key) != "/rvplay/joincodes/b" {
		t.Fatalf("after a's end: %v, %v (its notice goes with it)", resp.Kvs, err)
	}
}
