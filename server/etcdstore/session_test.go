package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/server/etcdstore"
)

var ctx = context.Background()

func sessionOpts(name string) etcdstore.Options {
	return etcdstore.Options{Prefix: "/rvplay/kv/" + name + "/", LeasePrefix: "/rvplay/leases/" + name + "/"}
}

func put(t *testing.T, s mvcc.KV, key, value string) int64 {
	t.Helper()
	resp, err := s.Put(ctx, &mvcc.PutRequest{Key: []byte(key), Value: []byte(value)})
	if err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
	return resp.Header.Revision
}

func keys(t *testing.T, s mvcc.KV) []string {
	t.Helper()
	resp, err := s.Range(ctx, &mvcc.RangeRequest{Key: []byte{0}, RangeEnd: []byte{0}})
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, kv := range resp.Kvs {
		out = append(out, fmt.Sprintf("%s=%s@%d", kv.Key, kv.Value, kv.ModRevision))
	}
	return out
}

func TestSessionsOnOneClusterShareRevisionsButNotKeys(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	a, b := open(t, cli, sessionOpts("a")), open(t, cli, sessionOpts("b"))
	defer a.Close()
	defer b.Close()
	w := a.NewWatchStream(mvcc.WatchStreamOptions{})
	defer w.Close()
	if _, err := w.Watch(ctx, &mvcc.WatchRequest{Key: []byte{0}, RangeEnd: []byte{0}}); err != nil {
		t.Fatal(err)
	}
	ra := put(t, a, "k", "a")
	rb := put(t, b, "k", "b")
	if rb != ra+1 || a.Rev() != rb {
		t.Fatalf("a wrote at %d, b at %d, a is at %d: revisions are the cluster's", ra, rb, a.Rev())
	}
	if got, want := fmt.Sprint(keys(t, a)), fmt.Sprintf("[k=a@%d]", ra); got != want {
		t.Fatalf("a's keys: %s, want %s (no prefix, none of b's)", got, want)
	}
	put(t, a, "l", "a")
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var seen []string
	for len(seen) < 2 {
		_, resp, err := w.Next(c)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range resp.Events {
			seen = append(seen, string(e.Kv.Key))
		}
	}
	if fmt.Sprint(seen) != "[k l]" {
		t.Fatalf("a's watch of every key saw %v, want only a's own [k l]", seen)
	}
}

func TestASessionsCompactionIsRefusedAndSaysWhy(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	s := open(t, cli, sessionOpts("a"))
	defer s.Close()
	rev := put(t, s, "k", "1")
	_, err := s.Compact(ctx, &mvcc.CompactionRequest{Revision: rev})
	if err != etcdstore.ErrClusterCompaction {
		t.Fatalf("compaction: %v, want ErrClusterCompaction", err)
	}
	if _, err := s.Alarm(ctx, &mvcc.AlarmRequest{Action: mvcc.AlarmActivate, Alarm: mvcc.AlarmNoSpace}); err != etcdstore.ErrClusterAlarm {
		t.Fatalf("raising an alarm: %v, want ErrClusterAlarm", err)
	}
	if resp, err := s.Range(ctx, &mvcc.RangeRequest{Key: []byte("k"), Revision: 1}); err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("history is kept: %v, %v", resp, err)
	}
	// Listing is anyone's (etcd 3.4 answers it without a header).
	if resp, err := s.Alarm(ctx, &mvcc.AlarmRequest{Action: mvcc.AlarmGet}); err != nil || len(resp.Alarms) != 0 || resp.Header.Revision != rev {
		t.Fatalf("listing the alarms: %+v, %v", resp, err)
	}
}

