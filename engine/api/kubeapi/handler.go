package kubeapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// MaxBodyBytes is kube-apiserver's request body limit (3 MiB).
const MaxBodyBytes = 3 * 1024 * 1024

// Options configure a Handler.
type Options struct {
	// Registry is the session's registry of resources; New builds one
	// over Store when it is nil.
	Registry *kube.Registry
	Store    mvcc.KV
	// Kube configures the registry built over Store.
	Kube kube.Options
	// MaxBodyBytes overrides the request body limit.
	MaxBodyBytes int
	// RequestTimeout is kube-apiserver's --request-timeout: the deadline
	// of every request but a watch (deadline.go). Zero:
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// Handler serves the Kubernetes REST API of one session.
type Handler struct {
	reg            *kube.Registry
	maxBody        int
	requestTimeout time.Duration

	docs openAPIDocs
}

// New returns the Handler of a session.
func New(o Options) *Handler {
	reg := o.Registry
	if reg == nil {
		reg = kube.New(kube.KVOf(o.Store), o.Kube)
	}
	h := &Handler{reg: reg, maxBody: o.MaxBodyBytes, requestTimeout: o.RequestTimeout}
	if h.maxBody == 0 {
		h.maxBody = MaxBodyBytes
	}
	if h.requestTimeout <= 0 {
		h.requestTimeout = DefaultRequestTimeout
	}
	return h
}

// ForSession is session.Options.Kube: a Handler over the session's store.
func ForSession(name string, store mvcc.KV) api.Handler {
	return New(Options{Store: store})
}

// ForSessions is session.Options.Kube for handlers configured by o, each
// over its own session's store.
func ForSessions(o Options) func(name string, store mvcc.KV) api.Handler {
	return func(_ string, store mvcc.KV) api.Handler {
		o := o
		o.Registry, o.Store = nil, store
		return New(o)
	}
}

// Registry is the registry of resources the handler serves.
func (h *Handler) Registry() *kube.Registry { return h.reg }

// request is one decoded API request.
type request struct {
	*api.Request
	res      *kube.Resource
	ns, name string
	sub      string
	// collection is true for paths without a name.
	collection bool
	watchPath  bool
}

// jsonResponse is not inlined: each of its 30-odd call sites would build
// the header map itself (with notFoundPage and kube.newStatusError, 7 KB
// gzip of the WebAssembly build).
//
//go:noinline
func jsonResponse(code int, body []byte) *api.Response {
	return &api.Response{Status: code, Header: api.Header{
		"Content-Type":  {"application/json"},
		"Cache-Control": {"no-cache, private"},
	}, Body: body}
}

func objectResponse(code int, r *kube.Resource, o kube.Object) *api.Response {
	return jsonResponse(code, r.Encode(o))
}

// encodedResponse answers with the JSON kube produced while writing, or
// encodes the object when there is none.
func encodedResponse(code int, r *kube.Resource, w kube.Written) *api.Response {
	if w.JSON != nil {
		return jsonResponse(code, w.JSON)
	}
	return objectResponse(code, r, w.Object)
}

// statusResponse answers an error as kube-apiserver does.
func statusResponse(err error) *api.Response {
	se := kube.AsStatus(err)
	resp := jsonResponse(se.Code(), se.JSON())
	if d := se.Status.Details; d != nil && d.RetryAfterSeconds > 0 {
		resp.Header.Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	return resp
}

// notFoundPage is not inlined, as jsonResponse.
//
//go:noinline
func notFoundPage() *api.Response {
	return &api.Response{Status: 404, Header: api.Header{
		"Content-Type":           {"text/plain; charset=utf-8"},
		"X-Content-Type-Options": {"nosniff"},
	}, Body: []byte("404 page not found\n")}
}

// Serve answers one request. It never panics: a panic in the layers
// below becomes a 500 Status.
func (h *Handler) Serve(ctx context.Context, req *api.Request) (resp *api.Response) {
	defer func() {
		if p := recover(); p != nil {
			resp = statusResponse(kube.NewInternalError(fmt.Errorf("%v", p)))
		}
	}()
	if req.Header == nil {
		req.Header = api.Header{}
	}
	if req.Query == nil {
		req.Query = url.Values{}
	}
	p := strings.TrimSuffix(req.Path, "/")
	if p == "" {
		p = "/"
	}
	if err := h.reg.Bootstrap(ctx); err != nil {
		return statusResponse(err)
	}
	if r, ok := h.serveDiscovery(ctx, req, p); ok {
		return r
	}
	rq, ok, err := route(req, p, func(group, version, resource string) (*kube.Resource, error) {
		return h.reg.Lookup(ctx, group, version, resource)
	})
	if err != nil {
		return statusResponse(err)
	}
	if !ok {
		return notFoundPage()
	}
	if rq.watchPath || boolParam(rq.Query, "watch") {
		return prettyPrint(req, h.serveWarned(ctx, rq))
	}
	ctx, cancel, write, refused := h.withDeadline(ctx, rq)
	if refused != nil {
		return prettyPrint(req, refused)
	}
	defer cancel()
	resp = h.serveWarned(ctx, rq)
	if ctx.Err() == context.DeadlineExceeded {
		resp = timedOut(ctx, write)
	}
	return prettyPrint(req, resp)
}

// prettyPrint indents JSON answers as kube-apiserver does for ?pretty=true
// and, without the parameter, for curl, Wget and browsers.
func prettyPrint(req *api.Request, resp *api.Response) *api.Response {
	if resp.Stream != nil || len(resp.Body) == 0 || api.MediaType(resp.Header.Get("Content-Type")) != "application/json" {
		return resp
	}
	pretty := false
	if v := req.Query.Get("pretty"); v != "" {
		pretty, _ = strconv.ParseBool(v)
	} else {
		ua := req.Header.Get("User-Agent")
		pretty = strings.HasPrefix(ua, "curl") || strings.HasPrefix(ua, "Wget") || strings.HasPrefix(ua, "Mozilla/5.0")
	}
	if !pretty {
		return resp
	}
	var b bytes.Buffer
	if json.Indent(&b, resp.Body, "", "  ") == nil {
		b.WriteByte('\n')
		resp.Body = b.Bytes()
	}
	return resp
}

// route parses /api/v1/… and /apis/<group>/<version>/… paths; lookup
// finds the resources the session serves.
func route(req *api.Request, p string, lookup func(group, version, resource string) (*kube.Resource, error)) (*request, bool, error) {
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var group, version string
	switch {
	case len(parts) >= 3 && parts[0] == "api" && parts[1] == "v1":
		group, version, parts = "", "v1", parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		group, version, parts = parts[1], parts[2], parts[3:]
	default:
		return nil, false, nil
	}
	rq := &request{Request: req}
	if parts[0] == "watch" {
		// the deprecated /watch/ prefix
		rq.watchPath = true
		parts = parts[1:]
		if len(parts) == 0 {
			return nil, false, nil
		}
	}
	for _, s := range parts {
		if s == "" {
			return nil, false, nil
		}
	}
	nsRes := kube.Lookup(group, version, "namespaces")
	if parts[0] == "namespaces" && len(parts) >= 3 && group == "" {
		// /namespaces/<ns>/<resource>[/<name>[/<sub>]], unless <resource>
		// is a subresource of the namespace itself
		if len(parts) == 3 && (parts[2] == "status" || parts[2] == "finalize") {
			rq.res, rq.name, rq.sub = nsRes, parts[1], parts[2]
			return rq, true, nil
		}
		rq.ns = parts[1]
		parts = parts[2:]
	} else if parts[0] == "namespaces" && len(parts) >= 3 && group != "" {
		rq.ns = parts[1]
		parts = parts[2:]
	}
	res, err := lookup(group, version, parts[0])
	if err != nil {
		return nil, false, err
	}
	rq.res = res
	if rq.res == nil {
		return nil, false, nil
	}
	if rq.ns != "" && !rq.res.Namespaced {
		return nil, false, nil
	}
	switch len(parts) {
	case 1:
		rq.collection = true
	case 2:
		rq.name = parts[1]
	case 3:
		rq.name, rq.sub = parts[1], parts[2]
		if !(rq.sub == "status" && rq.res.Status || rq.sub == "scale" && rq.res.Scale) {
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	return rq, true, nil
}

func (h *Handler) serveResource(ctx context.Context, rq *request) *api.Response {
	r := rq.res
	q := rq.Query
	if len(rq.Body) > h.maxBody {
		return statusResponse(kube.NewRequestEntityTooLarge(h.maxBody))
	}
	if rq.name != "" {
		if msgs := kube.IsValidPathSegmentName(rq.name); len(msgs) > 0 {
			return statusResponse(kube.NewBadRequest(fmt.Sprintf("%s: %s", rq.name, strings.Join(msgs, ", "))))
		}
	}
	if rq.sub == "finalize" && rq.Method != "PUT" {
		return statusResponse(kube.NewMethodNotSupported(r.Group, r.Resource+"/finalize", methodVerb(rq)))
	}
	watch := rq.watchPath || boolParam(q, "watch")
	switch {
	case rq.Method == "GET" && (rq.collection || watch && rq.sub == ""):
		lo, err := listOptions(q)
		if err != nil {
			return statusResponse(err)
		}
		if !rq.collection {
			// watch of one object: the name becomes a field selector
			if lo.FieldSelector != "" {
				fs, err := kube.ParseFieldSelector(lo.FieldSelector)
				if err != nil {
					return statusResponse(kube.NewBadRequest(err.Error()))
				}
				for _, t := range fs {
					if t.Field == "metadata.name" && (t.Value != rq.name || t.Not) {
						return statusResponse(kube.NewBadRequest("fieldSelector metadata.name doesn't match requested name"))
					}
				}
				lo.FieldSelector += ",metadata.name=" + rq.name
			} else {
				lo.FieldSelector = "metadata.name=" + rq.name
			}
		}
		if watch {
			return h.serveWatch(ctx, rq, lo)
		}
		l, err := h.reg.List(ctx, r, rq.ns, lo)
		if err != nil {
			return statusResponse(err)
		}
		if v := tableVersion(rq.Header.Get("Accept")); v != "" {
			return jsonResponse(200, r.Table(l.Objects(), l.Metadata, v, q.Get("includeObject"), h.reg.Clock().Now()))
		}
		return jsonResponse(200, l.Encode())
	case rq.Method == "GET":
		if rq.sub == "scale" {
			o, err := h.reg.GetScale(ctx, r, rq.ns, rq.name)
			if err != nil {
				return statusResponse(err)
			}
			return jsonResponse(200, kube.EncodeObject(o, nil))
		}
		if v := tableVersion(rq.Header.Get("Accept")); v != "" {
			o, err := h.reg.Get(ctx, r, rq.ns, rq.name, q.Get("resourceVersion"))
			if err != nil {
				return statusResponse(err)
			}
			return jsonResponse(200, r.Table([]kube.Object{o}, kube.ListMeta{ResourceVersion: kube.ResourceVersion(o)}, v, q.Get("includeObject"), h.reg.Clock().Now()))
		}
		b, err := h.reg.GetJSON(ctx, r, rq.ns, rq.name, q.Get("resourceVersion"))
		if err != nil {
			return statusResponse(err)
		}
		return jsonResponse(200, b)
	case rq.Method == "POST" && rq.collection:
		if r.Namespaced && rq.ns == "" {
			return notFoundPage()
		}
		o, warnings, err := h.decodeBody(rq, r, false)
		if err != nil {
			return statusResponse(err)
		}
		out, err := h.reg.Create(ctx, r, rq.ns, o, writeOptions(rq))
		if err != nil {
			return statusResponse(err)
		}
		return withWarnings(encodedResponse(201, r, out), warnings)
	case rq.Method == "PUT" && !rq.collection:
		if rq.sub == "scale" {
			o, _, err := h.decodeBody(rq, r, true)
			if err != nil {
				return statusResponse(err)
			}
			out, err := h.reg.UpdateScale(ctx, r, rq.ns, rq.name, o, writeOptions(rq))
			if err != nil {
				return statusResponse(err)
			}
			return jsonResponse(200, kube.EncodeObject(out, nil))
		}
		o, warnings, err := h.decodeBody(rq, r, false)
		if err != nil {
			return statusResponse(err)
		}
		var out kube.Written
		if rq.sub == "finalize" {
			out, err = h.reg.Finalize(ctx, r, rq.name, o, writeOptions(rq))
		} else {
			out, err = h.reg.Update(ctx, r, rq.ns, rq.name, rq.sub, o, writeOptions(rq))
		}
		if err != nil {
			return statusResponse(err)
		}
		return withWarnings(encodedResponse(200, r, out), warnings)
	case rq.Method == "PATCH" && !rq.collection:
		return h.servePatch(ctx, rq)
	case rq.Method == "DELETE" && !rq.collection && rq.sub == "":
		do, err := deleteOptions(rq)
		if err != nil {
			return statusResponse(err)
		}
		res, err := h.reg.Delete(ctx, r, rq.ns, rq.name, do)
		if err != nil {
			return statusResponse(err)
		}
		return deleteResponse(r, res)
	case rq.Method == "DELETE" && rq.collection:
		if !slices.Contains(r.Verbs, "deletecollection") {
			return statusResponse(kube.NewMethodNotSupported(r.Group, r.Resource, "deletecollection"))
		}
		do, err := deleteOptions(rq)
		if err != nil {
			return statusResponse(err)
		}
		lo, err := listOptions(q)
		if err != nil {
			return statusResponse(err)
		}
		l, err := h.reg.DeleteCollection(ctx, r, rq.ns, lo, do)
		if err != nil {
			return statusResponse(err)
		}
		return jsonResponse(200, l.Encode())
	}
	return statusResponse(kube.NewMethodNotSupported(r.Group, r.Resource, methodVerb(rq)))
}

// tableVersion is the meta.k8s.io version of the Table the Accept header
// prefers over a plain object ("" for none), as kubectl get asks with
// "application/json;as=Table;v=v1;g=meta.k8s.io,…,application/json".
func tableVersion(accept string) string {
	v, _ := conversion(accept, "meta.k8s.io", "Table", "v1", "v1beta1")
	return v
}

// conversion reads an Accept header as kube's content negotiation does
// for an answer that can also be served as kind as of group g: the first
// entry of a media type kube serves (or a wildcard) that asks either for
// the plain answer ("") or for that kind in one of versions (the
// version); ok is false when no entry does (kube's 406). rvplay answers
// in JSON whichever of kube's media types an entry names.
func conversion(accept, g, as string, versions ...string) (version string, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return "", true
	}
	for _, part := range strings.Split(accept, ",") {
		fields := strings.Split(part, ";")
		switch strings.TrimSpace(strings.ToLower(fields[0])) {
		case "application/json", "application/yaml", "application/vnd.kubernetes.protobuf", "*/*", "application/*":
		default:
			continue
		}
		params := map[string]string{}
		for _, p := range fields[1:] {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok {
				params[strings.ToLower(k)] = v
			}
		}
		if params["as"] == "" {
			return "", true
		}
		if params["as"] == as && params["g"] == g && slices.Contains(versions, params["v"]) {
			return params["v"], true
		}
	}
	return "", false
}

func methodVerb(rq *request) string {
	switch rq.Method {
	case "POST":
		return "create"
	case "PUT":
		return "update"
	case "PATCH":
		return "patch"
	case "DELETE":
		return "delete"
	}
	return strings.ToLower(rq.Method)
}

func deleteResponse(r *kube.Resource, res any) *api.Response {
	switch x := res.(type) {
	case kube.Object:
		return objectResponse(200, r, x)
	case *kube.Status:
		b, _ := json.Marshal(x)
		return jsonResponse(200, b)
	}
	return jsonResponse(200, []byte("{}"))
}

func withWarnings(resp *api.Response, warnings []string) *api.Response {
	for _, w := range warnings {
		resp.Header.Add("Warning", "299 - "+strconv.Quote(w))
	}
	return resp
}

func writeOptions(rq *request) kube.WriteOptions {
	return kube.WriteOptions{FieldManager: fieldManager(rq), DryRun: dryRun(rq.Query)}
}

func fieldManager(rq *request) string {
	if fm := rq.Query.Get("fieldManager"); fm != "" {
		return fm
	}
	return kube.ManagerFromUserAgent(rq.Header.Get("User-Agent"))
}

func dryRun(q url.Values) bool {
	for _, v := range q["dryRun"] {
		if v == "All" {
			return true
		}
	}
	return false
}

// boolParam is kube's string-to-bool conversion: anything but "0" and
// "false" is true.
func boolParam(q url.Values, k string) bool {
	v, ok := q[k]
	if !ok || len(v) == 0 {
		return false
	}
	return !(v[0] == "0" || strings.EqualFold(v[0], "false"))
}

func int64Param(q url.Values, k string) (*int64, error) {
	v, ok := q[k]
	if !ok || len(v) == 0 {
		return nil, nil
	}
	i, err := strconv.ParseInt(v[0], 10, 64)
	if err != nil {
		return nil, kube.NewBadRequest(err.Error())
	}
	return &i, nil
}

// listOptions decodes ListOptions from the query (400 on bad values).
func listOptions(q url.Values) (kube.ListOptions, error) {
	lo := kube.ListOptions{
		LabelSelector:        q.Get("labelSelector"),
		FieldSelector:        q.Get("fieldSelector"),
		ResourceVersion:      q.Get("resourceVersion"),
		ResourceVersionMatch: q.Get("resourceVersionMatch"),
		Continue:             q.Get("continue"),
		AllowWatchBookmarks:  boolParam(q, "allowWatchBookmarks"),
	}
	limit, err := int64Param(q, "limit")
	if err != nil {
		return lo, err
	}
	if limit != nil {
		lo.Limit = *limit
	}
	if lo.TimeoutSeconds, err = int64Param(q, "timeoutSeconds"); err != nil {
		return lo, err
	}
	if _, ok := q["sendInitialEvents"]; ok {
		b := boolParam(q, "sendInitialEvents")
		lo.SendInitialEvents = &b
	}
	return lo, nil
}

// deleteOptions reads DeleteOptions from the body, or the query when there
// is no body.
func deleteOptions(rq *request) (kube.DeleteOptions, error) {
	raw := rq.Body
	if api.MediaType(rq.Header.Get("Content-Type")) == "application/vnd.kubernetes.protobuf" && len(raw) > 0 {
		o, err := protobufToJSON(raw)
		if err != nil {
			return kube.DeleteOptions{}, kube.NewUnrecognizedBody("DeleteOptions", err, raw)
		}
		raw, _ = json.Marshal(o)
	}
	if len(bytes.TrimSpace(raw)) > 0 {
		return kube.DecodeDeleteOptions(raw)
	}
	var q kube.DeleteOptionsRequest
	var err error
	if q.GracePeriodSeconds, err = int64Param(rq.Query, "gracePeriodSeconds"); err != nil {
		return kube.DeleteOptions{}, err
	}
	if v := rq.Query.Get("propagationPolicy"); v != "" {
		q.PropagationPolicy = &v
	}
	q.DryRun = rq.Query["dryRun"]
	if _, ok := rq.Query["orphanDependents"]; ok {
		b := boolParam(rq.Query, "orphanDependents")
		q.OrphanDependents = &b
	}
	return q.Options()
}
