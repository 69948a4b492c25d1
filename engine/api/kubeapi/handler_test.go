package kubeapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
)

func TestDiscoveryMatchesKubeApiserver(t *testing.T) {
	f := newFixture(t)
	for path, file := range map[string]string{
		"/api":          "api.json",
		"/api/v1":       "api_v1.json",
		"/apis":         "apis.json",
		"/apis/apps/v1": "apis_apps_v1.json",
		// recorded with the custom resource exchanges (crd_exchanges.jsonl)
		"/apis/apiextensions.k8s.io/v1": "apis_apiextensions_v1.json",
		// recorded with the events.k8s.io exchanges (events_exchanges.jsonl)
		"/apis/events.k8s.io/v1": "apis_events_v1.json",
	} {
		want, err := os.ReadFile("testdata/discovery/" + file)
		if err != nil {
			t.Fatal(err)
		}
		resp := f.do("GET", path, "", nil)
		var g, w any
		json.Unmarshal(resp.Body, &g)
		json.Unmarshal(want, &w)
		if runtime.GOOS == "js" {
			// the browser build serves no events.k8s.io
			if path == "/apis/events.k8s.io/v1" {
				continue
			}
			if path == "/apis" {
				groups := w.(map[string]any)["groups"].([]any)
				w.(map[string]any)["groups"] = slices.DeleteFunc(groups, func(g any) bool { return g.(map[string]any)["name"] == "events.k8s.io" })
			}
		}
		if path == "/api" {
			// the server address is the request's host
			w.(map[string]any)["serverAddressByClientCIDRs"] = g.(map[string]any)["serverAddressByClientCIDRs"]
		}
		if resp.Status != 200 || !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %d %s\nwant %s", path, resp.Status, resp.Body, want)
		}
	}
	var v, w map[string]any
	json.Unmarshal(f.do("GET", "/version", "", nil).Body, &v)
	b, _ := os.ReadFile("testdata/discovery/version.json")
	json.Unmarshal(b, &w)
	for k := range w {
		if _, ok := v[k]; !ok {
			t.Errorf("/version lacks %s", k)
		}
	}
	if v["gitVersion"] != w["gitVersion"] || v["minor"] != w["minor"] {
		t.Errorf("/version %v", v)
	}
}

func TestOpenAPIDocumentsAreServed(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/openapi/v2", "/openapi/v3", "/openapi/v3/api/v1", "/openapi/v3/apis/apps/v1"} {
		resp := f.do("GET", p, "", nil)
		if resp.Status != 200 || !json.Valid(resp.Body) {
			t.Errorf("%s: %d", p, resp.Status)
		}
	}
	r := f.h.Serve(context.Background(), &api.Request{Method: "GET", Path: "/openapi/v2",
		Header: api.Header{"Accept": {"application/com.github.proto-openapi.spec.v2@v1.0+protobuf"}}})
	if r.Status != 200 || !strings.Contains(r.Header.Get("Content-Type"), "protobuf") {
		t.Errorf("protobuf v2: %d %v", r.Status, r.Header)
	}
}

func TestUnknownPathsAre404Pages(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/nope", "/api/v2/pods", "/api/v1/widgets", "/apis/apps/v1/namespaces/default/deployments/x/bogus",
		"/api/v1/namespaces/default/configmaps/a/status", "/api/v1/namespaces/default/namespaces"} {
		resp := f.do("GET", p, "", nil)
		if resp.Status != 404 || string(resp.Body) != "404 page not found\n" {
			t.Errorf("%s: %d %s", p, resp.Status, resp.Body)
		}
	}
}

