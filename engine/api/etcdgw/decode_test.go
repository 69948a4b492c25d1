package etcdgw

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// The probe of issue 10 sent 3,300 nested txns in 99 KB: decoding them
// level by level cost 7.8 s of CPU and hundreds of MB before the op count
// check refused the request. Decoding now follows etcd's op budget, which
// no txn nested 129 deep can fit, and refuses the body after a linear scan.
func TestNestedTxnsPastTheOpBudgetAreRefusedWithoutDecodingThem(t *testing.T) {
	g := benchGateway(t)
	body := nestedTxn(3300, "")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	resp := g.Serve(context.Background(), &api.Request{Method: "POST", Path: "/v3/kv/txn", Body: body})
	runtime.ReadMemStats(&after)
	if resp.Status != 400 || !strings.Contains(string(resp.Body), mvcc.ErrTooManyOps.Message) {
		t.Fatalf("%d %s", resp.Status, resp.Body)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 1<<20 {
		t.Fatalf("refusing a %d-byte body allocated %d bytes", len(body), alloc)
	}
}

// Wherever a txn fits or does not fit the budget, the gateway's answer is
// the store's own check's: decoding only stops early where the check is
// certain to fail, and then at the same place.
func TestDecodingFollowsTheOpBudgetOfTheStoresCheck(t *testing.T) {
	put := func(k string) mvcc.RequestOp {
		return mvcc.RequestOp{Put: &mvcc.PutRequest{Key: []byte(k), Value: []byte("v")}}
	}
	puts := func(prefix string, n int) []mvcc.RequestOp {
		ops := make([]mvcc.RequestOp, n)
		for i := range ops {
			ops[i] = put(prefix + string(rune('a'+i%26)) + strings.Repeat("x", i/26))
		}
		return ops
	}
	nested := func(t *mvcc.TxnRequest) mvcc.RequestOp { return mvcc.RequestOp{Txn: t} }
	chain := func(depth int) *mvcc.TxnRequest {
		t := &mvcc.TxnRequest{Success: []mvcc.RequestOp{put("k")}}
		for range depth {
			t = &mvcc.TxnRequest{Success: []mvcc.RequestOp{nested(t)}}
		}
		return t
	}
	cmp := func(n int, key string) []mvcc.Compare {
		c := make([]mvcc.Compare, n)
		for i := range c {
			c[i] = mvcc.Compare{Key: []byte(key), Target: mvcc.CompareVersion}
		}
		return c
	}
	for name, txn := range map[string]*mvcc.TxnRequest{
		"127 nested txns":                      chain(127),
		"128 nested txns":                      chain(128),
		"129 nested txns":                      chain(129),
		"128 ops":                              {Success: puts("a", 128)},
		"129 ops":                              {Success: puts("a", 129)},
		"129 compares":                         {Compare: cmp(129, "k")},
		"129 ops in failure":                   {Failure: puts("a", 129)},
		"64 ops, one a txn of 64":              {Success: append(puts("a", 63), nested(&mvcc.TxnRequest{Success: puts("b", 64)}))},
		"64 ops, one a txn of 65":              {Success: append(puts("a", 63), nested(&mvcc.TxnRequest{Success: puts("b", 65)}))},
		"a txn of 100, failure of 50":          {Success: []mvcc.RequestOp{nested(&mvcc.TxnRequest{Success: puts("b", 100)})}, Failure: puts("a", 50)},
		"empty compare key before a deep txn":  {Compare: cmp(1, ""), Success: []mvcc.RequestOp{nested(chain(200))}},
		"empty op before a deep txn":           {Success: []mvcc.RequestOp{{}, nested(chain(200))}},
		"deep txn before an empty op":          {Success: []mvcc.RequestOp{nested(chain(200)), {}}},
		"deep txn in failure, 129 compares":    {Compare: cmp(129, "k"), Failure: []mvcc.RequestOp{nested(chain(200))}},
		"two lists of 129 inside a nested txn": {Success: []mvcc.RequestOp{nested(&mvcc.TxnRequest{Success: puts("a", 129), Failure: puts("b", 129)})}},
	} {
		t.Run(name, func(t *testing.T) {
			store, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			want := "200"
			if _, err := store.Txn(context.Background(), txn); err != nil {
				want = err.Error()
			}
			g := benchGateway(t)
			resp := g.Serve(context.Background(), &api.Request{Method: "POST", Path: "/v3/kv/txn", Body: txnJSON(txn)})
			got := "200"
			if resp.Status != 200 {
				var e struct{ Message string }
				json.Unmarshal(resp.Body, &e)
				got = e.Message
			}
			if got != want {
				t.Fatalf("gateway: %s; store: %s", got, want)
			}
		})
	}
}

// txnJSON writes a txn request as an etcd client sends it to the gateway.
func txnJSON(t *mvcc.TxnRequest) []byte {
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	var ops func(list []mvcc.RequestOp) []any
	var txn func(t *mvcc.TxnRequest) map[string]any
	ops = func(list []mvcc.RequestOp) []any {
		out := []any{}
		for _, op := range list {
			switch {
			case op.Put != nil:
				out = append(out, map[string]any{"request_put": map[string]any{"key": b64(op.Put.Key), "value": b64(op.Put.Value)}})
			case op.Txn != nil:
				out = append(out, map[string]any{"request_txn": txn(op.Txn)})
			default:
				out = append(out, map[string]any{})
			}
		}
		return out
	}
	txn = func(t *mvcc.TxnRequest) map[string]any {
		m := map[string]any{"success": ops(t.Success), "failure": ops(t.Failure)}
		var cmps []any
		for _, c := range t.Compare {
			cmps = append(cmps, map[string]any{"key": b64(c.Key), "target": "VERSION", "result": "EQUAL", "version": c.Version})
		}
		m["compare"] = cmps
		return m
	}
	b, err := json.Marshal(txn(t))
	if err != nil {
		panic(err)
	}
	return b
}

// --max-txn-ops is a store's setting, and the gateway decodes against the
// store's value: a txn within the default but over a lower limit is refused
// with etcd's error, and one within it goes through.
func TestTheOpLimitIsTheStores(t *testing.T) {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{MaxTxnOps: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g := NewWithOptions(s, Options{})
	put := func(k string) string {
		return `{"request_put":{"key":"` + base64.StdEncoding.EncodeToString([]byte(k)) + `"}}`
	}
	for _, c := range []struct {
		ops    []string
		status int
	}{
		{[]string{put("a"), put("b")}, 200},
		{[]string{put("a"), put("b"), put("c")}, 400},
	} {
		body := `{"success":[` + strings.Join(c.ops, ",") + `]}`
		resp := g.Serve(context.Background(), &api.Request{Method: "POST", Path: "/v3/kv/txn", Body: []byte(body)})
		if resp.Status != c.status {
			t.Fatalf("%d ops with --max-txn-ops 2: %d %s, want %d", len(c.ops), resp.Status, resp.Body, c.status)
		}
		if c.status == 400 && !strings.Contains(string(resp.Body), mvcc.ErrTooManyOps.Message) {
			t.Fatalf("refused with %s", resp.Body)
		}
	}
	if _, err := s.Txn(context.Background(), &mvcc.TxnRequest{Success: make([]mvcc.RequestOp, 3)}); err != mvcc.ErrTooManyOps {
		t.Fatalf("the store took 3 ops with MaxTxnOps 2: %v", err)
	}
}
