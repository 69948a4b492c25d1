package labapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/client"
)

// labClient is one named client of the page: its own User-Agent, its own
// step sequence, its informers.
type labClient struct {
	hub   *Hub
	id    string
	label string
	c     *client.Client

	mu        sync.Mutex
	seq       int64
	informers map[string]*labInformer
}

// Answer is what a verb answers: the HTTP status, the body as text, and
// for a failure the Status' reason, message and code; RV is the answer's
// metadata.resourceVersion.
type Answer struct {
	Status  int    `json:"status"`
	Body    string `json:"body"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
	RV      string `json:"resourceVersion,omitempty"`
	// Attempts is how many updates RetryOnConflict sent.
	Attempts int `json:"attempts,omitempty"`
}

func answerOf(resp *api.Response) Answer {
	a := Answer{Status: resp.Status, Body: string(resp.Body)}
	if a.Status == 0 {
		a.Status = 200
	}
	if a.Status >= 300 {
		var st client.Status
		if json.Unmarshal(resp.Body, &st) == nil && st.Kind == "Status" {
			a.Reason, a.Message, a.Code = st.Reason, st.Message, st.Code
		}
	} else {
		a.RV = metadataRV(resp.Body)
	}
	return a
}

func answerOfErr(err error) Answer {
	if se, ok := client.AsStatus(err); ok {
		body, _ := json.Marshal(se.Status)
		return Answer{Status: int(se.Code()), Body: string(body), Reason: se.Reason(), Message: se.Message(), Code: se.Code()}
	}
	return Answer{Status: 0, Message: err.Error()}
}

// target resolves the request's resource and namespace.
func (c *labClient) target(ctx context.Context, req *Request) (client.Mapping, string, error) {
	if req.Resource == "" {
		return client.Mapping{}, "", errors.New("rvplay clients: which resource? (resource: \"configmaps\", \"deployments\", ...)")
	}
	m, err := c.hub.mapper.Lookup(ctx, req.Resource)
	if err != nil {
		return client.Mapping{}, "", fmt.Errorf("rvplay clients: %w", err)
	}
	ns := ""
	if m.Namespaced && !req.AllNamespaces {
		ns = req.Namespace
		if ns == "" {
			ns = objectNamespace(req.Object)
		}
		if ns == "" {
			ns = "default"
		}
	}
	return m, ns, nil
}

func objectNamespace(raw json.RawMessage) string {
	var o struct {
		Metadata struct {
			Namespace string `json:"namespace"`
		} `json:"metadata"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &o) != nil {
		return ""
	}
	return o.Metadata.Namespace
}

