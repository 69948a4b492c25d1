package etcdgrpc

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/api"
)

// next takes the next response of a clientv3 watch channel.
func next(t *testing.T, ch clientv3.WatchChan) clientv3.WatchResponse {
	t.Helper()
	select {
	case r, ok := <-ch:
		if !ok {
			t.Fatal("the watch channel closed")
		}
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("no watch response within 30s")
	}
	panic("unreachable")
}

func TestWatchFromARevisionWithPrevKV(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	c.Put(ctx(t), "k", "1") // 2
	c.Put(ctx(t), "k", "2") // 3
	c.Delete(ctx(t), "k")   // 4
	ch := c.Watch(ctx(t), "k", clientv3.WithRev(2), clientv3.WithPrevKV())
	var got []string
	for len(got) < 3 {
		r := next(t, ch)
		for _, ev := range r.Events {
			s := ev.Type.String() + " " + string(ev.Kv.Value)
			if ev.PrevKv != nil {
				s += " prev=" + string(ev.PrevKv.Value)
			}
			got = append(got, s)
		}
	}
	want := []string{"PUT 1", "PUT 2 prev=1", "DELETE  prev=2"}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Fatalf("events %q, want %q", got, want)
	}
	c.Put(ctx(t), "k", "3") // 5: a live event after the history
	if r := next(t, ch); len(r.Events) != 1 || r.Events[0].Kv.ModRevision != 5 || !r.Events[0].IsCreate() || r.Header.Revision != 5 {
		t.Fatalf("live event: %+v", r)
	}
}

func TestACompactedWatchIsCanceledWithTheCompactRevision(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	for i := 0; i < 4; i++ {
		c.Put(ctx(t), "k", "v")
	}
	if _, err := c.Compact(ctx(t), 4); err != nil {
		t.Fatal(err)
	}
	r := next(t, c.Watch(ctx(t), "k", clientv3.WithRev(2)))
	if r.CompactRevision != 4 || !r.Canceled || r.Err() != rpctypes.ErrCompacted {
		t.Fatalf("compacted watch: %+v (%v)", r, r.Err())
	}
}

func TestANegativeStartIsRefusedAsEtcd36Does(t *testing.T) {
	e := newEnv(t, Options{})
	w := e.rawWatch()
	if err := w.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: &pb.WatchCreateRequest{Key: []byte("k"), StartRevision: -1}}}); err != nil {
		t.Fatal(err)
	}
	r, err := w.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if !r.Created || !r.Canceled || r.WatchId != -1 || r.CancelReason != "etcdserver: mvcc: required revision has been compacted" || r.Header.Revision != 1 {
		t.Fatalf("negative start: %+v", r)
	}
}

// rawWatch is a Watch call on a bare connection, as a client that is not
// clientv3 makes it.
func (e *env) rawWatch() pb.Watch_WatchClient {
	e.t.Helper()
	conn := e.conn()
	w, err := pb.NewWatchClient(conn).Watch(ctx(e.t))
	if err != nil {
		e.t.Fatal(err)
	}
	return w
}

func TestProgressRequestsAnswerOnceEveryWatchIsSynced(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	c.Put(ctx(t), "a", "1")
	wctx := clientv3.WithRequireLeader(ctx(t))
	ch := c.Watch(wctx, "a", clientv3.WithCreatedNotify())
	if r := next(t, ch); !r.Created {
		t.Fatalf("first response %+v", r)
	}
	c.Put(ctx(t), "b", "2")
	if err := c.RequestProgress(wctx); err != nil {
		t.Fatal(err)
	}
	r := next(t, ch)
	if !r.IsProgressNotify() || r.Header.Revision != 3 {
		t.Fatalf("progress: %+v", r)
	}
}

func TestAFragmentedWatchSplitsWhatIsTooLargeForOneMessage(t *testing.T) {
	e := newEnv(t, Options{})
	c := e.client("", "")
	big := strings.Repeat("x", 1<<20)
	for _, k := range []string{"f/1", "f/2", "f/3"} {
		if _, err := c.Put(ctx(t), k, big); err != nil {
			t.Fatal(err)
		}
	}
	// One revision deletes three keys whose previous values make 3 MiB.
	w := e.rawWatch()
	for _, frag := range []bool{true, false} {
		if err := w.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: &pb.WatchCreateRequest{
			Key: []byte("f/"), RangeEnd: []byte("f0"), PrevKv: true, Fragment: frag}}}); err != nil {
			t.Fatal(err)
		}
		if r, err := w.Recv(); err != nil || !r.Created {
			t.Fatalf("create: %+v %v", r, err)
		}
	}
	if _, err := c.Delete(ctx(t), "f/", clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	pieces := map[int64][]int{}
	for n := 0; n < 6; {
		r, err := w.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if r.Size() >= fragmentBytes && r.WatchId == 0 {
			t.Fatalf("a fragment of %d bytes", r.Size())
		}
		pieces[r.WatchId] = append(pieces[r.WatchId], len(r.Events))
		for _, ev := range r.Events {
			if ev.Type != mvccpb.DELETE || len(ev.PrevKv.Value) != 1<<20 {
				t.Fatalf("event %v", ev)
			}
			n++
		}
		if !r.Fragment && r.WatchId == 0 && len(pieces[0]) < 2 {
			t.Fatalf("the fragmented watch got its 3 MiB whole: %v", pieces)
		}
	}
	if len(pieces[1]) != 1 || pieces[1][0] != 3 {
		t.Fatalf("the watch without fragment got %v, want one answer of 3 events", pieces[1])
	}
}

func TestAWatchEndsUnavailableWhenItsSessionIsReset(t *testing.T) {
	e := newEnv(t, Options{})
	w := e.rawWatch()
	if err := w.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: &pb.WatchCreateRequest{Key: []byte("k")}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.reg.Reset(rctx, "demo"); err != nil {
		t.Fatal(err)
	}
	_, err := w.Recv()
	wantStatus(t, err, 14, "etcdserver: server stopped")
}

// A client's watchers count against its cap across its streams (and the
// HTTP transport's, which shares the limiter): one past it is refused as
// etcd refuses a watch its server sheds.
func TestAClientsWatchersAreCapped(t *testing.T) {
	perClient := map[string]*api.Counter{}
	var clients []string
	e := newEnv(t, Options{WatchLimiter: func(client string) api.Limiter {
		if perClient[client] == nil {
			perClient[client] = api.NewCounter(2)
			clients = append(clients, client)
		}
		return perClient[client]
	}})
	a, b := e.rawWatch(), e.rawWatch()
	create := func(w pb.Watch_WatchClient, key string) *pb.WatchResponse {
		t.Helper()
		if err := w.Send(&pb.WatchRequest{RequestUnion: &pb.WatchRequest_CreateRequest{CreateRequest: &pb.WatchCreateRequest{Key: []byte(key)}}}); err != nil {
			t.Fatal(err)
		}
		r, err := w.Recv()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	create(a, "1")
	create(b, "2")
	if r := create(b, "3"); !r.Canceled || r.WatchId != -1 || r.CancelReason != "etcdserver: too many requests" {
		t.Fatalf("a third watch of the client: %+v", r)
	}
	if len(clients) != 1 || clients[0] != "127.0.0.1" {
		t.Fatalf("clients %q, want the address alone", clients)
	}
}
