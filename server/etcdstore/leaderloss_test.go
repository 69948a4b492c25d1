package etcdstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/internal/etcdtest"
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
