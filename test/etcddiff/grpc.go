package etcddiff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/protoadapt"
)

// A target can also be reached through etcd's gRPC API with the official
// client, clientv3 (NewGRPCTarget): every op the generator makes for the
// gateway is the same request in protobuf (the gateway's JSON is decoded
// with the protobuf JSON mapping etcd's gateway uses, so the two are one
// request), sent with clientv3's KV client and its connection's Watch
// stream; answers are encoded back in the gateway's JSON so that the
// generator and the comparison work unchanged. Malformed bodies have no
// protobuf form: every gRPC target answers them with the same "skipped".
// gRPC targets are compared with a gRPC reference.

// NewGRPCTarget connects clientv3 to the gRPC endpoint (host:port).
func NewGRPCTarget(name, endpoint string) (*Target, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:          []string{endpoint},
		DialTimeout:        10 * time.Second,
		Logger:             zap.NewNop(),
		MaxCallRecvMsgSize: 1 << 30,
	})
	if err != nil {
		return nil, err
	}
	return &Target{Name: name, grpc: cli, kv: clientv3.RetryKVClient(cli)}, nil
}

// Close closes a gRPC target's client.
func (t *Target) Close() error {
	if t.grpc != nil {
		return t.grpc.Close()
	}
	return nil
}

// The gateway's JSON mapping: proto field names, zero values left out,
// 64-bit integers as strings.
var marshaler = protojson.MarshalOptions{UseProtoNames: true}

// skipped is every gRPC target's answer to a body that is not JSON.
var skipped = Result{Status: -1, Raw: []byte("not a protobuf message: not sent over gRPC")}

func (t *Target) executeGRPC(ctx context.Context, op *Op, body []byte) Result {
	if op.Kind == OpWatchDrain {
		return t.drainWatch(op.Watch.ID, op.Watch.FenceRev, op.Watch.Compacted)
	}
	if op.RawBody != nil {
		return skipped
	}
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	var resp protoadapt.MessageV1
	var err error
	switch op.Kind {
	case OpRange:
		var r pb.RangeRequest
		if err := unmarshal(body, &r); err != nil {
			return skipped
		}
		resp, err = t.kv.Range(ctx, &r)
	case OpPut:
		var r pb.PutRequest
		if err := unmarshal(body, &r); err != nil {
			return skipped
		}
		resp, err = t.kv.Put(ctx, &r)
	case OpDeleteRange:
		var r pb.DeleteRangeRequest
		if err := unmarshal(body, &r); err != nil {
			return skipped
		}
		resp, err = t.kv.DeleteRange(ctx, &r)
	case OpTxn:
		var r pb.TxnRequest
		if err := unmarshal(body, &r); err != nil {
			return skipped
		}
		resp, err = t.kv.Txn(ctx, &r)
	case OpCompact:
		var r pb.CompactionRequest
		if err := unmarshal(body, &r); err != nil {
			return skipped
		}
		resp, err = t.kv.Compact(ctx, &r)
	case OpWatchOpen:
		res := t.openGRPCWatch(op.Watch.ID, body)
		if op.Watch.Empty {
			t.closeWatch(op.Watch.ID)
		}
		return res
	default:
		return Result{Err: fmt.Errorf("op %s has no gRPC form", op.Kind)}
	}
	if err != nil {
		return statusResult(err)
	}
	return messageResult(resp)
}

func unmarshal(body []byte, m protoadapt.MessageV1) error {
	return protojson.Unmarshal(body, protoadapt.MessageV2Of(m))
}

// messageResult is an answer in the gateway's JSON.
func messageResult(m protoadapt.MessageV1) Result {
	b, err := marshaler.Marshal(protoadapt.MessageV2Of(m))
	if err != nil {
		return Result{Err: err}
	}
	return Result{Status: 200, ContentType: "application/json", Raw: b, Value: parseJSON(b)}
}

// statusResult is an error: its gRPC code and message.
func statusResult(err error) Result {
	st, ok := status.FromError(err)
	if !ok {
		return Result{Err: err}
	}
	raw, _ := json.Marshal(map[string]any{"code": int(st.Code()), "message": st.Message()})
	return Result{Status: 500, ContentType: "application/json", Raw: raw, Value: parseJSON(raw)}
}

// openGRPCWatch opens a Watch stream on clientv3's connection and sends
// the create request; its answers are gateway frames ({"result":...}).
func (t *Target) openGRPCWatch(id int, body []byte) Result {
	if t.watches == nil {
		t.watches = map[int]*watchStream{}
	}
	var req pb.WatchRequest
	if err := unmarshal(body, &req); err != nil {
		return skipped
	}
	wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(context.Background()))
	stream, err := pb.NewWatchClient(t.grpc.ActiveConnection()).Watch(wctx)
	if err == nil {
		err = stream.Send(&req)
	}
	if err != nil {
		cancel()
		return statusResult(err)
	}
	ws := &watchStream{cancel: cancel, msgs: make(chan json.RawMessage, 4096), body: io.NopCloser(nil)}
	t.watches[id] = ws
	go func() {
		defer close(ws.msgs)
		for {
			r, err := stream.Recv()
			if err != nil {
				if wctx.Err() == nil && !errors.Is(err, io.EOF) {
					ws.err = err
				}
				return
			}
			b, err := marshaler.Marshal(protoadapt.MessageV2Of(r))
			if err != nil {
				ws.err = err
				return
			}
			ws.msgs <- json.RawMessage(`{"result":` + string(b) + `}`)
		}
	}()
	select {
	case m, ok := <-ws.msgs:
		if !ok {
			return Result{Err: fmt.Errorf("watch stream ended before the created message: %v", ws.err)}
		}
		return Result{Status: 200, ContentType: "application/json", Raw: m, Value: parseJSON(m)}
	case <-time.After(opTimeout):
		return Result{Err: errors.New("no created message within timeout")}
	}
}
