package etcdgw

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// The gateway's own cost per request (decode, checks, encode) over the
// memory store; compare with engine/mvcc's benchmarks for the store's share.

func benchGateway(b testing.TB) *Gateway {
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
		if err := firstError(decodeTxnBody(body, &r, mvcc.DefaultMaxTxnOps), mvcc.CheckTxn(&r, mvcc.DefaultMaxTxnOps)); err != nil {
			b.Fatal(err)
		}
	}
}

// nestedTxn is a txn holding a chain of depth txns, each the only success op
// of its parent, with inner as the innermost one's success ops.
func nestedTxn(depth int, inner string) []byte {
	var b bytes.Buffer
	for range depth {
		b.WriteString(`{"success":[{"request_txn":`)
	}
	b.WriteString(`{"success":[` + inner + `]}`)
	for range depth {
		b.WriteString(`}]}`)
	}
	return b.Bytes()
}

// BenchmarkDecodeHostileNestedTxn is the body of issue 10's probe: 3,300
// nested txns in 99 KB, far past what etcd's op budget allows.
func BenchmarkDecodeHostileNestedTxn(b *testing.B) {
	body := nestedTxn(3300, "")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var r mvcc.TxnRequest
		decodeTxnBody(body, &r, mvcc.DefaultMaxTxnOps)
	}
}

// BenchmarkDecodeDeepTxnWithLargeValue is the costliest txn etcd accepts to
// decode: 127 nested txns around a put of 1 MiB, as deep as the op budget
// allows. Each level's split jumps over what its parent's split scanned.
func BenchmarkDecodeDeepTxnWithLargeValue(b *testing.B) {
	value := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("v"), 1<<20))
	body := nestedTxn(127, `{"request_put":{"key":"YQ==","value":"`+value+`"}}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		var r mvcc.TxnRequest
		if err := firstError(decodeTxnBody(body, &r, mvcc.DefaultMaxTxnOps), mvcc.CheckTxn(&r, mvcc.DefaultMaxTxnOps)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecoders is a put and kube-apiserver's CAS through the gateway
// with the one-pass scanner and with encoding/json alone (the reference
// path, referenceOnly): what scan.go buys, in process.
func BenchmarkDecoders(b *testing.B) {
	for _, ref := range []bool{false, true} {
		name := "scanner"
		if ref {
			name = "encoding-json"
		}
		b.Run("Put/"+name, func(b *testing.B) {
			referenceOnly = ref
			defer func() { referenceOnly = false }()
			BenchmarkGatewayPut(b)
		})
		b.Run("CAS/"+name, func(b *testing.B) {
			referenceOnly = ref
			defer func() { referenceOnly = false }()
			BenchmarkGatewayCAS(b)
		})
	}
}
