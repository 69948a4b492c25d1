package classroom

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/server/telemetry"
)

var t0 = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

// env is a registry on a real SQLite file behind a real HTTP server, with
// a fake clock, and a record of who reached the Kubernetes API.
type env struct {
	t     testing.TB
	db    *sqlite.DB
	path  string
	reg   *Registry
	srv   *httptest.Server
	clock *clock.Fake

	mu   sync.Mutex
	seen []api.Principal // principals the Kubernetes API served, in order

	// admit is the Handler's Admit (a rate limit), if set before open.
	admit func(r *http.Request, client string) (time.Duration, bool)
}

func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	e := &env{t: t, path: filepath.Join(t.TempDir(), "rvplay.db"), clock: clock.NewFake(t0)}
	e.open(opts)
	return e
}

// open (re)opens the database and the registry on e.path, as a server
// start does.
func (e *env) open(opts Options) {
	t := e.t
	t.Helper()
	db, err := sqlite.OpenWithOptions(e.path, sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Clock == nil {
		opts.Clock = e.clock
	}
	if opts.Session.Kube == nil {
		opts.Session.Kube = func(name string, store mvcc.KV) api.Handler {
			k := kubeapi.ForSession(name, store)
			return api.HandlerFunc(func(ctx context.Context, req *api.Request) *api.Response {
				e.mu.Lock()
				e.seen = append(e.seen, api.PrincipalFrom(ctx))
				e.mu.Unlock()
				return k.Serve(ctx, req)
			})
		}
	}
	reg, err := New(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	pages := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "lab page "+r.URL.Path) })
	// As in the server, package telemetry follows each request, so that
	// the handler can name its session, principal and client.
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(telemetry.Handler(&Handler{Registry: reg, Web: pages, Admit: e.admit}, nil, quiet))
	e.db, e.reg, e.srv = db, reg, srv
	t.Cleanup(e.close)
}

func (e *env) close() {
	if e.srv == nil {
		return
	}
	e.srv.CloseClientConnections()
	e.srv.Close()
	e.reg.Close()
	e.db.Close()
	e.srv = nil
}

// restart closes the server, registry and database and opens them again.
func (e *env) restart(opts Options) {
	e.close()
	e.open(opts)
}

func (e *env) lastPrincipal() api.Principal {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.seen) == 0 {
		e.t.Fatal("the Kubernetes API saw no request")
	}
	return e.seen[len(e.seen)-1]
}

type answer struct {
	status int
	header http.Header
	body   string
}

// cred is how a request authenticates: a bearer token, a cookie, both or
// neither.
type cred struct {
	bearer, cookie string
}

func (e *env) do(method, path string, c cred, body string) answer {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	if c.cookie != "" {
		req.AddCookie(&http.Cookie{Name: CookieName, Value: c.cookie})
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func (e *env) create(name string) Created {
	e.t.Helper()
	body := ""
	if name != "" {
		body = `{"name":"` + name + `"}`
	}
	a := e.do("POST", "/sessions", cred{}, body)
	var c Created
	if err := json.Unmarshal([]byte(a.body), &c); err != nil || a.status != 201 {
		e.t.Fatalf("create %q: %d %s", name, a.status, a.body)
	}
	return c
}

func (e *env) join(c Created, name string) Joined {
	e.t.Helper()
	a := e.do("POST", "/s/"+c.ID+"/join", cred{}, `{"code":"`+c.JoinCode+`","name":"`+name+`"}`)
	var j Joined
	if err := json.Unmarshal([]byte(a.body), &j); err != nil || a.status != 201 {
		e.t.Fatalf("join %s as %q: %d %s", c.ID, name, a.status, a.body)
	}
	return j
}

// must fails unless a has status want and its body contains every part.
func must(t testing.TB, what string, a answer, want int, parts ...string) {
	t.Helper()
	if a.status != want {
		t.Fatalf("%s: %d %s, want %d", what, a.status, a.body, want)
	}
	for _, p := range parts {
		if !strings.Contains(a.body, p) {
			t.Fatalf("%s: %d %s, want %q in it", what, a.status, a.body, p)
		}
	}
}
