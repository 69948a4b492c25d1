package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
)

var recordGolden = flag.Bool("golden.record", false,
	"record testdata/etcd34-gateway.jsonl from a real etcd instead of checking rvplay against it")

// exchange is one request of the golden sequence. Watch exchanges read
// Frames lines of the stream and then hang up.
type exchange struct {
	Path   string `json:"path"`
	Body   string `json:"body"`
	Method string `json:"method,omitempty"`
	Frames int    `json:"frames,omitempty"`
}

// goldenExchanges run in order on a fresh store: every endpoint, the
// response shapes (zero values left out, 64-bit integers as strings,
// base64, enums by name, nested txn headers), and the errors etcd gives to
// malformed JSON, wrong types, bad base64 and enum names, empty keys,
// compaction, future revisions and oversized requests.
var goldenExchanges = []exchange{
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v"}`},
	{Path: "/v3/kv/put", Body: `{"key":"Zm9v","value":"YmFy"}`},
	{Path: "/v3/kv/put", Body: `{"key":"Zm9v","value":"YmF6","prev_kv":true}`},
	{Path: "/v3/kv/put", Body: `{"key":"YQ==","value":""}`},
	{Path: "/v3/kv/put", Body: `{"key":"Yg==","value":"MQ==","prevKv":true,"unknown_field":[1,2]}`},
	{Path: "/v3/kv/range", Body: `{"key":"AA==","range_end":"AA==","limit":1}`},
	{Path: "/v3/kv/range", Body: `{"key":"AA==","range_end":"AA==","limit":"2","sort_order":"DESCEND","sort_target":"MOD"}`},
	{Path: "/v3/kv/range", Body: `{"key":"AA==","rangeEnd":"AA==","keysOnly":true,"sortOrder":2,"sortTarget":"KEY"}`},
	{Path: "/v3/kv/range", Body: `{"key":"AA==","range_end":"AA==","count_only":true}`},
	{Path: "/v3/kv/range", Body: `{"key":"AA==","range_end":"AA==","min_mod_revision":"3","max_create_revision":4}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","revision":2}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","revision":"-5"}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","revision":20}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","key":"YQ=="}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v"} trailing garbage is ignored`},
	{Path: "/v3/kv/range", Body: `  {"key":"Zm9v\n"}`},
	{Path: "/v3/kv/range", Body: `null`},
	{Path: "/v3/kv/range", Body: `{"key":null}`},
	{Path: "/v3/kv/range", Body: ``},
	{Path: "/v3/kv/range", Body: `not json`},
	{Path: "/v3/kv/range", Body: `{"key":`},
	{Path: "/v3/kv/range", Body: `[]`},
	{Path: "/v3/kv/range", Body: `"str"`},
	{Path: "/v3/kv/range", Body: `{"key":123}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9"}`},
	{Path: "/v3/kv/range", Body: `{"key":"!!!!"}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","limit":"x"}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","limit":""}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","limit":1.5}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","limit":"1e2"}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","limit":99999999999999999999}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","limit":true}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","keys_only":"true"}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","keys_only":1}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","sort_order":"BOGUS"}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","sort_order":"descend"}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","sort_order":"1"}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","sort_order":1.0}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","sort_order":[]}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","sort_order":3000000000}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","sort_target":"BAD","limit":true}`},
	{Path: "/v3/kv/txn", Body: `{"compare":[{"key":"Zm9v","target":"VALUE","result":"EQUAL","value":"YmF6"}],"success":[{"request_put":{"key":"Zm9v","value":"cXV4"}},{"request_range":{"key":"Zm9v"}},{"request_delete_range":{"key":"YQ==","prev_kv":true}},{"request_txn":{"success":[{"request_range":{"key":"Zm9v"}}]}}],"failure":[{"request_range":{"key":"Zm9v"}}]}`},
	{Path: "/v3/kv/txn", Body: `{"compare":[{"key":"Zm9v","target":"MOD","result":"LESS","mod_revision":"1"}],"failure":[{"request_range":{"key":"Zm9v"}}]}`},
	{Path: "/v3/kv/txn", Body: `{"compare":[{"key":"bm9uZQ==","target":"CREATE","result":"EQUAL","create_revision":"0"}],"success":[{"requestPut":{"key":"bm9uZQ==","value":"MQ=="}}]}`},
	{Path: "/v3/kv/txn", Body: `{"compare":[{"key":"bm9uZQ==","target":"VERSION","result":"NOT_EQUAL"}],"success":[{"request_txn":{"compare":[{"key":"eA==","version":"5"}],"failure":[{"request_put":{"key":"eA==","value":"eQ=="}}]}}]}`},
	{Path: "/v3/kv/txn", Body: `{}`},
	{Path: "/v3/kv/txn", Body: `{"success":[{}]}`},
	{Path: "/v3/kv/txn", Body: `{"failure":[{"request_put":null}]}`},
	{Path: "/v3/kv/txn", Body: `{"success":[{"request_put":{"key":"eA=="}},{"request_put":{"key":"eA=="}}]}`},
	{Path: "/v3/kv/txn", Body: `{"compare":[{"target":"VERSION"}]}`},
	{Path: "/v3/kv/txn", Body: `{"compare":[{"key":"Zm9v","target":"BAD"}]}`},
	{Path: "/v3/kv/txn", Body: `{"compare":[{"key":"Zm9v","result":"BAD"}]}`},
	{Path: "/v3/kv/txn", Body: `{"compare":{}}`},
	{Path: "/v3/kv/txn", Body: `{"compare":[5]}`},
	{Path: "/v3/kv/txn", Body: `{"success":[{"request_range":{}}]}`},
	{Path: "/v3/kv/deleterange", Body: `{"key":"Zm9v","prev_kv":true}`},
	{Path: "/v3/kv/deleterange", Body: `{"key":"Zm9v"}`},
	{Path: "/v3/kv/deleterange", Body: `{}`},
	{Path: "/v3/kv/put", Body: `{"key":"Zm9v","lease":"123"}`},
	{Path: "/v3/kv/put", Body: `{"key":"bm9uZQ==","ignore_value":true}`},
	{Path: "/v3/kv/put", Body: `{"key":"bG9zdA==","ignore_value":true}`},
	{Path: "/v3/kv/put", Body: `{"key":"bm9uZQ==","ignore_value":true,"value":"YQ=="}`},
	{Path: "/v3/kv/put", Body: `{"key":"bm9uZQ==","ignore_lease":true,"lease":"5"}`},
	{Path: "/v3/kv/put", Body: `{"value":"YQ=="}`},
	{Path: "/v3/kv/put", Body: `{"key":"YmlnZ2Vy","value":"` + strings.Repeat("QUFB", 540000) + `"}`},
	{Path: "/v3/kv/put", Body: `{"key":"YmlnZ2Vy","value":"` + strings.Repeat("QUFB", 720000) + `"}`},
	{Path: "/v3/watch", Body: `{"create_request":{"key":"AA==","range_end":"AA==","start_revision":"2","prev_kv":true}}`, Frames: 2},
	{Path: "/v3/watch", Body: `{"create_request":{"key":"Zm9v","start_revision":"2","filters":["NODELETE"]}} {"create_request":{"key":"Zm9v","range_end":"Zm9v"}}`, Frames: 3},
	{Path: "/v3/watch", Body: `{"create_request":{"key":"Zm9v","watch_id":"7"}} {"create_request":{"key":"Zm9v","watch_id":"7"}} {"create_request":{"key":"Zm9v"}} {"cancel_request":{"watch_id":"9"}} {"cancel_request":{"watch_id":"7"}}`, Frames: 4},
	{Path: "/v3/watch", Body: `{"progress_request":{}}`, Frames: 1},
	{Path: "/v3/watch", Body: `not json`},
	{Path: "/v3/watch", Body: `{"create_request":{"key":"Zm9v","filters":["BAD"]}}`},
	{Path: "/v3/watch", Body: `{"create_request":{"key":"Zm9v","start_revision":"-3"}}`, Frames: 2},
	{Path: "/v3/kv/compaction", Body: `{"revision":"3"}`},
	{Path: "/v3/kv/compaction", Body: `{"revision":"3"}`},
	{Path: "/v3/kv/compaction", Body: `{"revision":"100"}`},
	{Path: "/v3/kv/compaction", Body: `{}`},
	{Path: "/v3/kv/compaction", Body: `{"revision":"4","physical":true}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","revision":3}`},
	{Path: "/v3/kv/range", Body: `{"key":"Zm9v","revision":4}`},
	{Path: "/v3/watch", Body: `{"create_request":{"key":"Zm9v","start_revision":"2"}}`, Frames: 2},
	{Path: "/v3/watch", Body: `{"create_request":{"key":"Zm9v","start_revision":"-3"}}`, Frames: 2},
	{Path: "/v3/maintenance/status", Body: `{}`},
	{Path: "/v3/maintenance/status", Body: `[]`},
	{Path: "/v3/nope", Body: `{}`},
	{Path: "/v3/kv/range", Method: "GET"},
	{Path: "/v3/kv/range", Method: "OPTIONS"},
	{Path: "/v3beta/kv/range", Body: `{"key":"Zm9v","revision":"4"}`},
	{Path: "/v3beta/nope", Body: `{}`},
}

