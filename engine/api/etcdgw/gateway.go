package etcdgw

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// EmulatedVersion is the etcd version whose gateway this package speaks,
// reported by /v3/maintenance/status.
const EmulatedVersion = "3.4.23"

// DefaultProgressInterval is etcd's period of progress notifications for
// watches created with progress_notify (progressReportInterval).
const DefaultProgressInterval = 10 * time.Minute

// Options configure a gateway. The zero value is valid.
type Options struct {
	// ClusterID and MemberID fill every response header; a real etcd
	// derives them from its configuration. Zero: IDsFor("").
	ClusterID, MemberID uint64
	// RaftTerm fills every response header. Zero: 2, what a fresh
	// single-member etcd reports.
	RaftTerm uint64
	// ProgressInterval is the period of progress notifications for watches
	// created with progress_notify. Zero: DefaultProgressInterval. etcd adds
	// up to 10% of random jitter; this gateway does not (it would make tests
	// nondeterministic and teaches nothing).
	ProgressInterval time.Duration
	// Clock makes the tickers of progress notifications. Nil: real time.
	Clock Clock
	// MaxResponseBytes caps an answer's protobuf size, as the gRPC server's
	// send limit does (see checkResponseSize). Zero: etcd's, 2 GiB.
	MaxResponseBytes int64
	// MaxWatchersPerStream caps the watches of one /v3/watch stream; a
	// create_request beyond it is answered created and canceled with
	// etcd's "etcdserver: too many requests". Zero: no cap.
	MaxWatchersPerStream int
}

// Clock makes tickers; tests pass a fake one to fire progress notifications
// deterministically.
type Clock interface {
	NewTicker(d time.Duration) Ticker
}

// Ticker is the part of time.Ticker the gateway uses.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

type realClock struct{}

type realTicker struct{ t *time.Ticker }

func (realClock) NewTicker(d time.Duration) Ticker { return realTicker{time.NewTicker(d)} }
func (t realTicker) C() <-chan time.Time           { return t.t.C }
func (t realTicker) Stop()                         { t.t.Stop() }

// IDsFor returns a stable fake cluster and member ID for a session name, so
// that one session always answers with the same header and two sessions
// differ, as two etcd clusters would.
func IDsFor(session string) (clusterID, memberID uint64) {
	h := fnv.New64a()
	h.Write([]byte("rvplay cluster/" + session))
	clusterID = h.Sum64() >> 1 // keep them positive for readers of int64 JSON
	h = fnv.New64a()
	h.Write([]byte("rvplay member/" + session))
	memberID = h.Sum64() >> 1
	return clusterID, memberID
}

// Gateway is the etcd v3 JSON gateway over one store: an *mvcc.Store, or
// a session's prefix of an etcd cluster (server/etcdstore).
type Gateway struct {
	store mvcc.KV
	opts  Options
}

// New returns the gateway for s with default Options.
func New(s mvcc.KV) api.Handler { return NewWithOptions(s, Options{}) }

// NewWithOptions returns the gateway for s.
func NewWithOptions(s mvcc.KV, opts Options) *Gateway {
	if opts.ClusterID == 0 && opts.MemberID == 0 {
		opts.ClusterID, opts.MemberID = IDsFor("")
	}
	if opts.RaftTerm == 0 {
		opts.RaftTerm = 2
	}
	if opts.ProgressInterval <= 0 {
		opts.ProgressInterval = DefaultProgressInterval
	}
	if opts.Clock == nil {
		opts.Clock = realClock{}
	}
	if opts.MaxResponseBytes <= 0 || opts.MaxResponseBytes > etcdMaxSendBytes {
		opts.MaxResponseBytes = etcdMaxSendBytes
	}
	return &Gateway{store: s, opts: opts}
}

// routes are the gateway's paths, all POST.
var routes = map[string]bool{
	"/v3/kv/range": true, "/v3/kv/put": true, "/v3/kv/deleterange": true, "/v3/kv/txn": true,
	"/v3/kv/compaction": true, "/v3/watch": true, "/v3/maintenance/status": true,
	"/v3/maintenance/alarm": true, "/v3/maintenance/defragment": true,
}

