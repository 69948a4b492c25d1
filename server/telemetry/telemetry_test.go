package telemetry

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/internal/proctest"
)

func TestRequestsAreNamedByProtocolAndVerb(t *testing.T) {
	for _, tc := range []struct {
		method, target, contentType string
		protocol, verb              string
	}{
		{"GET", "/healthz", "", "health", "GET"},
		{"GET", "/readyz/shutdown", "", "health", "GET"},
		{"GET", "/metrics", "", "metrics", "GET"},
		{"POST", "/sessions", "", "classroom", "POST"},
		{"POST", "/s/c1/join", "", "classroom", "POST"},
		{"POST", "/s/c1/sign-in", "", "classroom", "POST"},
		{"GET", "/s/c1/kubeconfig", "", "classroom", "GET"},
		{"DELETE", "/s/c1", "", "classroom", "DELETE"},
		{"POST", "/s/c1/rvplay/v1/reset", "", "classroom", "POST"},
		{"GET", "/s/c1/", "", "web", "GET"},
		{"GET", "/s/c1/dashboard", "", "web", "GET"},
		{"GET", "/static/js/lab.js", "", "web", "GET"},
		{"POST", "/s/c1/v3/kv/range", "", "etcd", "range"},
		{"POST", "/s/c1/v3beta/kv/put", "", "etcd", "put"},
		{"POST", "/s/c1/v3/watch", "", "etcd", "watch"},
		{"POST", "/s/c1/v3/maintenance/status", "", "etcd", "status"},
		{"POST", "/s/c1/v3/kv/anything-a-client-makes-up", "", "etcd", "other"},
		{"GET", "/s/c1/rvplay/v1/settings", "", "rvplay", "GET"},
		{"GET", "/s/c1/api/v1/namespaces/default/configmaps", "", "kube", "LIST"},
		{"GET", "/s/c1/api/v1/namespaces/default/configmaps?watch=1", "", "kube", "WATCH"},
		{"GET", "/s/c1/api/v1/namespaces/default/configmaps?watch=false", "", "kube", "LIST"},
		{"GET", "/s/c1/api/v1/watch/namespaces/default/configmaps", "", "kube", "WATCH"},
		{"GET", "/s/c1/api/v1/namespaces/default/configmaps/x", "", "kube", "GET"},
		{"GET", "/s/c1/api/v1/namespaces", "", "kube", "LIST"},
		{"GET", "/s/c1/api/v1/namespaces/default", "", "kube", "GET"},
		{"PUT", "/s/c1/api/v1/namespaces/default/status", "", "kube", "PUT"},
		{"GET", "/s/c1/apis/apps/v1/deployments", "", "kube", "LIST"},
		{"POST", "/s/c1/apis/apps/v1/namespaces/default/deployments", "", "kube", "POST"},
		{"PATCH", "/s/c1/apis/apps/v1/namespaces/default/deployments/d", "application/merge-patch+json", "kube", "PATCH"},
		{"PATCH", "/s/c1/apis/apps/v1/namespaces/default/deployments/d", "application/apply-patch+yaml", "kube", "APPLY"},
		{"PUT", "/s/c1/apis/apps/v1/namespaces/default/deployments/d/scale", "", "kube", "PUT"},
		{"DELETE", "/s/c1/api/v1/namespaces/default/configmaps", "", "kube", "DELETECOLLECTION"},
		{"DELETE", "/s/c1/api/v1/namespaces/default/configmaps/x", "", "kube", "DELETE"},
		{"GET", "/s/c1/api", "", "kube", "GET"},
		{"GET", "/s/c1/version", "", "kube", "GET"},
		{"BREW", "/s/c1/api/v1/pods", "", "kube", "other"},
	} {
		r := httptest.NewRequest(tc.method, tc.target, nil)
		if tc.contentType != "" {
			r.Header.Set("Content-Type", tc.contentType)
		}
		if p, v := Classify(r); p != tc.protocol || v != tc.verb {
			t.Errorf("%s %s: %s %s, want %s %s", tc.method, tc.target, p, v, tc.protocol, tc.verb)
		}
	}
}

type recorded struct {
	protocol, verb string
	code           int
}

// recorder hands on each outcome as the handler records it.
type recorder struct{ ch chan recorded }

func newRecorder() *recorder { return &recorder{ch: make(chan recorded, 16)} }

func (r *recorder) ObserveRequest(protocol, verb string, code int, _ time.Duration) {
	r.ch <- recorded{protocol, verb, code}
}

func (r *recorder) next(t *testing.T) recorded {
	t.Helper()
	select {
	case got := <-r.ch:
		return got
	case <-time.After(10 * time.Second):
		t.Fatal("no request recorded within 10s")
	}
	return recorded{}
}

