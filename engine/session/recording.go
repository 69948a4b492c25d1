package session

import (
	"bytes"
	"context"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
)

// protocolOf says which of the session's APIs serves path.
func protocolOf(path string) string {
	switch {
	case IsEtcdPath(path):
		return ProtocolEtcd
	case IsControlPath(path):
		return ProtocolRvplay
	}
	return ProtocolKubernetes
}

// record notes one exchange. It runs on every request, so it reads only
// what it needs of the bodies (jsonscan.go) and decodes a body only for a
// failure.
func (s *Session) record(ctx context.Context, req *api.Request, resp *api.Response, proto string, start time.Time) {
	now := s.clock.Now()
	e := Exchange{
		Time:      now,
		Duration:  now.Sub(start),
		Principal: api.PrincipalFrom(ctx),
		Protocol:  proto,
		Method:    req.Method,
		Path:      req.Path,
		Query:     req.Query,
		Status:    resp.Status,
		Revision:  s.Store.Rev(),
	}
	if e.Status == 0 {
		e.Status = 200
	}
	if ua := req.Header["User-Agent"]; len(ua) > 0 {
		e.UserAgent = ua[0]
	}
	if ct := req.Header["Content-Type"]; len(ct) > 0 {
		e.ContentType = ct[0]
	}
	if proto == ProtocolEtcd {
		etcdRequest(&e, req.Path, req.Body)
		if e.Status == 200 && resp.Revision > 0 {
			e.RV = strconv.FormatInt(resp.Revision, 10)
		}
	}
	if proto == ProtocolKubernetes {
		if c := req.Header["Kubectl-Command"]; len(c) > 0 {
			e.KubectlCommand = c[0]
		}
		switch req.Method {
		case "GET":
			e.RVSent = req.Query.Get("resourceVersion")
		case "PUT", "PATCH", "POST":
			e.RVSent = memberPath(req.Body, "metadata", "resourceVersion")
		case "DELETE":
			e.RVSent = memberPath(req.Body, "preconditions", "resourceVersion")
		}
	}
	switch {
	case e.Status >= 400:
		e.Reason, e.Message = failure(proto, resp.Body)
		if proto == ProtocolKubernetes && e.Status == 409 && e.Reason == "Conflict" && req.Method != "POST" {
			e.RV = s.currentRV(ctx, req)
		}
	case proto == ProtocolKubernetes && resp.Stream == nil:
		e.RV = memberPath(resp.Body, "metadata", "resourceVersion")
	}
	if resp.Stream != nil {
		w := &WatchRecord{kube: proto == ProtocolKubernetes}
		e.Watch = w
		resp.Stream = s.recordingStream(resp.Stream, w)
	}
	s.Record.add(&e)
}

// failure reads a failed answer's reason and message: a Kubernetes
// Status, an etcd error body ({"error", "code", "message"}), or the text.
func failure(proto string, body []byte) (reason, message string) {
	if b := bytes.TrimSpace(body); len(b) == 0 || b[0] != '{' {
		return "", string(b)
	}
	message = memberText(body, "message")
	if message == "" {
		message = memberText(body, "error")
	}
	return memberText(body, "reason"), message
}

// currentRV is the resourceVersion of the object a conflicting write
// addressed, read as the writer would read it next.
func (s *Session) currentRV(ctx context.Context, req *api.Request) string {
	if s.Kube == nil {
		return ""
	}
	resp := s.Kube.Serve(ctx, &api.Request{Method: "GET", Path: req.Path, Header: api.Header{"Accept": {"application/json"}}})
	if resp == nil || resp.Status != 200 {
		return ""
	}
	return memberPath(resp.Body, "metadata", "resourceVersion")
}

// recordingStream counts what a stream sends and notes how it ends. It
// keeps the stream's api.Receiver (etcd's watch takes client messages).
func (s *Session) recordingStream(inner api.Stream, w *WatchRecord) api.Stream {
	rs := &recordingStream{Stream: inner, w: w, s: s}
	if rcv, ok := inner.(api.Receiver); ok {
		return &recordingReceiver{recordingStream: rs, rcv: rcv}
	}
	return rs
}

type recordingStream struct {
	api.Stream
	w *WatchRecord
	s *Session
}

type recordingReceiver struct {
	*recordingStream
	rcv api.Receiver
}

func (r *recordingReceiver) Receive(msg []byte) error { return r.rcv.Receive(msg) }

func (r *recordingStream) Next(ctx context.Context) ([]byte, error) {
	f, err := r.Stream.Next(ctx)
	if err != nil {
		by := EndedByServer
		if ctx.Err() != nil {
			by = EndedByClient
		}
		r.w.end(by, r.s.clock.Now())
		return f, err
	}
	if r.w.kube {
		r.observeKube(f)
	} else {
		r.observeEtcd(f)
	}
	return f, nil
}

func (r *recordingStream) Close() {
	r.Stream.Close()
	r.w.end(EndedByClient, r.s.clock.Now())
}

