package schema

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/internal/goldenfile"
)

// goldenExchanges are the request/response pairs recorded from
// kube-apiserver v1.36.3 (testdata/exchanges.jsonl, from spec/kube-golden).
func goldenExchanges(t *testing.T) []goldenfile.Exchange {
	t.Helper()
	return goldenfile.Read[goldenfile.Exchange](t, "testdata/exchanges.jsonl")
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMarshalMatchesKubeBytesForEveryGoldenObject(t *testing.T) {
	n := 0
	for _, e := range goldenExchanges(t) {
		if len(e.Received) == 0 || e.Received[0] != '{' {
			continue
		}
		obj := decode(t, e.Received)
		kind, _ := obj["kind"].(string)
		av, _ := obj["apiVersion"].(string)
		typ := ForGVK(av, kind)
		if typ == nil {
			t.Errorf("%s: no type for %s %s", e.Note, av, kind)
			continue
		}
		FillEmitted(typ, obj)
		got, err := Marshal(typ, obj)
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		json.Compact(&want, e.Received)
		if kind == "Status" {
			// Python's recorder does not escape what Go escapes; compare decoded.
			g, w := decode(t, got), decode(t, want.Bytes())
			gb, _ := json.Marshal(g)
			wb, _ := json.Marshal(w)
			got, want = gb, *bytes.NewBuffer(wb)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s:\n got %s\nwant %s", e.Note, got, want.Bytes())
		}
		n++
	}
	if n < 40 {
		t.Errorf("only %d golden objects checked", n)
	}
}

func TestZeroOfDeploymentHasEmittedFieldsOnly(t *testing.T) {
	b, _ := Marshal(ForGVK("apps/v1", "Deployment"), Zero(ForGVK("apps/v1", "Deployment")))
	want := `{"metadata":{},"spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":null}},"strategy":{}},"status":{}}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
}

func TestUnknownFieldsAreReportedWithKubePaths(t *testing.T) {
	obj := decode(t, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","bogus":1,"metadata":{"name":"x","nope":true,"labels":{"any":"thing"}},
	  "spec":{"template":{"spec":{"containers":[{"name":"a","image":"b","imagePullPolicyy":"x"}],"volumes":[{"name":"v","gitRepo":{"whatever":1}}]}}}}`))
	got := UnknownFields(ForGVK("apps/v1", "Deployment"), obj)
	want := []string{"bogus", "metadata.nope", "spec.template.spec.containers[0].imagePullPolicyy"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %v want %v", got, want)
	}
}

func TestStrictDecodingErrorMatchesGolden(t *testing.T) {
	for _, e := range goldenExchanges(t) {
		if e.Note != "unknown field, strict validation" {
			continue
		}
		u := UnknownFields(ForGVK("v1", "ConfigMap"), decode(t, e.Sent))
		msg := `ConfigMap in version "v1" cannot be handled as a ConfigMap: ` + StrictDecodingError(u)
		if want := decode(t, e.Received)["message"]; msg != want {
			t.Errorf("got %q want %q", msg, want)
		}
		return
	}
	t.Fatal("golden exchange missing")
}

func TestStrictFieldErrorsKeepDocumentOrderAndFindDuplicates(t *testing.T) {
	body := []byte(`{"kind":"Deployment","zzz":1,"metadata":{"name":"a","name":"b","annotations":{"k":"1","k":"2"}},
	  "spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b","bad":{"x":1,"x":2}}]}}},"aaa":2}`)
	got, err := StrictFieldErrors(ForGVK("apps/v1", "Deployment"), body)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`unknown field "zzz"`, `duplicate field "metadata.name"`, `duplicate field "metadata.annotations.k"`,
		`unknown field "spec.template.spec.containers[1].bad"`, `duplicate field "spec.template.spec.containers[1].bad.x"`, `unknown field "aaa"`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got  %v\nwant %v", got, want)
	}
	if _, err := StrictFieldErrors(ForGVK("v1", "ConfigMap"), []byte(`{"a":`)); err == nil {
		t.Error("malformed JSON accepted")
	}
	if msg := StrictDecodingError(got[:2]); msg != `strict decoding error: unknown field "zzz", duplicate field "metadata.name"` {
		t.Errorf("message %q", msg)
	}
}

