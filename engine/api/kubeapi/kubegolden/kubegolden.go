// Package kubegolden replays exchanges recorded from a real kube-apiserver
// (shared/spec/kube-golden, test/kubediff's recordings) against a
// Kubernetes API and compares the answers, uids, times and
// resourceVersions made comparable: the golden tests of kubeapi on the
// in-memory store and those of the stores under it (server/etcdstore)
// share this one replay.
package kubegolden

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/internal/goldenfile"
)

// Exchange is one recorded request/response of a real kube-apiserver
// v1.36.3.
type Exchange struct {
	Note        string          `json:"note"`
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	ContentType *string         `json:"contentType"`
	Sent        json.RawMessage `json:"sent"`
	Status      int             `json:"status"`
	Accept      string          `json:"accept"`
	Received    json.RawMessage `json:"received"`
	// Warnings are the answer's Warning headers (none when absent).
	Warnings []string `json:"warnings"`
	// noWarnings: the recording did not keep the Warning headers (File,
	// copied from shared/spec/kube-golden), so they are not compared.
	noWarnings bool
}

// File holds the exchanges of a real kube-apiserver v1.36.3 (copied from
// shared/spec/kube-golden), CRDFile those about custom resources (recorded
// by test/kubediff's TestRecordCRDGolden); both in engine/api/kubeapi's
// testdata.
const (
	File    = "exchanges.jsonl"
	CRDFile = "crd_exchanges.jsonl"
	// EventsFile holds those about events.k8s.io/v1 Events (recorded by
	// test/kubediff's TestRecordEventsGolden).
	EventsFile = "events_exchanges.jsonl"
	// CoreEventsFile holds those about core/v1 Events' validation through
	// core/v1 (recorded by test/kubediff's TestRecordCoreEventsGolden).
	CoreEventsFile = "core_events_exchanges.jsonl"
)

// Known lists the exchanges of File rvplay does not match yet, with why.
// Every other exchange must match; an entry here that starts matching
// fails the replay so the list stays honest.
var Known = map[int]string{}

// KnownCRD is Known for CRDFile.
var KnownCRD = map[int]string{
	6:  "the OpenAPI document's paths and built-in definitions carry rvplay's shorter descriptions, as the static documents do; the CronTab and CronTabList definitions match (TestCustomResourceOpenAPIMatchesKubeApiserver)",
	21: "kube decodes a body of a version the definition does not have without a schema, so it drops every field but metadata and warns of each (unknown field \"spec\") before it refuses the version; rvplay refuses it first, without the warning",
	49: "kube renders the versions of a definition without one storage version as its internal Go structs; rvplay renders them as JSON",
}

// KnownEvents is Known for EventsFile.
var KnownEvents = map[int]string{}

// KnownCoreEvents is Known for CoreEventsFile.
var KnownCoreEvents = map[int]string{}

// KubeOptions are those of the Kubernetes layer the recording is replayed
// on: a fake clock at the recording's date and uids in order of creation.
func KubeOptions() (kube.Options, *clock.Fake) {
	c := clock.NewFake(time.Date(2026, 11, 22, 1, 45, 6, 0, time.UTC))
	n := 0
	return kube.Options{Clock: c, NewUID: func() string {
		n++
		return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
	}}, c
}

// Target is the Kubernetes API a replay talks to.
type Target struct {
	Serve func(ctx context.Context, r *api.Request) *api.Response
	// Now is the API's clock (a fake one: times sent are its now).
	Now func() time.Time
}

// Load reads a file of exchanges, one JSON object a line.
func Load(t testing.TB, file string) []Exchange {
	t.Helper()
	out := goldenfile.Read[Exchange](t, file)
	for i := range out {
		out[i].noWarnings = filepath.Base(file) == File
	}
	return out
}

// sentBody rebuilds what was sent; placeholders stand for oversized bodies.
func sentBody(e Exchange) []byte {
	if len(e.Sent) == 0 || string(e.Sent) == "null" {
		return nil
	}
	var s string
	if json.Unmarshal(e.Sent, &s) == nil {
		var n int
		if _, err := fmt.Sscanf(s, "<%d bytes of JSON>", &n); err == nil {
			name := "huge"
			if n < 2<<20 {
				name = "big"
			}
			head := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `"},"data":{"big":"`
			tail := `"}}`
			return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
		}
		return []byte(s)
	}
	return e.Sent
}

// space maps the recorded run's uids and resourceVersions to ours.
type space struct {
	base        int64 // resourceVersion of the first write
	uids        map[string]string
	uidNames    map[string]string
	initialized bool
	// loose: resourceVersions are not compared (the recording server
	// wrote its own objects between the requests), nor the order of a
	// custom resource's validation errors (kube's is a map's)
	loose bool
	// rvs maps the recording's resourceVersions to this run's (loose)
	rvs map[string]string
}

