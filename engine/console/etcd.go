package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/rvplay/rvplay/engine/api"
)

// The etcd side of the console talks to the session's etcd v3 JSON gateway,
// the same /v3/... requests curl or a browser would send, and decodes the
// answers into the shapes of etcd's Go API (etcdserverpb and clientv3),
// because etcdctl's printers print those shapes: -w json is encoding/json of
// the Go structs (64-bit integers as numbers, bytes as base64, zero values
// left out), not the gateway's JSON (integers as strings).

// int64s and uint64s read the gateway's quoted 64-bit integers (and plain
// numbers); they encode as plain numbers, as etcdctl's JSON does.
type int64s int64
type uint64s uint64

func (n *int64s) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseInt(string(bytes.Trim(b, `"`)), 10, 64)
	*n = int64s(v)
	return err
}

func (n *uint64s) UnmarshalJSON(b []byte) error {
	v, err := strconv.ParseUint(string(bytes.Trim(b, `"`)), 10, 64)
	*n = uint64s(v)
	return err
}

// responseHeader is etcdserverpb.ResponseHeader.
type responseHeader struct {
	ClusterID uint64s `json:"cluster_id,omitempty"`
	MemberID  uint64s `json:"member_id,omitempty"`
	Revision  int64s  `json:"revision,omitempty"`
	RaftTerm  uint64s `json:"raft_term,omitempty"`
}

// keyValue is mvccpb.KeyValue.
type keyValue struct {
	Key            []byte `json:"key,omitempty"`
	CreateRevision int64s `json:"create_revision,omitempty"`
	ModRevision    int64s `json:"mod_revision,omitempty"`
	Version        int64s `json:"version,omitempty"`
	Value          []byte `json:"value,omitempty"`
	Lease          int64s `json:"lease,omitempty"`
}

type rangeResponse struct {
	Header *responseHeader `json:"header,omitempty"`
	Kvs    []*keyValue     `json:"kvs,omitempty"`
	More   bool            `json:"more,omitempty"`
	Count  int64s          `json:"count,omitempty"`
}

type putResponse struct {
	Header *responseHeader `json:"header,omitempty"`
	PrevKv *keyValue       `json:"prev_kv,omitempty"`
}

type deleteRangeResponse struct {
	Header  *responseHeader `json:"header,omitempty"`
	Deleted int64s          `json:"deleted,omitempty"`
	PrevKvs []*keyValue     `json:"prev_kvs,omitempty"`
}

// responseOp is the gateway's shape of one txn response (one of the three
// fields is set); txnResponseJSON turns it into etcdctl's.
type responseOp struct {
	ResponseRange       *rangeResponse       `json:"response_range,omitempty"`
	ResponsePut         *putResponse         `json:"response_put,omitempty"`
	ResponseDeleteRange *deleteRangeResponse `json:"response_delete_range,omitempty"`
	ResponseTxn         *txnResponse         `json:"response_txn,omitempty"`
}

type txnResponse struct {
	Header    *responseHeader `json:"header,omitempty"`
	Succeeded bool            `json:"succeeded,omitempty"`
	Responses []*responseOp   `json:"responses,omitempty"`
}

// MarshalJSON writes a txn response as etcdctl -w json prints it: the
// Go struct's oneof wrappers appear as {"Response":{"ResponsePut":{...}}}.
func (r *txnResponse) MarshalJSON() ([]byte, error) {
	type op struct {
		Response any `json:"Response"`
	}
	type wrapped struct {
		Header    *responseHeader `json:"header,omitempty"`
		Succeeded bool            `json:"succeeded,omitempty"`
		Responses []op            `json:"responses,omitempty"`
	}
	w := wrapped{Header: r.Header, Succeeded: r.Succeeded}
	for _, o := range r.Responses {
		var v any
		switch {
		case o.ResponseRange != nil:
			v = struct {
				ResponseRange *rangeResponse
			}{o.ResponseRange}
		case o.ResponsePut != nil:
			v = struct {
				ResponsePut *putResponse
			}{o.ResponsePut}
		case o.ResponseDeleteRange != nil:
			v = struct {
				ResponseDeleteRange *deleteRangeResponse
			}{o.ResponseDeleteRange}
		case o.ResponseTxn != nil:
			v = struct {
				ResponseTxn *txnResponse
			}{o.ResponseTxn}
		}
		w.Responses = append(w.Responses, op{v})
	}
	return json.Marshal(w)
}

type compactionResponse struct {
	Header *responseHeader `json:"header,omitempty"`
}

