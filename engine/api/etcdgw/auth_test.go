package etcdgw

import (
	"context"
	"fmt"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
)

const denied = `{"error":"etcdserver: permission denied","message":"etcdserver: permission denied","code":7}`

// In a guarded session a student writes any key outside /registry/ and
// reads everything; writes that reach /registry/ (a put, a delete range
// overlapping it, a txn with such a write in either branch, however deep)
// and compaction (with the other maintenance that changes the member) are
// the teacher's, and are refused with etcd's own 403.
func TestAStudentWritesEverywhereButUnderRegistry(t *testing.T) {
	e := newEnv(t)
	e.put("/registry/configmaps/default/x", "kube")
	student := api.WithPrincipal(context.Background(), api.Principal{ID: "alice-x1", Name: "Alice", Role: api.RoleStudent})
	teacher := api.WithPrincipal(context.Background(), api.Principal{ID: "teacher", Role: api.RoleTeacher})
	reg, all := b64("/registry/configmaps/default/x"), b64("/")
	cases := []struct {
		path, body string
		studentMay bool
	}{
		{"/v3/kv/put", `{"key":"` + b64("/mine/a") + `","value":"MQ=="}`, true},
		{"/v3/kv/put", `{"key":"` + b64("/registry") + `","value":"MQ=="}`, true}, // not under the prefix
		{"/v3/kv/put", `{"key":"` + reg + `","value":"MQ=="}`, false},
		{"/v3/kv/range", `{"key":"` + reg + `"}`, true},
		{"/v3/kv/range", `{"key":"AA==","range_end":"AA=="}`, true},
		{"/v3/kv/deleterange", `{"key":"` + b64("/mine/") + `","range_end":"` + b64("/mine0") + `"}`, true},
		{"/v3/kv/deleterange", `{"key":"` + b64("/a") + `","range_end":"` + b64("/b") + `"}`, true},
		{"/v3/kv/deleterange", `{"key":"` + b64("/s") + `","range_end":"AA=="}`, true}, // from /s on: after /registry/
		{"/v3/kv/deleterange", `{"key":"` + reg + `"}`, false},
		{"/v3/kv/deleterange", `{"key":"` + all + `","range_end":"` + b64("0") + `"}`, false}, // etcdctl del / --prefix
		{"/v3/kv/deleterange", `{"key":"AA==","range_end":"AA=="}`, false},
		{"/v3/kv/deleterange", `{"key":"` + b64("/registry/z") + `","range_end":"` + b64("/s") + `"}`, false},
		{"/v3/kv/txn", `{"success":[{"request_put":{"key":"` + b64("/mine/b") + `"}}]}`, true},
		{"/v3/kv/txn", `{"success":[{"request_range":{"key":"` + reg + `"}}]}`, true},
		{"/v3/kv/txn", `{"failure":[{"request_put":{"key":"` + reg + `"}}]}`, false},
		{"/v3/kv/txn", `{"success":[{"request_txn":{"success":[{"request_delete_range":{"key":"` + all + `","range_end":"AA=="}}]}}]}`, false},
		{"/v3/kv/compaction", "", false}, // body: compact at a new revision each time
		// The maintenance that changes the member is root's in etcd:
		// raising or lifting an alarm, defragmenting. Listing is anyone's.
		{"/v3/maintenance/alarm", `{"action":"GET"}`, true},
		{"/v3/maintenance/alarm", `{"action":"DEACTIVATE","alarm":"NOSPACE"}`, false},
		{"/v3/maintenance/alarm", `{"action":"ACTIVATE","memberID":"1","alarm":"CORRUPT"}`, false},
		{"/v3/maintenance/defragment", `{}`, false},
		{"/v3/maintenance/status", `{}`, true},
	}
	for i, c := range cases {
		t.Run(fmt.Sprint(i, c.path), func(t *testing.T) {
			body := func() []byte {
				if c.body == "" {
					return []byte(fmt.Sprintf(`{"revision":"%d"}`, e.put("/tick", "t")))
				}
				return []byte(c.body)
			}
			resp := e.gw.Serve(student, &api.Request{Method: "POST", Path: c.path, Body: body()})
			if c.studentMay && resp.Status != 200 {
				t.Fatalf("student %s %s: %d %s", c.path, c.body, resp.Status, resp.Body)
			}
			if !c.studentMay && (resp.Status != 403 || string(resp.Body) != denied) {
				t.Fatalf("student %s %s: %d %s, want 403 %s", c.path, c.body, resp.Status, resp.Body, denied)
			}
			for _, ctx := range []context.Context{teacher, context.Background()} {
				if resp := e.gw.Serve(ctx, &api.Request{Method: "POST", Path: c.path, Body: body()}); resp.Status != 200 {
					t.Fatalf("teacher %s %s: %d %s", c.path, c.body, resp.Status, resp.Body)
				}
			}
		})
	}
}
