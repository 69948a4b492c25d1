package etcddiff

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Target is one implementation of etcd's v3 API: its JSON gateway reached
// over HTTP (BaseURL + "/v3/kv/range" etc.), or its gRPC API reached with
// clientv3 (NewGRPCTarget, grpc.go).
type Target struct {
	Name    string
	BaseURL string
	Client  *http.Client

	grpc *clientv3.Client // set for a gRPC target
	kv   pb.KVClient

	watches map[int]*watchStream
}

// NewTarget returns a target with its own HTTP client.
func NewTarget(name, baseURL string) *Target {
	tr := &http.Transport{MaxIdleConnsPerHost: 16, DisableCompression: true}
	return &Target{Name: name, BaseURL: strings.TrimRight(baseURL, "/"), Client: &http.Client{Transport: tr}}
}

// Result is one answer, parsed as a JSON value when it is JSON.
type Result struct {
	Status int
	// ContentType is the response's media type (parameters dropped).
	ContentType string
	Raw         []byte
	Value       any // parsed JSON with UseNumber; nil if Raw is not JSON
	Err         error
}

func (r Result) String() string {
	if r.Err != nil {
		return fmt.Sprintf("error: %v (status %d, body %s)", r.Err, r.Status, r.Raw)
	}
	return fmt.Sprintf("%d %s %s", r.Status, r.ContentType, bytes.TrimSpace(r.Raw))
}

// opTimeout bounds one request and one watch drain.
const opTimeout = 15 * time.Second

