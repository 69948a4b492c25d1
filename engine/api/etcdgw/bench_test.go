package etcdgw

import (
	"context"
	"fmt"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// The gateway's own cost per request (decode, checks, encode) over the
// memory store; compare with engine/mvcc's benchmarks for the store's share.

func benchGateway(b *testing.B) *Gateway {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return NewWithOptions(s, Options{})
}

func benchServe(b *testing.B, g *Gateway, path string, body func(i int) []byte) {
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp := g.Serve(ctx, &api.Request{Method: "POST", Path: path, Body: body(i)})
		if resp.Status != 200 {
			b.Fatalf("%d %s", resp.Status, resp.Body)
		}
	}
}

func BenchmarkGatewayPut(b *testing.B) {
	g := benchGateway(b)
	benchServe(b, g, "/v3/kv/put", func(i int) []byte {
		return fmt.Appendf(nil, `{"key":%q,"value":"dmFsdWUtdmFsdWUtdmFsdWUtdmFsdWU="}`, b64(fmt.Sprintf("key-%06d", i%10000)))
	})
}

func BenchmarkGatewayRange(b *testing.B) {
	g := benchGateway(b)
	for i := range 1000 {
		g.Serve(context.Background(), &api.Request{Method: "POST", Path: "/v3/kv/put",
			Body: fmt.Appendf(nil, `{"key":%q,"value":"dmFsdWU="}`, b64(fmt.Sprintf("key-%06d", i)))})
	}
	benchServe(b, g, "/v3/kv/range", func(i int) []byte {
		return fmt.Appendf(nil, `{"key":%q}`, b64(fmt.Sprintf("key-%06d", i%1000)))
	})
}

// BenchmarkGatewayCAS is kube-apiserver's update: If(MOD(k)==rev) Then(Put) Else(Get).
func BenchmarkGatewayCAS(b *testing.B) {
	g := benchGateway(b)
	rev := int64(1)
	key := b64("/registry/configmaps/default/x")
	benchServe(b, g, "/v3/kv/txn", func(i int) []byte {
		body := fmt.Appendf(nil, `{"compare":[{"key":%q,"target":"MOD","result":"EQUAL","mod_revision":"%d"}],"success":[{"request_put":{"key":%q,"value":"eyJhIjoxfQ=="}}],"failure":[{"request_range":{"key":%q}}]}`,
			key, map[bool]int64{true: 0, false: rev}[i == 0], key, key)
		rev = int64(i + 2)
		return body
	})
}

func BenchmarkDecodeTxn(b *testing.B) {
	body := []byte(`{"compare":[{"key":"L3JlZ2lzdHJ5L2NvbmZpZ21hcHMvZGVmYXVsdC94","target":"MOD","result":"EQUAL","mod_revision":"42"}],"success":[{"request_put":{"key":"L3JlZ2lzdHJ5L2NvbmZpZ21hcHMvZGVmYXVsdC94","value":"eyJhIjoxfQ=="}}],"failure":[{"request_range":{"key":"L3JlZ2lzdHJ5L2NvbmZpZ21hcHMvZGVmYXVsdC94"}}]}`)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		var r mvcc.TxnRequest
		if err := decodeBody(body, func(raw []byte) error { return decodeTxn(raw, &r) }); err != nil {
			b.Fatal(err)
		}
	}
}
