package etcdgw

import (
	"context"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// askingStore is a store that tells what each of its watch streams was
// asked for.
type askingStore struct {
	*mvcc.Store
	asked chan mvcc.WatchStreamOptions
}

func (s askingStore) NewWatchStream(opts mvcc.WatchStreamOptions) mvcc.Watches {
	s.asked <- opts
	return s.Store.NewWatchStream(opts)
}

// A /v3/watch asks its store for a leader only when its client asked:
// etcd's gateway passes a Grpc-Metadata-Hasleader header on as the
// hasleader metadata clientv3.WithRequireLeader sends, which etcd's
// server compares with "true"; over a WebSocket etcd's proxy passes no
// such header on, so such a stream never asks. On an etcd cluster, a
// stream that asked ends when its member has no leader, one that did not
// waits (server/etcdstore/leaderloss_test.go).
func TestAGatewayWatchRequiresALeaderOnlyIfItsClientAsked(t *testing.T) {
	for _, c := range []struct {
		name   string
		header api.Header
		want   bool
	}{
		{"no header", nil, false},
		{"hasleader true", api.Header{"Grpc-Metadata-Hasleader": {"true"}}, true},
		{"hasleader other", api.Header{"Grpc-Metadata-Hasleader": {"yes"}}, false},
		{"over a WebSocket", api.Header{"Grpc-Metadata-Hasleader": {"true"}, "Upgrade": {"websocket"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			s := askingStore{st, make(chan mvcc.WatchStreamOptions, 1)}
			resp := NewWithOptions(s, Options{}).Serve(context.Background(), &api.Request{
				Method: "POST", Path: "/v3/watch", Header: c.header, Body: []byte(`{"create_request":{"key":"YQ=="}}`)})
			if resp.Stream == nil {
				t.Fatalf("%d %s", resp.Status, resp.Body)
			}
			resp.Stream.Close()
			if got := <-s.asked; got.RequireLeader != c.want {
				t.Fatalf("the store's stream requires a leader: %v, want %v", got.RequireLeader, c.want)
			}
		})
	}
}
