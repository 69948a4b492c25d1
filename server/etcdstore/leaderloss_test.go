package etcdstore_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// A cluster member without a leader ends the watches that require one, as
// the store's and kube-apiserver's do (etcd's client ends them with
// "etcdserver: no leader"). One member of three going can do it: a watch
// whose stream moves to a member in the middle of an election ends so (2
// runs of 7 where the leader that carried the stream stopped, etcd 3.4
// and 3.6; never when a follower did). Two of three going does it every
// time: the member left has no leader, and etcd ends its streams that
// require one within three election timeouts. What a Kubernetes client
// sees then is
// kube-apiserver's answer: with the watch cache off, an ERROR event, a
// 500 InternalError carrying etcd's text (the client watches again from
// its last resourceVersion); with the cache on, nothing: the cache
// watches the cluster again from where its watch stopped, and its
// watchers get what was written once the cluster has a leader again.
func TestAKubernetesWatchWhenTheClusterLosesItsLeader(t *testing.T) {
	cluster := etcdtest.StartCluster(t, 3)
	cli := client(t, cluster.Endpoints()...)
	cms := kube.Lookup("", "v1", "configmaps")

	ended := make(chan error, 100)
	cached := kube.New(watchEnds{kube.KVOf(open(t, cli, sessionOpts("cached"))), ended}, kube.Options{WatchCache: true})
	t.Cleanup(cached.Close)
	uncached := kube.New(kube.KVOf(open(t, cli, sessionOpts("uncached"))), kube.Options{})
	t.Cleanup(uncached.Close)

	watches := map[*kube.Registry]*kube.Watch{}
	for _, reg := range []*kube.Registry{cached, uncached} {
		a := createConfigMap(t, reg, "a")
		w, err := reg.Watch(ctx, cms, "default", kube.ListOptions{ResourceVersion: kube.ResourceVersion(a)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(w.Close)
		watches[reg] = w
	}

	for _, m := range cluster.Members[1:] {
		if err := m.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if e := nextEvent(t, watches[uncached]); e.Type != kube.Error || e.Object.Code != 500 || e.Object.Reason != kube.ReasonInternalError ||
		e.Object.Message != "Internal error occurred: etcdserver: no leader" {
		t.Fatalf("without the watch cache: %+v, want an ERROR, 500 InternalError, etcdserver: no leader", e)
	}
	if _, err := watches[uncached].Next(timeout(t)); err == nil {
		t.Fatal("the watch went on after its ERROR")
	}
	// The cache's watch of the cluster ends too (and again each time the
	// cache watches anew while the member has no leader).
	select {
	case err := <-ended:
		if err.Error() != "etcdserver: no leader" {
			t.Fatalf("the cache's watch of the cluster ended with %v", err)
		}
	case <-time.After(30 * time.Second): // three election timeouts are 3 s
		t.Fatal("the cache's watch of the cluster still runs without a leader")
	}

	if err := cluster.Members[1].Restart(); err != nil {
		t.Fatal(err)
	}
	b := createConfigMap(t, cached, "b")
	c := createConfigMap(t, cached, "c")
	for _, want := range []kube.Object{b, c} {
		if e := nextEvent(t, watches[cached]); e.Type != kube.Added || e.Object.Metadata.Name != kube.Name(want) ||
			e.Object.Metadata.ResourceVersion != kube.ResourceVersion(want) {
			t.Fatalf("with the watch cache, once the cluster has a leader again: %+v, want ADDED %s@%s", e, kube.Name(want), kube.ResourceVersion(want))
		}
	}
}

// watchEnds reports the end of each of its store watches but the ones
// canceled.
type watchEnds struct {
	kube.KV
	ended chan<- error
}

func (k watchEnds) Watch(ctx context.Context, r *mvcc.WatchRequest) (kube.WatchStream, error) {
	ws, err := k.KV.Watch(ctx, r)
	if err != nil {
		return nil, err
	}
	return reportedEnd{ws, k.ended}, nil
}

type reportedEnd struct {
	kube.WatchStream
	ended chan<- error
}

func (w reportedEnd) TryNext(ctx context.Context) (mvcc.WatchResponse, bool, error) {
	resp, ok, err := w.WatchStream.TryNext(ctx)
	if ok && err != nil && !errors.Is(err, mvcc.ErrWatcherCanceled) {
		select {
		case w.ended <- err:
		default:
		}
	}
	return resp, ok, err
}

// createConfigMap creates a configmap in the registry's default namespace.
func createConfigMap(t *testing.T, reg *kube.Registry, name string) kube.Object {
	t.Helper()
	wr, err := reg.Create(timeout(t), kube.Lookup("", "v1", "configmaps"), "default",
		kube.Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}}, kube.WriteOptions{FieldManager: "test"})
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return wr.Object
}

// timeout bounds a call that would otherwise hang the test.
func timeout(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// nextEvent is a Kubernetes watch's next event.
func nextEvent(t *testing.T, w *kube.Watch) event {
	t.Helper()
	line, err := w.Next(timeout(t))
	if err != nil {
		t.Fatalf("the watch ended: %v", err)
	}
	var e event
	if err := json.Unmarshal(line, &e); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return e
}

// An etcd client's watch through rvplay (etcd's gRPC API, and the JSON
// gateway's /v3/watch) on a session stored on a three-member cluster that
// loses its leader ends as on an etcd member: only if its stream asked for
// a leader (clientv3.WithRequireLeader; the gateway's header
// Grpc-Metadata-Hasleader: true), with "etcdserver: no leader". A stream
// that did not ask stays open across the leaderless window and gets what
// is written once the cluster has a leader again, nothing twice.
func TestAnEtcdClientsWatchThroughRvplayWhenTheClusterLosesItsLeader(t *testing.T) {
	cluster := etcdtest.StartCluster(t, 3)
	srv := rvplaytest.StartGRPC(t, "demo", "--store", "etcd://"+cluster.Hosts(), "--etcd-compaction-interval", "0")
	cli := client(t, srv.GRPCAddr)
	put := func(v string) int64 {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second) // the cluster elects a leader meanwhile
		for {
			pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			resp, err := cli.Put(pctx, "k", v)
			cancel()
			if err == nil {
				return resp.Header.Revision
			}
			if time.Now().After(deadline) {
				t.Fatalf("put k=%s: %v", v, err)
			}
		}
	}
	from := put("a") + 1

	watch := func(wctx context.Context) clientv3.WatchChan {
		t.Helper()
		ch := cli.Watch(wctx, "k", clientv3.WithRev(from), clientv3.WithCreatedNotify())
		if wr := <-ch; !wr.Created {
			t.Fatalf("watch: %+v %v", wr, wr.Err())
		}
		return ch
	}
	wctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	required, plain := watch(clientv3.WithRequireLeader(wctx)), watch(wctx)
	gateway := srv.URL + "/s/demo/v3/watch"
	requiredJSON, plainJSON := gatewayWatch(t, gateway, from, true), gatewayWatch(t, gateway, from, false)

	for _, m := range cluster.Members[1:] {
		if err := m.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case wr := <-required:
		if !errors.Is(wr.Err(), rpctypes.ErrNoLeader) {
			t.Fatalf("the watch that requires a leader: %+v %v, want its end with etcdserver: no leader", wr, wr.Err())
		}
		if _, open := <-required; open {
			t.Fatal("the watch went on after its end")
		}
	case <-time.After(30 * time.Second): // three election timeouts are 3 s
		t.Fatal("the watch that requires a leader still runs without one")
	}
	if line := requiredJSON.next(t); line != `{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","http_status":"Service Unavailable"}}` {
		t.Fatalf("the gateway's watch that requires a leader: %s", line)
	}

	if err := cluster.Members[1].Restart(); err != nil {
		t.Fatal(err)
	}
	b, c := put("b"), put("c")
	var got []int64
	for len(got) < 2 {
		select {
		case wr, open := <-plain:
			if !open || wr.Err() != nil {
				t.Fatalf("the watch that did not ask for a leader ended: %v", wr.Err())
			}
			for _, e := range wr.Events {
				got = append(got, e.Kv.ModRevision)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("the watch that did not ask for a leader got %v, want b@%d, c@%d", got, b, c)
		}
	}
	if len(got) != 2 || got[0] != b || got[1] != c {
		t.Fatalf("the watch that did not ask for a leader got the revisions %v, want %d, %d", got, b, c)
	}
	got = got[:0]
	for len(got) < 2 {
		var frame struct {
			Result struct {
				Events []struct {
					Kv struct {
						ModRevision int64 `json:"mod_revision,string"`
					} `json:"kv"`
				} `json:"events"`
			} `json:"result"`
		}
		line := plainJSON.next(t)
		if err := json.Unmarshal([]byte(line), &frame); err != nil || strings.Contains(line, `"error"`) {
			t.Fatalf("the gateway's watch that did not ask for a leader: %s", line)
		}
		for _, e := range frame.Result.Events {
			got = append(got, e.Kv.ModRevision)
		}
	}
	if len(got) != 2 || got[0] != b || got[1] != c {
		t.Fatalf("the gateway's watch that did not ask for a leader got the revisions %v, want %d, %d", got, b, c)
	}
}

// lines is a /v3/watch stream's lines as they come.
type lines chan string

// gatewayWatch watches the key k through the JSON gateway at url from
// rev, asking for a leader or not, and waits for its created answer.
func gatewayWatch(t *testing.T, url string, rev int64, requireLeader bool) lines {
	t.Helper()
	body := fmt.Sprintf(`{"create_request":{"key":"aw==","start_revision":"%d"}}`, rev)
	req, err := http.NewRequestWithContext(ctx, "POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if requireLeader {
		req.Header.Set("Grpc-Metadata-Hasleader", "true")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	out := make(lines, 100)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			out <- sc.Text()
		}
	}()
	if line := out.next(t); !strings.Contains(line, `"created":true`) {
		t.Fatalf("watch %s: %d %s", url, resp.StatusCode, line)
	}
	return out
}

// next is the stream's next line.
func (l lines) next(t *testing.T) string {
	t.Helper()
	select {
	case line, open := <-l:
		if !open {
			t.Fatal("the gateway's watch ended")
		}
		return line
	case <-time.After(60 * time.Second): // turns a hang into a failure
		t.Fatal("no line from the gateway's watch")
		return ""
	}
}