// Serve answers one gateway request.
func (g *Gateway) Serve(ctx context.Context, req *api.Request) (resp *api.Response) {
	defer func() {
		// Never panic on a client's request: a bug becomes etcd's answer to
		// an internal error rather than a dropped connection.
		if p := recover(); p != nil {
			resp = grpcError(&mvcc.Error{Code: mvcc.CodeInternal, Message: fmt.Sprint("etcdgw: internal error: ", p)})
		}
	}()
	path := req.Path
	if rest, ok := strings.CutPrefix(path, "/v3beta/"); ok {
		path = "/v3/" + rest // etcd 3.4 still serves its 3.3 prefix
	}
	if req.Method == "OPTIONS" {
		// etcd answers CORS preflights for every path itself.
		return &api.Response{Status: 200, Header: corsHeader()}
	}
	lease := leaseRoutes[path]
	if !routes[path] && lease == nil {
		return plainError(404, "Not Found")
	}
	if req.Method != "POST" {
		return plainError(405, "Method Not Allowed")
	}
	if lease != nil {
		return lease(g, ctx, req.Body)
	}
	switch path {
	case "/v3/kv/range":
		return g.serveRange(ctx, req.Body)
	case "/v3/kv/put":
		return g.servePut(ctx, req.Body)
	case "/v3/kv/deleterange":
		return g.serveDeleteRange(ctx, req.Body)
	case "/v3/kv/txn":
		return g.serveTxn(ctx, req.Body)
	case "/v3/kv/compaction":
		return g.serveCompaction(ctx, req.Body)
	case "/v3/maintenance/status":
		return g.serveStatus(req.Body)
	case "/v3/maintenance/alarm":
		return g.serveAlarm(ctx, req.Body)
	case "/v3/maintenance/defragment":
		return g.serveDefragment(ctx, req.Body)
	case "/v3/watch":
		return g.serveWatch(ctx, req.Body, requiresLeader(req.Header))
	}
	return plainError(404, "Not Found")
}

func (g *Gateway) serveRange(ctx context.Context, body []byte) *api.Response {
	var r mvcc.RangeRequest
	if err := decodeBody(body, func(raw []byte) error { return decodeRange(raw, &r) }); err != nil {
		return decodeError(err)
	}
	out, err := g.Range(ctx, &r)
	if err != nil {
		return grpcError(err)
	}
	return ok(appendRange(answerBuffer(out.Kvs...), g.Header(out.Header.Revision), out), out.Header.Revision)
}

func (g *Gateway) servePut(ctx context.Context, body []byte) *api.Response {
	var r mvcc.PutRequest
	if err := decodeBody(body, func(raw []byte) error { return decodePut(raw, &r) }); err != nil {
		return decodeError(err)
	}
	out, err := g.Put(ctx, &r)
	if err != nil {
		return grpcError(err)
	}
	return ok(appendPut(answerBuffer(out.PrevKv), g.Header(out.Header.Revision), out), out.Header.Revision)
}

func (g *Gateway) serveDeleteRange(ctx context.Context, body []byte) *api.Response {
	var r mvcc.DeleteRangeRequest
	if err := decodeBody(body, func(raw []byte) error { return decodeDeleteRange(raw, &r) }); err != nil {
		return decodeError(err)
	}
	out, err := g.DeleteRange(ctx, &r)
	if err != nil {
		return grpcError(err)
	}
	return ok(appendDeleteRange(answerBuffer(out.PrevKvs...), g.Header(out.Header.Revision), out), out.Header.Revision)
}

func (g *Gateway) serveTxn(ctx context.Context, body []byte) *api.Response {
	var r mvcc.TxnRequest
	if err := decodeTxnBody(body, &r, g.store.MaxTxnOps()); err != nil {
		return decodeError(err)
	}
	out, err := g.Txn(ctx, &r)
	if err != nil {
		return grpcError(err)
	}
	return ok(appendTxn(answerBuffer(), g.Header(out.Header.Revision), out), out.Header.Revision)
}

func (g *Gateway) serveCompaction(ctx context.Context, body []byte) *api.Response {
	var r mvcc.CompactionRequest
	if err := decodeBody(body, func(raw []byte) error { return decodeCompaction(raw, &r) }); err != nil {
		return decodeError(err)
	}
	out, err := g.Compact(ctx, &r)
	if err != nil {
		return grpcError(err)
	}
	return ok(appendCompaction(nil, g.Header(out.Header.Revision)), out.Header.Revision)
}

