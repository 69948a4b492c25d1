package main

import (
	"encoding/base64"
	"flag"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/metrics"
	"github.com/rvplay/rvplay/server/ratelimit"
)

// The server's own cost of one etcd gateway request, without the network
// and on the memory backend: every layer run() puts in front of a session
// (the in-flight count, telemetry, metrics, the origin guard, the body
// deadline, the classroom's admission, the adapter and the session's
// record) around the gateway's range, put and compare-and-swap txn.
// bench/gatewayload measures the same path against a real etcd over HTTP;
// this is where its per-request CPU is found.
func BenchmarkGatewayRequest(b *testing.B) {
	h := benchHandler(b)
	key := base64.StdEncoding.EncodeToString([]byte("/bench/key/000001"))
	value := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("v", 64)))
	put := `{"key":"` + key + `","value":"` + value + `"}`
	serve(b, h, "/s/bench/v3/kv/put", put)
	for _, c := range []struct{ name, path, body string }{
		{"range", "/s/bench/v3/kv/range", `{"key":"` + key + `"}`},
		{"put", "/s/bench/v3/kv/put", put},
		// kube-apiserver's update: put if the key's mod_revision is as
		// read (here a compare that always holds), else read it.
		{"cas", "/s/bench/v3/kv/txn", `{"compare":[{"key":"` + key + `","target":"MOD","result":"GREATER","mod_revision":"0"}],"success":[{"request_put":{"key":"` + key + `","value":"` + value + `"}}],"failure":[{"request_range":{"key":"` + key + `"}}]}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu := processCPU()
			for b.Loop() {
				serve(b, h, c.path, c.body)
			}
			// CPU time, which a busy machine changes less than wall time.
			b.ReportMetric(float64(processCPU()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

func serve(b *testing.B, h http.Handler, path, body string) {
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.RemoteAddr = "127.0.0.1:40000"
	r.Header.Set("Content-Type", "application/json")
	w := deadlineRecorder{httptest.NewRecorder()}
	h.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		b.Fatalf("%s: %d %s", path, w.Code, w.Body)
	}
}

// deadlineRecorder takes deadlines as net/http's own writer does, without
// an error: a recorder's http.ErrNotSupported, wrapped by
// http.ResponseController on every call, would add allocations that a
// served request does not make.
type deadlineRecorder struct{ *httptest.ResponseRecorder }

func (deadlineRecorder) SetReadDeadline(time.Time) error  { return nil }
func (deadlineRecorder) SetWriteDeadline(time.Time) error { return nil }

// processCPU is the CPU time the process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchHandler is run()'s handler with its default flags over one open
// session, "bench", on the memory backend.
func benchHandler(b *testing.B) http.Handler {
	tp := transportFlags(flag.NewFlagSet("bench", flag.PanicOnError))
	watchers := newClientWatchers(2000)
	var reg *classroom.Registry
	m := metrics.New(metrics.Sources{
		Sessions: func() (int, int) { st := reg.Stats(); return st.Sessions, st.Loaded },
		Watchers: watchers.open,
	})
	var opts classroom.Options
	opts.HTTP.WatchLimiter = watchers.limiter
	opts.HTTP.Observe = streamObserver{metrics: m}
	origins, err := tp.apply(&opts)
	if err != nil {
		b.Fatal(err)
	}
	sdb, err := openMemoryData(b)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { sdb.Close() })
	if reg, err = classroom.New(sdb, opts); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { reg.Close() })
	if _, err := reg.CreateOpen("bench"); err != nil {
		b.Fatal(err)
	}
	var writes inFlight
	return routes(reg, nil, operations{
		Metrics: m,
		Limiter: ratelimit.New(ratelimit.Options{Rate: 100, Burst: 500}),
		Wrap:    func(h http.Handler) http.Handler { return writes.track(tp.guard(origins, h)) },
	})
}
