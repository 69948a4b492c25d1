package main

import (
	"log/slog"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/health"
	"github.com/rvplay/rvplay/server/metrics"
	"github.com/rvplay/rvplay/server/ratelimit"
	"github.com/rvplay/rvplay/server/telemetry"
)

// operations are what the server adds to the sessions to be operated: its
// health, its metrics, its per-client rate limit and its logs. The zero
// value has health endpoints that only ping, no metrics and no limit.
type operations struct {
	// Metrics, if set, takes every request's outcome and is served at
	// /metrics.
	Metrics *metrics.Metrics
	// Limiter, if set, is the per-client rate limit of the sessions' API.
	Limiter *ratelimit.Limiter
	// LimitLoopback applies Limiter to requests from a loopback address
	// that carry no session token too: without it, the operator's own
	// tools, tests and benchmarks on the server's machine are not held
	// back (a person with a token always is).
	LimitLoopback bool
	// Checks are the health checks beside ping, in /healthz, /livez and
	// /readyz alike (the database's).
	Checks []health.Check
	// Shutdown, if set, fails /readyz once the server shuts down.
	Shutdown *health.Shutdown
	// Logger takes each request's outcome; nil: slog.Default().
	Logger *slog.Logger
	// Wrap, if set, wraps the routes inside the telemetry, so that what
	// it refuses is logged and counted too (the transport's origin guard).
	Wrap func(http.Handler) http.Handler
}

// anonymousLoopback reports a request from this machine that names no
// person of a guarded session, given its client (telemetry.ClientOf): a
// person's is "<session>/<id>", which is no address, anyone else's their
// address, read here without a look at the request again.
func anonymousLoopback(client string) bool {
	ip, err := netip.ParseAddr(client) // no allocation, unlike net.ParseIP
	return err == nil && ip.Unmap().IsLoopback()
}

// routes wires the server's paths:
//
//	/healthz, /livez, /readyz   kube-apiserver's health endpoints (package health)
//	/metrics                    Prometheus metrics (package metrics)
//	/sessions, /s/…             the classroom: sessions and their APIs (package classroom)
//	/, /lab, /static/           pages and assets (pages; nil: none)
//
// Every request goes through package telemetry, which names it for the
// logs and the metrics.
func routes(reg *classroom.Registry, pages http.Handler, ops operations) http.Handler {
	sessions := &classroom.Handler{Registry: reg, Web: pages}
	if ops.Limiter != nil {
		sessions.Admit = func(r *http.Request, client string) (time.Duration, bool) {
			if !ops.LimitLoopback && anonymousLoopback(client) {
				return 0, true
			}
			wait, ok := ops.Limiter.Allow(client)
			if !ok && ops.Metrics != nil {
				ops.Metrics.RateLimited(protocolOf(r))
			}
			return wait, ok
		}
	}
	checks := append([]health.Check{health.Ping}, ops.Checks...)
	ready := checks
	if ops.Shutdown != nil {
		ready = append(append([]health.Check(nil), checks...), ops.Shutdown.Check())
	}
	endpoints := map[string]*health.Endpoint{
		"healthz": {Name: "healthz", Checks: checks, Log: ops.Logger},
		"livez":   {Name: "livez", Checks: checks, Log: ops.Logger},
		"readyz":  {Name: "readyz", Checks: ready, Log: ops.Logger},
	}
	var metricsHandler http.Handler
	var recorder telemetry.Recorder
	if ops.Metrics != nil {
		metricsHandler = ops.Metrics.Handler()
		recorder = ops.Metrics
	}
	logger := ops.Logger
	if logger == nil {
		logger = slog.Default()
	}
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		first, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
		switch {
		case endpoints[first] != nil:
			endpoints[first].ServeHTTP(w, r)
		case p == "/metrics" && metricsHandler != nil:
			metricsHandler.ServeHTTP(w, r)
		case p == "/sessions" || strings.HasPrefix(p, "/s/"):
			sessions.ServeHTTP(w, r)
		case pages != nil:
			pages.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
	var h http.Handler = mux
	if ops.Wrap != nil {
		h = ops.Wrap(h)
	}
	return telemetry.Handler(h, recorder, logger)
}
