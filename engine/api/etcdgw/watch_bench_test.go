package etcdgw

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// BenchmarkGatewayWatchFanOut100 is one /v3/watch stream with 100 watches
// of one key: each op is one put, done when the stream has handed out the
// 100 frames it makes.
func BenchmarkGatewayWatchFanOut100(b *testing.B) {
	const watchers = 100
	g := benchGateway(b)
	ctx := context.Background()
	body := strings.Repeat(fmt.Sprintf(`{"create_request":{"key":%q}} `, b64("k")), watchers)
	resp := g.Serve(ctx, &api.Request{Method: "POST", Path: "/v3/watch", Body: []byte(body)})
	s := resp.Stream
	defer s.Close()
	for range watchers {
		if _, err := s.Next(ctx); err != nil { // created
			b.Fatal(err)
		}
	}
	value := []byte("value-value-value-value")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := g.store.Put(ctx, &mvcc.PutRequest{Key: []byte("k"), Value: value}); err != nil {
			b.Fatal(err)
		}
		for range watchers {
			if _, err := s.Next(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}
