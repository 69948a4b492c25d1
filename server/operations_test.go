package main

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/health"
	"github.com/rvplay/rvplay/server/metrics"
	"github.com/rvplay/rvplay/server/ratelimit"
)

// opsServer is the server as main wires it, on a real SQLite file, with
// its operations: health checks, metrics, rate limits (applied to
// loopback too, as the tests come from there).
type opsServer struct {
	url      string
	db       *sqlite.DB
	metrics  *metrics.Metrics
	shutdown *health.Shutdown
}

func startOps(t *testing.T, limiter *ratelimit.Limiter, sessions ...string) *opsServer {
	t.Helper()
	watchers := newClientWatchers(0)
	var reg *classroom.Registry
	m := metrics.New(metrics.Sources{
		Sessions: func() (int, int) { st := reg.Stats(); return st.Sessions, st.Loaded },
		Watchers: watchers.open,
	})
	db, err := sqlite.OpenWithOptions(tempDB(t), sqlite.Options{Synchronous: sqlite.SyncNormal, OnCommit: m.ObserveCommit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := classroom.Options{Logger: quiet}
	opts.HTTP.WatchLimiter = watchers.limiter
	opts.HTTP.Observe = streamObserver{metrics: m, log: quiet}
	if reg, err = classroom.New(db, opts); err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		reg.CreateOpen(s)
	}
	o := &opsServer{db: db, metrics: m, shutdown: &health.Shutdown{}}
	srv := httptest.NewServer(routes(reg, nil, operations{
		Metrics: m, Limiter: limiter, LimitLoopback: true, Shutdown: o.shutdown, Logger: quiet,
		Checks: []health.Check{{Name: "database", Check: func(r *http.Request) error { return db.Check(r.Context()) }}},
	}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		reg.Close()
	})
	o.url = srv.URL
	return o
}

func TestHealthEndpointsCheckTheDatabaseAndShutdown(t *testing.T) {
	s := startOps(t, nil)
	for path, want := range map[string]string{
		"/healthz":         "ok",
		"/livez":           "ok",
		"/readyz":          "ok",
		"/healthz?verbose": "[+]ping ok\n[+]database ok\nhealthz check passed\n",
		"/livez?verbose":   "[+]ping ok\n[+]database ok\nlivez check passed\n",
		"/readyz?verbose":  "[+]ping ok\n[+]database ok\n[+]shutdown ok\nreadyz check passed\n",
		"/readyz/database": "ok",
	} {
		if a := get(t, s.url+path); a.status != 200 || a.body != want {
			t.Errorf("%s: %d %q, want %q", path, a.status, a.body, want)
		}
	}
	s.shutdown.Begin()
	if a := get(t, s.url+"/readyz"); a.status != 500 || a.body != "[+]ping ok\n[+]database ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n" {
		t.Fatalf("readyz while shutting down: %d %q", a.status, a.body)
	}
	if a := get(t, s.url+"/livez"); a.status != 200 {
		t.Fatalf("livez while shutting down: %d %q", a.status, a.body)
	}
	s.db.Close()
	for _, e := range []string{"healthz", "livez", "readyz"} {
		if a := get(t, s.url+"/"+e); a.status != 500 || !strings.Contains(a.body, "[-]database failed: reason withheld\n") {
			t.Errorf("%s with the database closed: %d %q", e, a.status, a.body)
		}
	}
	if a := get(t, s.url+"/readyz/database"); a.status != 500 || a.body != "internal server error: sqlite: database is closed\n" {
		t.Fatalf("the database check alone: %d %q", a.status, a.body)
	}
}

func TestMetricsCountRequestsWatchersAndRateLimits(t *testing.T) {
	s := startOps(t, ratelimit.New(ratelimit.Options{Rate: 1, Burst: 4}), "demo")
	base := s.url + "/s/demo"
	if a := get(t, base+"/api/v1/namespaces/default/configmaps"); a.status != 200 {
		t.Fatalf("list: %d %s", a.status, a.body)
	}
	post(t, base+"/v3/kv/put", `{"key":"YQ==","value":"MQ=="}`)
	w, err := http.Get(base + "/api/v1/namespaces/default/configmaps?watch=1")
	if err != nil || w.StatusCode != 200 {
		t.Fatalf("watch: %v %v", w, err)
	}
	defer w.Body.Close()
	etcd := openWatch(t, base+"/v3/watch", `{"create_request":{"key":"YQ=="}}`)
	etcd.next()
	// The burst of 4 is spent: the fifth request is shed.
	if a := post(t, base+"/v3/kv/put", `{"key":"YQ==","value":"Mg=="}`); a.status != 429 {
		t.Fatalf("fifth request: %d %s", a.status, a.body)
	}

	reg := s.metrics.Registry()
	for _, c := range []struct {
		name, want string
	}{
		{"rvplay_http_requests_total", `
# HELP rvplay_http_requests_total HTTP requests served, by protocol (kube, etcd, rvplay, classroom, web, health, metrics), verb (kube-apiserver's GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION; the etcd gateway's RPC) and status code (101 for a WebSocket).
# TYPE rvplay_http_requests_total counter
rvplay_http_requests_total{code="200",protocol="etcd",verb="put"} 1
rvplay_http_requests_total{code="200",protocol="kube",verb="LIST"} 1
rvplay_http_requests_total{code="429",protocol="etcd",verb="put"} 1
`},
		{"rvplay_watchers", `
# HELP rvplay_watchers Watchers open now, by protocol (an etcd watch stream holds one per watch it created).
# TYPE rvplay_watchers gauge
rvplay_watchers{protocol="etcd"} 1
rvplay_watchers{protocol="kube"} 1
`},
		{"rvplay_rate_limited_requests_total", `
# HELP rvplay_rate_limited_requests_total Requests refused with 429 because their client exceeded its rate (--client-qps, --client-burst), by protocol.
# TYPE rvplay_rate_limited_requests_total counter
rvplay_rate_limited_requests_total{protocol="etcd"} 1
`},
		{"rvplay_sessions_loaded", `
# HELP rvplay_sessions_loaded Sessions loaded now (their store and index in memory).
# TYPE rvplay_sessions_loaded gauge
rvplay_sessions_loaded 1
`},
	} {
		if err := testutil.GatherAndCompare(reg, strings.NewReader(c.want), c.name); err != nil {
			t.Error(err)
		}
	}
	// /metrics serves the same in Prometheus' text format.
	a := get(t, s.url+"/metrics")
	for _, want := range []string{
		"rvplay_sessions 1\n",
		`rvplay_watch_events_sent_total{protocol="etcd"} 1` + "\n", // the created response
		`rvplay_http_requests_total{code="200",protocol="kube",verb="LIST"} 1` + "\n",
		"rvplay_sqlite_commit_duration_seconds_bucket{",
	} {
		if a.status != 200 || !strings.Contains(a.body, want) {
			t.Fatalf("/metrics lacks %q: %d\n%s", want, a.status, a.body)
		}
	}
	// The session's creation and the put were committed, and reported.
	if strings.Contains(a.body, "rvplay_sqlite_commit_batch_requests_count 0\n") || !strings.Contains(a.body, "rvplay_sqlite_commit_batch_requests_count ") {
		t.Fatalf("no SQLite commit reported:\n%s", a.body)
	}
}

// Without --rate-limit-loopback, this machine's own tools (a request from
// loopback without a session token) are not held to --client-qps; a
// person of a guarded session is, from loopback too.
func TestTheRateLimitSparesAnonymousLoopbackOnly(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	db, err := sqlite.OpenWithOptions(tempDB(t), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	reg, err := classroom.New(memoryData{db}, classroom.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(reg.Close)
	reg.CreateOpen("open")
	class, err := reg.CreateGuarded("class")
	if err != nil {
		t.Fatal(err)
	}
	student, err := reg.Join(context.Background(), "class", class.JoinCode, "ada")
	if err != nil {
		t.Fatal(err)
	}
	limiter := ratelimit.New(ratelimit.Options{Rate: 0.001, Burst: 1})
	srv := httptest.NewServer(routes(reg, nil, operations{Limiter: limiter, Logger: quiet}))
	t.Cleanup(srv.Close)
	put := `{"key":"YQ==","value":"Yg=="}`
	for i := range 3 {
		if a := post(t, srv.URL+"/s/open/v3/kv/put", put); a.status != 200 {
			t.Fatalf("anonymous put %d from loopback: %d %s", i, a.status, a.body)
		}
	}
	send := func() int {
		r, _ := http.NewRequest("POST", srv.URL+"/s/class/v3/kv/put", strings.NewReader(`{"key":"L2Fk","value":"Yg=="}`))
		r.Header.Set("Authorization", "Bearer "+student.Token)
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := send(); code != 200 {
		t.Fatalf("the student's first put: %d", code)
	}
	if code := send(); code != 429 {
		t.Fatalf("the student's second put, beyond the burst: %d, want 429", code)
	}
}
