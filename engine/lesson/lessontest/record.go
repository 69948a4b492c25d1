// Package lessontest replays lessons against an in-process session: a
// Recorder that keeps the record of exchanges the lesson engine reads, and
// a Runner that performs a lesson's actions (console commands, lab client
// operations, compaction, settings, waiting on a fake clock) the way the
// lab performs them. Tests of the lessons (web/lessons) use it to prove
// that each step's solution passes its verify predicate and its traps do
// not.
package lessontest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/lesson"
)

// LabUserAgent follows the label in a lab client's User-Agent
// ("B/rvplay-lab"), the convention of the lab's Go clients (wasm/internal/labapi).
const LabUserAgent = "rvplay-lab"

// ClientOf names the lab client a User-Agent belongs to, or "".
func ClientOf(userAgent string) string {
	if label, product, ok := strings.Cut(userAgent, "/"); ok && strings.HasPrefix(product, LabUserAgent) {
		return label
	}
	return ""
}

// Recorder is an api.Handler in front of a session that records every
// exchange as a lesson.Exchange, counting watch events as they stream.
type Recorder struct {
	Next  api.Handler
	Clock func() time.Time

	mu      sync.Mutex
	record  []lesson.Exchange
	watches map[int]*lesson.WatchRecord // index in record -> live counts
	changed chan struct{}               // closed at the next change
}

// Changed returns a channel closed when the record next changes (a new
// exchange, or a frame on a recorded watch).
func (r *Recorder) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// notifyLocked wakes whoever waits on Changed.
func (r *Recorder) notifyLocked() {
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Exchanges returns a copy of the record, oldest first.
func (r *Recorder) Exchanges() []lesson.Exchange {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]lesson.Exchange, len(r.record))
	copy(out, r.record)
	for i, w := range r.watches {
		c := *w
		out[i].Watch = &c
	}
	return out
}

// LastSeq is the Seq of the newest exchange.
func (r *Recorder) LastSeq() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return int64(len(r.record))
}

// Serve records req and its answer.
func (r *Recorder) Serve(ctx context.Context, req *api.Request) *api.Response {
	e := lesson.Exchange{
		Principal:   api.PrincipalFrom(ctx).ID,
		Client:      ClientOf(req.Header.Get("User-Agent")),
		UserAgent:   req.Header.Get("User-Agent"),
		Method:      req.Method,
		Path:        req.Path,
		Query:       req.Query,
		ContentType: api.MediaType(req.Header.Get("Content-Type")),
	}
	if r.Clock != nil {
		e.Time = r.Clock()
	}
	if e.API() == "etcd" {
		readEtcdRequest(&e, req.Body)
	} else if e.API() == "kube" && len(req.Body) > 0 {
		var body struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if json.Unmarshal(req.Body, &body) == nil {
			e.SentResourceVersion = body.Metadata.ResourceVersion
		}
	}
	resp := r.Next.Serve(ctx, req)
	e.Status = resp.Status
	readAnswer(&e, resp.Body)
	r.mu.Lock()
	e.Seq = int64(len(r.record) + 1)
	idx := len(r.record)
	if resp.Stream != nil && (e.Verb() == "watch") {
		e.Watch = &lesson.WatchRecord{}
		if r.watches == nil {
			r.watches = map[int]*lesson.WatchRecord{}
		}
		r.watches[idx] = e.Watch
		resp.Stream = &recordedStream{Stream: resp.Stream, r: r, w: e.Watch, etcd: e.API() == "etcd"}
	}
	r.record = append(r.record, e)
	r.notifyLocked()
	r.mu.Unlock()
	return resp
}

func readEtcdRequest(e *lesson.Exchange, body []byte) {
	var b struct {
		Key           string          `json:"key"`
		RangeEnd      string          `json:"range_end"`
		Revision      json.RawMessage `json:"revision"`
		CreateRequest *struct {
			Key           string          `json:"key"`
			RangeEnd      string          `json:"range_end"`
			StartRevision json.RawMessage `json:"start_revision"`
		} `json:"create_request"`
	}
	if json.Unmarshal(body, &b) != nil {
		return
	}
	rev := b.Revision
	if c := b.CreateRequest; c != nil {
		b.Key, b.RangeEnd, rev = c.Key, c.RangeEnd, c.StartRevision
	}
	k, _ := base64.StdEncoding.DecodeString(b.Key)
	re, _ := base64.StdEncoding.DecodeString(b.RangeEnd)
	e.Key, e.RangeEnd, e.Revision = string(k), string(re), jsonInt(rev)
}

