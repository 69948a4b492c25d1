package etcddiff

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// quotaBytes is the quota both sides run with: etcd's
// --quota-backend-bytes and the session's. Their byte counts differ (bbolt
// pages against rvplay's RecordSize), so each side fills to its own first
// refusal and the answers from there on are compared.
const quotaBytes = 1 << 20

// TestNoSpaceCycleMatchesEtcd runs the operator's cycle for a full
// database, fill -> NOSPACE -> compact -> defragment -> disarm, against a
// real etcd started with --quota-backend-bytes and against rvplay (in
// process on memory, and the server binary with the same flag), and
// compares every answer after the fill: status codes and bodies, with
// member IDs, revisions, sizes and counts (which differ between the two
// fills) put aside.
func TestNoSpaceCycleMatchesEtcd(t *testing.T) {
	ref := etcdtest.Start(t, etcdtest.Options{Args: []string{fmt.Sprint("--quota-backend-bytes=", quotaBytes)}})
	server := rvplaytest.Start(t, "diff", fmt.Sprint("--quota-backend-bytes=", quotaBytes))
	targets := []*Target{NewTarget("etcd", ref.URL), memoryTargetWith(t, session.Options{Store: mvcc.Options{QuotaBackendBytes: quotaBytes}}), NewTarget("rvplay-sqlite", server.SessionURL)}
	var answers [][]string
	for _, tg := range targets {
		answers = append(answers, noSpaceCycle(t, tg))
	}
	// The cycle must do what it is for on the reference: refuse writes
	// while the alarm is raised, and take them again once it is lifted.
	if got := answers[0][1]; !strings.Contains(got, "-> 429 ") {
		t.Fatalf("etcd took a put after the fill: %s", got)
	}
	if got := answers[0][len(answers[0])-2]; !strings.Contains(got, "-> 200 ") {
		t.Fatalf("etcd refused the put after the disarm: %s", got)
	}
	for i := range answers[0] {
		t.Logf("%2d %s", i, answers[0][i])
		for j := 1; j < len(targets); j++ {
			if answers[0][i] != answers[j][i] {
				t.Errorf("step %d:\n etcd   %s\n %s %s", i, answers[0][i], targets[j].Name, answers[j][i])
			}
		}
	}
}

func noSpaceCycle(t *testing.T, tg *Target) []string {
	ctx := context.Background()
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	value := b64(strings.Repeat("v", 60000))
	puts := 0
	for ; ; puts++ {
		r := tg.post(ctx, "/v3/kv/put", []byte(fmt.Sprintf(`{"key":"%s","value":"%s"}`, b64(fmt.Sprintf("k%03d", puts)), value)))
		if r.Err != nil {
			t.Fatalf("%s: %v", tg.Name, r.Err)
		}
		if r.Status != 200 {
			break
		}
		if puts > 100 {
			t.Fatalf("%s: the quota never refused a put", tg.Name)
		}
	}
	status := tg.post(ctx, "/v3/maintenance/status", []byte(`{}`))
	header := func(r Result) map[string]any {
		m, _ := r.Value.(map[string]any)
		h, _ := m["header"].(map[string]any)
		return h
	}
	member := fmt.Sprint(header(status)["member_id"])
	rev := fmt.Sprint(header(status)["revision"])
	steps := []struct{ path, body string }{
		{"/v3/kv/put", `{"key":"eA==","value":""}`},
		{"/v3/maintenance/alarm", `{"action":"GET"}`},
		{"/v3/maintenance/status", `{}`},
		{"/v3/kv/range", `{"key":"azAwMA==","count_only":true}`},
		{"/v3/kv/txn", `{"success":[{"request_put":{"key":"eA=="}}]}`},
		{"/v3/kv/txn", `{"compare":[{"key":"eA==","target":"VERSION","version":"5"}],"success":[{"request_put":{"key":"eA=="}}],"failure":[{"request_range":{"key":"eA=="}}]}`},
		{"/v3/kv/txn", `{"success":[{"request_range":{"key":"azAwMA==","keys_only":true}}]}`},
		{"/v3/kv/txn", `{"success":[{"request_delete_range":{"key":"eA=="}}]}`},
		{"/v3/kv/deleterange", `{"key":"AA==","range_end":"AA=="}`},
		{"/v3/kv/put", `{"key":"eA==","value":""}`},
		{"/v3/kv/compaction", `{"revision":"{rev}","physical":true}`}, // the delete's revision
		{"/v3/maintenance/defragment", `{}`},
		{"/v3/kv/put", `{"key":"eA==","value":""}`},
		{"/v3/maintenance/alarm", `{"action":"DEACTIVATE","memberID":"1","alarm":"NOSPACE"}`},
		{"/v3/maintenance/alarm", `{"action":"DEACTIVATE","memberID":"` + member + `","alarm":"NOSPACE"}`},
		{"/v3/maintenance/alarm", `{"action":"GET"}`},
		{"/v3/kv/put", `{"key":"eA==","value":""}`},
		{"/v3/maintenance/status", `{}`},
	}
	out := []string{fmt.Sprintf("the fill ends with %s", normalize(status, member))}
	for _, s := range steps {
		r := tg.post(ctx, s.path, []byte(strings.ReplaceAll(s.body, "{rev}", rev)))
		if r.Err != nil {
			t.Fatalf("%s %s: %v", tg.Name, s.path, r.Err)
		}
		if h := header(r); h != nil {
			rev = fmt.Sprint(h["revision"])
		}
		out = append(out, fmt.Sprintf("%s %s -> %s", s.path, strings.ReplaceAll(s.body, member, "ID"), normalize(r, member)))
	}
	return out
}

// normalize renders an answer with what legitimately differs between the
// two sides replaced: the member and cluster IDs, revisions and raft
// indexes, sizes, and counts of the keys each fill wrote.
func normalize(r Result, member string) string {
	if r.Value == nil {
		return fmt.Sprintf("%d %s", r.Status, r.Raw)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch k {
				case "cluster_id", "member_id", "leader", "memberID":
					x[k] = "ID"
				case "revision", "raftIndex", "raftAppliedIndex", "dbSize", "dbSizeInUse", "deleted", "count":
					x[k] = "N"
				default:
					x[k] = walk(e)
				}
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			return strings.ReplaceAll(x, member, "ID")
		}
		return v
	}
	b, _ := json.Marshal(walk(r.Value))
	return fmt.Sprintf("%d %s", r.Status, b)
}