func (t *Target) post(ctx context.Context, path string, body []byte) Result {
	ctx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.BaseURL+path, bytes.NewReader(body))
	if err != nil {
		return Result{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.Client.Do(req)
	if err != nil {
		return Result{Err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	res := Result{Status: resp.StatusCode, ContentType: mediaType(resp.Header.Get("Content-Type")), Raw: raw, Err: err}
	res.Value = parseJSON(raw)
	return res
}

func mediaType(v string) string {
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(strings.TrimSpace(v))
}

func parseJSON(raw []byte) any {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil // trailing data: not one JSON value
	}
	return v
}

// watchStream is one open /v3/watch request of one target.
type watchStream struct {
	cancel context.CancelFunc
	msgs   chan json.RawMessage
	err    error // set before msgs is closed
	body   io.Closer
}

func (t *Target) openWatch(ctx context.Context, id int, body []byte) Result {
	if t.watches == nil {
		t.watches = map[int]*watchStream{}
	}
	wctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(wctx, http.MethodPost, t.BaseURL+"/v3/watch", bytes.NewReader(body))
	if err != nil {
		cancel()
		return Result{Err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.Client.Do(req)
	if err != nil {
		cancel()
		return Result{Err: err}
	}
	ct := mediaType(resp.Header.Get("Content-Type"))
	ws := &watchStream{cancel: cancel, msgs: make(chan json.RawMessage, 4096), body: resp.Body}
	t.watches[id] = ws
	go func() {
		defer close(ws.msgs)
		dec := json.NewDecoder(resp.Body)
		for {
			var m json.RawMessage
			if err := dec.Decode(&m); err != nil {
				if !errors.Is(err, io.EOF) && wctx.Err() == nil {
					ws.err = err
				}
				return
			}
			ws.msgs <- m
		}
	}()
	if resp.StatusCode != http.StatusOK {
		raw := t.collect(ws, 2*time.Second)
		t.closeWatch(id)
		return Result{Status: resp.StatusCode, ContentType: ct, Raw: raw, Value: parseJSON(raw)}
	}
	// The first message is the "created" answer.
	select {
	case m, ok := <-ws.msgs:
		if !ok {
			return Result{Status: resp.StatusCode, Err: fmt.Errorf("watch stream ended before the created message: %v", ws.err)}
		}
		return Result{Status: resp.StatusCode, ContentType: ct, Raw: m, Value: parseJSON(m)}
	case <-time.After(opTimeout):
		return Result{Status: resp.StatusCode, Err: errors.New("no created message within timeout")}
	}
}

// collect concatenates whatever the stream yields within d (for error bodies).
func (t *Target) collect(ws *watchStream, d time.Duration) []byte {
	var buf bytes.Buffer
	timeout := time.After(d)
	for {
		select {
		case m, ok := <-ws.msgs:
			if !ok {
				return buf.Bytes()
			}
			buf.Write(m)
		case <-timeout:
			return buf.Bytes()
		}
	}
}

func (t *Target) closeWatch(id int) {
	if ws := t.watches[id]; ws != nil {
		ws.cancel()
		ws.body.Close()
		for range ws.msgs {
		}
		delete(t.watches, id)
	}
}

// CloseAll ends every open watch.
func (t *Target) CloseAll() {
	for id := range t.watches {
		t.closeWatch(id)
	}
}

// drainWatch reads a watch until it delivered an event at or above
// target (or, for a compacted watch, its cancel message), and returns what
// it saw as one JSON value: {"events":[...], "messages":[...]} where
// messages are the non-event messages.
func (t *Target) drainWatch(id int, target int64, compacted bool) Result {
	ws := t.watches[id]
	if ws == nil {
		return Result{Err: fmt.Errorf("watch %d is not open", id)}
	}
	defer t.closeWatch(id)
	var events, messages []any
	var lastRev int64
	timeout := time.After(opTimeout)
	out := func(err error) Result {
		v := map[string]any{"events": orEmpty(events), "messages": orEmpty(messages)}
		raw, _ := json.Marshal(v)
		return Result{Status: 200, Raw: raw, Value: parseJSON(raw), Err: err}
	}
	for {
		select {
		case m, ok := <-ws.msgs:
			if !ok {
				return out(fmt.Errorf("watch stream ended early: %v", ws.err))
			}
			v := parseJSON(m)
			res, _ := v.(map[string]any)["result"].(map[string]any)
			if res == nil {
				messages = append(messages, v)
				return out(errors.New("watch message without result"))
			}
			evs, _ := res["events"].([]any)
			if len(evs) == 0 {
				messages = append(messages, v)
				if compacted && res["canceled"] == true {
					return out(nil)
				}
				continue
			}
			// etcd's guarantees, checked on every target alike: events are
			// ordered by revision and one revision is never split across
			// responses. A violation becomes a message, so it differs.
			reached := false
			first := true
			for _, e := range evs {
				events = append(events, e)
				kv, _ := e.(map[string]any)["kv"].(map[string]any)
				rev := asInt(kv["mod_revision"])
				if rev < lastRev || (first && rev == lastRev) {
					messages = append(messages, map[string]any{"violation": fmt.Sprintf("event at revision %d after revision %d (order or atomicity)", rev, lastRev)})
				}
				first = false
				lastRev = rev
				if rev >= target {
					reached = true
				}
			}
			if reached && !compacted {
				return out(nil)
			}
		case <-timeout:
			return out(fmt.Errorf("watch did not deliver revision %d within %v", target, opTimeout))
		}
	}
}

func orEmpty(v []any) []any {
	if v == nil {
		return []any{}
	}
	return v
}

// Normalize removes the header fields that only a raft cluster has.
func Normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, c := range x {
			if k == "header" {
				if h, ok := c.(map[string]any); ok {
					hh := map[string]any{}
					for hk, hv := range h {
						if hk != "cluster_id" && hk != "member_id" && hk != "raft_term" {
							hh[hk] = hv
						}
					}
					out[k] = hh
					continue
				}
			}
			out[k] = Normalize(c)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = Normalize(c)
		}
		return out
	default:
		return v
	}
}

// Equal compares two answers: same HTTP status, same JSON value after
// Normalize (or the same bytes when not JSON), same transport outcome.
func Equal(a, b Result) bool {
	if (a.Err == nil) != (b.Err == nil) || a.Status != b.Status || a.ContentType != b.ContentType {
		return false
	}
	if a.Value == nil || b.Value == nil {
		return a.Value == nil && b.Value == nil && bytes.Equal(bytes.TrimSpace(a.Raw), bytes.TrimSpace(b.Raw))
	}
	return reflect.DeepEqual(Normalize(a.Value), Normalize(b.Value))
}

// Difference is one op on which a target answered unlike the reference.
type Difference struct {
	Seed   uint64
	Op     *Op
	Target string
	Ref    Result
	Got    Result
}

func (d Difference) String() string {
	return fmt.Sprintf("seed %d op #%d %s %s\n  request:   %s\n  reference: %s\n  %s: %s",
		d.Seed, d.Op.Index, d.Op.Kind, d.Op.Path(), d.Op.describe(), d.Ref, d.Target, d.Got)
}

func (o *Op) describe() string {
	if o.Kind == OpWatchDrain {
		return fmt.Sprintf("drain watch %d (key %q start %d noput %v nodelete %v compacted %v to revision %d)",
			o.Watch.ID, o.Watch.Key, o.Watch.Start, o.Watch.NoPut, o.Watch.NoDel, o.Watch.Compacted, o.Watch.FenceRev)
	}
	if o.RawBody != nil {
		return fmt.Sprintf("(raw) %q", o.RawBody)
	}
	b, _ := json.Marshal(o.Body)
	return string(b)
}

// Options tune Run.
type Options struct {
	// KeepGoing keeps comparing a target after its first difference (its
	// state may have diverged, so later differences can be consequences).
	KeepGoing bool
	// MaxDiffs stops a target after this many differences (KeepGoing).
	MaxDiffs int
	// Trace, if set, receives every op and the reference's answer.
	Trace io.Writer
}

// Run executes the sequence of seed (total ops) against ref and others in
// lockstep and returns the differences. ref's answers steer the generator.
// An error means the reference itself could not be driven.
func Run(ctx context.Context, seed uint64, total int, ref *Target, others []*Target, opts Options) ([]Difference, error) {
	g := NewGenerator(seed, total)
	all := append([]*Target{ref}, others...)
	defer func() {
		for _, t := range all {
			t.CloseAll()
		}
	}()
	live := map[*Target]int{} // differences per target; absent = dropped
	for _, t := range others {
		live[t] = 0
	}
	if opts.MaxDiffs == 0 {
		opts.MaxDiffs = 20
	}
	var diffs []Difference
	for !g.Done() {
		op := g.Next()
		body := op.RawBody
		if body == nil && op.Body != nil {
			body, _ = json.Marshal(op.Body)
		}
		if op.Kind == OpWatchDrain {
			op.Watch.FenceRev = op.Watch.FenceTarget(g.State().Rev)
		}
		targets := []*Target{ref}
		for _, t := range others {
			if _, ok := live[t]; ok {
				targets = append(targets, t)
			}
		}
		results := make([]Result, len(targets))
		var wg sync.WaitGroup
		for i, t := range targets {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i] = execute(ctx, t, op, body)
			}()
		}
		wg.Wait()
		refRes := results[0]
		if opts.Trace != nil {
			fmt.Fprintf(opts.Trace, "#%d %s %s -> %s\n", op.Index, op.Kind, op.describe(), refRes)
		}
		if refRes.Err != nil {
			return diffs, fmt.Errorf("seed %d op #%d %s %s: reference %s failed: %v", seed, op.Index, op.Kind, op.describe(), ref.Name, refRes.Err)
		}
		g.Observe(op, refRes.Status, refRes.Value)
		for i, t := range targets[1:] {
			got := results[i+1]
			if Equal(refRes, got) {
				continue
			}
			diffs = append(diffs, Difference{Seed: seed, Op: op, Target: t.Name, Ref: refRes, Got: got})
			live[t]++
			if !opts.KeepGoing || live[t] >= opts.MaxDiffs {
				t.CloseAll()
				delete(live, t)
			}
		}
	}
	return diffs, nil
}

func execute(ctx context.Context, t *Target, op *Op, body []byte) Result {
	if t.grpc != nil {
		return t.executeGRPC(ctx, op, body)
	}
	switch op.Kind {
	case OpWatchOpen:
		res := t.openWatch(ctx, op.Watch.ID, body)
		if op.Watch.Empty {
			t.closeWatch(op.Watch.ID)
		}
		return res
	case OpWatchDrain:
		return t.drainWatch(op.Watch.ID, op.Watch.FenceRev, op.Watch.Compacted)
	default:
		return t.post(ctx, op.Path(), body)
	}
}