func jsonInt(raw json.RawMessage) int64 {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		n, _ := strconv.ParseInt(s, 10, 64)
		return n
	}
	var n int64
	_ = json.Unmarshal(raw, &n)
	return n
}

// readAnswer fills the answered resourceVersion, reason and message.
func readAnswer(e *lesson.Exchange, body []byte) {
	if len(body) == 0 {
		return
	}
	var b struct {
		Kind     string `json:"kind"`
		Message  string `json:"message"`
		Reason   string `json:"reason"`
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Header *struct {
			Revision json.RawMessage `json:"revision"`
		} `json:"header"`
	}
	if json.Unmarshal(body, &b) != nil {
		return
	}
	if e.API() == "etcd" {
		if b.Header != nil {
			e.ResourceVersion = strconv.FormatInt(jsonInt(b.Header.Revision), 10)
		}
		e.Message = b.Message
		return
	}
	if b.Kind == "Status" {
		e.Reason, e.Message = b.Reason, b.Message
		return
	}
	e.ResourceVersion = b.Metadata.ResourceVersion
}

type recordedStream struct {
	api.Stream
	r    *Recorder
	w    *lesson.WatchRecord
	etcd bool
}

func (s *recordedStream) Next(ctx context.Context) ([]byte, error) {
	frame, err := s.Stream.Next(ctx)
	s.r.mu.Lock()
	defer s.r.mu.Unlock()
	defer s.r.notifyLocked()
	if err == io.EOF {
		s.w.Ended = true
	}
	if err != nil {
		return frame, err
	}
	if s.etcd {
		s.etcdFrame(frame)
	} else {
		s.kubeFrame(frame)
	}
	return frame, nil
}

func (s *recordedStream) kubeFrame(frame []byte) {
	var ev struct {
		Type   string `json:"type"`
		Object struct {
			Code     int    `json:"code"`
			Reason   string `json:"reason"`
			Metadata struct {
				ResourceVersion string            `json:"resourceVersion"`
				Annotations     map[string]string `json:"annotations"`
			} `json:"metadata"`
		} `json:"object"`
	}
	if json.Unmarshal(frame, &ev) != nil {
		return
	}
	switch ev.Type {
	case "ERROR":
		s.w.ErrorCode, s.w.ErrorReason = ev.Object.Code, ev.Object.Reason
		return
	case "BOOKMARK":
		s.w.Bookmarks++
		if ev.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true" {
			s.w.InitialEventsEnd = true
		}
	default:
		s.w.Events++
	}
	if ev.Object.Metadata.ResourceVersion != "" {
		s.w.LastResourceVersion = ev.Object.Metadata.ResourceVersion
	}
}

func (s *recordedStream) etcdFrame(frame []byte) {
	var f struct {
		Result struct {
			Canceled        bool            `json:"canceled"`
			CompactRevision json.RawMessage `json:"compact_revision"`
			Events          []struct {
				Kv struct {
					ModRevision json.RawMessage `json:"mod_revision"`
				} `json:"kv"`
			} `json:"events"`
		} `json:"result"`
	}
	if json.Unmarshal(frame, &f) != nil {
		return
	}
	if f.Result.Canceled && jsonInt(f.Result.CompactRevision) > 0 {
		s.w.ErrorCode, s.w.ErrorReason = 410, "Expired"
	}
	s.w.Events += len(f.Result.Events)
	if n := len(f.Result.Events); n > 0 {
		s.w.LastResourceVersion = strconv.FormatInt(jsonInt(f.Result.Events[n-1].Kv.ModRevision), 10)
	}
}

func (s *recordedStream) Close() {
	s.Stream.Close()
	s.r.mu.Lock()
	s.w.Ended = true
	s.r.notifyLocked()
	s.r.mu.Unlock()
}

// Receive passes client messages to the stream when it takes them.
func (s *recordedStream) Receive(msg []byte) error {
	if rc, ok := s.Stream.(api.Receiver); ok {
		return rc.Receive(msg)
	}
	return nil
}

// lastWatchRV is where client's latest watch got to: the resourceVersion
// of the last event or bookmark it delivered, else the one it started from.
func (r *Recorder) lastWatchRV(client string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.record) - 1; i >= 0; i-- {
		e := &r.record[i]
		if e.Client != client || e.Verb() != "watch" {
			continue
		}
		if w := r.watches[i]; w != nil && w.LastResourceVersion != "" {
			return w.LastResourceVersion
		}
		return e.Query.Get("resourceVersion")
	}
	return ""
}
