package etcdgw

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// stoppedClock is a lease clock whose time does not pass: a TTL reads as
// granted.
func stoppedClock() *clock.Fake { return clock.NewFake(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)) }

// The Lease service through the JSON API as etcdctl and curl reach it: the
// bodies are etcd 3.4.23's (curl against Debian's etcd, its cluster and
// member IDs replaced by the gateway's), the older /v3/kv/lease/ paths
// included.
func TestLeasesThroughTheGatewayAnswerAsEtcds(t *testing.T) {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{Clock: stoppedClock(), MemberID: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g := NewWithOptions(s, Options{ClusterID: 5, MemberID: 7})
	steps := []struct{ path, body, want string }{
		{"/v3/lease/grant", `{"TTL":60,"ID":1000}`, `{` + h1("1") + `,"ID":"1000","TTL":"60"}`},
		{"/v3/kv/put", `{"key":"YQ==","value":"Yg==","lease":"1000"}`, `{` + h1("2") + `}`},
		{"/v3/lease/keepalive", `{"ID":1000}`, `{"result":{` + h1("2") + `,"ID":"1000","TTL":"60"}}` + "\n"},
		{"/v3/lease/keepalive", `{"ID":99}`, `{"result":{` + h1("2") + `,"ID":"99"}}` + "\n"},
		{"/v3/lease/timetolive", `{"ID":1000,"keys":true}`, `{` + h1("2") + `,"ID":"1000","TTL":"60","grantedTTL":"60","keys":["YQ=="]}`},
		{"/v3/kv/lease/timetolive", `{"ID":99}`, `{` + h1("2") + `,"ID":"99","TTL":"-1"}`},
		{"/v3/lease/leases", `{}`, `{` + h1("2") + `,"leases":[{"ID":"1000"}]}`},
		{"/v3/kv/lease/leases", ``, `{` + h1("2") + `,"leases":[{"ID":"1000"}]}`},
		{"/v3/lease/revoke", `{"ID":99}`, `{"error":"etcdserver: requested lease not found","message":"etcdserver: requested lease not found","code":5}`},
		{"/v3/lease/revoke", `{"ID":"1000"}`, `{` + h1("3") + `}`},
		{"/v3/kv/range", `{"key":"YQ=="}`, `{` + h1("3") + `}`},
		{"/v3/lease/leases", `{}`, `{` + h1("3") + `}`},
		{"/v3/lease/grant", `{"TTL":"x"}`, `{"error":"invalid character 'x' looking for beginning of value","message":"invalid character 'x' looking for beginning of value","code":3}`},
		{"/v3/lease/grant", `{"TTL":99999999999}`, `{"error":"etcdserver: too large lease TTL","message":"etcdserver: too large lease TTL","code":11}`},
	}
	for _, st := range steps {
		if _, got := post(g, st.path, st.body); got != st.want {
			t.Errorf("%s %s:\n got %s\nwant %s", st.path, st.body, got, st.want)
		}
	}
	if code, _ := post(g, "/v3/lease/revoke", `{"ID":99}`); code != 404 {
		t.Errorf("revoking an unknown lease: %d, etcd's gateway answers 404", code)
	}
}

func h1(rev string) string {
	return `"header":{"cluster_id":"5","member_id":"7","revision":"` + rev + `","raft_term":"2"}`
}

// In a guarded session a student may grant leases and use them outside
// /registry/, but may neither revoke nor put with a lease that holds a key
// under /registry/ (etcd checks that the caller may write every key the
// lease holds); the teacher may. Through the JSON paths as through gRPC.
func TestAStudentMayNotRevokeALeaseThatHoldsRegistryKeys(t *testing.T) {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{Clock: stoppedClock()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g := NewWithOptions(s, Options{})
	student := api.WithPrincipal(context.Background(), api.Principal{ID: "ada-x1", Name: "Ada", Role: api.RoleStudent})
	teacher := api.WithPrincipal(context.Background(), api.Principal{ID: "teacher", Role: api.RoleTeacher})
	serve := func(ctx context.Context, path, body string) (int, string) {
		r := g.Serve(ctx, &api.Request{Method: "POST", Path: path, Body: []byte(body)})
		return r.Status, string(r.Body)
	}
	for _, lease := range []string{"1", "2"} {
		if code, body := serve(student, "/v3/lease/grant", `{"TTL":60,"ID":`+lease+`}`); code != 200 {
			t.Fatalf("a student's grant: %d %s", code, body)
		}
	}
	if code, body := serve(teacher, "/v3/kv/put", `{"key":"`+b64("/registry/leases/x")+`","lease":"1"}`); code != 200 {
		t.Fatalf("the teacher's put with lease 1: %d %s", code, body)
	}
	if code, body := serve(student, "/v3/kv/put", `{"key":"`+b64("/mine/a")+`","lease":"2"}`); code != 200 {
		t.Fatalf("a student's put with lease 2 outside /registry/: %d %s", code, body)
	}
	if code, body := serve(student, "/v3/kv/put", `{"key":"`+b64("/mine/b")+`","lease":"1"}`); code != 403 || body != denied {
		t.Fatalf("a student's put with the lease that holds /registry/leases/x: %d %s", code, body)
	}
	if code, body := serve(student, "/v3/lease/revoke", `{"ID":1}`); code != 403 || body != denied {
		t.Fatalf("a student's revoke of the lease that holds /registry/leases/x: %d %s", code, body)
	}
	if code, body := serve(student, "/v3/lease/revoke", `{"ID":2}`); code != 200 {
		t.Fatalf("a student's revoke of their own lease: %d %s", code, body)
	}
	if code, body := serve(teacher, "/v3/lease/revoke", `{"ID":1}`); code != 200 {
		t.Fatalf("the teacher's revoke: %d %s", code, body)
	}
	if _, body := serve(teacher, "/v3/kv/range", `{"key":"`+b64("/")+`","range_end":"`+b64("0")+`","count_only":true}`); strings.Contains(body, `"count"`) {
		t.Fatalf("the leases' keys are gone: %s", body)
	}
}