// verb sends one request and answers its status and body, whatever they are.
func (c *labClient) verb(ctx context.Context, req *Request) (any, error) {
	m, ns, err := c.target(ctx, req)
	if err != nil {
		return nil, err
	}
	var sub []string
	if req.Subresource != "" {
		sub = []string{req.Subresource}
	}
	r := &api.Request{Query: url.Values{}, Header: api.Header{}}
	switch req.Op {
	case "get":
		if req.Name == "" {
			return nil, errors.New("rvplay clients: get needs a name")
		}
		r.Method, r.Path = "GET", m.Resource.Path(ns, req.Name, sub...)
		if req.ResourceVersion != "" {
			r.Query.Set("resourceVersion", req.ResourceVersion)
		}
	case "list":
		r.Method, r.Path = "GET", m.Resource.Path(ns, "")
		r.Query = client.ListOptions{LabelSelector: req.LabelSelector, FieldSelector: req.FieldSelector,
			ResourceVersion: req.ResourceVersion, ResourceVersionMatch: req.ResourceVersionMatch,
			Limit: req.Limit, Continue: req.Continue}.Query()
	case "create":
		obj, err := decodeObject(req.Object)
		if err != nil {
			return nil, err
		}
		r.Method, r.Path, r.Body = "POST", m.Resource.Path(ns, "", sub...), obj.JSON()
		c.writeQuery(r.Query, req)
	case "update":
		obj, err := decodeObject(req.Object)
		if err != nil {
			return nil, err
		}
		name := obj.Name()
		if name == "" {
			name = req.Name
		}
		if name == "" {
			return nil, errors.New("rvplay clients: update needs an object with metadata.name")
		}
		if req.WithoutResourceVersion {
			// An empty resourceVersion makes the update unconditional:
			// it overwrites whatever is stored, the lost update.
			obj.SetResourceVersion("")
		}
		r.Method, r.Path, r.Body = "PUT", m.Resource.Path(ns, name, sub...), obj.JSON()
		c.writeQuery(r.Query, req)
	case "patch":
		if req.Name == "" {
			return nil, errors.New("rvplay clients: patch needs a name")
		}
		pt, body, err := patchBody(req)
		if err != nil {
			return nil, err
		}
		r.Method, r.Path, r.Body = "PATCH", m.Resource.Path(ns, req.Name, sub...), body
		r.Header.Set("Content-Type", string(pt))
		c.writeQuery(r.Query, req)
		if pt == client.ApplyPatch && r.Query.Get("fieldManager") == "" {
			r.Query.Set("fieldManager", c.label)
		}
		if req.Force {
			r.Query.Set("force", "true")
		}
	case "delete":
		if req.Name == "" {
			return nil, errors.New("rvplay clients: delete needs a name")
		}
		opts := map[string]any{"kind": "DeleteOptions", "apiVersion": "v1"}
		if req.ResourceVersion != "" || req.UID != "" {
			opts["preconditions"] = client.Preconditions{UID: req.UID, ResourceVersion: req.ResourceVersion}
		}
		if req.PropagationPolicy != "" {
			opts["propagationPolicy"] = req.PropagationPolicy
		}
		body, _ := json.Marshal(opts)
		r.Method, r.Path, r.Body = "DELETE", m.Resource.Path(ns, req.Name), body
		if req.DryRun {
			r.Query.Set("dryRun", "All")
		}
	}
	resp := c.c.Do(ctx, r)
	if resp.Stream != nil {
		resp.Stream.Close()
	}
	return answerOf(resp), nil
}

func (c *labClient) writeQuery(q url.Values, req *Request) {
	if req.FieldManager != "" {
		q.Set("fieldManager", req.FieldManager)
	}
	if req.DryRun {
		q.Set("dryRun", "All")
	}
}

func decodeObject(raw json.RawMessage) (client.Object, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, errors.New("rvplay clients: the operation needs an object")
	}
	obj, err := client.DecodeObject(raw)
	if err != nil || obj == nil {
		return nil, fmt.Errorf("rvplay clients: the object is not a JSON object: %v", err)
	}
	return obj, nil
}

var patchTypes = map[string]client.PatchType{
	"merge": client.MergePatch, "json": client.JSONPatch,
	"strategic": client.StrategicMergePatch, "apply": client.ApplyPatch,
}

// patchBody returns the patch's content type and bytes: a JSON value as
// it is, or a string's contents (YAML for apply).
func patchBody(req *Request) (client.PatchType, []byte, error) {
	kind := req.PatchType
	if kind == "" {
		kind = "merge"
	}
	pt, ok := patchTypes[kind]
	if !ok {
		return "", nil, fmt.Errorf("rvplay clients: patchType %q: use merge, json, strategic or apply", kind)
	}
	raw := bytes.TrimSpace(req.Patch)
	if len(raw) == 0 {
		return "", nil, errors.New("rvplay clients: patch needs a patch")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", nil, err
		}
		return pt, []byte(s), nil
	}
	return pt, raw, nil
}