func TestTheCompactorCompactsTheClusterOnceARoundWhoeverRunsIt(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	s := open(t, cli, sessionOpts("a"))
	defer s.Close()
	one, two := etcdstore.NewCompactor(cli), etcdstore.NewCompactor(cli)
	round := func(c *etcdstore.Compactor) int64 {
		t.Helper()
		rev, err := c.Round(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return rev
	}
	put(t, s, "k", "1")
	if rev := round(one); rev != 0 {
		t.Fatalf("the first round compacted to %d: it only records the revision", rev)
	}
	seen := s.Rev()
	if rev := round(two); rev != 0 {
		t.Fatalf("another compactor's round compacted to %d: the round was one's", rev)
	}
	put(t, s, "k", "2")
	if rev := round(one); rev != seen {
		t.Fatalf("the second round compacted to %d, want %d (what the first saw)", rev, seen)
	}
	if got := s.CompactRev(); got != seen {
		t.Fatalf("CompactRev %d, want %d", got, seen)
	}
	if _, err := s.Range(ctx, &mvcc.RangeRequest{Key: []byte("k"), Revision: seen - 1}); err != mvcc.ErrCompacted {
		t.Fatalf("a read below the compaction: %v", err)
	}
	again := open(t, cli, sessionOpts("a"))
	defer again.Close()
	if got := again.CompactRev(); got != seen {
		t.Fatalf("a store opened later finds CompactRev %d, want %d", got, seen)
	}
}

func TestLeasesAreTheSessionsOwn(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	a, b := open(t, cli, sessionOpts("a")), open(t, cli, sessionOpts("b"))
	defer a.Close()
	defer b.Close()
	g, err := a.LeaseGrant(ctx, &mvcc.LeaseGrantRequest{TTL: 60})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, &mvcc.PutRequest{Key: []byte("held"), Value: []byte("v"), Lease: g.ID}); err != nil {
		t.Fatal(err)
	}
	ttl, err := a.LeaseTimeToLive(ctx, g.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("%q", ttl.Keys) != `["held"]` || ttl.GrantedTTL != 60 {
		t.Fatalf("time to live: %+v (keys without the prefix nor the lease's mark)", ttl)
	}
	if _, ids := a.Leases(ctx); fmt.Sprint(ids) != fmt.Sprint([]int64{g.ID}) {
		t.Fatalf("a's leases: %v", ids)
	}
	if _, ids := b.Leases(ctx); len(ids) != 0 {
		t.Fatalf("b's leases: %v, want none of a's", ids)
	}
	for what, err := range map[string]error{
		"revoke": func() error { _, err := b.LeaseRevoke(ctx, g.ID); return err }(),
		"renew":  func() error { _, err := b.LeaseRenew(ctx, g.ID); return err }(),
		"ttl":    func() error { _, err := b.LeaseTimeToLive(ctx, g.ID, false); return err }(),
	} {
		if err != mvcc.ErrLeaseNotFound {
			t.Errorf("b's %s of a's lease: %v, want ErrLeaseNotFound", what, err)
		}
	}
	if left, err := a.LeaseRenew(ctx, g.ID); err != nil || left != 60 {
		t.Fatalf("renew: %d, %v", left, err)
	}
	if _, err := a.LeaseRevoke(ctx, g.ID); err != nil {
		t.Fatal(err)
	}
	if got := keys(t, a); len(got) != 0 {
		t.Fatalf("after the revoke: %v", got)
	}
	if _, err := a.LeaseTimeToLive(ctx, g.ID, false); err != mvcc.ErrLeaseNotFound {
		t.Fatalf("time to live of a revoked lease: %v", err)
	}
}

func TestCloseEndsWatchersAndRefusesCalls(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	s := open(t, cli, sessionOpts("a"))
	st := s.NewWatchStream(mvcc.WatchStreamOptions{})
	if _, err := st.Watch(ctx, &mvcc.WatchRequest{Key: []byte("k")}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	c, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, _, err := st.Next(c); !errors.Is(err, mvcc.ErrStopped) {
		t.Fatalf("the watcher's end: %v, want ErrStopped", err)
	}
	if _, err := s.Put(ctx, &mvcc.PutRequest{Key: []byte("k")}); err != mvcc.ErrStopped {
		t.Fatalf("a put after Close: %v", err)
	}
}
