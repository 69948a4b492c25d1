package session

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
)

// ControlPrefix is where a session's own API lives, under its base URL.
const ControlPrefix = "/rvplay/v1"

// IsControlPath reports whether path belongs to the session's own API.
func IsControlPath(path string) bool {
	return path == "/rvplay" || strings.HasPrefix(path, "/rvplay/")
}

// Control serves the session's own API, /rvplay/v1/...: its settings and
// its record of exchanges here, and whatever else registers a path (the
// classroom's operations, lesson progress). It answers in JSON; errors are
// Kubernetes Status objects, as the rest of a session's non-etcd paths.
type Control struct {
	mu       sync.RWMutex
	routes   map[string]api.Handler
	prefixes map[string]api.Handler
}

func newControl() *Control {
	return &Control{routes: map[string]api.Handler{}, prefixes: map[string]api.Handler{}}
}

// Handle serves path (under ControlPrefix, e.g. "/rvplay/v1/settings")
// with h, replacing what served it before.
func (c *Control) Handle(path string, h api.Handler) {
	c.mu.Lock()
	c.routes[path] = h
	c.mu.Unlock()
}

// HandlePrefix serves path and everything under it ("/rvplay/v1/lessons"
// and "/rvplay/v1/lessons/...") with h.
func (c *Control) HandlePrefix(path string, h api.Handler) {
	c.mu.Lock()
	c.prefixes[path] = h
	c.mu.Unlock()
}

// Serve routes a control request.
func (c *Control) Serve(ctx context.Context, req *api.Request) *api.Response {
	path := strings.TrimSuffix(req.Path, "/")
	c.mu.RLock()
	h := c.routes[path]
	if h == nil {
		for p, ph := range c.prefixes {
			if path == p || strings.HasPrefix(path, p+"/") {
				h = ph
				break
			}
		}
	}
	c.mu.RUnlock()
	if h == nil {
		return ControlStatus(404, "NotFound", "the session serves no "+req.Path+" (its own API: "+ControlPrefix+"/settings, "+ControlPrefix+"/exchanges)")
	}
	return h.Serve(ctx, req)
}

// ControlStatus is a failure of the session's own API, as a Kubernetes
// Status.
func ControlStatus(code int, reason, message string) *api.Response {
	msg, _ := json.Marshal(message)
	c := strconv.Itoa(code)
	return &api.Response{Status: code, Header: api.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":` + string(msg) +
			`,"reason":"` + reason + `","code":` + c + "}\n")}
}

func controlJSON(code int, v any) *api.Response {
	b, err := json.Marshal(v)
	if err != nil {
		return ControlStatus(500, "InternalError", err.Error())
	}
	return &api.Response{Status: code, Header: api.Header{"Content-Type": {"application/json"}}, Body: append(b, '\n')}
}

func methodNotAllowed(req *api.Request, allow string) *api.Response {
	r := ControlStatus(405, "MethodNotAllowed", req.Method+" is not supported on "+req.Path+" (use "+allow+")")
	r.Header.Set("Allow", allow)
	return r
}

// serveSettings: GET reads the settings; PATCH changes those it names
// (a JSON merge patch) and answers all of them. PUT is taken as PATCH, for
// clients that cannot send one: settings it does not name keep their
// values. Changing them is the teacher's: a student gets 403.
func (s *Session) serveSettings(ctx context.Context, req *api.Request) *api.Response {
	switch req.Method {
	case "GET", "HEAD":
		return controlJSON(200, s.Settings())
	case "PATCH", "PUT":
	default:
		return methodNotAllowed(req, "GET, PATCH, PUT")
	}
	if p := api.PrincipalFrom(ctx); p.Role != api.RoleTeacher {
		return ControlStatus(403, "Forbidden", p.Role.String()+" "+strconv.Quote(p.ID)+" cannot change the session's settings: only the teacher can")
	}
	if mt := api.MediaType(req.Header.Get("Content-Type")); mt != "" && mt != "application/json" && mt != "application/merge-patch+json" {
		return ControlStatus(415, "UnsupportedMediaType", "the settings take application/merge-patch+json or application/json, not "+mt)
	}
	next, err := s.UpdateSettings(func(cur Settings) (Settings, error) { return cur.Merge(req.Body) })
	if err != nil {
		return ControlStatus(422, "Invalid", err.Error())
	}
	return controlJSON(200, next)
}

// MaxExchangesPage bounds one answer of /rvplay/v1/exchanges.
const MaxExchangesPage = 1000

// serveExchanges answers the record: ?since=<seq> (after that one),
// ?principal=<id> (one person's), ?limit=<n>. A student sees only their
// own exchanges, whatever they ask.
func (s *Session) serveExchanges(ctx context.Context, req *api.Request) *api.Response {
	if req.Method != "GET" && req.Method != "HEAD" {
		return methodNotAllowed(req, "GET")
	}
	p := api.PrincipalFrom(ctx)
	if p.Role == api.RoleAnonymous {
		return ControlStatus(401, "Unauthorized", "Unauthorized")
	}
	q := req.Query
	var since uint64
	if v := q.Get("since"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return ControlStatus(400, "BadRequest", "since="+strconv.Quote(v)+": a sequence number")
		}
		since = n
	}
	limit := MaxExchangesPage
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return ControlStatus(400, "BadRequest", "limit="+strconv.Quote(v)+": a positive number")
		}
		limit = min(n, MaxExchangesPage)
	}
	f := Filter{Principal: q.Get("principal")}
	if p.Role != api.RoleTeacher {
		f.Principal = p.ID
	}
	items, last := s.Record.Since(since, f, limit)
	if items == nil {
		items = []Exchange{}
	}
	return controlJSON(200, map[string]any{"kind": "ExchangeList", "items": items, "last": last, "oldest": s.Record.OldestOf(f.Principal)})
}