var (
	typePrefix       = []byte(`{"type":"`)
	rvMember         = []byte(`"resourceVersion":"`)
	revisionKey      = []byte(`"revision":"`)
	etcdResult       = []byte(`{"result":`)
	initialEventsEnd = []byte(`k8s.io/initial-events-end`)
)

// observeKube reads a watch event's type from its first bytes and its
// object's resourceVersion from the first one in it (metadata comes
// before spec and status in every encoded object) when the record is read
// (WatchRecord.lastFrame; a bookmark's at once, WatchRecord.sawBookmark).
func (r *recordingStream) observeKube(f []byte) {
	if !bytes.HasPrefix(f, typePrefix) {
		return
	}
	rest := f[len(typePrefix):]
	end := bytes.IndexByte(rest, '"')
	if end < 0 {
		return
	}
	switch string(rest[:end]) {
	case "ADDED", "MODIFIED", "DELETED":
		r.w.events.Add(1)
	case "BOOKMARK":
		r.w.bookmarks.Add(1)
		end := bytes.Contains(f, initialEventsEnd)
		if end {
			r.w.initialEventsEnd.Store(true)
		}
		r.w.sawBookmark(f, end)
		return
	case "ERROR":
		code, _ := strconv.Atoi(memberNumber(f, "object", "code"))
		r.w.mu.Lock()
		r.w.errCode, r.w.errReason, r.w.errMsg = code, memberText(f, "object", "reason"), memberText(f, "object", "message")
		r.w.mu.Unlock()
		return
	}
	r.w.saw(f)
}

// observeEtcd reads a gateway watch response: events, a progress
// notification (no events, not a creation or cancelation), or a cancel.
func (r *recordingStream) observeEtcd(f []byte) {
	switch {
	case bytes.Contains(f, []byte(`"events":[`)):
		r.w.events.Add(1)
	case bytes.Contains(f, []byte(`"canceled":true`)):
		compact := memberPath(f, "result", "compact_revision")
		r.w.mu.Lock()
		r.w.errReason, r.w.errMsg = "canceled", memberText(f, "result", "cancel_reason")
		if compact != "" && compact != "0" {
			r.w.errReason = "compacted"
			if r.w.errMsg == "" {
				r.w.errMsg = "etcdserver: mvcc: required revision has been compacted"
			}
		}
		r.w.mu.Unlock()
	case !bytes.Contains(f, []byte(`"created":true`)):
		r.w.bookmarks.Add(1)
		if bytes.HasPrefix(f, etcdResult) {
			r.w.sawBookmark(f, false)
			return
		}
	}
	if bytes.HasPrefix(f, etcdResult) { // not an error, which has no revision
		r.w.saw(f)
	}
}

// etcdRequest notes what an etcd gateway request addressed, reading its
// body's members in one walk (membersOf).
func etcdRequest(e *Exchange, path string, body []byte) {
	var v [3][]byte
	switch strings.TrimPrefix(strings.TrimPrefix(path, "/v3beta"), "/v3") {
	case "/kv/range":
		membersOf(body, rangeMembers, v[:])
	case "/kv/put":
		// etcd's PutRequest has no range_end (the gateway ignores one):
		// the walk ends at the key, not after the value.
		membersOf(body, rangeMembers[:1], v[:1])
	case "/kv/deleterange":
		membersOf(body, rangeMembers[:2], v[:2])
	case "/kv/compaction":
		membersOf(body, rangeMembers[2:], v[2:])
	case "/watch":
		membersOf(memberRaw(body, "create_request"), watchMembers, v[:])
	default:
		return
	}
	e.Key, e.RangeEnd, e.RequestRevision = base64Value(v[0]), base64Value(v[1]), revisionValue(v[2])
}

// The members of a request an exchange records: a range's (a put's the
// first, a delete's the first two, a compaction's the last), a watch's
// create_request's.
var (
	rangeMembers = []string{"key", "range_end", "revision"}
	watchMembers = []string{"key", "range_end", "start_revision"}
)

// base64Value decodes a JSON string of base64, at most MaxRecordedKey
// bytes of it (rounded up to whole base64 quanta). It decodes into a
// buffer on the stack, so that the key recorded is the only allocation:
// every etcd request records one or two.
func base64Value(enc []byte) string {
	if len(enc) < 2 || enc[0] != '"' {
		return ""
	}
	enc = enc[1:min(len(enc)-1, 1+base64.StdEncoding.EncodedLen(MaxRecordedKey))]
	var buf [(MaxRecordedKey + 2) / 3 * 3]byte
	n, err := base64.StdEncoding.Decode(buf[:], enc)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// revisionValue reads an int64 that etcd's JSON writes as a string (or a
// number): 0 when there is none, as in most requests, or it is not one.
// Digits are read here rather than by strconv, which would take a string
// of its own; more than 18, which no store's revision reaches, are none.
func revisionValue(v []byte) int64 {
	if len(v) >= 2 && v[0] == '"' {
		v = v[1 : len(v)-1]
	}
	neg := len(v) > 0 && v[0] == '-'
	if neg || len(v) > 0 && v[0] == '+' {
		v = v[1:]
	}
	if len(v) == 0 || len(v) > 18 {
		return 0
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		return -n
	}
	return n
}
