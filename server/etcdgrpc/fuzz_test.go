package etcdgrpc

import (
	"context"
	"strings"
	"testing"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// rawMessage is a request or answer as bytes: the fuzzer's bodies reach
// the server exactly as sent, whatever protobuf they are or are not.
type rawMessage []byte

type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *v.(*rawMessage), nil }
func (rawCodec) Unmarshal(data []byte, v any) error {
	*v.(*rawMessage) = append([]byte(nil), data...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

// The unary methods a client without credentials can call on the default
// session, each fed arbitrary bytes.
var fuzzMethods = []string{
	"/etcdserverpb.KV/Range", "/etcdserverpb.KV/Put", "/etcdserverpb.KV/DeleteRange",
	"/etcdserverpb.KV/Txn", "/etcdserverpb.KV/Compact",
	"/etcdserverpb.Lease/LeaseGrant", "/etcdserverpb.Lease/LeaseRevoke",
	"/etcdserverpb.Lease/LeaseTimeToLive", "/etcdserverpb.Lease/LeaseLeases",
	"/etcdserverpb.Maintenance/Status", "/etcdserverpb.Maintenance/Alarm",
	"/etcdserverpb.Cluster/MemberList", "/etcdserverpb.Auth/Authenticate",
}

// FuzzUnaryRequests sends arbitrary bytes as the request of every unary
// method: the answer is an answer or a gRPC status, never a panic turned
// into an internal error nor a call still unanswered after 10 s, and the
// server keeps answering.
func FuzzUnaryRequests(f *testing.F) {
	e := newEnv(f, Options{})
	conn, err := grpc.NewClient(e.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { conn.Close() })
	seed := func(method string, m gogoMessage) {
		b, err := m.Marshal()
		if err != nil {
			f.Fatal(err)
		}
		for i, name := range fuzzMethods {
			if name == method {
				f.Add(uint8(i), b)
			}
		}
	}
	seed("/etcdserverpb.KV/Put", &pb.PutRequest{Key: []byte("a"), Value: []byte("1"), PrevKv: true})
	seed("/etcdserverpb.KV/Range", &pb.RangeRequest{Key: []byte("a"), RangeEnd: []byte{0}, Revision: 1, Limit: 2, SortOrder: pb.RangeRequest_DESCEND, SortTarget: pb.RangeRequest_MOD})
	seed("/etcdserverpb.KV/Range", &pb.RangeRequest{Key: []byte("a"), Revision: 1 << 40})
	seed("/etcdserverpb.KV/DeleteRange", &pb.DeleteRangeRequest{Key: []byte{0}, RangeEnd: []byte{0}, PrevKv: true})
	seed("/etcdserverpb.KV/Txn", &pb.TxnRequest{
		Compare: []*pb.Compare{{Key: []byte("a"), Target: pb.Compare_MOD, Result: pb.Compare_EQUAL, TargetUnion: &pb.Compare_ModRevision{ModRevision: 2}}},
		Success: []*pb.RequestOp{{Request: &pb.RequestOp_RequestTxn{RequestTxn: &pb.TxnRequest{Success: []*pb.RequestOp{{Request: &pb.RequestOp_RequestPut{RequestPut: &pb.PutRequest{Key: []byte("b")}}}}}}}},
		Failure: []*pb.RequestOp{{Request: &pb.RequestOp_RequestRange{RequestRange: &pb.RangeRequest{Key: []byte("a")}}}},
	})
	seed("/etcdserverpb.KV/Compact", &pb.CompactionRequest{Revision: 1, Physical: true})
	seed("/etcdserverpb.Lease/LeaseGrant", &pb.LeaseGrantRequest{TTL: 30, ID: 7})
	seed("/etcdserverpb.Lease/LeaseRevoke", &pb.LeaseRevokeRequest{ID: 7})
	seed("/etcdserverpb.Lease/LeaseTimeToLive", &pb.LeaseTimeToLiveRequest{ID: 7, Keys: true})
	seed("/etcdserverpb.Maintenance/Alarm", &pb.AlarmRequest{Action: pb.AlarmRequest_GET})
	seed("/etcdserverpb.Auth/Authenticate", &pb.AuthenticateRequest{Name: "demo", Password: "x"})
	f.Add(uint8(0), []byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f})

	call := func(method string, body []byte) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		in, out := rawMessage(body), rawMessage(nil)
		return conn.Invoke(ctx, method, &in, &out, grpc.ForceCodec(rawCodec{}))
	}
	f.Fuzz(func(t *testing.T, method uint8, body []byte) {
		name := fuzzMethods[int(method)%len(fuzzMethods)]
		if err := call(name, body); err != nil {
			st, ok := status.FromError(err)
			if !ok {
				t.Fatalf("%s: not a gRPC status: %v", name, err)
			}
			if strings.Contains(st.Message(), "etcdgrpc: internal error") {
				t.Fatalf("%s panicked on %x: %v", name, body, err)
			}
			if st.Code() == codes.DeadlineExceeded {
				t.Fatalf("%s hung on %x", name, body)
			}
		}
		if err := call("/etcdserverpb.Maintenance/Status", nil); err != nil {
			t.Fatalf("the server stopped answering after %s %x: %v", name, body, err)
		}
	})
}
