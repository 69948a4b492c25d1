package main

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/server/classroom"
)

// One client's watchers count against one cap across sessions and both
// protocols; past it the etcd gateway answers etcd's refused watch and the
// Kubernetes API kube's 429.
func TestAClientsWatchersAreCappedAcrossSessionsAndProtocols(t *testing.T) {
	clients := newClientWatchers(2)
	var opts classroom.Options
	opts.HTTP.WatchLimiter = clients.limiter
	srv, _ := startServerWith(t, "", opts, nil, "a", "b")
	create := fmt.Sprintf(`{"create_request":{"key":%q}}`, base64.StdEncoding.EncodeToString([]byte("k")))
	kubeWatch := func(session string) *http.Response {
		resp, err := http.Get(srv.URL + "/s/" + session + "/api/v1/namespaces/default/configmaps?watch=1")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	etcd := openWatch(t, srv.URL+"/s/a/v3/watch", create)
	if l := etcd.next(); !strings.Contains(l, `"created":true`) || strings.Contains(l, "canceled") {
		t.Fatalf("first watch: %s", l)
	}
	if k := kubeWatch("b"); k.StatusCode != 200 {
		t.Fatalf("second watch: %d", k.StatusCode)
	}
	refused := openWatch(t, srv.URL+"/s/a/v3/watch", create)
	if l := normalize(refused.next()); l != `{"result":{"header":{"cluster_id":"ID","member_id":"ID","revision":"1","raft_term":"2"},"watch_id":"-1","created":true,"canceled":true,"cancel_reason":"etcdserver: too many requests"}}` {
		t.Fatalf("third watch, etcd: %s", l)
	}
	k := kubeWatch("b")
	body, _ := io.ReadAll(k.Body)
	if k.StatusCode != 429 || k.Header.Get("Retry-After") != "1" ||
		string(body) != `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}` {
		t.Fatalf("third watch, kube: %d %v %s", k.StatusCode, k.Header, body)
	}
	// Hanging up gives the client's watchers back.
	srv.CloseClientConnections()
	deadline := time.Now().Add(10 * time.Second)
	for clients.held("127.0.0.1") != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("client still holds %d watchers after hanging up", clients.held("127.0.0.1"))
		}
		runtime.Gosched()
	}
	if k := kubeWatch("a"); k.StatusCode != 200 {
		t.Fatalf("after hanging up: %d", k.StatusCode)
	}
}
