package etcdgw

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

func quotaGateway(t *testing.T, quota int64) *Gateway {
	t.Helper()
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{QuotaBackendBytes: quota, MemberID: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return NewWithOptions(s, Options{ClusterID: 5, MemberID: 7})
}

func post(g *Gateway, path, body string) (int, string) {
	r := g.Serve(context.Background(), &api.Request{Method: "POST", Path: path, Body: []byte(body)})
	return r.Status, string(r.Body)
}

const noSpaceBody = `{"error":"etcdserver: mvcc: database space exceeded","message":"etcdserver: mvcc: database space exceeded","code":8}`

// The operator's cycle when a session is full, as against etcd with
// --quota-backend-bytes: fill until NOSPACE, see the alarm in status and
// in the alarm list, compact and defragment, disarm, write again. The
// bodies are etcd 3.4's (checked with curl against Debian's etcd 3.4.23,
// and in test/etcddiff).
func TestNoSpaceCycleThroughTheMaintenanceAPI(t *testing.T) {
	g := quotaGateway(t, 4096)
	value := `"` + strings.Repeat("QUFB", 100) + `"` // 300 bytes
	var code int
	var body string
	n := 0
	for ; n < 100; n++ {
		code, body = post(g, "/v3/kv/put", fmt.Sprintf(`{"key":"%s","value":%s}`, b64(fmt.Sprintf("k%02d", n)), value))
		if code != 200 {
			break
		}
	}
	if code != 429 || body != noSpaceBody {
		t.Fatalf("after %d puts: %d %s", n, code, body)
	}
	want := `{"alarms":[{"memberID":"7","alarm":"NOSPACE"}]}`
	if code, body := post(g, "/v3/maintenance/alarm", `{"action":"GET"}`); code != 200 || body != want {
		t.Fatalf("alarm list: %d %s", code, body)
	}
	if code, body := post(g, "/v3/kv/put", `{"key":"eA==","value":""}`); code != 429 || body != noSpaceBody {
		t.Fatalf("small put under the alarm: %d %s", code, body)
	}
	_, status := post(g, "/v3/maintenance/status", `{}`)
	full := g.store.Usage().DBSize
	wantStatus := fmt.Sprintf(`{"header":{"cluster_id":"5","member_id":"7","revision":"%d","raft_term":"2"},"version":"3.4.23","dbSize":"%d","leader":"7","raftIndex":"%d","raftTerm":"2","raftAppliedIndex":"%d","errors":["memberID:7 alarm:NOSPACE "],"dbSizeInUse":"%d"}`,
		n+1, full, n+1, n+1, full)
	if status != wantStatus {
		t.Fatalf("status:\n got  %s\n want %s", status, wantStatus)
	}
	// Deletes and compaction work; dbSize keeps its high-water mark (the
	// tombstones took it past the quota) until defragment.
	if code, body := post(g, "/v3/kv/deleterange", `{"key":"AA==","range_end":"AA=="}`); code != 200 || !strings.Contains(body, fmt.Sprintf(`"deleted":"%d"`, n)) {
		t.Fatalf("delete: %d %s", code, body)
	}
	full = g.store.Usage().DBSize
	if code, body := post(g, "/v3/kv/compaction", fmt.Sprintf(`{"revision":"%d","physical":true}`, n+2)); code != 200 {
		t.Fatalf("compact: %d %s", code, body)
	}
	if _, status := post(g, "/v3/maintenance/status", `{}`); !strings.Contains(status, fmt.Sprintf(`"dbSize":"%d"`, full)) || strings.Contains(status, "dbSizeInUse") {
		t.Fatalf("status after compaction: %s", status)
	}
	if code, body := post(g, "/v3/maintenance/defragment", `{}`); code != 200 || body != "{}" {
		t.Fatalf("defragment: %d %s", code, body)
	}
	if _, status := post(g, "/v3/maintenance/status", `{}`); strings.Contains(status, "dbSize") {
		t.Fatalf("status after defragment: %s", status)
	}
	if code, body := post(g, "/v3/kv/put", `{"key":"eA==","value":""}`); code != 429 || body != noSpaceBody {
		t.Fatalf("put before disarm: %d %s", code, body)
	}
	if code, body := post(g, "/v3/maintenance/alarm", `{"action":"DEACTIVATE","memberID":"7","alarm":"NOSPACE"}`); code != 200 || body != want {
		t.Fatalf("disarm: %d %s", code, body)
	}
	if code, body := post(g, "/v3/maintenance/alarm", `{"action":"DEACTIVATE","memberID":"7","alarm":"NOSPACE"}`); code != 200 || body != "{}" {
		t.Fatalf("disarm again: %d %s", code, body)
	}
	if code, body := post(g, "/v3/maintenance/alarm", `{}`); code != 200 || body != "{}" {
		t.Fatalf("alarm list after disarm: %d %s", code, body)
	}
	if code, body := post(g, "/v3/kv/put", `{"key":"eA==","value":""}`); code != 200 {
		t.Fatalf("put after disarm: %d %s", code, body)
	}
}

func TestAlarmRequestsDecodeAsEtcdsGatewayDoes(t *testing.T) {
	g := quotaGateway(t, 0)
	for _, c := range []struct{ body, want string }{
		{``, `{}`},
		{`{"action":"ACTIVATE","memberID":"9","alarm":"CORRUPT"}`, `{"alarms":[{"memberID":"9","alarm":"CORRUPT"}]}`},
		{`{"action":1,"memberID":9,"alarm":2}`, `{"alarms":[{"memberID":"9","alarm":"CORRUPT"}]}`},
		{`{"action":"ACTIVATE","memberID":"7","alarm":"NONE"}`, `{"alarms":[{"memberID":"7"}]}`},
		{`{"action":"GET","alarm":"CORRUPT"}`, `{"alarms":[{"memberID":"9","alarm":"CORRUPT"}]}`},
		{`{"action":"GET","alarm":"NONE"}`, `{"alarms":[{"memberID":"7"},{"memberID":"9","alarm":"CORRUPT"}]}`},
		{`{"action":"GET","alarm":3}`, `{}`},
		{`{"action":5}`, `{}`},
		{`{"action":"BOGUS"}`, `{"error":"unknown value \"BOGUS\" for enum etcdserverpb.AlarmRequest_AlarmAction","message":"unknown value \"BOGUS\" for enum etcdserverpb.AlarmRequest_AlarmAction","code":3}`},
		{`{"alarm":"BOGUS"}`, `{"error":"unknown value \"BOGUS\" for enum etcdserverpb.AlarmType","message":"unknown value \"BOGUS\" for enum etcdserverpb.AlarmType","code":3}`},
		{`{"action":"GET","memberID":"abc"}`, `{"error":"invalid character 'a' looking for beginning of value","message":"invalid character 'a' looking for beginning of value","code":3}`},
		{`nope`, `{"error":"invalid character 'o' in literal null (expecting 'u')","message":"invalid character 'o' in literal null (expecting 'u')","code":3}`},
	} {
		if _, body := post(g, "/v3/maintenance/alarm", c.body); body != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.body, body, c.want)
		}
	}
	// CORRUPT refuses writes with etcd's DataLoss, HTTP 500.
	if code, body := post(g, "/v3/kv/put", `{"key":"eA=="}`); code != 500 || body != `{"error":"etcdserver: corrupt cluster","message":"etcdserver: corrupt cluster","code":15}` {
		t.Fatalf("put under CORRUPT: %d %s", code, body)
	}
	if _, status := post(g, "/v3/maintenance/status", `{}`); !strings.Contains(status, `"errors":["memberID:7 ","memberID:9 alarm:CORRUPT "]`) {
		t.Fatalf("status: %s", status)
	}
	if code, body := post(g, "/v3/maintenance/defragment", `x`); code != 400 || !strings.Contains(body, `"code":3`) {
		t.Fatalf("defragment of a broken body: %d %s", code, body)
	}
}