func TestPruneUnknownFieldsDropsThemAsDefaultValidationDoes(t *testing.T) {
	obj := decode(t, []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u2","x":1},"bogus":1,"data":{"a":"b"}}`))
	removed := PruneUnknownFields(ForGVK("v1", "ConfigMap"), obj)
	b, _ := Marshal(ForGVK("v1", "ConfigMap"), obj)
	if string(b) != `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"u2"},"data":{"a":"b"}}` || len(removed) != 2 {
		t.Errorf("got %s, removed %v", b, removed)
	}
}

func TestEverySchemaReferenceResolvesAndListMapsHaveKeys(t *testing.T) {
	for _, typ := range Types() {
		for _, f := range typ.Fields {
			if f.ListType == "map" && len(f.ListMapKeys) == 0 {
				t.Errorf("%s.%s: list=map without keys", typ.Name, f.Name)
			}
			if f.HasPatchStrategy("merge") && f.Type.Kind == KindList && f.Type.Elem.Kind == KindObject && f.PatchMergeKey == "" {
				t.Errorf("%s.%s: merge list of objects without merge key", typ.Name, f.Name)
			}
			if f.Type.Kind == KindList && f.Type.Elem.Kind == KindObject && f.ListType == "map" {
				for _, k := range f.ListMapKeys {
					if f.Type.Elem.Named.Field(k) == nil {
						t.Errorf("%s.%s: key %s not a field of %s", typ.Name, f.Name, k, f.Type.Elem.Named.Name)
					}
				}
			}
		}
	}
}

func TestForGVKFindsServedKindsAndLists(t *testing.T) {
	for _, c := range [][2]string{{"v1", "ConfigMap"}, {"v1", "Secret"}, {"v1", "Namespace"}, {"v1", "Pod"}, {"v1", "Event"},
		{"apps/v1", "Deployment"}, {"autoscaling/v1", "Scale"}, {"v1", "ConfigMapList"}, {"apps/v1", "DeploymentList"}} {
		if ForGVK(c[0], c[1]) == nil {
			t.Errorf("no type for %s %s", c[0], c[1])
		}
	}
	if ForGVK("v1", "ScaleList") != nil || ForGVK("v1", "StatusList") != nil {
		t.Error("unexpected list type")
	}
}

func TestOpenAPIV3IndexPointsAtHashedDocuments(t *testing.T) {
	var idx struct {
		Paths map[string]struct {
			ServerRelativeURL string `json:"serverRelativeURL"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPIV3Index(), &idx); err != nil {
		t.Fatal(err)
	}
	for _, gv := range []string{"api/v1", "apis/apps/v1"} {
		u := idx.Paths[gv].ServerRelativeURL
		if u != "/openapi/v3/"+gv+"?hash="+OpenAPIV3Hash(gv) || len(OpenAPIV3Hash(gv)) != 32 {
			t.Errorf("%s: %q", gv, u)
		}
		doc, ok := OpenAPIV3(gv)
		if !ok || !json.Valid(doc) {
			t.Errorf("%s: no valid document", gv)
		}
	}
	doc, _ := OpenAPIV3("apis/apps/v1")
	var d struct {
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	json.Unmarshal(doc, &d)
	if _, ok := d.Components.Schemas["io.k8s.api.autoscaling.v1.Scale"]; !ok {
		t.Error("apps/v1 document lacks Scale")
	}
	if _, ok := d.Components.Schemas["io.k8s.api.core.v1.ConfigMap"]; ok {
		t.Error("apps/v1 document carries unrelated ConfigMap")
	}
}

func TestOpenAPIV2DefinitionsCarryKubeExtensions(t *testing.T) {
	var doc struct {
		Definitions map[string]map[string]any `json:"definitions"`
		Paths       map[string]map[string]any `json:"paths"`
	}
	if err := json.Unmarshal(OpenAPIV2(), &doc); err != nil {
		t.Fatal(err)
	}
	containers := doc.Definitions["io.k8s.api.core.v1.PodSpec"]["properties"].(map[string]any)["containers"].(map[string]any)
	for k, v := range map[string]any{"x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name", "x-kubernetes-list-type": "map"} {
		if containers[k] != v {
			t.Errorf("containers %s = %v", k, containers[k])
		}
	}
	gvk := doc.Definitions["io.k8s.api.core.v1.ConfigMap"]["x-kubernetes-group-version-kind"]
	if b, _ := json.Marshal(gvk); string(b) != `[{"group":"","kind":"ConfigMap","version":"v1"}]` {
		t.Errorf("gvk = %s", b)
	}
	p := doc.Paths["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"].(map[string]any)
	found := false
	for _, prm := range p["parameters"].([]any) {
		if prm.(map[string]any)["name"] == "fieldValidation" {
			found = true
		}
	}
	if !found {
		t.Error("patch operation lacks fieldValidation")
	}
	if len(OpenAPIV2Protobuf()) < len(OpenAPIV2())/4 {
		t.Error("protobuf document suspiciously small")
	}
}

func BenchmarkMarshalDeployment(b *testing.B) {
	raw := []byte(`{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"nginx","namespace":"default","labels":{"app":"nginx"}},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.21"}]}}}}`)
	var obj map[string]any
	json.Unmarshal(raw, &obj)
	typ := ForGVK("apps/v1", "Deployment")
	FillEmitted(typ, obj)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(typ, obj); err != nil {
			b.Fatal(err)
		}
	}
}

func TestNormalizeDropsWhatKubesTypedRoundTripDrops(t *testing.T) {
	typ := ForGVK("apps/v1", "Deployment")
	obj := decode(t, []byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","labels":{},"finalizers":[],"annotations":null},
	  "spec":{"selector":null,"template":{"spec":{"containers":[{"name":"a","args":null,"env":[{"$patch":"delete","name":"A"}],"securityContext":{}}],"volumes":[]}}}}`))
	pruned := Normalize(typ, obj)
	b, _ := Marshal(typ, obj)
	want := `{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"d"},"spec":{"selector":null,"template":{"metadata":{},"spec":{"containers":[{"name":"a","env":[{"name":"A"}],"resources":{},"securityContext":{}}]}},"strategy":{}},"status":{}}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
	if strings.Join(pruned, ",") != "spec.template.spec.containers[0].env[0].$patch" {
		t.Errorf("pruned %v", pruned)
	}
}
