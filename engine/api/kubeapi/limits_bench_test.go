package kubeapi

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/kube"
)

// wideConfigMap is a ConfigMap with n data keys of one-byte values.
func wideConfigMap(name string, n int) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":%q},"data":{`, name)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"k%06d":"v"`, i)
	}
	b.WriteString("}}")
	return []byte(b.String())
}

// BenchmarkWorstWrites are the costliest writes one request can make
// through the Kubernetes API, with CPU time per request: the 100,000-key
// ConfigMap of issue 10 (8.3 s applied, 3.8 s created before the bounds),
// and the widest object whose managedFields are still tracked.
func BenchmarkWorstWrites(b *testing.B) {
	huge := wideConfigMap("c", 100000)
	widest := wideConfigMap("c", kube.MaxTrackedFields-5) // apiVersion, kind, metadata, name, data
	for _, c := range []struct {
		name, method, path, contentType string
		body                            []byte
		status                          int
	}{
		{"Apply100kKeys", "PATCH", "/api/v1/namespaces/default/configmaps/c?fieldManager=me", "application/apply-patch+yaml", huge, 500},
		{"Create100kKeys", "POST", "/api/v1/namespaces/default/configmaps", "application/json", huge, 201},
		{"ApplyWidestTracked", "PATCH", "/api/v1/namespaces/default/configmaps/c?fieldManager=me", "application/apply-patch+yaml", widest, 201},
		{"CreateWidestTracked", "POST", "/api/v1/namespaces/default/configmaps", "application/json", widest, 201},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.StopTimer()
			var cpu int64
			for i := 0; i < b.N; i++ {
				f := benchFixture(b)
				f.do("GET", "/api/v1/namespaces", "", nil) // bootstrap
				before := processCPU()
				b.StartTimer()
				resp := f.do(c.method, c.path, c.contentType, c.body)
				b.StopTimer()
				cpu += processCPU() - before
				if resp.Status != c.status {
					b.Fatalf("%d %.300s", resp.Status, resp.Body)
				}
			}
			if cpu > 0 {
				b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			}
		})
	}
}
