package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
)

// Resource names a Kubernetes resource by API group, version and plural
// resource name, which is all a REST path needs.
type Resource struct {
	Group    string
	Version  string
	Resource string
}

// The resources rvplay serves.
var (
	Namespaces  = Resource{Version: "v1", Resource: "namespaces"}
	ConfigMaps  = Resource{Version: "v1", Resource: "configmaps"}
	Secrets     = Resource{Version: "v1", Resource: "secrets"}
	Pods        = Resource{Version: "v1", Resource: "pods"}
	Events      = Resource{Version: "v1", Resource: "events"}
	Deployments = Resource{Group: "apps", Version: "v1", Resource: "deployments"}
	ReplicaSets = Resource{Group: "apps", Version: "v1", Resource: "replicasets"}
)

// Path is the REST path of the collection (name "") or of one object, in a
// namespace or (namespace "") cluster-wide, optionally of a subresource.
// Like api.Request.Path it is the decoded path: names are not escaped
// (valid Kubernetes names need no escaping).
func (r Resource) Path(namespace, name string, subresource ...string) string {
	p := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		p = "/api/" + r.Version
	}
	if namespace != "" {
		p += "/namespaces/" + namespace
	}
	p += "/" + r.Resource
	if name != "" {
		p += "/" + name
	}
	for _, s := range subresource {
		p += "/" + s
	}
	return p
}

func (r Resource) String() string {
	if r.Group == "" {
		return r.Resource
	}
	return r.Resource + "." + r.Group
}

// Client sends Kubernetes REST requests to an api.Handler.
type Client struct {
	Handler api.Handler
	// UserAgent is sent with every request; kube-apiserver derives the
	// default field manager from its part before the first "/".
	UserAgent string
	// OnExchange, if set, is told about every request and its answer
	// (for a watch, the answer's head), synchronously, after the answer.
	OnExchange func(Exchange)
	// Clock times the exchanges (default: the wall clock).
	Clock clock.Clock
}

func (c *Client) clock() clock.Clock {
	if c.Clock == nil {
		return clock.Real{}
	}
	return c.Clock
}

// New returns a client for a session's handler.
func New(h api.Handler) *Client {
	return &Client{Handler: h, UserAgent: "rvplay-client/v1"}
}