func TestRoutesForEveryScope(t *testing.T) {
	f := newFixture(t)
	steps := []struct {
		method, path, body string
		code               int
		contains           string
	}{
		{"POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`, 201, `"phase":"Active"`},
		{"GET", "/api/v1/namespaces/team", "", 200, `"kubernetes.io/metadata.name":"team"`},
		{"GET", "/api/v1/namespaces/team/status", "", 200, `"name":"team"`},
		{"POST", "/api/v1/namespaces/team/configmaps", `{"metadata":{"name":"a","labels":{"x":"1"}}}`, 201, `"namespace":"team"`},
		{"POST", "/api/v1/namespaces/team/configmaps", `{"metadata":{"name":"b"}}`, 201, ``},
		{"GET", "/api/v1/configmaps", "", 200, `"kind":"ConfigMapList"`},
		{"GET", "/api/v1/namespaces/team/configmaps?labelSelector=x%3D1", "", 200, `"name":"a"`},
		{"POST", "/api/v1/namespaces/team/pods", `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"busybox"}]}}`, 201, `"phase":"Pending"`},
		{"DELETE", "/api/v1/namespaces/team/pods/p", "", 200, `"kind":"Pod"`},
		{"POST", "/api/v1/namespaces/team/secrets", `{"metadata":{"name":"s"},"stringData":{"k":"v"}}`, 201, `"data":{"k":"dg=="}`},
		{"POST", "/api/v1/namespaces/team/events", `{"metadata":{"name":"e"},"involvedObject":{"kind":"Pod","namespace":"team","name":"p"},"reason":"R"}`, 201, `"reason":"R"`},
		{"DELETE", "/api/v1/namespaces/team/configmaps?labelSelector=x%3D1", "", 200, `"name":"a"`},
		{"GET", "/api/v1/namespaces/team/configmaps", "", 200, `"name":"b"`},
		{"POST", "/api/v1/namespaces/team/configmaps/b", `{}`, 405, `"reason":"MethodNotAllowed"`},
		{"DELETE", "/api/v1/namespaces", "", 405, `deletecollection is not supported on resources of kind \"namespaces\"`},
		{"DELETE", "/api/v1/namespaces/team", "", 200, `"phase":"Terminating"`},
		{"GET", "/api/v1/namespaces/team/configmaps", "", 200, `"name":"b"`},
		{"POST", "/api/v1/namespaces/team/configmaps", `{"metadata":{"generateName":"c-"}}`, 403,
			`configmaps \"c-\" is forbidden: unable to create new content in namespace team because it is being terminated`},
		{"GET", "/api/v1/namespaces/team/finalize", "", 405, `"reason":"MethodNotAllowed"`},
		{"PUT", "/api/v1/namespaces/team/finalize", `{"metadata":{"name":"team"},"spec":{"finalizers":["kubernetes"]}}`, 200, `"phase":"Terminating"`},
		{"DELETE", "/api/v1/namespaces/team/configmaps/b", "", 200, `"status":"Success"`},
		{"PUT", "/api/v1/namespaces/team/finalize", `{"metadata":{"name":"team"},"spec":{}}`, 200, `"name":"team"`},
		{"GET", "/api/v1/namespaces/team", "", 404, `namespaces \"team\" not found`},
		{"POST", "/apis/apps/v1/namespaces/default/deployments", `{"metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`, 201, `"replicas":1`},
		{"PATCH", "/apis/apps/v1/namespaces/default/deployments/d/scale", `{"spec":{"replicas":4}}`, 200, `"replicas":4`},
		{"GET", "/apis/apps/v1/deployments", "", 200, `"generation":2`},
		{"PATCH", "/apis/apps/v1/namespaces/default/deployments/d/status", `{"status":{"replicas":4}}`, 200, `"status":{"replicas":4}`},
		{"GET", "/api/v1/watch/namespaces/default/configmaps?resourceVersion=1", "", 200, ``},
	}
	for _, s := range steps {
		ct := "application/json"
		if s.method == "PATCH" {
			ct = "application/merge-patch+json"
		}
		var body []byte
		if s.body != "" {
			body = []byte(s.body)
		}
		resp := f.do(s.method, s.path, ct, body)
		if resp.Stream != nil {
			resp.Stream.Close()
		}
		if resp.Status != s.code || !strings.Contains(string(resp.Body), s.contains) {
			t.Errorf("%s %s: %d %s", s.method, s.path, resp.Status, resp.Body)
		}
	}
}

func TestWatchStreamsJSONLines(t *testing.T) {
	f := newFixture(t)
	f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"a"}}`))
	resp := f.do("GET", "/api/v1/namespaces/default/configmaps?watch=1&allowWatchBookmarks=true", "", nil)
	if resp.Status != 200 || resp.Stream == nil || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %v", resp.Status, resp.Header)
	}
	defer resp.Stream.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, want := range []string{`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"`,
		`{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"6","annotations":{"k8s.io/initial-events-end":"true"}}}}`} {
		b, err := resp.Stream.Next(ctx)
		if err != nil || !strings.HasPrefix(string(b), want) || b[len(b)-1] != '\n' {
			t.Fatalf("got %s %v, want %s", b, err, want)
		}
	}
	// a single object's watch is a field selector on its name
	resp2 := f.do("GET", "/api/v1/namespaces/default/configmaps/a?watch=true&fieldSelector=metadata.name%3Db", "", nil)
	if resp2.Status != 400 || !strings.Contains(string(resp2.Body), "fieldSelector metadata.name doesn't match requested name") {
		t.Fatalf("%d %s", resp2.Status, resp2.Body)
	}
}