// A refused request is logged with the session and the principal that a
// later handler (package classroom) learned, never with the token.
func TestARefusedRequestIsLoggedWithItsSessionAndPrincipal(t *testing.T) {
	var logs proctest.Output
	rec := newRecorder()
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri := From(r.Context())
		ri.Session, ri.Principal, ri.Client = "class-1", "ada-x3k9q", "class-1/ada-x3k9q"
		http.Error(w, "forbidden", http.StatusForbidden)
	}), rec, log)
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, _ := http.NewRequest("POST", srv.URL+"/s/class-1/rvplay/v1/reset", nil)
	req.Header.Set("Authorization", "Bearer s3cr3t-token")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := rec.next(t); got != (recorded{"classroom", "POST", 403}) {
		t.Fatalf("recorded %+v", got)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(logs.String()), &line); err != nil {
		t.Fatalf("log %q: %v", logs.String(), err)
	}
	for k, want := range map[string]any{"level": "INFO", "msg": "request refused", "session": "class-1", "principal": "ada-x3k9q",
		"code": float64(403), "method": "POST", "path": "/s/class-1/rvplay/v1/reset", "protocol": "classroom", "remote": "127.0.0.1"} {
		if line[k] != want {
			t.Errorf("log %s = %v, want %v", k, line[k], want)
		}
	}
	if strings.Contains(logs.String(), "s3cr3t") {
		t.Fatalf("the token is in the log: %s", logs.String())
	}
}

func TestFailuresAreErrorsAndSuccessesOnlyDebug(t *testing.T) {
	var logs proctest.Output
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}), nil, slog.New(slog.NewTextHandler(&logs, nil)))
	for _, p := range []string{"/ok", "/fail"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", p, nil))
	}
	if out := logs.String(); strings.Contains(out, "path=/ok") || !strings.Contains(out, `level=ERROR msg="request failed"`) {
		t.Fatalf("logs at info: %s", out)
	}
}

// A WebSocket upgrade is counted as the 101 gorilla/websocket writes on the
// hijacked connection, and streaming writers keep Flush.
func TestUpgradesAndStreamsKeepWorkingThroughTheHandler(t *testing.T) {
	rec := newRecorder()
	up := websocket.Upgrader{}
	quiet := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/stream" {
			w.Write([]byte("a\n"))
			http.NewResponseController(w).Flush()
			return
		}
		c, err := up.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		c.WriteMessage(websocket.TextMessage, []byte("hi"))
		c.Close()
	}), rec, quiet)
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/s/c/api/v1/pods?watch=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, m, err := c.ReadMessage(); err != nil || string(m) != "hi" {
		t.Fatalf("message %q %v", m, err)
	}
	c.Close()
	resp, err := http.Get(srv.URL + "/stream")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	got := map[recorded]bool{rec.next(t): true, rec.next(t): true}
	if !got[recorded{"kube", "WATCH", 101}] || !got[recorded{"web", "GET", 200}] {
		t.Fatalf("recorded %v, want the WebSocket's 101 and the stream's 200", got)
	}
}

type nopRecorder struct{}

func (nopRecorder) ObserveRequest(string, string, int, time.Duration) {}

// Handler wraps every request: its cost is the server's per-request
// overhead for the logs and the metrics.
func BenchmarkHandler(b *testing.B) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil)) // info: a success is not logged
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri := From(r.Context())
		ri.Session, ri.Principal = "class-1", "ada-x3k9q"
	}), nopRecorder{}, log)
	r := httptest.NewRequest("GET", "/s/class-1/api/v1/namespaces/default/configmaps/x", nil)
	w := httptest.NewRecorder()
	for b.Loop() {
		h.ServeHTTP(w, r)
	}
}

// Classify runs several times on every request (telemetry, the in-flight
// count, the watch limits): naming a session's etcd request copies
// nothing.
func TestClassifyAllocatesNothing(t *testing.T) {
	for _, path := range []string{"/s/class-1/v3/kv/range", "/s/class-1/v3/kv/txn", "/s/class-1"} {
		r := httptest.NewRequest("POST", path, nil)
		if n := testing.AllocsPerRun(100, func() { Classify(r) }); n != 0 {
			t.Errorf("Classify(%s): %v allocations", path, n)
		}
	}
}

// What the handler adds to every request (its Request in the context, the
// writer noting its status, the request's copy with that context) is one
// allocation: a context value, a Request, a writer and the copy apart were
// four.
func TestFollowingARequestAllocatesOnce(t *testing.T) {
	var seen *Request
	h := Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = From(r.Context())
		w.WriteHeader(http.StatusNoContent)
	}), nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r := httptest.NewRequest("POST", "/s/class-1/v3/kv/range", nil)
	var w discardWriter
	if n := testing.AllocsPerRun(100, func() { h.ServeHTTP(w, r) }); n > 1 {
		t.Errorf("%v allocations a request, want 1", n)
	}
	if seen == nil || seen.Protocol != ProtocolEtcd || seen.Verb != "range" {
		t.Errorf("the handler saw %+v", seen)
	}
}

// discardWriter is a ResponseWriter that keeps nothing (httptest's
// recorder allocates on its own).
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}
