// Package labapi is what the lab's page asks of engine/client: named
// clients that get, create, update, patch and delete any served kind, run
// RetryOnConflict, and run informers (a Reflector and its Store) that can
// be disconnected and resumed, with every step each client takes reported
// as one JSON object. Requests and answers are JSON documents, so that the
// JavaScript bridge (wasm/clients.go) is a thin shell around Hub.Call and
// this package is tested natively against a real session.
//
// The same Hub serves an offline lab (Handler is the in-page session) and
// a server session (Handler sends the requests over fetch and WebSocket):
// the Go clients run unchanged in both.
//
// The operations and the shape of steps are documented for the page in
// web/static/js/goclients.js.
package labapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/clock"
)

// Hub holds the clients of one page against one session.
type Hub struct {
	handler api.Handler
	clock   clock.Clock
	rand    func() float64
	onStep  func([]byte)

	mu      sync.Mutex
	clients map[string]*labClient
	mapper  *client.Mapper
}

// Options configure a Hub.
type Options struct {
	// Clock drives every client's waits (default: the wall clock). A
	// *clock.Fake makes the "advance" operation available.
	Clock clock.Clock
	// Rand is the jitter source (default: math/rand).
	Rand func() float64
	// OnStep receives every step of every client as one JSON object.
	OnStep func(step []byte)
}

// New returns a hub whose clients talk to h.
func New(h api.Handler, o Options) *Hub {
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	hub := &Hub{handler: h, clock: o.Clock, rand: o.Rand, onStep: o.OnStep, clients: map[string]*labClient{}}
	discovery := client.New(h)
	discovery.UserAgent = api.LabUserAgent("discovery")
	hub.mapper = client.NewMapper(discovery)
	return hub
}

// Request is one operation. Which fields count depends on Op; the page's
// documentation (goclients.js) lists them per operation.
type Request struct {
	Op       string `json:"op"`
	Client   string `json:"client"`
	Informer string `json:"informer"`
	Label    string `json:"label"`

	Resource      string `json:"resource"`
	Namespace     string `json:"namespace"`
	AllNamespaces bool   `json:"allNamespaces"`
	Name          string `json:"name"`
	Subresource   string `json:"subresource"`

	Object                 json.RawMessage `json:"object"`
	WithoutResourceVersion bool            `json:"withoutResourceVersion"`
	Patch                  json.RawMessage `json:"patch"`
	PatchType              string          `json:"patchType"`
	FieldManager           string          `json:"fieldManager"`
	Force                  bool            `json:"force"`
	DryRun                 bool            `json:"dryRun"`
	PropagationPolicy      string          `json:"propagationPolicy"`
	UID                    string          `json:"uid"`

	ResourceVersion      string `json:"resourceVersion"`
	ResourceVersionMatch string `json:"resourceVersionMatch"`
	LabelSelector        string `json:"labelSelector"`
	FieldSelector        string `json:"fieldSelector"`
	Limit                int64  `json:"limit"`
	Continue             string `json:"continue"`

	// RetryOnConflict: the backoff ("DefaultRetry", "DefaultBackoff" or
	// {steps, durationMs, factor, jitter, capMs}) and the change, as
	// values to set at dotted paths and/or a function the page passes.
	Backoff json.RawMessage `json:"backoff"`
	Set     map[string]any  `json:"set"`
	// Read "cache" makes each attempt's GET resourceVersion=0: served
	// from the watch cache, possibly stale (the pitfall lesson 4 shows).
	Read string `json:"read"`

	// Informers.
	WatchList *bool `json:"watchList"`
	Bookmarks *bool `json:"bookmarks"`

	// Advance moves a manual clock.
	MS float64 `json:"ms"`
}

// Mutate changes an object for RetryOnConflict: it gets the object read
// from the API as JSON and returns the object to write.
type Mutate func(obj []byte) ([]byte, error)

// Call runs one operation (a JSON Request) and answers JSON. An error is a
// misuse (an unknown client or operation, a resource the server does not
// serve, a broken object); an API error such as a 409 is an answer.
func (h *Hub) Call(ctx context.Context, reqJSON []byte, mutate Mutate) ([]byte, error) {
	var req Request
	if err := json.Unmarshal(reqJSON, &req); err != nil {
		return nil, fmt.Errorf("rvplay clients: bad request: %w", err)
	}
	out, err := h.call(ctx, &req, mutate)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}

func (h *Hub) call(ctx context.Context, req *Request, mutate Mutate) (any, error) {
	switch req.Op {
	case "client":
		return h.createClient(req)
	case "advance":
		fc, ok := h.clock.(*clock.Fake)
		if !ok {
			return nil, errors.New("rvplay clients: advance needs the manual clock")
		}
		fc.Step(time.Duration(req.MS * float64(time.Millisecond)))
		return map[string]any{"now": fc.Now().UTC().Format(time.RFC3339Nano)}, nil
	}
	c, err := h.client(req.Client)
	if err != nil {
		return nil, err
	}
	switch req.Op {
	case "close":
		h.mu.Lock()
		delete(h.clients, c.id)
		h.mu.Unlock()
		c.close()
		return map[string]any{"closed": c.id}, nil
	case "get", "list", "create", "update", "patch", "delete":
		return c.verb(ctx, req)
	case "retryOnConflict":
		return c.retryOnConflict(ctx, req, mutate)
	case "informer":
		return c.createInformer(ctx, req)
	case "start", "stop", "disconnect", "resume", "configure", "store", "remove":
		return c.informerOp(req)
	}
	return nil, fmt.Errorf("rvplay clients: unknown operation %q", req.Op)
}

// Close stops every client's informers.
func (h *Hub) Close() {
	h.mu.Lock()
	cs := h.clients
	h.clients = map[string]*labClient{}
	h.mu.Unlock()
	for _, c := range cs {
		c.close()
	}
}

func (h *Hub) client(id string) (*labClient, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.clients[id]
	if c == nil {
		return nil, fmt.Errorf("rvplay clients: no client %q (create it with op \"client\")", id)
	}
	return c, nil
}

// createClient makes (or, for an id in use, reconfigures) a client.
func (h *Hub) createClient(req *Request) (any, error) {
	if req.Client == "" {
		return nil, errors.New("rvplay clients: a client needs an id")
	}
	label := req.Label
	if label == "" {
		label = req.Client
	}
	if strings.ContainsAny(label, "/ \t\r\n") {
		return nil, fmt.Errorf("rvplay clients: label %q: use letters, digits, '-' and '.' (it names the client's field manager)", label)
	}
	h.mu.Lock()
	c := h.clients[req.Client]
	if c == nil {
		c = &labClient{hub: h, id: req.Client, informers: map[string]*labInformer{}}
		c.c = client.New(h.handler)
		c.c.Clock = h.clock
		c.c.OnExchange = c.exchange
		h.clients[req.Client] = c
	}
	c.label = label
	c.c.UserAgent = api.LabUserAgent(label)
	h.mu.Unlock()
	return map[string]any{"id": c.id, "label": label, "userAgent": c.c.UserAgent}, nil
}