// Do sends one request and returns the raw answer. Headers the API needs
// (Accept, Content-Type for bodies, User-Agent) are filled in if missing.
func (c *Client) Do(ctx context.Context, req *api.Request) *api.Response {
	if req.Header == nil {
		req.Header = api.Header{}
	}
	if req.Query == nil {
		req.Query = url.Values{}
	}
	if req.Header.Get("Accept") == "" {
		req.Header.Set("Accept", "application/json")
	}
	if len(req.Body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if req.Header.Get("User-Agent") == "" && c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	var start time.Time
	if c.OnExchange != nil {
		start = c.clock().Now()
	}
	resp := c.Handler.Serve(ctx, req)
	if resp == nil {
		resp = &api.Response{Status: 500, Body: []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"no response from handler","code":500}`)}
	}
	if c.OnExchange != nil {
		status := resp.Status
		if status == 0 {
			status = 200
		}
		c.OnExchange(Exchange{Method: req.Method, Path: req.Path, Query: req.Query, RequestBody: req.Body,
			Status: status, Body: resp.Body, Watch: resp.Stream != nil,
			Start: start, Duration: c.clock().Now().Sub(start)})
	}
	return resp
}

// call sends a request that answers with one JSON document. A stream on a
// non-watch request is drained into the body so nothing leaks.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body []byte, contentType string) ([]byte, error) {
	req := &api.Request{Method: method, Path: path, Query: q, Body: body, Header: api.Header{}}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp := c.Do(ctx, req)
	data := resp.Body
	if resp.Stream != nil {
		for {
			frame, err := resp.Stream.Next(ctx)
			if err != nil {
				break
			}
			data = append(data, frame...)
		}
		resp.Stream.Close()
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, errorFromResponse(method, resp.Status, data)
	}
	return data, nil
}

// Resource returns a client for one resource; call Namespace to scope it.
func (c *Client) Resource(r Resource) ResourceClient {
	return ResourceClient{c: c, r: r}
}

// ResourceClient performs the verbs on one resource, in one namespace or
// (namespace "") across all namespaces / for cluster-scoped resources.
type ResourceClient struct {
	c  *Client
	r  Resource
	ns string
}

// Namespace scopes the client to a namespace.
func (rc ResourceClient) Namespace(ns string) ResourceClient { rc.ns = ns; return rc }

// Resource is the resource this client addresses.
func (rc ResourceClient) Resource() Resource { return rc.r }

// NamespaceName is the namespace this client addresses ("" for all).
func (rc ResourceClient) NamespaceName() string { return rc.ns }

// GetOptions are the query parameters of a GET.
type GetOptions struct {
	// ResourceVersion: "" = most recent, "0" = any (may be stale),
	// "N" = not older than N.
	ResourceVersion string
}

// ListOptions are the query parameters of a LIST or WATCH.
type ListOptions struct {
	LabelSelector        string
	FieldSelector        string
	ResourceVersion      string
	ResourceVersionMatch string // "", "Exact", "NotOlderThan"
	Limit                int64
	Continue             string
	TimeoutSeconds       *int64
	AllowWatchBookmarks  bool
	SendInitialEvents    *bool
}

// Query renders the options as kube-apiserver reads them.
func (o ListOptions) Query() url.Values {
	q := url.Values{}
	if o.LabelSelector != "" {
		q.Set("labelSelector", o.LabelSelector)
	}
	if o.FieldSelector != "" {
		q.Set("fieldSelector", o.FieldSelector)
	}
	if o.ResourceVersion != "" {
		q.Set("resourceVersion", o.ResourceVersion)
	}
	if o.ResourceVersionMatch != "" {
		q.Set("resourceVersionMatch", o.ResourceVersionMatch)
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.FormatInt(o.Limit, 10))
	}
	if o.Continue != "" {
		q.Set("continue", o.Continue)
	}
	if o.TimeoutSeconds != nil {
		q.Set("timeoutSeconds", strconv.FormatInt(*o.TimeoutSeconds, 10))
	}
	if o.AllowWatchBookmarks {
		q.Set("allowWatchBookmarks", "true")
	}
	if o.SendInitialEvents != nil {
		q.Set("sendInitialEvents", strconv.FormatBool(*o.SendInitialEvents))
	}
	return q
}

// WriteOptions are the query parameters of a create or update.
type WriteOptions struct {
	FieldManager string
	DryRun       bool
}

func (o WriteOptions) query() url.Values {
	q := url.Values{}
	if o.FieldManager != "" {
		q.Set("fieldManager", o.FieldManager)
	}
	if o.DryRun {
		q.Set("dryRun", "All")
	}
	return q
}

// PatchType is the Content-Type that selects the patch algorithm.
type PatchType string

const (
	JSONPatch           PatchType = "application/json-patch+json"
	MergePatch          PatchType = "application/merge-patch+json"
	StrategicMergePatch PatchType = "application/strategic-merge-patch+json"
	ApplyPatch          PatchType = "application/apply-patch+yaml"
)

// PatchOptions are the query parameters of a PATCH. FieldManager is
// required for server-side apply; Force only applies to it.
type PatchOptions struct {
	FieldManager string
	Force        bool
}

// Preconditions make a delete conditional.
type Preconditions struct {
	UID             string `json:"uid,omitempty"`
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// DeleteOptions is the body of a DELETE.
type DeleteOptions struct {
	Preconditions     *Preconditions
	PropagationPolicy string
}

// Get reads one object (or its subresource).
func (rc ResourceClient) Get(ctx context.Context, name string, opts GetOptions, subresource ...string) (Object, error) {
	q := url.Values{}
	if opts.ResourceVersion != "" {
		q.Set("resourceVersion", opts.ResourceVersion)
	}
	data, err := rc.c.call(ctx, "GET", rc.r.Path(rc.ns, name, subresource...), q, nil, "")
	if err != nil {
		return nil, err
	}
	return DecodeObject(data)
}

// List reads one page of the collection.
func (rc ResourceClient) List(ctx context.Context, opts ListOptions) (*List, error) {
	data, err := rc.c.call(ctx, "GET", rc.r.Path(rc.ns, ""), opts.Query(), nil, "")
	if err != nil {
		return nil, err
	}
	l, err := decodeList(data)
	if err != nil {
		return nil, fmt.Errorf("decoding %s list: %w", rc.r, err)
	}
	return l, nil
}

// Create POSTs a new object.
func (rc ResourceClient) Create(ctx context.Context, obj Object, opts WriteOptions) (Object, error) {
	data, err := rc.c.call(ctx, "POST", rc.r.Path(rc.ns, ""), opts.query(), obj.JSON(), "application/json")
	if err != nil {
		return nil, err
	}
	return DecodeObject(data)
}

// Update PUTs an object (or its subresource). The object's
// metadata.resourceVersion is the precondition: a stale one gets 409
// Conflict, an empty one makes the update unconditional.
func (rc ResourceClient) Update(ctx context.Context, obj Object, opts WriteOptions, subresource ...string) (Object, error) {
	data, err := rc.c.call(ctx, "PUT", rc.r.Path(rc.ns, obj.Name(), subresource...), opts.query(), obj.JSON(), "application/json")
	if err != nil {
		return nil, err
	}
	return DecodeObject(data)
}

// UpdateStatus PUTs the status subresource: only status changes persist.
func (rc ResourceClient) UpdateStatus(ctx context.Context, obj Object, opts WriteOptions) (Object, error) {
	return rc.Update(ctx, obj, opts, "status")
}

// Patch applies a patch of the given type to an object (or subresource).
func (rc ResourceClient) Patch(ctx context.Context, name string, pt PatchType, patch []byte, opts PatchOptions, subresource ...string) (Object, error) {
	q := url.Values{}
	if opts.FieldManager != "" {
		q.Set("fieldManager", opts.FieldManager)
	}
	if opts.Force {
		q.Set("force", "true")
	}
	data, err := rc.c.call(ctx, "PATCH", rc.r.Path(rc.ns, name, subresource...), q, patch, string(pt))
	if err != nil {
		return nil, err
	}
	return DecodeObject(data)
}

// Apply is server-side apply of a partial object owned by fieldManager.
func (rc ResourceClient) Apply(ctx context.Context, obj Object, fieldManager string, force bool) (Object, error) {
	return rc.Patch(ctx, obj.Name(), ApplyPatch, obj.JSON(), PatchOptions{FieldManager: fieldManager, Force: force})
}

// Delete removes an object, optionally with UID/resourceVersion
// preconditions.
func (rc ResourceClient) Delete(ctx context.Context, name string, opts DeleteOptions) error {
	_, err := rc.c.call(ctx, "DELETE", rc.r.Path(rc.ns, name), url.Values{}, opts.body(), "application/json")
	return err
}

// DeleteCollection deletes the objects the list options select.
func (rc ResourceClient) DeleteCollection(ctx context.Context, opts DeleteOptions, lo ListOptions) error {
	_, err := rc.c.call(ctx, "DELETE", rc.r.Path(rc.ns, ""), lo.Query(), opts.body(), "application/json")
	return err
}

func (opts DeleteOptions) body() []byte {
	body := map[string]any{"kind": "DeleteOptions", "apiVersion": "v1"}
	if opts.Preconditions != nil {
		body["preconditions"] = opts.Preconditions
	}
	if opts.PropagationPolicy != "" {
		body["propagationPolicy"] = opts.PropagationPolicy
	}
	b, _ := json.Marshal(body)
	return b
}
