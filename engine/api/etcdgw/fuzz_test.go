package etcdgw

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// The fuzz targets feed arbitrary bodies to the gateway's decoders and to
// the whole handler. The rule they check: bad input gets etcd's error (a
// JSON {"error","message","code"} body with the matching HTTP status),
// never a panic, a hang or a non-JSON answer. Their seed corpus is in
// testdata/fuzz/<target>/.

var (
	fuzzOnce sync.Once
	fuzzGW   *Gateway
)

// fuzzGateway is one gateway per fuzzing process, over a store with a few
// keys: opening a store per input would make fuzzing slow for no gain
// (inputs that write only add history).
func fuzzGateway(t testing.TB) *Gateway {
	fuzzOnce.Do(func() {
		s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
		if err != nil {
			panic(err)
		}
		ctx := context.Background()
		for _, k := range []string{"foo", "foo1", "bar"} {
			if _, err := s.Put(ctx, &mvcc.PutRequest{Key: []byte(k), Value: []byte("v")}); err != nil {
				panic(err)
			}
		}
		fuzzGW = NewWithOptions(s, Options{})
	})
	return fuzzGW
}

// checkAnswer fails unless resp is a success or a well-formed gateway error.
func checkAnswer(t *testing.T, body []byte, resp *api.Response) {
	t.Helper()
	if resp == nil {
		t.Fatalf("nil response for %q", body)
	}
	if resp.Stream != nil {
		return
	}
	if !json.Valid(resp.Body) {
		t.Fatalf("answer to %q is not JSON: %q", body, resp.Body)
	}
	if resp.Status == 200 {
		return
	}
	var e struct {
		Error   *string `json:"error"`
		Message *string `json:"message"`
		Code    *int    `json:"code"`
	}
	if err := json.Unmarshal(resp.Body, &e); err != nil || e.Error == nil || e.Message == nil || e.Code == nil {
		t.Fatalf("answer to %q is not a gateway error: %d %s", body, resp.Status, resp.Body)
	}
	if *e.Error != *e.Message {
		t.Fatalf("error and message differ: %s", resp.Body)
	}
	if resp.Status != HTTPStatus(mvcc.Code(*e.Code)) {
		t.Fatalf("status %d for code %d: %s", resp.Status, *e.Code, resp.Body)
	}
	if *e.Code == int(mvcc.CodeInternal) {
		t.Fatalf("internal error (a recovered panic?) for %q: %s", body, resp.Body)
	}
}

func fuzzServe(f *testing.F, path string) {
	f.Fuzz(func(t *testing.T, body []byte) {
		g := fuzzGateway(t)
		resp := g.Serve(context.Background(), &api.Request{Method: "POST", Path: path, Body: body})
		checkAnswer(t, body, resp)
	})
}

func FuzzDecodeRange(f *testing.F) {
	f.Add([]byte(`{"key":"Zm9v","range_end":"AA==","limit":"1","sort_order":"DESCEND"}`))
	fuzzServe(f, "/v3/kv/range")
}

func FuzzDecodePut(f *testing.F) {
	f.Add([]byte(`{"key":"Zm9v","value":"YmFy","prev_kv":true}`))
	fuzzServe(f, "/v3/kv/put")
}

func FuzzDecodeDeleteRange(f *testing.F) {
	f.Add([]byte(`{"key":"Zm9v","range_end":"Zm9w","prev_kv":true}`))
	fuzzServe(f, "/v3/kv/deleterange")
}

func FuzzDecodeTxn(f *testing.F) {
	f.Add([]byte(`{"compare":[{"key":"Zm9v","target":"MOD","result":"EQUAL","mod_revision":"2"}],"success":[{"request_put":{"key":"Zm9v","value":"eA=="}}],"failure":[{"request_range":{"key":"Zm9v"}}]}`))
	fuzzServe(f, "/v3/kv/txn")
}

func FuzzDecodeCompaction(f *testing.F) {
	f.Add([]byte(`{"revision":"2","physical":true}`))
	fuzzServe(f, "/v3/kv/compaction")
}

func FuzzDecodeLeaseGrant(f *testing.F) {
	f.Add([]byte(`{"TTL":"60","ID":"7"}`))
	fuzzServe(f, "/v3/lease/grant")
}

// The keep-alive's decoder is the revoke's (one ID).
func FuzzDecodeLeaseKeepAlive(f *testing.F) {
	f.Add([]byte(`{"ID":"7"}`))
	fuzzServe(f, "/v3/lease/keepalive")
}

func FuzzDecodeLeaseTimeToLive(f *testing.F) {
	f.Add([]byte(`{"ID":"7","keys":true}`))
	fuzzServe(f, "/v3/lease/timetolive")
}

// FuzzDecodeWatch opens a watch stream with the body, takes the frames it
// answers at once, and closes it: no panic, every frame a JSON result line.
func FuzzDecodeWatch(f *testing.F) {
	f.Add([]byte(`{"create_request":{"key":"Zm9v","start_revision":"1","prev_kv":true}} {"progress_request":{}} {"cancel_request":{"watch_id":"0"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		g := fuzzGateway(t)
		resp := g.Serve(context.Background(), &api.Request{Method: "POST", Path: "/v3/watch", Body: body})
		checkAnswer(t, body, resp)
		if resp.Stream == nil {
			return
		}
		defer resp.Stream.Close()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
			frame, err := resp.Stream.Next(ctx)
			cancel()
			if err != nil {
				return
			}
			var line struct {
				Result json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(frame, &line); err != nil || line.Result == nil || frame[len(frame)-1] != '\n' {
				t.Fatalf("bad frame %q for %q", frame, body)
			}
		}
	})
}