// checkSend is the gRPC server's send limit on an answer of size bytes.
// A write is done by then, as it is in etcd when its answer is refused.
func (g *Gateway) checkSend(size int) error {
	return checkResponseSize(size, int(g.opts.MaxResponseBytes))
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// corsHeader is what etcd's HTTP server adds to every answer, but for its
// Access-Control-Allow-Origin: "*" (etcd's --cors default). This differs
// from etcd: a wildcard would let any page a student visits read a
// session; the transport names the origins it trusts (server/httpapi).
func corsHeader() api.Header {
	return api.Header{
		"Access-Control-Allow-Methods": {"POST, GET, OPTIONS, PUT, DELETE"},
		"Access-Control-Allow-Headers": {"accept, content-type, authorization"},
	}
}

func jsonHeader() api.Header {
	h := corsHeader()
	h["Content-Type"] = []string{"application/json"}
	h["Grpc-Metadata-Content-Type"] = []string{"application/grpc"}
	return h
}

// okHeader is the header of every success. All successes share it (see
// api.Response: receivers do not modify a response's Header), which spares
// a map and five slices per request on the hot path.
var okHeader = jsonHeader()

// ok is a success: body, whose header carries the store revision rev (0:
// an answer without one), which the answer says for the session's record.
func ok(body []byte, rev int64) *api.Response {
	return &api.Response{Status: 200, Header: okHeader, Body: body, Revision: rev}
}

// plainError is grpc-gateway's answer for unknown paths and methods
// (net/http's http.Error).
func plainError(status int, text string) *api.Response {
	h := corsHeader()
	h["Content-Type"] = []string{"text/plain; charset=utf-8"}
	h["X-Content-Type-Options"] = []string{"nosniff"}
	return &api.Response{Status: status, Header: h, Body: []byte(text + "\n")}
}

// HTTPStatus is grpc-gateway v1's HTTPStatusFromCode.
func HTTPStatus(c mvcc.Code) int {
	switch c {
	case mvcc.CodeOK:
		return 200
	case mvcc.CodeCanceled:
		return 408
	case mvcc.CodeUnknown:
		return 500
	case mvcc.CodeInvalidArgument:
		return 400
	case mvcc.CodeDeadlineExceeded:
		return 504
	case mvcc.CodeNotFound:
		return 404
	case mvcc.CodeAlreadyExists:
		return 409
	case mvcc.CodePermissionDenied:
		return 403
	case mvcc.CodeResourceExhausted:
		return 429
	case mvcc.CodeFailedPrecondition:
		return 400
	case mvcc.CodeAborted:
		return 409
	case mvcc.CodeOutOfRange:
		return 400
	case mvcc.CodeUnimplemented:
		return 501
	case mvcc.CodeInternal:
		return 500
	case mvcc.CodeUnavailable:
		return 503
	case mvcc.CodeUnauthenticated:
		return 401
	}
	return 500
}

// ErrorResponse is the gateway's answer for an error with a gRPC code: what
// etcd sends when its gRPC server refused the request.
func ErrorResponse(code mvcc.Code, msg string) *api.Response {
	h := jsonHeader()
	delete(h, "Grpc-Metadata-Content-Type")
	// The gRPC status arrives in trailers, which grpc-gateway forwards as an
	// HTTP trailer; "Trailer:" keys are net/http's convention for trailers
	// (other transports ignore them).
	h["Trailer"] = []string{"Grpc-Trailer-Content-Type"}
	h["Trailer:Grpc-Trailer-Content-Type"] = []string{"application/grpc"}
	return &api.Response{Status: HTTPStatus(code), Header: h, Body: appendError(nil, code, msg)}
}

// grpcError answers an error returned by a check or the store.
func grpcError(err error) *api.Response {
	var e *mvcc.Error
	if errors.As(err, &e) {
		return ErrorResponse(e.Code, e.Message)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return ErrorResponse(mvcc.CodeCanceled, "context canceled")
	case errors.Is(err, context.DeadlineExceeded):
		return ErrorResponse(mvcc.CodeDeadlineExceeded, "context deadline exceeded")
	}
	return ErrorResponse(mvcc.CodeUnknown, err.Error())
}

// decodeError answers a request the gateway could not decode: HTTP 400,
// InvalidArgument, the decoder's message, and (unlike errors from the gRPC
// server) no trailer.
func decodeError(err error) *api.Response {
	return codeError(mvcc.CodeInvalidArgument, err.Error())
}

func codeError(code mvcc.Code, msg string) *api.Response {
	h := corsHeader()
	h["Content-Type"] = []string{"application/json"}
	return &api.Response{Status: HTTPStatus(code), Header: h, Body: appendError(nil, code, msg)}
}
