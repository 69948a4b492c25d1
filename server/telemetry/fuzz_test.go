package telemetry

import (
	"net/http"
	"testing"
)

// Classify names any request with a value from a small fixed set, so that
// no client can add series to the metrics.
func FuzzClassify(f *testing.F) {
	for _, p := range []string{"/", "/s/", "/s/x", "/s/x/", "/s/x/v3/kv/put", "/s/x/v3beta/", "/s/x/api/v1/namespaces/a/configmaps",
		"/s/x/apis/a/b/c/d/e/f/g", "/s/x/api/v1/watch", "/healthz/x", "/s//", "/s/x/rvplay/v1/settings", "//s/x"} {
		f.Add("GET", p, "watch=1")
		f.Add("DELETE", p, "")
	}
	protocols := map[string]bool{ProtocolKube: true, ProtocolEtcd: true, ProtocolRvplay: true, ProtocolClassroom: true,
		ProtocolWeb: true, ProtocolHealth: true, ProtocolMetrics: true}
	verbs := map[string]bool{"GET": true, "HEAD": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true,
		"OPTIONS": true, "CONNECT": true, "TRACE": true, "other": true, "LIST": true, "WATCH": true, "APPLY": true,
		"DELETECOLLECTION": true}
	for v := range etcdVerbs {
		verbs[v] = true
	}
	f.Fuzz(func(t *testing.T, method, path, query string) {
		r, err := http.NewRequest("GET", "http://x/", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Method, r.URL.Path, r.URL.RawQuery = method, path, query
		p, v := Classify(r)
		if !protocols[p] || !verbs[v] {
			t.Fatalf("%s %s?%s: %q %q", method, path, query, p, v)
		}
	})
}
