package kubeapi

import (
	"encoding/json"
	"net/url"
	"testing"

	"github.com/rvplay/rvplay/engine/kube"
)

// checkAnswer fails on what must never happen whatever the input: a panic
// (Serve turns it into an InternalError), an error that is not a Status,
// or a write by a request that failed.
func checkAnswer(t *testing.T, f *fixture, revBefore int64, code int, body []byte) {
	if code >= 400 {
		var st kube.Status
		if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" {
			if code != 404 || string(body) != "404 page not found\n" {
				t.Fatalf("error answer is not a Status: %d %q", code, body)
			}
		}
		if st.Reason == kube.ReasonInternalError {
			t.Fatalf("internal error: %s", body)
		}
		if f.store.Rev() != revBefore {
			t.Fatalf("a failed request (%d %s) wrote: %d -> %d", code, body, revBefore, f.store.Rev())
		}
	}
}

func FuzzCreateBody(f *testing.F) {
	for _, s := range []string{
		`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo"},"data":{"a":"b"}}`,
		`{"apiVersion":`, `[]`, `null`, `{"metadata":{"name":"Bad_Name"}}`, `{"metadata":{"name":"x","resourceVersion":"5"}}`,
		`{"metadata":{"generateName":"g-"},"data":{"k":1}}`, `{"kind":"Secret","apiVersion":"v1"}`,
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n",
		`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`,
		`{"metadata":{"name":"x","labels":{"a":{"b":1}}},"spec":{"replicas":"3"}}`,
	} {
		f.Add(s, "application/json", false)
		f.Add(s, "application/yaml", true)
	}
	fx := newFixture(f)
	f.Fuzz(func(t *testing.T, body, ct string, deployment bool) {
		path := "/api/v1/namespaces/default/configmaps"
		if deployment {
			path = "/apis/apps/v1/namespaces/default/deployments"
		}
		fx.do("GET", "/api/v1/namespaces", "", nil) // bootstrap before measuring the revision
		rev := fx.store.Rev()
		resp := fx.do("POST", path+"?fieldValidation=Strict", ct, []byte(body))
		if resp.Status == 500 && (string(resp.Body) == "" || json.Valid(resp.Body)) {
			var st kube.Status
			json.Unmarshal(resp.Body, &st)
			if st.Message != "resourceVersion should not be set on objects to be created" {
				t.Fatalf("500: %s", resp.Body)
			}
			return
		}
		checkAnswer(t, fx, rev, resp.Status, resp.Body)
		if resp.Status == 201 {
			var o map[string]any
			if err := json.Unmarshal(resp.Body, &o); err != nil {
				t.Fatalf("created object is not JSON: %s", resp.Body)
			}
			// what was stored must read back and update without error
			name := kube.Name(o)
			get := fx.do("GET", path+"/"+url.PathEscape(name), "", nil)
			if get.Status != 200 {
				t.Fatalf("created %s but GET says %d %s", name, get.Status, get.Body)
			}
			put := fx.do("PUT", path+"/"+url.PathEscape(name), "application/json", get.Body)
			if put.Status != 200 {
				t.Fatalf("no-op PUT of what GET returned: %d %s", put.Status, put.Body)
			}
		}
	})
}

func FuzzListQuery(f *testing.F) {
	for _, q := range []string{"", "limit=1", "limit=-1", "limit=abc", "resourceVersion=abc", "resourceVersion=0&limit=1",
		"resourceVersion=1&resourceVersionMatch=Exact", "resourceVersionMatch=Bogus", "continue=garbage",
		"continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6Mywic3RhcnQiOiJhXHUwMDAwIn0", "labelSelector=a%3D%3D%3Db",
		"labelSelector=a+in+(x,y),!b", "fieldSelector=spec.x%3Dy", "fieldSelector=metadata.name%21%3Dx",
		"sendInitialEvents=true", "watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1"} {
		f.Add(q)
	}
	fx := newFixture(f)
	fx.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"a","labels":{"x":"y"}}}`))
	fx.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"b"}}`))
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := url.ParseQuery(raw)
		if err != nil {
			return
		}
		if v := q["timeoutSeconds"]; len(v) > 0 {
			q.Set("timeoutSeconds", "1")
		}
		rev := fx.store.Rev()
		resp := fx.do("GET", "/api/v1/namespaces/default/configmaps?"+q.Encode(), "", nil)
		if resp.Stream != nil {
			resp.Stream.Close()
			return
		}
		if resp.Status == 500 {
			var st kube.Status
			json.Unmarshal(resp.Body, &st)
			if st.Reason != "" {
				t.Fatalf("500: %s", resp.Body)
			}
			return
		}
		checkAnswer(t, fx, rev, resp.Status, resp.Body)
	})
}

func FuzzPatch(f *testing.F) {
	for _, s := range []struct{ body, ct string }{
		{`{"data":{"a":"1"}}`, "application/merge-patch+json"},
		{`{"metadata":{"resourceVersion":"1"}}`, "application/merge-patch+json"},
		{`[{"op":"replace","path":"/data/x","value":"y"}]`, "application/json-patch+json"},
		{`[{"op":"test","path":"/data/a","value":"zzz"}]`, "application/json-patch+json"},
		{`[{"op":"remove","path":"/metadata"}]`, "application/json-patch+json"},
		{`{"data":{"$patch":"replace"}}`, "application/strategic-merge-patch+json"},
		{"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  o: x\n", "application/apply-patch+yaml"},
		{`{"metadata":{"name":"other"}}`, "application/merge-patch+json"},
		{`{"kind":"Secret"}`, "application/merge-patch+json"},
	} {
		f.Add(s.body, s.ct)
	}
	fx := newFixture(f)
	fx.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"a"},"data":{"a":"0"}}`))
	f.Fuzz(func(t *testing.T, body, ct string) {
		rev := fx.store.Rev()
		resp := fx.do("PATCH", "/api/v1/namespaces/default/configmaps/a?fieldManager=fuzz", ct, []byte(body))
		if resp.Status == 500 {
			var st kube.Status
			json.Unmarshal(resp.Body, &st)
			if st.Reason != "" {
				t.Fatalf("500: %s", resp.Body)
			}
			return
		}
		checkAnswer(t, fx, rev, resp.Status, resp.Body)
		if resp.Status == 200 || resp.Status == 201 {
			get := fx.do("GET", "/api/v1/namespaces/default/configmaps/a", "", nil)
			if get.Status != 200 {
				t.Fatalf("patched object does not read back: %d %s", get.Status, get.Body)
			}
		}
	})
}

func FuzzLabelSelector(f *testing.F) {
	for _, s := range []string{"a=b", "a==b,c!=d", "a in (x,y)", "!a", "a,b", "a===b", "a in b", "x>1", "(", "a notin ()"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := kube.ParseLabelSelector(s)
		if err != nil {
			return
		}
		again, err := kube.ParseLabelSelector(sel.String())
		if err != nil || again.String() != sel.String() {
			t.Fatalf("%q -> %q does not reparse: %v", s, sel.String(), err)
		}
	})
}
