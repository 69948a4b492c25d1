package etcdgw

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// An answer over the send limit is refused with the error gRPC gives for a
// message over its limit, before any of it is encoded; etcd's own limit is
// 2 GiB, a shared server sets a smaller one (--max-response-bytes).
func TestAnswersOverTheSendLimitAreRefused(t *testing.T) {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	value := strings.Repeat("v", 1000)
	for i := range 10 {
		s.Put(context.Background(), &mvcc.PutRequest{Key: fmt.Appendf(nil, "k%d", i), Value: []byte(value)})
	}
	serve := func(limit int64, path, body string) *api.Response {
		g := NewWithOptions(s, Options{MaxResponseBytes: limit})
		return g.Serve(context.Background(), &api.Request{Method: "POST", Path: path, Body: []byte(body)})
	}
	all := `{"key":"AA==","range_end":"AA=="}`
	whole := serve(0, "/v3/kv/range", all)
	if whole.Status != 200 {
		t.Fatalf("without a limit: %d %s", whole.Status, whole.Body)
	}
	// The answer's protobuf size, as the gateway counts it: a little over
	// the values' 10,000 bytes.
	out, _ := s.Range(context.Background(), &mvcc.RangeRequest{Key: []byte{0}, RangeEnd: []byte{0}})
	g := NewWithOptions(s, Options{})
	size := rangeResponseSize(messageFieldSize(1, headerSize(g.Header(out.Header.Revision))), out)
	if size < 10000 || size > 10300 {
		t.Fatalf("a range of 10 values of 1,000 bytes counted %d bytes", size)
	}
	if r := serve(int64(size), "/v3/kv/range", all); r.Status != 200 {
		t.Fatalf("at the limit: %d %s", r.Status, r.Body)
	}
	r := serve(int64(size-1), "/v3/kv/range", all)
	want := fmt.Sprintf(`{"error":"grpc: trying to send message larger than max (%d vs. %d)","message":"grpc: trying to send message larger than max (%d vs. %d)","code":8}`, size, size-1, size, size-1)
	if r.Status != 429 || string(r.Body) != want {
		t.Fatalf("over the limit: %d %s", r.Status, r.Body)
	}
	// keys_only and limit keep an answer small: what a client over the
	// limit does next, as with etcd.
	if r := serve(2000, "/v3/kv/range", `{"key":"AA==","range_end":"AA==","keys_only":true}`); r.Status != 200 {
		t.Fatalf("keys only: %d %s", r.Status, r.Body)
	}
	if r := serve(2000, "/v3/kv/range", `{"key":"AA==","range_end":"AA==","limit":1}`); r.Status != 200 {
		t.Fatalf("limit 1: %d %s", r.Status, r.Body)
	}
	// A txn of ranges is one answer: its size counts them all.
	txn := `{"success":[{"request_range":{"key":"AA==","range_end":"AA=="}},{"request_range":{"key":"AA==","range_end":"AA=="}}]}`
	if r := serve(int64(size+100), "/v3/kv/txn", txn); r.Status != 429 {
		t.Fatalf("txn of two ranges: %d %s", r.Status, r.Body)
	}
}