func TestBadInputGetsKubeStatus(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct {
		method, path, ct, body string
		code                   int
		msg                    string
	}{
		{"POST", "/api/v1/namespaces/default/configmaps", "application/json", `[1]`, 400,
			`the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" } (5b315d)`},
		{"POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"apiVersion":"v2","kind":"ConfigMap","metadata":{"name":"a"}}`, 400,
			`no kind "ConfigMap" is registered for version "v2" in scheme "pkg/api/legacyscheme/scheme.go:30"`},
		{"POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"metadata":{"name":"a","namespace":"other"}}`, 400,
			`the namespace of the provided object does not match the namespace sent on the request`},
		{"POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"metadata":{"name":"a"},"data":{"k":1}}`, 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`},
		{"POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"metadata":"x"}`, 400,
			`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta`},
		{"POST", "/api/v1/namespaces/default/configmaps", "application/json", `{"metadata":{}}`, 422,
			`ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required`},
		{"POST", "/api/v1/namespaces", "application/json", `{"metadata":{"name":"a.b"}}`, 422,
			`Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')`},
		{"POST", "/api/v1/namespaces/default/configmaps", "application/yaml", "metadata: [", 400, ``},
		{"POST", "/api/v1/namespaces/default/configmaps", "text/plain", `{}`, 415, `415: Unsupported Media Type`},
		{"GET", "/api/v1/namespaces/default/configmaps?limit=abc", "", ``, 400, `strconv.ParseInt: parsing "abc": invalid syntax`},
		{"GET", "/api/v1/namespaces/default/configmaps?resourceVersion=abc", "", ``, 400, `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`},
		{"GET", "/api/v1/namespaces/default/configmaps?resourceVersion=1&resourceVersionMatch=Bogus", "", ``, 422, ``},
		{"DELETE", "/api/v1/namespaces/default/configmaps/a", "application/json", `{"propagationPolicy":"Sideways"}`, 422,
			`DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil"`},
		{"PATCH", "/api/v1/namespaces/default/configmaps/a", "application/merge-patch+json", `{}`, 404, `configmaps "a" not found`},
		{"PATCH", "/api/v1/namespaces/default/configmaps/a?force=true", "application/merge-patch+json", `{}`, 422,
			`PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch`},
		{"PUT", "/api/v1/namespaces/default/configmaps/a", "application/json", `{"metadata":{"name":"a","resourceVersion":"x1"}}`, 500,
			`resourceVersion: Invalid value: "x1": strconv.ParseUint: parsing "x1": invalid syntax`},
	} {
		resp := f.do(c.method, c.path, c.ct, []byte(c.body))
		var st map[string]any
		if err := json.Unmarshal(resp.Body, &st); err != nil || st["kind"] != "Status" {
			t.Errorf("%s %s %s: not a Status: %d %s", c.method, c.path, c.body, resp.Status, resp.Body)
			continue
		}
		if resp.Status != c.code || c.msg != "" && st["message"] != c.msg {
			t.Errorf("%s %s %s: %d %s, want %d %s", c.method, c.path, c.body, resp.Status, st["message"], c.code, c.msg)
		}
	}
	// nothing above wrote
	l := f.do("GET", "/api/v1/namespaces/default/configmaps", "", nil)
	if !strings.Contains(string(l.Body), `"items":[]`) {
		t.Fatalf("a bad request wrote: %s", l.Body)
	}
}

func TestPrettyForCurlAndPrettyParameter(t *testing.T) {
	f := newFixture(t)
	r := f.h.Serve(context.Background(), &api.Request{Method: "GET", Path: "/api/v1/namespaces/default",
		Header: api.Header{"User-Agent": {"curl/8.5.0"}}})
	if !strings.HasPrefix(string(r.Body), "{\n  \"kind\": \"Namespace\",\n") {
		t.Fatalf("%s", r.Body)
	}
	r = f.do("GET", "/api/v1/namespaces/default?pretty=true", "", nil)
	if !strings.Contains(string(r.Body), "\n  ") {
		t.Fatalf("%s", r.Body)
	}
	r = f.do("GET", "/api/v1/namespaces/default", "", nil)
	if strings.Contains(string(r.Body), "\n") {
		t.Fatalf("%s", r.Body)
	}
}

func TestTableForKubectlGet(t *testing.T) {
	f := newFixture(t)
	f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"a"},"data":{"x":"1","y":"2"}}`))
	accept := "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
	r := f.h.Serve(context.Background(), &api.Request{Method: "GET", Path: "/api/v1/namespaces/default/configmaps",
		Query: map[string][]string{"limit": {"500"}}, Header: api.Header{"Accept": {accept}}})
	var tbl struct {
		Kind, APIVersion  string
		Metadata          struct{ ResourceVersion string }
		ColumnDefinitions []struct{ Name string }
		Rows              []struct {
			Cells  []any
			Object map[string]any
		}
	}
	if err := json.Unmarshal(r.Body, &tbl); err != nil || tbl.Kind != "Table" || tbl.APIVersion != "meta.k8s.io/v1" {
		t.Fatalf("%s", r.Body)
	}
	if len(tbl.Rows) != 1 || tbl.Rows[0].Cells[0] != "a" || tbl.Rows[0].Cells[1] != float64(2) || tbl.Rows[0].Cells[2] != "0s" ||
		tbl.Rows[0].Object["kind"] != "PartialObjectMetadata" || tbl.Metadata.ResourceVersion == "" {
		t.Fatalf("%s", r.Body)
	}
	if tableVersion("application/json") != "" || tableVersion("application/json;as=Table;v=v1;g=meta.k8s.io") != "v1" {
		t.Fatal("accept parsing")
	}
}

func TestWatchAsTableForKubectlGetWatch(t *testing.T) {
	f := newFixture(t)
	accept := "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
	r := f.h.Serve(context.Background(), &api.Request{Method: "GET", Path: "/api/v1/namespaces/default/configmaps",
		Query: map[string][]string{"watch": {"1"}, "resourceVersion": {"1"}}, Header: api.Header{"Accept": {accept}}})
	if r.Stream == nil {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	defer r.Stream.Close()
	f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"a"}}`))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		b, err := r.Stream.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"name":"a"`) {
			if !strings.HasPrefix(string(b), `{"type":"ADDED","object":{"kind":"Table","apiVersion":"meta.k8s.io/v1"`) {
				t.Fatalf("%s", b)
			}
			return
		}
	}
}

func TestStrictPatchRefusesUnknownFields(t *testing.T) {
	f := newFixture(t)
	f.do("POST", "/api/v1/namespaces/default/configmaps", "application/json", []byte(`{"metadata":{"name":"a"}}`))
	r := f.do("PATCH", "/api/v1/namespaces/default/configmaps/a?fieldValidation=Strict", "application/merge-patch+json", []byte(`{"bogus":1}`))
	if r.Status != 400 || !strings.Contains(string(r.Body), `strict decoding error: unknown field \"bogus\"`) {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	r = f.do("PATCH", "/api/v1/namespaces/default/configmaps/a", "application/merge-patch+json", []byte(`{"bogus":1}`))
	if r.Status != 200 || strings.Contains(string(r.Body), "bogus") {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

func TestOpenAPIV3StaleHashRedirectsRelativeToTheSessionBase(t *testing.T) {
	f := newFixture(t)
	for _, gv := range []string{"api/v1", "apis/apps/v1"} {
		r := f.do("GET", "/openapi/v3/"+gv+"?hash=stale", "", nil)
		if r.Status != 301 {
			t.Fatalf("%s: %d %s", gv, r.Status, r.Body)
		}
		// the server serves the session under /s/<name>/; the client
		// resolves Location against the URL it asked for
		base, _ := url.Parse("http://h/s/demo/openapi/v3/" + gv + "?hash=stale")
		loc, err := base.Parse(r.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		if loc.Path != "/s/demo/openapi/v3/"+gv || loc.Query().Get("hash") == "" || loc.Query().Get("hash") == "stale" {
			t.Fatalf("%s: Location %q resolves to %s", gv, r.Header.Get("Location"), loc)
		}
		again := f.do("GET", "/openapi/v3/"+gv+"?"+loc.RawQuery, "", nil)
		if again.Status != 200 || again.Header.Get("Cache-Control") != "public, immutable" {
			t.Fatalf("%s at the current hash: %d %v", gv, again.Status, again.Header)
		}
	}
}

// kubectl explain events.events.k8s.io reads the group-version's OpenAPI
// v3 document, found from /openapi/v3's index.
func TestEventsK8sIOIsInTheOpenAPIDocuments(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("the browser build serves no events.k8s.io (engine/kube/events.go)")
	}
	f := newFixture(t)
	var index struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(f.do("GET", "/openapi/v3", "", nil).Body, &index); err != nil {
		t.Fatal(err)
	}
	p, ok := index.Paths["apis/events.k8s.io/v1"]
	if !ok {
		t.Fatalf("/openapi/v3 lists no apis/events.k8s.io/v1: %v", index.Paths)
	}
	var doc struct {
		Paths      map[string]any `json:"paths"`
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
				GVK        []any          `json:"x-kubernetes-group-version-kind"`
			} `json:"schemas"`
		} `json:"components"`
	}
	resp := f.do("GET", p.ServerRelativeURL, "", nil)
	if err := json.Unmarshal(resp.Body, &doc); err != nil {
		t.Fatalf("%d %v", resp.Status, err)
	}
	ev := doc.Components.Schemas["io.k8s.api.events.v1.Event"]
	for _, field := range []string{"regarding", "note", "reportingController", "series", "deprecatedCount"} {
		if ev.Properties[field] == nil {
			t.Errorf("the Event definition has no %s: %v", field, ev.Properties)
		}
	}
	if fmt.Sprint(ev.GVK) != "[map[group:events.k8s.io kind:Event version:v1]]" {
		t.Errorf("gvk %v", ev.GVK)
	}
	if doc.Paths["/apis/events.k8s.io/v1/namespaces/{namespace}/events/{name}"] == nil {
		t.Errorf("paths: %v", doc.Paths)
	}
	if !strings.Contains(string(f.do("GET", "/openapi/v2", "", nil).Body), `"io.k8s.api.events.v1.Event"`) {
		t.Error("/openapi/v2 has no io.k8s.api.events.v1.Event")
	}
}
