// Package metrics is the server's Prometheus metrics, all named rvplay_...,
// served at /metrics in Prometheus' text format through the Prometheus Go
// client (github.com/prometheus/client_golang). It is for the server only:
// the engine and the WebAssembly build never import it; engine/sqlite
// reports its commits through a plain callback (sqlite.Options.OnCommit)
// that Metrics.ObserveCommit fills in.
//
// Labels take values from small fixed sets (a protocol, a verb, an HTTP
// status code), never from what clients send: no session names, paths or
// people, so no client can make the metrics grow.
package metrics

import (
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sources are the counts the metrics read when scraped.
type Sources struct {
	// Sessions returns how many sessions exist and how many are loaded.
	Sessions func() (existing, loaded int)
	// Watchers returns the watchers open now, by protocol.
	Watchers func() map[string]int
}

// Metrics holds the server's collectors.
type Metrics struct {
	reg *prometheus.Registry

	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	eventsSent  *prometheus.CounterVec
	slowClosed  *prometheus.CounterVec
	behind      *prometheus.CounterVec
	commitBatch prometheus.Histogram
	commitTime  prometheus.Histogram

	// series are the requests' series already resolved, by their labels:
	// a request looks its two series up in one map read, without a lock,
	// instead of having both vectors hash and check its label values
	// (ObserveRequest runs on every request). The map is replaced, never
	// changed, when a new combination of labels appears (seriesMu).
	series   atomic.Pointer[map[requestLabels]requestSeries]
	seriesMu sync.Mutex
}

// requestLabels are the labels of a request's series.
type requestLabels struct {
	protocol, verb string
	code           int
}

// requestSeries are a request's count and latency.
type requestSeries struct {
	count   prometheus.Counter
	latency prometheus.Observer
}

// New returns the metrics, registered in a registry of their own together
// with the Go runtime's and the process's collectors.
func New(src Sources) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rvplay_http_requests_total",
			Help: "HTTP requests served, by protocol (kube, etcd, rvplay, classroom, web, health, metrics), verb (kube-apiserver's GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION; the etcd gateway's RPC) and status code (101 for a WebSocket).",
		}, []string{"protocol", "verb", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "rvplay_http_request_duration_seconds",
			Help: "How long HTTP requests took, by protocol and verb; a watch lasts as long as its stream.",
			// kube-apiserver's buckets for apiserver_request_duration_seconds.
			Buckets: []float64{0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2, 3,
				4, 5, 6, 8, 10, 15, 20, 30, 45, 60},
		}, []string{"protocol", "verb"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rvplay_rate_limited_requests_total",
			Help: "Requests refused with 429 because their client exceeded its rate (--client-qps, --client-burst), by protocol.",
		}, []string{"protocol"}),
		eventsSent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rvplay_watch_events_sent_total",
			Help: "Watch messages written to clients, by protocol: on kube one event each; on etcd one WatchResponse each (created, canceled, progress, or the events of one or more revisions).",
		}, []string{"protocol"}),
		behind: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rvplay_watch_streams_behind_total",
			Help: "Times a watch message found its WebSocket client's buffer full (the client is behind: an etcd stream waits for it, a Kubernetes watch is closed if it stays so), by protocol.",
		}, []string{"protocol"}),
		slowClosed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "rvplay_watchers_closed_slow_total",
			Help: "Watch streams closed because their client did not keep up (kube-apiserver's apiserver_terminated_watchers_total), by protocol.",
		}, []string{"protocol"}),
		commitBatch: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rvplay_sqlite_commit_batch_requests",
			Help:    "Write requests (the commits of sessions' revisions, session changes) that shared one SQLite transaction (group commit).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128, 256},
		}),
		commitTime: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "rvplay_sqlite_commit_duration_seconds",
			Help:    "How long one SQLite group commit took, from BEGIN to the end of COMMIT (its fsync included).",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16), // 100 µs to about 3.3 s
		}),
	}
	m.reg.MustRegister(m.requests, m.latency, m.rateLimited, m.eventsSent, m.behind, m.slowClosed, m.commitBatch, m.commitTime,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if src.Sessions != nil {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "rvplay_sessions",
				Help: "Sessions this server holds, loaded or not.",
			}, func() float64 { n, _ := src.Sessions(); return float64(n) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{
				Name: "rvplay_sessions_loaded",
				Help: "Sessions loaded now (their store and index in memory).",
			}, func() float64 { _, n := src.Sessions(); return float64(n) }))
	}
	if src.Watchers != nil {
		m.reg.MustRegister(&watchers{count: src.Watchers, desc: prometheus.NewDesc("rvplay_watchers",
			"Watchers open now, by protocol (an etcd watch stream holds one per watch it created).", []string{"protocol"}, nil)})
	}
	return m
}

