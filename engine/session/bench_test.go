package session

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// BenchmarkRESTUpdate is kubeapi's BenchmarkRESTUpdate (a client's GET,
// then PUT with its resourceVersion) through the session, which records
// both exchanges, beside the same through the session's Kubernetes handler
// alone: the difference is the record's cost on the hot path.
func BenchmarkRESTUpdate(b *testing.B) {
	for _, via := range []string{"session", "kube-handler"} {
		b.Run(via, func(b *testing.B) {
			s, err := New("bench", mvcc.NewMemoryBackend(), Options{NoControllers: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			h := api.Handler(s)
			if via == "kube-handler" {
				h = s.Kube
			}
			do := func(method, path string, body []byte) *api.Response {
				hdr := api.Header{"Accept": {"application/json"}, "User-Agent": {"bench/rvplay-lab"}}
				if body != nil {
					hdr["Content-Type"] = []string{"application/json"}
				}
				return h.Serve(context.Background(), &api.Request{Method: method, Path: path, Header: hdr, Body: body})
			}
			do("POST", "/api/v1/namespaces/default/configmaps", []byte(`{"metadata":{"name":"c"},"data":{"n":"0"}}`))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				g := do("GET", "/api/v1/namespaces/default/configmaps/c", nil)
				var o map[string]any
				json.Unmarshal(g.Body, &o)
				o["data"] = map[string]any{"n": fmt.Sprint(i)}
				body, _ := json.Marshal(o)
				if r := do("PUT", "/api/v1/namespaces/default/configmaps/c", body); r.Status != 200 {
					b.Fatalf("%d %s", r.Status, r.Body)
				}
			}
		})
	}
}

// BenchmarkRecordExchange is the record's own cost for one REST update:
// what Serve adds to a PUT (and its answer) that the Kubernetes API
// served.
func BenchmarkRecordExchange(b *testing.B) {
	s, err := New("bench", mvcc.NewMemoryBackend(), Options{NoControllers: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hdr := api.Header{"Accept": {"application/json"}, "User-Agent": {"bench/rvplay-lab"}, "Content-Type": {"application/json"}}
	// A configmap as kubeapi answers it, at a realistic revision.
	body := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default",` +
		`"uid":"49966b8c-c85d-40a8-b6b3-18094b85b0c5","resourceVersion":"123456","creationTimestamp":"2026-11-25T20:20:48Z",` +
		`"managedFields":[{"manager":"bench","operation":"Update","apiVersion":"v1","time":"2026-11-25T20:20:48Z",` +
		`"fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:n":{}}}}]},"data":{"n":"0"}}`)
	req := &api.Request{Method: "PUT", Path: "/api/v1/namespaces/default/configmaps/c", Header: hdr, Body: body}
	resp := &api.Response{Status: 200, Body: body}
	start := s.clock.Now()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s.record(context.Background(), req, resp, ProtocolKubernetes, start)
	}
}

// BenchmarkClassRecordMemory measures what a class's record holds once
// every ring is full: 200 students, each with their own ring
// (DefaultRecordPerStudent) full of what a student's lab sends (a lab
// client's GET and its PUT of a ConfigMap in their namespace, which
// conflicts, the etcd panel's
// compaction probe with a browser's User-Agent, a console's etcdctl get),
// and the session's ring (DefaultRecordSize). Every request's strings are
// fresh, as the HTTP server makes them. It reports the heap the record
// holds per class, per exchange kept, and per student.
func BenchmarkClassRecordMemory(b *testing.B) {
	const students = 200
	browser := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	var perClass float64
	for range b.N {
		s, err := New("class", mvcc.NewMemoryBackend(), Options{NoControllers: true})
		if err != nil {
			b.Fatal(err)
		}
		ctxs := make([]context.Context, students)
		for i := range ctxs {
			id := fmt.Sprintf("student-%03d-x3k9q", i)
			ctxs[i] = api.WithPrincipal(context.Background(), api.Principal{ID: id, Name: id, Role: api.RoleStudent})
			ns := `{"metadata":{"name":"` + id + `"}}`
			s.Serve(context.Background(), &api.Request{Method: "POST", Path: "/api/v1/namespaces", Body: []byte(ns),
				Header: api.Header{"Content-Type": {"application/json"}}})
			cm := `{"metadata":{"name":"a"},"data":{"v":"1"}}`
			s.Serve(ctxs[i], &api.Request{Method: "POST", Path: "/api/v1/namespaces/" + id + "/configmaps", Body: []byte(cm),
				Header: api.Header{"Content-Type": {"application/json"}}})
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		kept := 0
		for n := 0; n < students*DefaultRecordPerStudent; n++ {
			i := n % students
			id := api.PrincipalFrom(ctxs[i]).ID
			var req *api.Request
			switch n / students % 4 {
			case 0: // a lab client reads
				req = &api.Request{Method: "GET", Path: strings.Clone("/api/v1/namespaces/" + id + "/configmaps/a"),
					Header: api.Header{"Accept": {"application/json"}, "User-Agent": {strings.Clone("B/rvplay-lab")}}}
			case 1: // and writes with a stale resourceVersion (a 409 keeps the store as it is, so the heap is the record's)
				body := `{"metadata":{"name":"a","resourceVersion":"2"},"data":{"v":"` + fmt.Sprint(n) + `"}}`
				req = &api.Request{Method: "PUT", Path: strings.Clone("/api/v1/namespaces/" + id + "/configmaps/a"), Body: []byte(body),
					Header: api.Header{"Content-Type": {"application/json"}, "User-Agent": {strings.Clone("B/rvplay-lab")}}}
			case 2: // the etcd panel's compaction probe
				req = &api.Request{Method: "POST", Path: strings.Clone("/v3/kv/range"), Body: []byte(`{"key":"AA==","range_end":"AA==","revision":"2","count_only":true}`),
					Header: api.Header{"Content-Type": {"application/json"}, "User-Agent": {strings.Clone(browser)}}}
			default: // the console
				key := base64.StdEncoding.EncodeToString([]byte(id + "/k1"))
				req = &api.Request{Method: "POST", Path: strings.Clone("/v3/kv/range"), Body: []byte(`{"key":"` + key + `"}`),
					Header: api.Header{"Content-Type": {"application/json"}, "User-Agent": {strings.Clone("etcdctl/rvplay-console")}}}
			}
			if q := "timeout=34s"; req.Method == "PUT" {
				req.Query, _ = url.ParseQuery(q)
			}
			s.Serve(ctxs[i], req)
			kept++
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		held := float64(after.HeapAlloc) - float64(before.HeapAlloc)
		perClass += held
		kept += DefaultRecordSize // the session's ring holds copies of the last ones
		b.ReportMetric(held/float64(kept), "B/exchange")
		runtime.KeepAlive(s)
		s.Close()
	}
	b.ReportMetric(perClass/float64(b.N)/(1<<20), "MiB/class")
	b.ReportMetric(perClass/float64(b.N)/students/(1<<10), "KiB/student")
}

// frames is a stream of the same frames over and over, as the watch cache
// hands one encoded event to every watcher.
type frames struct {
	lines [][]byte
	i     int
}

func (f *frames) Next(context.Context) ([]byte, error) {
	l := f.lines[f.i%len(f.lines)]
	f.i++
	return l, nil
}

func (f *frames) Close() {}

// BenchmarkWatchFrameRecord is what the record of a class's watch streams
// costs per frame and watcher: 200 students watch ConfigMaps, and every
// event (one encoded line, as the watch cache shares it) goes through each
// student's recording stream, which counts it and keeps it for its
// resourceVersion to be read when the record is. "bare" is the same
// streams unrecorded.
func BenchmarkWatchFrameRecord(b *testing.B) {
	const watchers = 200
	var lines [][]byte
	for i := range 64 {
		lines = append(lines, []byte(fmt.Sprintf(`{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"writer-%02d","namespace":"default",`+
			`"uid":"49966b8c-c85d-40a8-b6b3-18094b85b0c5","resourceVersion":"%d","creationTimestamp":"2026-11-25T20:20:48Z",`+
			`"managedFields":[{"manager":"classload","operation":"Update","apiVersion":"v1","time":"2026-11-25T20:20:48Z",`+
			`"fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:n":{}}}}]},"data":{"n":"%d"}}}`+"\n", i%20, 123456+i, i)))
	}
	for _, via := range []string{"recorded", "bare"} {
		b.Run(via, func(b *testing.B) {
			s, err := New("bench", mvcc.NewMemoryBackend(), Options{NoControllers: true})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			streams := make([]api.Stream, watchers)
			for i := range streams {
				streams[i] = &frames{lines: lines}
				if via == "recorded" {
					streams[i] = s.recordingStream(streams[i], &WatchRecord{kube: true})
				}
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				streams[i%watchers].Next(ctx)
			}
		})
	}
}

// BenchmarkRecordEtcdExchange is the record's own cost for the etcd
// gateway's requests of bench/gatewayload (a one-key range, a put, a
// compare-and-swap txn): what Serve adds to each on the hot path.
func BenchmarkRecordEtcdExchange(b *testing.B) {
	s, err := New("bench", mvcc.NewMemoryBackend(), Options{NoControllers: true})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	hdr := api.Header{"User-Agent": {"Go-http-client/1.1"}, "Content-Type": {"application/json"}}
	key := base64.StdEncoding.EncodeToString([]byte("/bench/key/000001"))
	value := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("v", 64)))
	header := `{"header":{"cluster_id":"14841639068965178418","member_id":"10276657743932975437","revision":"123456","raft_term":"2"}`
	kv := `{"key":"` + key + `","create_revision":"2","mod_revision":"123456","version":"9","value":"` + value + `"}`
	for _, c := range []struct{ name, path, body, answer string }{
		{"range", "/v3/kv/range", `{"key":"` + key + `"}`, header + `,"kvs":[` + kv + `],"count":"1"}`},
		{"put", "/v3/kv/put", `{"key":"` + key + `","value":"` + value + `"}`, header + `}`},
		{"txn", "/v3/kv/txn", `{"compare":[{"key":"` + key + `","target":"MOD","result":"EQUAL","mod_revision":"123455"}],"success":[{"request_put":{"key":"` + key + `","value":"` + value + `"}}],"failure":[{"request_range":{"key":"` + key + `"}}]}`,
			header + `,"succeeded":true,"responses":[{"response_put":{"header":{"revision":"123456"}}}]}`},
	} {
		b.Run(c.name, func(b *testing.B) {
			req := &api.Request{Method: "POST", Path: c.path, Header: hdr, Body: []byte(c.body)}
			resp := &api.Response{Status: 200, Body: []byte(c.answer), Revision: 123456}
			start := s.clock.Now()
			b.ReportAllocs()
			for b.Loop() {
				s.record(context.Background(), req, resp, ProtocolEtcd, start)
			}
		})
	}
}