// recorded is one exchange and etcd's answer.
type recorded struct {
	exchange
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Answer  string            `json:"answer,omitempty"`
	Stream  []string          `json:"stream,omitempty"`
}

// comparedHeaders are the response headers (and trailer) that must match.
// Access-Control-Allow-Origin is not one: etcd sends "*", rvplay never does
// (its transport names the origins it trusts).
var comparedHeaders = []string{"Content-Type", "Grpc-Metadata-Content-Type", "Trailer",
	"X-Content-Type-Options", "Access-Control-Allow-Methods",
	"Access-Control-Allow-Headers", "Trailer-Value-Grpc-Trailer-Content-Type"}

// statusUnknowable are StatusResponse fields rvplay cannot know (etcd's
// database size and raft index): left out of the comparison.
var statusUnknowable = regexp.MustCompile(`,"(dbSize|dbSizeInUse|raftIndex|raftAppliedIndex)":"[0-9]+"`)

func play(t *testing.T, base string, e exchange) recorded {
	t.Helper()
	r := recorded{exchange: e, Headers: map[string]string{}}
	method := e.Method
	if method == "" {
		method = "POST"
	}
	req, err := http.NewRequest(method, base+e.Path, strings.NewReader(e.Body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r.Status = resp.StatusCode
	rd := bufio.NewReader(resp.Body)
	if e.Frames > 0 {
		for range e.Frames {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("%s %s: reading frame: %v (got %q)", e.Path, e.Body, err, r.Stream)
			}
			r.Stream = append(r.Stream, normalize(line))
		}
	} else {
		var b strings.Builder
		if _, err := rd.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		r.Answer = normalize(statusUnknowable.ReplaceAllString(b.String(), ""))
	}
	for _, h := range comparedHeaders {
		v := resp.Header.Get(h)
		if name, ok := strings.CutPrefix(h, "Trailer-Value-"); ok {
			v = resp.Trailer.Get(name)
		}
		if v != "" {
			r.Headers[h] = v
		}
	}
	return r
}

const goldenFile = "testdata/etcd34-gateway.jsonl"

// TestGatewayMatchesRecordedEtcd replays the golden exchanges against a
// fresh session and compares every status, compared header, body and
// watch frame with what etcd 3.4.23 answered (recorded with
// -golden.record; cluster and member IDs are normalized).
func TestGatewayMatchesRecordedEtcd(t *testing.T) {
	if *recordGolden {
		etcd := etcdtest.Start(t, etcdtest.Options{})
		f, err := os.Create(goldenFile)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		enc := json.NewEncoder(f)
		enc.SetEscapeHTML(false)
		for _, e := range goldenExchanges {
			r := play(t, etcd.URL, e)
			if len(e.Body) > 1000 {
				r.Body = fmt.Sprintf("<%d bytes>", len(e.Body))
			}
			if err := enc.Encode(r); err != nil {
				t.Fatal(err)
			}
			// etcd applies compactions and watches asynchronously; a moment
			// keeps the recording free of races that rvplay does not have.
			time.Sleep(50 * time.Millisecond)
		}
		return
	}
	srv := startServer(t, "", "golden")
	replayGolden(t, srv.URL+"/s/golden", nil)
}

// replayGolden plays the golden exchanges at base and compares the
// answers with etcd's, but for the exchanges skip names (by index), each
// with the reason it cannot match.
func replayGolden(t *testing.T, base string, skip map[int]string) {
	t.Helper()
	data, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != len(goldenExchanges) {
		t.Fatalf("%s has %d exchanges, the test %d: record it again", goldenFile, len(lines), len(goldenExchanges))
	}
	for i, e := range goldenExchanges {
		if why, ok := skip[i]; ok {
			t.Logf("#%d %s %.80s: not compared: %s", i, e.Path, e.Body, why)
			continue
		}
		var want recorded
		if err := json.Unmarshal([]byte(lines[i]), &want); err != nil {
			t.Fatal(err)
		}
		got := play(t, base, e)
		name := fmt.Sprintf("#%d %s %s %.200s", i, e.Method, e.Path, e.Body)
		if got.Status != want.Status {
			t.Errorf("%s: status %d, etcd %d", name, got.Status, want.Status)
		}
		if got.Answer != want.Answer {
			t.Errorf("%s:\n got %s\netcd %s", name, got.Answer, want.Answer)
		}
		if strings.Join(got.Stream, "") != strings.Join(want.Stream, "") {
			t.Errorf("%s: stream\n got %s\netcd %s", name, got.Stream, want.Stream)
		}
		for _, h := range comparedHeaders {
			if got.Headers[h] != want.Headers[h] {
				t.Errorf("%s: header %s = %q, etcd %q", name, h, got.Headers[h], want.Headers[h])
			}
		}
	}
}