// recordingManager is the field manager name kube-apiserver's own
// controllers had in the recording: its binary's name.
var recordingManager = regexp.MustCompile(`^kubeapiserver-[0-9a-f]{16}$`)

// age is a table's Age cell (the time since the object's creation, or
// since an Event's times: 4d3h when they were sent days before).
var age = regexp.MustCompile(`^([0-9]+[smhdy])+$`)

var uidPattern = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

var rvInMessage = regexp.MustCompile(`(current: |record \(|precondition \(|resource version: )(\d+)`)

// normalize makes a body comparable across runs: uids by order of first
// appearance, times elided, resourceVersions relative to the first write.
func (sp *space) normalize(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = sp.normalize(e, k)
		}
		if sp.loose && x["reason"] == "Invalid" {
			// compare the causes as a set, and the message up to them
			if d, ok := out["details"].(map[string]any); ok {
				if cs, ok := d["causes"].([]any); ok {
					sort.Slice(cs, func(i, j int) bool { return fmt.Sprint(cs[i]) < fmt.Sprint(cs[j]) })
				}
			}
			if m, ok := out["message"].(string); ok {
				out["message"], _, _ = strings.Cut(m, " is invalid: ")
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sp.normalize(e, key)
		}
		return out
	case string:
		switch key {
		case "uid":
			if _, ok := sp.uidNames[x]; !ok {
				sp.uidNames[x] = fmt.Sprintf("uid#%d", len(sp.uidNames))
			}
			return sp.uidNames[x]
		case "creationTimestamp", "time", "deletionTimestamp", "lastTransitionTime":
			return "<time>"
		case "cells":
			if _, err := time.Parse(time.RFC3339, x); err == nil || age.MatchString(x) {
				return "<time>"
			}
		case "resourceVersion":
			if sp.loose {
				return "<rv>"
			}
			return sp.rel(x)
		case "manager":
			if recordingManager.MatchString(x) {
				return "kube-apiserver"
			}
		case "message":
			x = uidPattern.ReplaceAllStringFunc(x, func(u string) string { return sp.normalize(u, "uid").(string) })
			return rvInMessage.ReplaceAllStringFunc(x, func(m string) string {
				sub := rvInMessage.FindStringSubmatch(m)
				return sub[1] + sp.rel(sub[2])
			})
		}
	}
	return v
}

func (sp *space) rel(rv string) string {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil || n < sp.base || n > sp.base+100000 {
		return rv
	}
	return fmt.Sprintf("rv+%d", n-sp.base)
}

// translate rewrites golden uids and resourceVersions in a sent body into
// this run's.
func translate(body []byte, gold, ours *space, now string) []byte {
	if len(body) == 0 || body[0] != '{' && body[0] != '[' {
		return body
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return body
	}
	var walk func(v any, key string) any
	walk = func(v any, key string) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e, k)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e, key)
			}
		case string:
			if key == "resourceVersion" && gold.loose {
				if rv, ok := gold.rvs[x]; ok {
					return rv
				}
			} else if key == "resourceVersion" {
				if n, err := strconv.ParseInt(x, 10, 64); err == nil && n >= gold.base {
					return strconv.FormatInt(n-gold.base+ours.base, 10)
				}
			}
			if key == "time" || key == "creationTimestamp" {
				return now
			}
			if key == "uid" {
				if u, ok := gold.uids[x]; ok {
					return u
				}
			}
		}
		return v
	}
	b, _ := json.Marshal(walk(v, ""))
	return b
}

func decodeAny(b []byte) (any, error) {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	err := d.Decode(&v)
	return v, err
}