// statusResponse is etcdserverpb.StatusResponse, whose proto fields are
// camelCase (dbSize), in the gateway's JSON as in etcdctl's.
type statusResponse struct {
	Header           *responseHeader `json:"header,omitempty"`
	Version          string          `json:"version,omitempty"`
	DbSize           int64s          `json:"dbSize,omitempty"`
	Leader           uint64s         `json:"leader,omitempty"`
	RaftIndex        uint64s         `json:"raftIndex,omitempty"`
	RaftTerm         uint64s         `json:"raftTerm,omitempty"`
	RaftAppliedIndex uint64s         `json:"raftAppliedIndex,omitempty"`
	Errors           []string        `json:"errors,omitempty"`
	DbSizeInUse      int64s          `json:"dbSizeInUse,omitempty"`
	IsLearner        bool            `json:"isLearner,omitempty"`
}

// event is mvccpb.Event: the type is an enum, PUT (0) left out.
type event struct {
	Type   eventType `json:"type,omitempty"`
	Kv     *keyValue `json:"kv,omitempty"`
	PrevKv *keyValue `json:"prev_kv,omitempty"`
}

type eventType int32

func (t *eventType) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case `"PUT"`, `0`:
		*t = 0
	case `"DELETE"`, `1`:
		*t = 1
	default:
		return fmt.Errorf("unknown event type %s", b)
	}
	return nil
}

func (t eventType) String() string {
	if t == 1 {
		return "DELETE"
	}
	return "PUT"
}

// watchResponse is what the gateway streams: etcdserverpb.WatchResponse.
type watchResponse struct {
	Header          *responseHeader `json:"header"`
	WatchID         int64s          `json:"watch_id"`
	Created         bool            `json:"created"`
	Canceled        bool            `json:"canceled"`
	CompactRevision int64s          `json:"compact_revision"`
	CancelReason    string          `json:"cancel_reason"`
	Events          []*event        `json:"events"`
}

// clientWatchResponse is clientv3.WatchResponse, which etcdctl watch -w json
// prints with encoding/json: exported Go field names, no omitempty.
type clientWatchResponse struct {
	Header          responseHeader
	Events          []*event
	CompactRevision int64
	Canceled        bool
	Created         bool
}

// etcdError is an error answer of the gateway: {"error", "code", "message"}.
type etcdError struct {
	Code    int
	Message string
}

func (e *etcdError) Error() string { return e.Message }

// etcdctlUserAgent is what the console's etcdctl requests say they are,
// so a session's record of exchanges tells them apart.
const etcdctlUserAgent = "etcdctl/v3.4.23 (rvplay console)"

func etcdHeader() api.Header {
	return api.Header{"Content-Type": {"application/json"}, "User-Agent": {etcdctlUserAgent}}
}

// etcdClient sends gateway requests to a session.
type etcdClient struct {
	h api.Handler
}

func (c etcdClient) call(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	r := c.h.Serve(ctx, &api.Request{Method: "POST", Path: path, Header: etcdHeader(), Body: body})
	if r == nil {
		return errors.New("no answer from the session")
	}
	if r.Stream != nil {
		r.Stream.Close()
		return errors.New("unexpected stream from " + path)
	}
	if r.Status != 200 {
		return gatewayError(r.Status, r.Body)
	}
	return json.Unmarshal(r.Body, resp)
}

