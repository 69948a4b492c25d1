package patch

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/kube/schema"
	"github.com/rvplay/rvplay/internal/goldenfile"
)

// golden returns an exchange recorded from kube-apiserver v1.36.3
// (testdata/exchanges.jsonl, copied from spec/kube-golden).
func golden(t testing.TB, note string) goldenfile.Exchange {
	t.Helper()
	return goldenfile.Find[goldenfile.Exchange](t, "testdata/exchanges.jsonl", note)
}

// data extracts the .data of a configmap.
func data(t *testing.T, obj []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(obj, &m); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(m["data"])
	return string(b)
}

func canon(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

func TestMergePatchMergesDataKeys(t *testing.T) {
	before := golden(t, "get before patches").Received
	e := golden(t, "merge patch with current resourceVersion")
	got, err := MergePatch(before, e.Sent)
	if err != nil {
		t.Fatal(err)
	}
	if data(t, got) != data(t, e.Received) {
		t.Errorf("got %s want %s", data(t, got), data(t, e.Received))
	}
}

func TestMergePatchCarriesResourceVersionAsPrecondition(t *testing.T) {
	got, err := MergePatch([]byte(`{"metadata":{"name":"a","resourceVersion":"61"}}`), []byte(`{"metadata":{"resourceVersion":"58"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if canon(t, got) != `{"metadata":{"name":"a","resourceVersion":"58"}}` {
		t.Errorf("got %s", got)
	}
}

func TestJSONPatchReplaceOfMissingMemberAddsIt(t *testing.T) {
	e := golden(t, "json patch replacing a missing path")
	before := golden(t, "merge patch with current resourceVersion").Received
	got, err := JSONPatch(before, e.Sent)
	if err != nil {
		t.Fatal(err)
	}
	if data(t, got) != data(t, e.Received) {
		t.Errorf("got %s want %s", data(t, got), data(t, e.Received))
	}
}

func TestJSONPatchFailingTestIsGenericInvalid(t *testing.T) {
	e := golden(t, "json patch failing test op")
	before := golden(t, "json patch replacing a missing path").Received
	_, err := JSONPatch(before, e.Sent)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("want *Error, got %v", err)
	}
	var want struct {
		Message string
		Reason  string
		Code    int
	}
	json.Unmarshal(e.Received, &want)
	if pe.Code != want.Code || pe.Reason != want.Reason || pe.Message != want.Message {
		t.Errorf("got %d %s %q, want %d %s %q", pe.Code, pe.Reason, pe.Message, want.Code, want.Reason, want.Message)
	}
}

func TestJSONPatchReplaceInsideMissingParentFails(t *testing.T) {
	_, err := JSONPatch([]byte(`{"data":{}}`), []byte(`[{"op":"replace","path":"/nope/x","value":1}]`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != 422 {
		t.Fatalf("want 422, got %v", err)
	}
}

func TestJSONPatchThatIsNotAListIsBadRequest(t *testing.T) {
	_, err := JSONPatch([]byte(`{}`), []byte(`{"op":"add"}`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != 400 || pe.Reason != "BadRequest" {
		t.Fatalf("want 400, got %v", err)
	}
}

func TestStrategicMergeOnConfigMapMergesData(t *testing.T) {
	e := golden(t, "strategic merge patch")
	before := golden(t, "json patch replacing a missing path").Received
	got, err := StrategicMerge(schema.ForGVK("v1", "ConfigMap"), before, e.Sent)
	if err != nil {
		t.Fatal(err)
	}
	if data(t, got) != data(t, e.Received) {
		t.Errorf("got %s want %s", data(t, got), data(t, e.Received))
	}
}

var deployment = schema.ForGVK("apps/v1", "Deployment")

const deploy = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","finalizers":["a","b"]},
 "spec":{"replicas":2,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}},
  "template":{"metadata":{"labels":{"app":"web"}},"spec":{
   "containers":[
    {"name":"app","image":"app:1","args":["--a"],"env":[{"name":"A","value":"1"},{"name":"B","value":"2"}],"ports":[{"containerPort":80},{"containerPort":443}]},
    {"name":"log","image":"log:1"}],
   "volumes":[{"name":"cfg","configMap":{"name":"cfg"}}]}}}}`

func smp(t *testing.T, patch string) map[string]any {
	t.Helper()
	out, err := StrategicMerge(deployment, []byte(deploy), []byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func path(m any, keys ...any) any {
	for _, k := range keys {
		switch kk := k.(type) {
		case string:
			m = m.(map[string]any)[kk]
		case int:
			m = m.([]any)[kk]
		}
	}
	return m
}

func js(v any) string { b, _ := json.Marshal(v); return string(b) }

func containers(m map[string]any) []any {
	return path(m, "spec", "template", "spec", "containers").([]any)
}

func TestStrategicMergeMergesContainersByName(t *testing.T) {
	m := smp(t, `{"spec":{"template":{"spec":{"containers":[{"name":"log","image":"log:2"},{"name":"new","image":"new:1"}]}}}}`)
	cs := containers(m)
	if len(cs) != 3 || path(cs[0], "image") != "app:1" || path(cs[1], "image") != "log:2" || path(cs[2], "name") != "new" {
		t.Errorf("containers = %s", js(cs))
	}
}

func TestStrategicMergeMergesEnvByNameAndPortsByContainerPort(t *testing.T) {
	m := smp(t, `{"spec":{"template":{"spec":{"containers":[{"name":"app","env":[{"name":"B","value":"3"},{"name":"C","value":"4"}],"ports":[{"containerPort":443,"name":"https"}]}]}}}}`)
	app := containers(m)[0]
	if got := js(path(app, "env")); got != `[{"name":"A","value":"1"},{"name":"B","value":"3"},{"name":"C","value":"4"}]` {
		t.Errorf("env = %s", got)
	}
	if got := js(path(app, "ports")); got != `[{"containerPort":80},{"containerPort":443,"name":"https"}]` {
		t.Errorf("ports = %s", got)
	}
}

func TestStrategicMergeReplacesListsWithoutMergeStrategy(t *testing.T) {
	m := smp(t, `{"spec":{"template":{"spec":{"containers":[{"name":"app","args":["--b"]}]}}}}`)
	if got := js(path(containers(m)[0], "args")); got != `["--b"]` {
		t.Errorf("args = %s", got)
	}
}

func TestStrategicMergePatchDeleteRemovesListItem(t *testing.T) {
	m := smp(t, `{"spec":{"template":{"spec":{"containers":[{"name":"log","$patch":"delete"}]}}}}`)
	if cs := containers(m); len(cs) != 1 || path(cs[0], "name") != "app" {
		t.Errorf("containers = %s", js(cs))
	}
}

func TestStrategicMergePatchReplaceReplacesWholeList(t *testing.T) {
	m := smp(t, `{"spec":{"template":{"spec":{"containers":[{"$patch":"replace"},{"name":"only","image":"x"}]}}}}`)
	if got := js(containers(m)); got != `[{"image":"x","name":"only"}]` {
		t.Errorf("containers = %s", got)
	}
}

func TestStrategicMergePatchReplaceReplacesMap(t *testing.T) {
	m := smp(t, `{"spec":{"template":{"metadata":{"labels":{"$patch":"replace","tier":"front"}}}}}`)
	if got := js(path(m, "spec", "template", "metadata", "labels")); got != `{"tier":"front"}` {
		t.Errorf("labels = %s", got)
	}
}

func TestStrategicMergeNullDeletesField(t *testing.T) {
	m := smp(t, `{"spec":{"replicas":null}}`)
	if _, ok := path(m, "spec").(map[string]any)["replicas"]; ok {
		t.Error("replicas not deleted")
	}
}

func TestStrategicMergeRetainKeysDropsUnlistedFields(t *testing.T) {
	// What kubectl sends when a strategy changes from RollingUpdate to Recreate.
	m := smp(t, `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`)
	if got := js(path(m, "spec", "strategy")); got != `{"type":"Recreate"}` {
		t.Errorf("strategy = %s", got)
	}
}

func TestStrategicMergeRetainKeysRejectsPatchKeysNotRetained(t *testing.T) {
	_, err := StrategicMerge(deployment, []byte(deploy), []byte(`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate","rollingUpdate":{"maxSurge":1}}}}`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != 400 || pe.Message != "invalid patch format of retainKeys" {
		t.Fatalf("want 400, got %v", err)
	}
}

func TestStrategicMergeDeleteFromPrimitiveListAndSetUnion(t *testing.T) {
	m := smp(t, `{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"finalizers":["c"]}}`)
	if got := js(path(m, "metadata", "finalizers")); got != `["c","b"]` {
		t.Errorf("finalizers = %s", got)
	}
}

func TestStrategicMergeSetElementOrderReordersList(t *testing.T) {
	m := smp(t, `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"log"},{"name":"app"}],"containers":[{"name":"app","image":"app:2"}]}}}}`)
	cs := containers(m)
	if path(cs[0], "name") != "log" || path(cs[1], "image") != "app:2" {
		t.Errorf("containers = %s", js(cs))
	}
}

func TestStrategicMergeSetElementOrderKeepsServerOnlyItemsAfterTheirPredecessors(t *testing.T) {
	orig := `{"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"x"}]}}}}`
	p := `{"spec":{"template":{"spec":{"$setElementOrder/containers":[{"name":"new"},{"name":"a"},{"name":"b"}],"containers":[{"name":"new"}]}}}}`
	out, err := StrategicMerge(deployment, []byte(orig), []byte(p))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	json.Unmarshal(out, &m)
	if got := js(containers(m)); got != `[{"name":"new"},{"name":"a"},{"name":"b"},{"name":"x"}]` {
		t.Errorf("containers = %s", got)
	}
}

func TestStrategicMergePutsNewItemsBeforeServerOnlyItems(t *testing.T) {
	// kube's order: patch items first unless the original order places a
	// server-only item before them (what kubectl patch and set env show).
	m := smp(t, `{"spec":{"template":{"spec":{"containers":[{"name":"new","image":"n"}]}}}}`)
	if got := js(containers(m)); !strings.HasPrefix(got, `[{"image":"n","name":"new"},{"args"`) {
		t.Errorf("containers = %s", got)
	}
	m = smp(t, `{"spec":{"template":{"spec":{"containers":[{"name":"log","image":"log:2"},{"name":"app","image":"app:2"}]}}}}`)
	if got := path(containers(m)[0], "name"); got != "log" {
		t.Errorf("patch order not kept: %s", js(containers(m)))
	}
}

func TestStrategicMergeMissingMergeKeyIsAnError(t *testing.T) {
	_, err := StrategicMerge(deployment, []byte(deploy), []byte(`{"spec":{"template":{"spec":{"containers":[{"image":"x"}]}}}}`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Message != "map: map[image:x] does not contain declared merge key: name" {
		t.Fatalf("got %v", err)
	}
}

func TestStrategicMergeUnknownDirectiveIsAnInternalError(t *testing.T) {
	// kube does not map this error to a Status: it answers 500.
	_, err := StrategicMerge(deployment, []byte(deploy), []byte(`{"spec":{"$patch":"explode"}}`))
	var pe *Error
	if !errors.As(err, &pe) || pe.Code != 500 || pe.Message != "unknown patch type: explode in map: map[$patch:explode]" {
		t.Fatalf("got %v", err)
	}
}

func TestStrategicMergeKeepsNumbersExact(t *testing.T) {
	out, err := StrategicMerge(deployment, []byte(`{"spec":{"replicas":9007199254740993}}`), []byte(`{"spec":{"paused":true}}`))
	if err != nil {
		t.Fatal(err)
	}
	if canon(t, out) == "" || string(out) != `{"spec":{"paused":true,"replicas":9007199254740993}}` {
		t.Errorf("got %s", out)
	}
}

func BenchmarkStrategicMergeDeployment(b *testing.B) {
	patch := []byte(`{"spec":{"replicas":3,"template":{"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"log"}],"containers":[{"name":"app","image":"app:2","env":[{"name":"B","value":"3"}]}]}}}}`)
	orig := []byte(deploy)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StrategicMerge(deployment, orig, patch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkJSONPatchConfigMap(b *testing.B) {
	orig := []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","resourceVersion":"5"},"data":{"a":"1"}}`)
	patch := []byte(`[{"op":"test","path":"/metadata/resourceVersion","value":"5"},{"op":"replace","path":"/data/b","value":"2"}]`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := JSONPatch(orig, patch); err != nil {
			b.Fatal(err)
		}
	}
}

func TestMalformedPatchBodiesGetKubesDecodingErrors(t *testing.T) {
	for _, c := range []struct {
		f    func(a, b []byte) ([]byte, error)
		body string
		msg  string
	}{
		{JSONPatch, `{"op":"add"}`, "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"},
		{JSONPatch, `[{"op":`, "error decoding patch: unexpected end of JSON input"},
		{MergePatch, `[1]`, "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{MergePatch, `{"a":}`, "error decoding patch: invalid character '}' looking for beginning of value"},
	} {
		_, err := c.f([]byte(`{"a":1}`), []byte(c.body))
		var pe *Error
		if !errors.As(err, &pe) || pe.Code != 400 || pe.Reason != "BadRequest" || pe.Message != c.msg {
			t.Errorf("%s: got %v", c.body, err)
		}
	}
}
