package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestTheExpositionNamesEveryMetricRvplay(t *testing.T) {
	m := New(Sources{
		Sessions: func() (int, int) { return 12, 3 },
		Watchers: func() map[string]int { return map[string]int{"kube": 4, "etcd": 7} },
	})
	m.ObserveRequest("kube", "LIST", 200, 30*time.Millisecond)
	m.ObserveRequest("kube", "LIST", 200, 70*time.Millisecond)
	m.ObserveRequest("etcd", "put", 429, time.Millisecond)
	m.RateLimited("etcd")
	m.EventsSent("kube", 1)
	m.EventsSent("kube", 1)
	m.SlowWatcherClosed("kube")
	m.ObserveCommit(5, 2*time.Millisecond)

	want := `
# HELP rvplay_sessions Sessions this server holds, loaded or not.
# TYPE rvplay_sessions gauge
rvplay_sessions 12
# HELP rvplay_sessions_loaded Sessions loaded now (their store and index in memory).
# TYPE rvplay_sessions_loaded gauge
rvplay_sessions_loaded 3
# HELP rvplay_watchers Watchers open now, by protocol (an etcd watch stream holds one per watch it created).
# TYPE rvplay_watchers gauge
rvplay_watchers{protocol="etcd"} 7
rvplay_watchers{protocol="kube"} 4
# HELP rvplay_http_requests_total HTTP requests served, by protocol (kube, etcd, rvplay, classroom, web, health, metrics), verb (kube-apiserver's GET, LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION; the etcd gateway's RPC) and status code (101 for a WebSocket).
# TYPE rvplay_http_requests_total counter
rvplay_http_requests_total{code="200",protocol="kube",verb="LIST"} 2
rvplay_http_requests_total{code="429",protocol="etcd",verb="put"} 1
# HELP rvplay_rate_limited_requests_total Requests refused with 429 because their client exceeded its rate (--client-qps, --client-burst), by protocol.
# TYPE rvplay_rate_limited_requests_total counter
rvplay_rate_limited_requests_total{protocol="etcd"} 1
# HELP rvplay_watch_events_sent_total Watch messages written to clients, by protocol: on kube one event each; on etcd one WatchResponse each (created, canceled, progress, or the events of one or more revisions).
# TYPE rvplay_watch_events_sent_total counter
rvplay_watch_events_sent_total{protocol="kube"} 2
# HELP rvplay_watchers_closed_slow_total Watch streams closed because their client did not keep up (kube-apiserver's apiserver_terminated_watchers_total), by protocol.
# TYPE rvplay_watchers_closed_slow_total counter
rvplay_watchers_closed_slow_total{protocol="kube"} 1
`
	names := []string{"rvplay_sessions", "rvplay_sessions_loaded", "rvplay_watchers", "rvplay_http_requests_total",
		"rvplay_rate_limited_requests_total", "rvplay_watch_events_sent_total", "rvplay_watchers_closed_slow_total"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Fatal(err)
	}
	// Histograms: counts and sums.
	if n := testutil.CollectAndCount(m.latency, "rvplay_http_request_duration_seconds"); n != 2 {
		t.Fatalf("%d latency series, want kube/LIST and etcd/put", n)
	}
	hist := `
# HELP rvplay_sqlite_commit_batch_requests Write requests (the commits of sessions' revisions, session changes) that shared one SQLite transaction (group commit).
# TYPE rvplay_sqlite_commit_batch_requests histogram
rvplay_sqlite_commit_batch_requests_bucket{le="1"} 0
rvplay_sqlite_commit_batch_requests_bucket{le="2"} 0
rvplay_sqlite_commit_batch_requests_bucket{le="4"} 0
rvplay_sqlite_commit_batch_requests_bucket{le="8"} 1
rvplay_sqlite_commit_batch_requests_bucket{le="16"} 1
rvplay_sqlite_commit_batch_requests_bucket{le="32"} 1
rvplay_sqlite_commit_batch_requests_bucket{le="64"} 1
rvplay_sqlite_commit_batch_requests_bucket{le="128"} 1
rvplay_sqlite_commit_batch_requests_bucket{le="256"} 1
rvplay_sqlite_commit_batch_requests_bucket{le="+Inf"} 1
rvplay_sqlite_commit_batch_requests_sum 5
rvplay_sqlite_commit_batch_requests_count 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(hist), "rvplay_sqlite_commit_batch_requests"); err != nil {
		t.Fatal(err)
	}
	latency := `
# HELP rvplay_http_request_duration_seconds How long HTTP requests took, by protocol and verb; a watch lasts as long as its stream.
# TYPE rvplay_http_request_duration_seconds histogram
`
	for _, le := range []string{"0.005", "0.025", "0.05", "0.1", "0.2", "0.4", "0.6", "0.8", "1", "1.25", "1.5", "2", "3", "4", "5", "6", "8", "10", "15", "20", "30", "45", "60", "+Inf"} {
		latency += `rvplay_http_request_duration_seconds_bucket{le="` + le + `",protocol="etcd",verb="put"} 1` + "\n"
	}
	latency += "rvplay_http_request_duration_seconds_sum{protocol=\"etcd\",verb=\"put\"} 0.001\n"
	latency += "rvplay_http_request_duration_seconds_count{protocol=\"etcd\",verb=\"put\"} 1\n"
	etcdOnly := New(Sources{})
	etcdOnly.ObserveRequest("etcd", "put", 200, time.Millisecond)
	if err := testutil.GatherAndCompare(etcdOnly.Registry(), strings.NewReader(latency), "rvplay_http_request_duration_seconds"); err != nil {
		t.Fatal(err)
	}
	// Everything this package registers is rvplay's (the Go runtime's and
	// the process's collectors are the client's own, go_ and process_).
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		n := mf.GetName()
		if !strings.HasPrefix(n, "rvplay_") && !strings.HasPrefix(n, "go_") && !strings.HasPrefix(n, "process_") {
			t.Errorf("metric %s is not named rvplay_...", n)
		}
	}
	problems, err := testutil.GatherAndLint(m.Registry())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "rvplay_") {
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
}

func BenchmarkObserveRequest(b *testing.B) {
	m := New(Sources{})
	for b.Loop() {
		m.ObserveRequest("kube", "GET", 200, time.Millisecond)
	}
}

// A request's series are resolved once and kept (ObserveRequest runs on
// every request): each combination of labels still counts in its own.
func TestEachRequestCountsInTheSeriesOfItsLabels(t *testing.T) {
	m := New(Sources{})
	for range 3 {
		m.ObserveRequest("etcd", "range", 200, time.Millisecond)
	}
	m.ObserveRequest("etcd", "range", 429, time.Millisecond)
	m.ObserveRequest("kube", "GET", 200, 2*time.Second)
	for _, c := range []struct {
		labels []string
		want   float64
	}{
		{[]string{"etcd", "range", "200"}, 3},
		{[]string{"etcd", "range", "429"}, 1},
		{[]string{"kube", "GET", "200"}, 1},
		{[]string{"kube", "GET", "429"}, 0},
	} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(c.labels...)); got != c.want {
			t.Errorf("%v: %v requests, want %v", c.labels, got, c.want)
		}
	}
	if n := testutil.CollectAndCount(m.latency); n != 2 {
		t.Errorf("%d latency series, want 2 (etcd range, kube GET)", n)
	}
}