func gatewayError(status int, body []byte) error {
	var e struct {
		Error   string `json:"error"`
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && (e.Message != "" || e.Error != "") {
		if e.Message == "" {
			e.Message = e.Error
		}
		return &etcdError{Code: e.Code, Message: e.Message}
	}
	return &etcdError{Code: 2, Message: fmt.Sprintf("unexpected answer %d: %s", status, bytes.TrimSpace(body))}
}

// rangeRequest and the other requests are the gateway's request bodies.
type rangeRequest struct {
	Key          []byte `json:"key,omitempty"`
	RangeEnd     []byte `json:"range_end,omitempty"`
	Limit        int64  `json:"limit,omitempty,string"`
	Revision     int64  `json:"revision,omitempty,string"`
	SortOrder    string `json:"sort_order,omitempty"`
	SortTarget   string `json:"sort_target,omitempty"`
	Serializable bool   `json:"serializable,omitempty"`
	KeysOnly     bool   `json:"keys_only,omitempty"`
	CountOnly    bool   `json:"count_only,omitempty"`
}

type putRequest struct {
	Key         []byte `json:"key,omitempty"`
	Value       []byte `json:"value,omitempty"`
	Lease       int64  `json:"lease,omitempty,string"`
	PrevKv      bool   `json:"prev_kv,omitempty"`
	IgnoreValue bool   `json:"ignore_value,omitempty"`
	IgnoreLease bool   `json:"ignore_lease,omitempty"`
}

type deleteRangeRequest struct {
	Key      []byte `json:"key,omitempty"`
	RangeEnd []byte `json:"range_end,omitempty"`
	PrevKv   bool   `json:"prev_kv,omitempty"`
}

type requestOp struct {
	RequestRange       *rangeRequest       `json:"request_range,omitempty"`
	RequestPut         *putRequest         `json:"request_put,omitempty"`
	RequestDeleteRange *deleteRangeRequest `json:"request_delete_range,omitempty"`
}

type compare struct {
	Result         string `json:"result,omitempty"`
	Target         string `json:"target,omitempty"`
	Key            []byte `json:"key,omitempty"`
	Version        *int64 `json:"version,omitempty,string"`
	CreateRevision *int64 `json:"create_revision,omitempty,string"`
	ModRevision    *int64 `json:"mod_revision,omitempty,string"`
	Value          []byte `json:"value,omitempty"`
	Lease          *int64 `json:"lease,omitempty,string"`
	RangeEnd       []byte `json:"range_end,omitempty"`
}

type txnRequest struct {
	Compare []compare   `json:"compare,omitempty"`
	Success []requestOp `json:"success,omitempty"`
	Failure []requestOp `json:"failure,omitempty"`
}

type watchCreateRequest struct {
	Key           []byte `json:"key,omitempty"`
	RangeEnd      []byte `json:"range_end,omitempty"`
	StartRevision int64  `json:"start_revision,omitempty,string"`
	PrevKv        bool   `json:"prev_kv,omitempty"`
}

func (c etcdClient) rangeKeys(ctx context.Context, r *rangeRequest) (*rangeResponse, error) {
	var resp rangeResponse
	return &resp, c.call(ctx, "/v3/kv/range", r, &resp)
}

func (c etcdClient) put(ctx context.Context, r *putRequest) (*putResponse, error) {
	var resp putResponse
	return &resp, c.call(ctx, "/v3/kv/put", r, &resp)
}

func (c etcdClient) deleteRange(ctx context.Context, r *deleteRangeRequest) (*deleteRangeResponse, error) {
	var resp deleteRangeResponse
	return &resp, c.call(ctx, "/v3/kv/deleterange", r, &resp)
}

func (c etcdClient) txn(ctx context.Context, r *txnRequest) (*txnResponse, error) {
	var resp txnResponse
	return &resp, c.call(ctx, "/v3/kv/txn", r, &resp)
}

func (c etcdClient) compact(ctx context.Context, rev int64, physical bool) (*compactionResponse, error) {
	var resp compactionResponse
	req := struct {
		Revision int64 `json:"revision,string"`
		Physical bool  `json:"physical,omitempty"`
	}{rev, physical}
	return &resp, c.call(ctx, "/v3/kv/compaction", req, &resp)
}

func (c etcdClient) status(ctx context.Context) (*statusResponse, error) {
	var resp statusResponse
	return &resp, c.call(ctx, "/v3/maintenance/status", struct{}{}, &resp)
}

// watch opens one watch and calls onResponse for each response until ctx
// ends, the server cancels the watch or the stream breaks.
func (c etcdClient) watch(ctx context.Context, req watchCreateRequest, onResponse func(*watchResponse) error) error {
	body, err := json.Marshal(map[string]any{"create_request": req})
	if err != nil {
		return err
	}
	r := c.h.Serve(ctx, &api.Request{Method: "POST", Path: "/v3/watch", Header: etcdHeader(), Body: body})
	if r == nil {
		return errors.New("no answer from the session")
	}
	if r.Status != 200 {
		if r.Stream != nil {
			r.Stream.Close()
		}
		return gatewayError(r.Status, r.Body)
	}
	if r.Stream == nil {
		return errors.New("the session did not open a watch stream")
	}
	defer r.Stream.Close()
	for {
		frame, err := r.Stream.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		for _, line := range bytes.Split(frame, []byte("\n")) {
			if len(bytes.TrimSpace(line)) == 0 {
				continue
			}
			var msg struct {
				Result *watchResponse  `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal(line, &msg); err != nil {
				return err
			}
			if msg.Error != nil {
				var e struct {
					Message string `json:"message"`
					Code    int    `json:"grpc_code"`
				}
				_ = json.Unmarshal(msg.Error, &e)
				return &etcdError{Code: e.Code, Message: e.Message}
			}
			if msg.Result == nil {
				continue
			}
			if err := onResponse(msg.Result); err != nil {
				return err
			}
		}
	}
}