// Handler serves the metrics in Prometheus' exposition format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry is where the metrics are registered (tests gather it).
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// ObserveRequest counts a request that ended (telemetry.Recorder).
func (m *Metrics) ObserveRequest(protocol, verb string, code int, elapsed time.Duration) {
	s := m.requestSeries(requestLabels{protocol, verb, code})
	s.count.Inc()
	s.latency.Observe(elapsed.Seconds())
}

// requestSeries returns the series of a request labelled l, resolving
// them the first time. The labels come from small fixed sets (the package
// doc), so the map stays small.
func (m *Metrics) requestSeries(l requestLabels) requestSeries {
	if known := m.series.Load(); known != nil {
		if s, ok := (*known)[l]; ok {
			return s
		}
	}
	m.seriesMu.Lock()
	defer m.seriesMu.Unlock()
	next := map[requestLabels]requestSeries{}
	if known := m.series.Load(); known != nil {
		if s, ok := (*known)[l]; ok {
			return s
		}
		maps.Copy(next, *known)
	}
	s := requestSeries{
		count:   m.requests.WithLabelValues(l.protocol, l.verb, codeLabel(l.code)),
		latency: m.latency.WithLabelValues(l.protocol, l.verb),
	}
	next[l] = s
	m.series.Store(&next)
	return s
}

// codeLabels are the labels of the usual status codes, made once: a
// request's code would otherwise be formatted anew on every request.
var codeLabels = func() map[int]string {
	m := map[int]string{}
	for _, c := range []int{200, 201, 204, 400, 401, 403, 404, 409, 410, 413, 422, 429, 500, 503, 504} {
		m[c] = strconv.Itoa(c)
	}
	return m
}()

func codeLabel(code int) string {
	if s, ok := codeLabels[code]; ok {
		return s
	}
	return strconv.Itoa(code)
}

// RateLimited counts a request refused for its client's rate.
func (m *Metrics) RateLimited(protocol string) { m.rateLimited.WithLabelValues(protocol).Inc() }

// EventsSent counts n watch messages written to a client.
func (m *Metrics) EventsSent(protocol string, n int) {
	m.eventsSent.WithLabelValues(protocol).Add(float64(n))
}

// StreamBehind counts a watch message that found its client's buffer full.
func (m *Metrics) StreamBehind(protocol string) { m.behind.WithLabelValues(protocol).Inc() }

// SlowWatcherClosed counts a watch stream closed for its slow client.
func (m *Metrics) SlowWatcherClosed(protocol string) { m.slowClosed.WithLabelValues(protocol).Inc() }

// ObserveCommit records one SQLite group commit (sqlite.Options.OnCommit).
func (m *Metrics) ObserveCommit(requests int, elapsed time.Duration) {
	m.commitBatch.Observe(float64(requests))
	m.commitTime.Observe(elapsed.Seconds())
}

// watchers reports the watchers by protocol, read when scraped.
type watchers struct {
	count func() map[string]int
	desc  *prometheus.Desc
}

func (w *watchers) Describe(ch chan<- *prometheus.Desc) { ch <- w.desc }

func (w *watchers) Collect(ch chan<- prometheus.Metric) {
	for protocol, n := range w.count() {
		ch <- prometheus.MustNewConstMetric(w.desc, prometheus.GaugeValue, float64(n), protocol)
	}
}