// Replay plays exs on target and fails t for each answer that differs
// from the recorded one, but for those in known (by index, each with why
// rvplay does not match it yet): one of those that matches fails t too, so
// that the list stays honest. loose compares no resourceVersions (the
// recording server wrote objects of its own between the requests) and a
// custom resource's validation errors as a set.
func Replay(t *testing.T, target Target, exs []Exchange, known map[int]string, loose bool) {
	t.Helper()
	gold := &space{uidNames: map[string]string{}, uids: map[string]string{}, loose: loose, rvs: map[string]string{}}
	ours := &space{uidNames: map[string]string{}, uids: map[string]string{}, loose: loose}
	pass, fail := 0, 0
	var failures []string
	for i, e := range exs {
		ct := ""
		if e.ContentType != nil {
			ct = *e.ContentType
		}
		body, sent := pageBody(ct, sentBody(e))
		if !sent {
			t.Logf("#%d %s: not sent under js/wasm: the lab page parses YAML itself, so a malformed YAML body never reaches the in-browser engine", i, e.Note)
			continue
		}
		resp := target.Serve(context.Background(), Request(e.Method, e.Path, ct, e.Accept, translate(body, gold, ours, target.Now().Format(time.RFC3339))))
		got := resp.Body
		if resp.Stream != nil {
			got = nil
			resp.Stream.Close()
		}
		gv, gerr := decodeAny(e.Received)
		ov, oerr := decodeAny(got)
		if !gold.initialized && e.Status < 300 && e.Method == "POST" {
			gold.base, _ = strconv.ParseInt(gv.(map[string]any)["metadata"].(map[string]any)["resourceVersion"].(string), 10, 64)
			if oerr == nil {
				if m, ok := ov.(map[string]any); ok {
					ours.base, _ = strconv.ParseInt(kube.ResourceVersion(m), 10, 64)
				}
			}
			gold.initialized, ours.initialized = true, true
		}
		// learn the uid correspondence from matching answers
		if gerr == nil && oerr == nil {
			if gm, ok := gv.(map[string]any); ok {
				if om, ok := ov.(map[string]any); ok {
					if gu := metaString(gm, "uid"); gu != "" {
						gold.uids[gu] = metaString(om, "uid")
					}
					if grv := metaString(gm, "resourceVersion"); grv != "" && loose {
						gold.rvs[grv] = metaString(om, "resourceVersion")
					}
				}
			}
		}
		var problem string
		switch {
		case resp.Status != e.Status:
			problem = fmt.Sprintf("status %d, want %d: %s", resp.Status, e.Status, Truncate(got))
		case gerr == nil && isString(gv):
			if string(got) != gv.(string) {
				problem = fmt.Sprintf("body %q, want %q", Truncate(got), gv)
			}
		case gerr != nil || oerr != nil:
			if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(e.Received)) {
				problem = fmt.Sprintf("body %q, want %q", Truncate(got), Truncate(e.Received))
			}
		default:
			gn, on := gold.normalize(gv, ""), ours.normalize(ov, "")
			if !reflect.DeepEqual(gn, on) {
				gb, _ := json.Marshal(gn)
				ob, _ := json.Marshal(on)
				problem = fmt.Sprintf("body differs:\n got %s\nwant %s", Truncate(ob), Truncate(gb))
			} else if g, o := strings.Join(KeyOrder(e.Received), " "), strings.Join(KeyOrder(got), " "); g != o {
				// byte compatibility: kube's field order too
				problem = fmt.Sprintf("field order differs:\n got %s\nwant %s", o, g)
			}
		}
		if got := resp.Header[api.CanonicalKey("Warning")]; problem == "" && !e.noWarnings && !slices.Equal(got, e.Warnings) {
			problem = fmt.Sprintf("Warning headers %q, want %q", got, e.Warnings)
		}
		why, isKnown := known[i]
		switch {
		case problem == "" && isKnown:
			t.Errorf("#%d %s: matches now; remove it from the known gaps", i, e.Note)
		case problem == "":
			pass++
		case isKnown:
			fail++
			t.Logf("#%d %s: known gap (%s)", i, e.Note, why)
		default:
			fail++
			failures = append(failures, fmt.Sprintf("#%d %s %s %s: %s", i, e.Note, e.Method, e.Path, problem))
		}
	}
	sort.Strings(failures)
	for _, f := range failures {
		t.Error(f)
	}
	t.Logf("golden exchanges: %d pass, %d fail (%d known gaps)", pass, fail, len(known))
}

// Request is what the recording client (Python's urllib) sent.
func Request(method, path, contentType, accept string, body []byte) *api.Request {
	u, _ := url.Parse(path)
	h := api.Header{"User-Agent": {"Python-urllib/3.13"}}
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	if accept != "" {
		h.Set("Accept", accept)
	}
	return &api.Request{Method: method, Path: u.Path, Query: u.Query(), Header: h, Body: body}
}

// Truncate cuts a body to what a failure message shows.
func Truncate(b []byte) string {
	if len(b) > 1500 {
		return string(b[:1500]) + "…"
	}
	return string(b)
}

// KeyOrder lists the keys of every object in document order (depth
// first), so that two bodies can be compared for kube's field order.
func KeyOrder(b []byte) []string {
	d := json.NewDecoder(bytes.NewReader(b))
	var out []string
	type frame struct{ object, wantKey bool }
	var stack []frame
	for {
		tok, err := d.Token()
		if err != nil {
			return out
		}
		if len(stack) > 0 && stack[len(stack)-1].object && stack[len(stack)-1].wantKey {
			if k, ok := tok.(string); ok {
				out = append(out, k)
				stack[len(stack)-1].wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{object: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			out = append(out, "/")
		}
		if len(stack) > 0 && stack[len(stack)-1].object {
			if tok != json.Delim('{') || true {
				// after a value (or at an object's start) the next token is a key
				stack[len(stack)-1].wantKey = true
			}
		}
	}
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// metaString reads metadata.<k> without adding metadata to o.
func metaString(o map[string]any, k string) string {
	m, _ := o["metadata"].(map[string]any)
	s, _ := m[k].(string)
	return s
}
