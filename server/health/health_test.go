package health

import (
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func serve(e *Endpoint, target string) (int, string) {
	w := httptest.NewRecorder()
	e.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
	return w.Code, w.Body.String()
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// The answers of kube-apiserver's healthz handler, check by check.
func TestEndpointsAnswerAsKubeAPIServers(t *testing.T) {
	bad := Check{Name: "bad", Check: func(*http.Request) error { return errors.New("this will fail") }}
	for _, tc := range []struct {
		target  string
		withBad bool
		code    int
		body    string
	}{
		{"/readyz", false, 200, "ok"},
		{"/readyz?verbose", false, 200, "[+]ping ok\nreadyz check passed\n"},
		{"/readyz?exclude=dontexist", false, 200, "ok"},
		{"/readyz?exclude=bad", true, 200, "ok"},
		{"/readyz?verbose=true&exclude=bad", true, 200, "[+]ping ok\n[+]bad excluded: ok\nreadyz check passed\n"},
		{"/readyz?verbose=true&exclude=dontexist", false, 200, "[+]ping ok\nwarn: some health checks cannot be excluded: no matches for \"dontexist\"\nreadyz check passed\n"},
		{"/readyz/ping", false, 200, "ok"},
		{"/readyz?verbose", true, 500, "[+]ping ok\n[-]bad failed: reason withheld\nreadyz check failed\n"},
		{"/readyz", true, 500, "[+]ping ok\n[-]bad failed: reason withheld\nreadyz check failed\n"},
		{"/readyz/ping", true, 200, "ok"},
		{"/readyz/bad", true, 500, "internal server error: this will fail\n"},
		{"/readyz/nosuch", false, 404, "404 page not found\n"},
	} {
		e := &Endpoint{Name: "readyz", Checks: []Check{Ping}, Log: quiet}
		if tc.withBad {
			e.Checks = append(e.Checks, bad)
		}
		code, body := serve(e, tc.target)
		if code != tc.code || body != tc.body {
			t.Errorf("%s (bad check %v): %d %q, want %d %q", tc.target, tc.withBad, code, body, tc.code, tc.body)
		}
	}
}

func TestReadinessFailsOnceShutdownBegins(t *testing.T) {
	var s Shutdown
	e := &Endpoint{Name: "readyz", Checks: []Check{Ping, s.Check()}, Log: quiet}
	if code, body := serve(e, "/readyz?verbose"); code != 200 || body != "[+]ping ok\n[+]shutdown ok\nreadyz check passed\n" {
		t.Fatalf("before: %d %q", code, body)
	}
	s.Begin()
	if code, body := serve(e, "/readyz"); code != 500 || body != "[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n" {
		t.Fatalf("after: %d %q", code, body)
	}
	if code, body := serve(e, "/readyz/shutdown"); code != 500 || body != "internal server error: process is shutting down\n" {
		t.Fatalf("the check alone: %d %q", code, body)
	}
}

func TestAFailedChecksReasonIsLogged(t *testing.T) {
	var log strings.Builder
	e := &Endpoint{Name: "livez", Log: slog.New(slog.NewTextHandler(&log, nil)), Checks: []Check{
		{Name: "database", Check: func(*http.Request) error { return errors.New("sqlite: database is closed") }}}}
	serve(e, "/livez")
	if !strings.Contains(log.String(), `msg="livez check failed" check=database err="sqlite: database is closed"`) {
		t.Fatalf("log: %s", log.String())
	}
}
