package session

import (
	"context"
	"encoding/json"
	"fmt"
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
