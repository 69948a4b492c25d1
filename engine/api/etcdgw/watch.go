package etcdgw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// /v3/watch is a bidirectional gRPC stream behind the gateway: the request
// body is a sequence of JSON WatchRequests, the response a sequence of
// {"result":WatchResponse} lines. With chunked HTTP the requests are all in
// the body; over a WebSocket (etcd wraps its gateway in a websocket proxy)
// each client message is one more request, which the transport hands to
// Receive. What the stream does with them is WatchStream's (watchstream.go),
// shared with etcd's gRPC Watch; here they are decoded and its answers
// encoded, in etcd 3.4's gateway's way:
//
//   - only the first request is decoded before answering: if it is
//     malformed the answer is an HTTP 500 error with gRPC code Unknown; a
//     malformed later request silently ends the reading of requests, and
//     the watches already created go on;
//   - a negative start_revision is etcd 3.4's (see WatchStreamOptions);
//   - fragment is accepted and ignored: answers are never split (etcd only
//     splits an answer above 2 MiB, for clients that ask);
//   - a stream whose store stops ends with the error line etcd's gateway
//     sends when its server goes away; one whose member has no leader,
//     with the line it sends for etcd's "etcdserver: no leader" (only a
//     stream that asked for a leader: grpc-gateway passes a
//     Grpc-Metadata-Hasleader: true header on as the hasleader metadata
//     of clientv3.WithRequireLeader; etcd's websocket proxy passes no
//     such header, so a WebSocket stream never asks);
//   - events are turned into frames only as the client takes them.

// streamClosingError is grpc-gateway v1's stream error line for a gRPC
// stream broken by the server shutting down, as etcd 3.4 sends it.
const streamClosingError = `{"error":{"grpc_code":14,"http_code":503,"message":"transport is closing","http_status":"Service Unavailable"}}` + "\n"

// watchStream is a /v3/watch stream: a WatchStream and the decoding of its
// requests.
type watchStream struct {
	*WatchStream
	// Guarded by the WatchStream's mu:
	noInput  bool   // a malformed request ended the reading of requests
	started  bool   // a request was read (so a malformed one is not the first)
	errFrame []byte // the answer to a malformed first request, then the end
	closing  bool   // the closing line was sent: the stream is over
}

// requiresLeader reports whether a /v3/watch request asked for a leader
// (see above).
func requiresLeader(h api.Header) bool {
	return h.Get("Grpc-Metadata-Hasleader") == "true" && !strings.EqualFold(h.Get("Upgrade"), "websocket")
}

func (g *Gateway) serveWatch(rctx context.Context, body []byte, requireLeader bool) *api.Response {
	dec := json.NewDecoder(bytes.NewReader(body))
	var first json.RawMessage
	var req watchRequest
	haveFirst := false
	if err := dec.Decode(&first); err == nil {
		if err := decodeWatchRequest(first, &req); err != nil {
			return codeError(mvcc.CodeUnknown, err.Error())
		}
		haveFirst = true
	} else if err != io.EOF {
		return codeError(mvcc.CodeUnknown, err.Error())
	}
	s := &watchStream{WatchStream: g.NewWatchStream(rctx, WatchStreamOptions{RequireLeader: requireLeader})}
	if haveFirst {
		s.started = true
		s.handle(&req)
		for {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if err != io.EOF {
					s.noInput = true
				}
				break
			}
			if s.receive(raw) != nil {
				break
			}
		}
	}
	h := jsonHeader()
	return &api.Response{Status: 200, Header: h, Stream: s}
}

// Receive takes one more WatchRequest from the client (a WebSocket message).
// After a malformed request it refuses every further one, as etcd's gateway
// stops reading the stream. When the very first request is malformed, the
// stream answers etcd's error (gRPC code Unknown) as its only frame and
// ends, as etcd's websocket proxy relays the gateway's HTTP 500 body and
// hangs up.
func (s *watchStream) Receive(msg []byte) error {
	dec := json.NewDecoder(bytes.NewReader(msg))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if err == io.EOF {
				return nil
			}
			s.refuse(err)
			return err
		}
		if err := s.WaitForRoom(); err != nil {
			return err
		}
		if err := s.receive(raw); err != nil {
			return err
		}
	}
}

var errNoInput = errors.New("etcdgw: the watch stream no longer reads requests")

func (s *watchStream) receive(raw []byte) error {
	s.mu.Lock()
	closed := s.noInput
	s.mu.Unlock()
	if closed {
		return errNoInput
	}
	var req watchRequest
	if err := decodeWatchRequest(raw, &req); err != nil {
		s.refuse(err)
		return err
	}
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	s.handle(&req)
	return nil
}

// refuse stops the reading of requests after a malformed one.
func (s *watchStream) refuse(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noInput {
		return
	}
	s.noInput = true
	if !s.started {
		s.errFrame = append(appendError(nil, mvcc.CodeUnknown, err.Error()), '\n')
		s.endLocked(io.EOF)
	}
}

func (s *watchStream) handle(req *watchRequest) {
	switch {
	case req.create != nil:
		s.Create(req.create)
	case req.cancel != nil:
		s.Cancel(*req.cancel)
	case req.progress:
		s.RequestProgress()
	}
}

// Next returns the next frame: one {"result":...} line.
func (s *watchStream) Next(ctx context.Context) ([]byte, error) {
	s.mu.Lock()
	if f := s.errFrame; f != nil {
		s.errFrame = nil
		s.mu.Unlock()
		return f, nil
	}
	closing := s.closing
	s.mu.Unlock()
	if closing {
		return nil, io.EOF
	}
	r, err := s.WatchStream.Next(ctx)
	switch {
	case err == nil:
		return appendWatchFrame(nil, r), nil
	case err == io.EOF || ctx.Err() != nil:
		return nil, err
	}
	// The store stopped under the stream (or failed).
	s.mu.Lock()
	s.closing = true
	s.mu.Unlock()
	var e *mvcc.Error
	if errors.As(err, &e) && e.Code == mvcc.CodeUnavailable && e != mvcc.ErrStopped {
		// The member ended the gRPC stream itself (etcdserver: no leader).
		q, _ := json.Marshal(e.Message)
		return append(append([]byte(`{"error":{"grpc_code":14,"http_code":503,"message":`), q...), `,"http_status":"Service Unavailable"}}`+"\n"...), nil
	}
	return []byte(streamClosingError), nil
}