// backoffOf reads "DefaultRetry", "DefaultBackoff" or a custom backoff.
func backoffOf(raw json.RawMessage) (client.Backoff, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return client.DefaultRetry, nil
	}
	if raw[0] == '"' {
		var name string
		json.Unmarshal(raw, &name)
		switch name {
		case "DefaultRetry":
			return client.DefaultRetry, nil
		case "DefaultBackoff":
			return client.DefaultBackoff, nil
		}
		return client.Backoff{}, fmt.Errorf("rvplay clients: backoff %q: use DefaultRetry, DefaultBackoff or {steps, durationMs, factor, jitter, capMs}", name)
	}
	var b struct {
		Steps      int     `json:"steps"`
		DurationMS float64 `json:"durationMs"`
		Factor     float64 `json:"factor"`
		Jitter     float64 `json:"jitter"`
		CapMS      float64 `json:"capMs"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return client.Backoff{}, fmt.Errorf("rvplay clients: backoff: %w", err)
	}
	if b.Steps < 1 {
		return client.Backoff{}, errors.New("rvplay clients: backoff.steps must be at least 1: a retry needs a limit")
	}
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	return client.Backoff{Steps: b.Steps, Duration: ms(b.DurationMS), Factor: b.Factor, Jitter: b.Jitter, Cap: ms(b.CapMS)}, nil
}

// retryOnConflict is client-go's documented pattern: get the latest
// object, apply the change, update; on 409 Conflict wait the backoff's
// next step and do it all again, up to backoff.Steps attempts.
func (c *labClient) retryOnConflict(ctx context.Context, req *Request, mutate Mutate) (any, error) {
	m, ns, err := c.target(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, errors.New("rvplay clients: retryOnConflict needs a name")
	}
	if len(req.Set) == 0 && mutate == nil {
		return nil, errors.New("rvplay clients: retryOnConflict needs a change: set {\"spec.replicas\": 5} or a function")
	}
	backoff, err := backoffOf(req.Backoff)
	if err != nil {
		return nil, err
	}
	rc := c.c.Resource(m.Resource).Namespace(ns)
	retrier := client.Retrier{
		Clock: c.hub.clock,
		Rand:  c.hub.rand,
		OnAttempt: func(attempt int, err error, wait time.Duration) {
			s := step{Kind: "attempt", Attempt: attempt}
			s.setErr(err)
			c.emit(s)
			if wait > 0 {
				c.emit(step{Kind: "backoff", Attempt: attempt, WaitMS: float64(wait) / float64(time.Millisecond)})
			}
		},
	}
	var last Answer
	attempts := 0
	get := client.GetOptions{}
	switch req.Read {
	case "":
	case "cache":
		get.ResourceVersion = "0"
	default:
		return nil, fmt.Errorf("rvplay clients: read %q: use \"cache\" (resourceVersion=0) or leave it out", req.Read)
	}
	err = retrier.RetryOnConflict(ctx, backoff, func() error {
		cur, err := rc.Get(ctx, req.Name, get)
		if err != nil {
			last = answerOfErr(err)
			return err
		}
		next, err := applyChange(cur, req.Set, mutate)
		if err != nil {
			return err
		}
		if req.WithoutResourceVersion {
			next.SetResourceVersion("")
		}
		attempts++
		out, err := rc.Update(ctx, next, client.WriteOptions{FieldManager: req.FieldManager}, subresources(req.Subresource)...)
		if err != nil {
			last = answerOfErr(err)
			return err
		}
		body := out.JSON()
		last = Answer{Status: 200, Body: string(body), RV: out.ResourceVersion()}
		return nil
	})
	last.Attempts = attempts
	if err != nil && last.Status == 0 && last.Message == "" {
		last.Message = err.Error()
	}
	return last, nil
}

func subresources(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}

// applyChange sets each dotted path ("spec.replicas") to its value, then
// hands the object to mutate, if given.
func applyChange(o client.Object, set map[string]any, mutate Mutate) (client.Object, error) {
	for path, v := range set {
		parts := strings.Split(path, ".")
		for _, p := range parts {
			if p == "" {
				return nil, fmt.Errorf("rvplay clients: set: bad path %q", path)
			}
		}
		if f, ok := v.(float64); ok && f == float64(int64(f)) {
			v = json.Number(strconv.FormatInt(int64(f), 10))
		}
		o.SetNested(v, parts...)
	}
	if mutate == nil {
		return o, nil
	}
	out, err := mutate(o.JSON())
	if err != nil {
		return nil, fmt.Errorf("rvplay clients: the change failed: %w", err)
	}
	return decodeObject(out)
}

func (c *labClient) close() {
	c.mu.Lock()
	infs := c.informers
	c.informers = map[string]*labInformer{}
	c.mu.Unlock()
	for _, i := range infs {
		i.stop()
	}
}
