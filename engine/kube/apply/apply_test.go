package apply

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/kube/schema"
	"github.com/rvplay/rvplay/internal/goldenfile"
)

// exchange is one request/response pair recorded from kube-apiserver
// v1.36.3 (testdata/exchanges.jsonl, copied from spec/kube-golden).
type exchange struct {
	Note     string         `json:"note"`
	Sent     any            `json:"sent"`
	Status   int            `json:"status"`
	Received map[string]any `json:"received"`
}

func golden(t testing.TB, note string) exchange {
	t.Helper()
	return goldenfile.Find[exchange](t, "testdata/exchanges.jsonl", note)
}

var (
	configMap  = schema.ForGVK("v1", "ConfigMap")
	deployment = schema.ForGVK("apps/v1", "Deployment")
	at06       = time.Date(2026, 11, 22, 1, 45, 6, 0, time.UTC)
	at07       = time.Date(2026, 11, 22, 1, 45, 7, 400e6, time.UTC)
)

// roundTrip gives v the shape encoding/json gives it (float64 numbers).
func roundTrip(t testing.TB, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func managedFieldsOf(t testing.TB, obj map[string]any) any {
	t.Helper()
	md, _ := obj["metadata"].(map[string]any)
	return roundTrip(t, map[string]any{"mf": md["managedFields"]})["mf"]
}

func withoutManagedFields(t testing.TB, obj map[string]any) map[string]any {
	c := roundTrip(t, obj)
	delete(c["metadata"].(map[string]any), "managedFields")
	return c
}

// withoutStorageFields drops what the storage layer, not apply, sets.
func withoutStorageFields(t testing.TB, obj map[string]any) map[string]any {
	c := withoutManagedFields(t, obj)
	delete(c["metadata"].(map[string]any), "resourceVersion")
	return c
}

func assertJSONEqual(t *testing.T, what string, got, want any) {
	t.Helper()
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	if string(g) != string(w) {
		t.Errorf("%s:\n got %s\nwant %s", what, g, w)
	}
}

func cmApply(name, key, val string) map[string]any {
	return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": map[string]any{key: val}}
}

func TestApplyByNewManagerAddsApplyEntryBeforeUpdateEntries(t *testing.T) {
	live := golden(t, "strategic merge patch").Received
	want := golden(t, "apply by alice").Received
	got, err := Apply(configMap, "v1", live, cmApply("demo", "owner", "alice"), Write{Manager: "alice", Now: at07}, false)
	if err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, "object", withoutStorageFields(t, got), withoutStorageFields(t, want))
	assertJSONEqual(t, "managedFields", managedFieldsOf(t, got), managedFieldsOf(t, want))
}

func TestApplyConflictNamesManagerAndFields(t *testing.T) {
	live := golden(t, "apply by alice").Received
	want := golden(t, "conflicting apply by bob").Received
	_, err := Apply(configMap, "v1", live, cmApply("demo", "owner", "bob"), Write{Manager: "bob", Now: at07}, false)
	ce, ok := err.(*ConflictError)
	if !ok {
		t.Fatalf("want *ConflictError, got %T %v", err, err)
	}
	if ce.Error() != want["message"] {
		t.Errorf("message %q, want %q", ce.Error(), want["message"])
	}
	assertJSONEqual(t, "causes", roundTrip(t, map[string]any{"c": ce.Causes()}), map[string]any{"c": want["details"].(map[string]any)["causes"]})
}

func TestApplyConflictsWithSeveralManagersAreGroupedAndSorted(t *testing.T) {
	live := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "m"}}
	var err error
	live, err = Apply(configMap, "v1", live, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "m"}, "data": map[string]any{"b": "1", "c": "1"}}, Write{Manager: "zed", Now: at06}, false)
	if err != nil {
		t.Fatal(err)
	}
	upd := roundTrip(t, live)
	upd["data"].(map[string]any)["a"] = "2"
	if err := UpdateManagedFields(configMap, "v1", live, upd, Write{Manager: "kubectl-edit", Now: at06}); err != nil {
		t.Fatal(err)
	}
	_, err = Apply(configMap, "v1", upd, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "m"}, "data": map[string]any{"a": "3", "b": "3", "c": "3"}}, Write{Manager: "me", Now: at07}, false)
	ce, ok := err.(*ConflictError)
	if !ok {
		t.Fatalf("want conflict, got %v", err)
	}
	want := "Apply failed with 3 conflicts: conflicts with \"kubectl-edit\" using v1:\n- .data.a\nconflicts with \"zed\":\n- .data.b\n- .data.c"
	if ce.Error() != want {
		t.Errorf("got %q\nwant %q", ce.Error(), want)
	}
}

func TestApplyForceTakesOwnership(t *testing.T) {
	live := golden(t, "apply by alice").Received
	want := golden(t, "forced apply by bob").Received
	got, err := Apply(configMap, "v1", live, cmApply("demo", "owner", "bob"), Write{Manager: "bob", Now: at07}, true)
	if err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, "object", withoutStorageFields(t, got), withoutStorageFields(t, want))
	assertJSONEqual(t, "managedFields", managedFieldsOf(t, got), managedFieldsOf(t, want))
}

func TestApplyCreatesMissingObject(t *testing.T) {
	want := golden(t, "apply creates a missing object").Received
	got, err := Apply(configMap, "v1", nil, cmApply("applied-new", "k", "v"), Write{Manager: "carol", Now: at07}, false)
	if err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, "managedFields", managedFieldsOf(t, got), managedFieldsOf(t, want))
	assertJSONEqual(t, "data", got["data"], want["data"])
}

func TestApplyRejectsVersionMismatchAndManagedFields(t *testing.T) {
	cfg := cmApply("x", "a", "b")
	cfg["apiVersion"] = "v2"
	_, err := Apply(configMap, "v1", nil, cfg, Write{Manager: "m", Now: at06}, false)
	if be, ok := err.(*BadRequestError); !ok || be.Message != "invalid object type: /v2, Kind=ConfigMap" {
		t.Errorf("got %v", err)
	}
	cfg = cmApply("x", "a", "b")
	cfg["metadata"].(map[string]any)["managedFields"] = []any{}
	_, err = Apply(configMap, "v1", nil, cfg, Write{Manager: "m", Now: at06}, false)
	if be, ok := err.(*BadRequestError); !ok || be.Message != "metadata.managedFields must be nil" {
		t.Errorf("got %v", err)
	}
}

func TestApplyPrunesFieldsTheApplierDropped(t *testing.T) {
	live, err := Apply(configMap, "v1", nil, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "p"}, "data": map[string]any{"a": "1", "b": "2"}}, Write{Manager: "m", Now: at06}, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Apply(configMap, "v1", live, cmApply("p", "a", "1"), Write{Manager: "m", Now: at07}, false)
	if err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, "data", got["data"], map[string]any{"a": "1"})
}

func TestApplyMergesContainersByNameAndKeepsOthersFields(t *testing.T) {
	live := golden(t, "create deployment (defaulting shown)").Received
	cfg := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "nginx"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "sidecar", "image": "busybox"}}}}}}
	got, err := Apply(deployment, "apps/v1", live, cfg, Write{Manager: "sidecar-injector", Now: at07}, false)
	if err != nil {
		t.Fatal(err)
	}
	cs := got["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
	if len(cs) != 2 || cs[0].(map[string]any)["name"] != "nginx" || cs[1].(map[string]any)["name"] != "sidecar" {
		t.Errorf("containers = %v", cs)
	}
	// Changing the nginx image conflicts with the creator, named with its apiVersion.
	cfg = map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "nginx"},
		"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "nginx", "image": "nginx:1.27"}}}}}}
	_, err = Apply(deployment, "apps/v1", got, cfg, Write{Manager: "kubectl", Now: at07}, false)
	ce, ok := err.(*ConflictError)
	if !ok {
		t.Fatalf("want conflict, got %v", err)
	}
	want := `Apply failed with 1 conflict: conflict with "Python-urllib" using apps/v1: .spec.template.spec.containers[name="nginx"].image`
	if ce.Error() != want {
		t.Errorf("got %q\nwant %q", ce.Error(), want)
	}
}

func TestUpdateRecordsCreateAsUpdateEntry(t *testing.T) {
	for _, note := range []string{"create", "create deployment (defaulting shown)"} {
		want := golden(t, note).Received
		newObj := withoutManagedFields(t, want)
		typ := configMap
		av := "v1"
		if want["kind"] == "Deployment" {
			typ, av = deployment, "apps/v1"
		}
		if err := UpdateManagedFields(typ, av, nil, newObj, Write{Manager: "Python-urllib", Now: at06}); err != nil {
			t.Fatal(err)
		}
		w := roundTrip(t, want)
		for _, e := range w["metadata"].(map[string]any)["managedFields"].([]any) {
			e.(map[string]any)["time"] = "2026-11-22T01:45:06Z"
		}
		assertJSONEqual(t, note, managedFieldsOf(t, newObj), managedFieldsOf(t, w))
	}
}

func TestUpdateMovesTimeWhenTheWriteChangesFields(t *testing.T) {
	old := golden(t, "get before patches").Received
	want := golden(t, "merge patch with current resourceVersion").Received
	newObj := withoutManagedFields(t, want)
	newObj["metadata"].(map[string]any)["managedFields"] = old["metadata"].(map[string]any)["managedFields"]
	if err := UpdateManagedFields(configMap, "v1", old, newObj, Write{Manager: "Python-urllib", Now: at07}); err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, "added field moves time", managedFieldsOf(t, newObj), managedFieldsOf(t, want))

	// Changing a value the manager already owns keeps the set and moves the time.
	again := roundTrip(t, want)
	again["data"].(map[string]any)["a"] = "9"
	if err := UpdateManagedFields(configMap, "v1", want, again, Write{Manager: "Python-urllib", Now: at07.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	w := roundTrip(t, want)
	w["metadata"].(map[string]any)["managedFields"].([]any)[0].(map[string]any)["time"] = "2026-11-22T02:45:07Z"
	assertJSONEqual(t, "owned value change", managedFieldsOf(t, again), managedFieldsOf(t, w))
}

func TestUpdateThroughScaleMovesReplicasToScaleEntry(t *testing.T) {
	old := golden(t, "deployment update without resourceVersion").Received
	want := golden(t, "deployment after scale: generation").Received
	newObj := roundTrip(t, old)
	newObj["spec"].(map[string]any)["replicas"] = 5
	if err := UpdateManagedFields(deployment, "apps/v1", old, newObj, Write{Manager: "Python-urllib", Subresource: "scale", Now: at07}); err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, "managedFields", managedFieldsOf(t, newObj), managedFieldsOf(t, want))
}

func TestUpdateThroughStatusRecordsStatusEntry(t *testing.T) {
	old := golden(t, "deployment after scale: generation").Received
	want := golden(t, "deployment after status update").Received
	newObj := withoutManagedFields(t, want)
	if err := UpdateManagedFields(deployment, "apps/v1", old, newObj, Write{Manager: "Python-urllib", Subresource: "status", Now: at07}); err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, "managedFields", managedFieldsOf(t, newObj), managedFieldsOf(t, want))
}

func TestUpdateNoOpLeavesManagedFieldsIdentical(t *testing.T) {
	old := golden(t, "deployment after status update").Received
	newObj := roundTrip(t, old)
	if err := UpdateManagedFields(deployment, "apps/v1", old, newObj, Write{Manager: "someone-else", Now: at07.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, "managedFields", managedFieldsOf(t, newObj), managedFieldsOf(t, old))
}

func TestUpdateWithExplicitEmptyManagedFieldsResetsThem(t *testing.T) {
	old := golden(t, "apply by alice").Received
	for _, reset := range []any{[]any{}, []any{map[string]any{}}} {
		newObj := roundTrip(t, old)
		newObj["metadata"].(map[string]any)["managedFields"] = reset
		if err := UpdateManagedFields(configMap, "v1", old, newObj, Write{Manager: "x", Now: at07}); err != nil {
			t.Fatal(err)
		}
		if _, ok := newObj["metadata"].(map[string]any)["managedFields"]; ok {
			t.Errorf("managedFields not reset: %v", newObj["metadata"])
		}
	}
	// What the resetting write changes is still recorded.
	newObj := roundTrip(t, old)
	newObj["metadata"].(map[string]any)["managedFields"] = []any{}
	newObj["data"].(map[string]any)["z"] = "1"
	if err := UpdateManagedFields(configMap, "v1", old, newObj, Write{Manager: "x", Now: at07}); err != nil {
		t.Fatal(err)
	}
	if got := js(t, managedFieldsOf(t, newObj)); got != `[{"apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:z":{}}},"manager":"x","operation":"Update","time":"2026-11-22T01:45:07Z"}]` {
		t.Errorf("got %s", got)
	}
}

func TestConflictMessageShowsSubresourceManagers(t *testing.T) {
	k := managerKey("ctrl", OperationUpdate, "apps/v1", "status")
	if got, want := printManager(k), `"ctrl" with subresource "status" using apps/v1`; got != want {
		t.Errorf("got %s want %s", got, want)
	}
	if !strings.HasPrefix(managerKey("a", OperationApply, "v1", ""), `{"manager":"a","operation":"Apply"}`) {
		t.Error("apply key must not carry apiVersion")
	}
	_ = reflect.DeepEqual
}

func BenchmarkApplyDeployment(b *testing.B) {
	live := golden(b, "create deployment (defaulting shown)").Received
	cfg := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "nginx", "labels": map[string]any{"team": "a"}},
		"spec": map[string]any{"replicas": 4, "template": map[string]any{"spec": map[string]any{"containers": []any{
			map[string]any{"name": "sidecar", "image": "busybox", "env": []any{map[string]any{"name": "A", "value": "1"}}}}}}}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Apply(deployment, "apps/v1", live, cfg, Write{Manager: "bench", Now: at07}, true); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUpdateManagedFieldsDeployment(b *testing.B) {
	old := golden(b, "create deployment (defaulting shown)").Received
	newObj := roundTrip(b, old)
	newObj["spec"].(map[string]any)["replicas"] = 7
	b.ReportAllocs()
	for b.Loop() {
		n := roundTrip(b, newObj)
		if err := UpdateManagedFields(deployment, "apps/v1", old, n, Write{Manager: "bench", Now: at07}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestUpdateKeepsAtMostTenUpdateManagersFoldingOldestIntoAncientChanges(t *testing.T) {
	obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "m"}, "data": map[string]any{}}
	var old map[string]any
	for i := 0; i < 12; i++ {
		next := roundTrip(t, obj)
		next["data"].(map[string]any)[string(rune('a'+i))] = "x"
		if err := UpdateManagedFields(configMap, "v1", old, next, Write{Manager: "mgr-" + string(rune('a'+i)), Now: at06.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
		old, obj = next, next
	}
	entries := obj["metadata"].(map[string]any)["managedFields"].([]any)
	if len(entries) > MaxUpdateManagers+1 {
		t.Fatalf("%d entries", len(entries))
	}
	first := entries[0].(map[string]any)
	if first["manager"] != "ancient-changes" || !strings.HasPrefix(js(t, first["fieldsV1"]), `{"f:data":{".":{},"f:a":{},"f:b":{}`) {
		t.Errorf("first entry = %v", js(t, first))
	}
}

func TestApplyThroughStatusOwnsStatusOnly(t *testing.T) {
	live := golden(t, "deployment after scale: generation").Received
	cfg := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "nginx"},
		"spec": map[string]any{"replicas": 1}, "status": map[string]any{"readyReplicas": 2}}
	got, err := Apply(deployment, "apps/v1", live, cfg, Write{Manager: "ctrl", Subresource: "status", Now: at07}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got["metadata"].(map[string]any)["managedFields"].([]any) {
		m := e.(map[string]any)
		if m["manager"] == "ctrl" {
			if m["subresource"] != "status" || js(t, m["fieldsV1"]) != `{"f:status":{"f:readyReplicas":{}}}` {
				t.Errorf("ctrl entry = %s", js(t, m))
			}
			return
		}
	}
	t.Error("no entry for ctrl")
}

func js(t testing.TB, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// csaObject is a deployment as client-side apply leaves it: the
// last-applied annotation and an Update entry of kubectl-client-side-apply.
func csaObject(t *testing.T) map[string]any {
	cfg := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"replicas": 2, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:1"}}}}}}
	last, _ := json.Marshal(cfg)
	obj := roundTrip(t, cfg)
	obj["metadata"].(map[string]any)["annotations"] = map[string]any{LastAppliedAnnotation: string(last) + "\n"}
	if err := UpdateManagedFields(deployment, "apps/v1", nil, obj, Write{Manager: "kubectl-client-side-apply", Now: at06}); err != nil {
		t.Fatal(err)
	}
	return obj
}

func TestKubectlServerSideApplyTakesOverFromClientSideApplyWithoutForce(t *testing.T) {
	live := csaObject(t)
	cfg := roundTrip(t, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"},
		"spec": map[string]any{"replicas": 5, "selector": map[string]any{"matchLabels": map[string]any{"app": "web"}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "web"}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "app:2"}}}}}})
	got, err := Apply(deployment, "apps/v1", live, cfg, Write{Manager: "kubectl", Now: at07}, false)
	if err != nil {
		t.Fatalf("want migration without conflict, got %v", err)
	}
	if js(t, got["spec"].(map[string]any)["replicas"]) != "5" {
		t.Errorf("replicas not applied: %s", js(t, got["spec"]))
	}
	last := annotations(got)[LastAppliedAnnotation].(string)
	if !strings.Contains(last, `"replicas":5`) || !strings.HasSuffix(last, "\n") {
		t.Errorf("last-applied not synced: %q", last)
	}
	// Any other manager still conflicts.
	_, err = Apply(deployment, "apps/v1", live, cfg, Write{Manager: "ops", Now: at07}, false)
	if _, ok := err.(*ConflictError); !ok {
		t.Errorf("want conflict for another manager, got %v", err)
	}
}

func TestKubectlServerSideApplyConflictsOnFieldsChangedSinceClientSideApply(t *testing.T) {
	live := csaObject(t)
	scaled := roundTrip(t, live)
	scaled["spec"].(map[string]any)["replicas"] = 3
	if err := UpdateManagedFields(deployment, "apps/v1", live, scaled, Write{Manager: "kubectl-client-side-apply", Now: at07}); err != nil {
		t.Fatal(err)
	}
	cfg := roundTrip(t, map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web"}, "spec": map[string]any{"replicas": 4}})
	_, err := Apply(deployment, "apps/v1", scaled, cfg, Write{Manager: "kubectl", Now: at07}, false)
	ce, ok := err.(*ConflictError)
	if !ok || len(ce.Conflicts) != 1 || ce.Conflicts[0].Field != ".spec.replicas" {
		t.Errorf("want a conflict on .spec.replicas, got %v", err)
	}
}

func TestApplyToUntrackedObjectConflictsWithBeforeFirstApply(t *testing.T) {
	// As if written through the etcd gateway: no managedFields.
	live := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "raw", "namespace": "default"}, "data": map[string]any{"a": "1"}}
	_, err := Apply(configMap, "v1", live, cmApply("raw", "a", "2"), Write{Manager: "me", Now: at07}, false)
	ce, ok := err.(*ConflictError)
	if !ok || ce.Error() != `Apply failed with 1 conflict: conflict with "before-first-apply" using v1: .data.a` {
		t.Fatalf("got %v", err)
	}
	got, err := Apply(configMap, "v1", live, cmApply("raw", "b", "2"), Write{Manager: "me", Now: at07}, false)
	if err != nil {
		t.Fatal(err)
	}
	if m := js(t, managedFieldsOf(t, got)); !strings.Contains(m, `"manager":"before-first-apply"`) {
		t.Errorf("managedFields = %s", m)
	}
}

func BenchmarkUpdateManagedFieldsConfigMap(b *testing.B) {
	old := golden(b, "merge patch with current resourceVersion").Received
	newObj := roundTrip(b, old)
	newObj["data"].(map[string]any)["a"] = "2"
	b.ReportAllocs()
	for b.Loop() {
		n := roundTrip(b, newObj)
		if err := UpdateManagedFields(configMap, "v1", old, n, Write{Manager: "Python-urllib", Now: at07}); err != nil {
			b.Fatal(err)
		}
	}
}

func TestApplyAcceptsKubectlGeneratedObjectsWithNulls(t *testing.T) {
	// kubectl ≤1.33 writes "creationTimestamp": null, "strategy": {},
	// "resources": {} and "status": {} into generated manifests.
	b, err := os.ReadFile("testdata/kubectl-1.27-create-deployment.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	got, err := Apply(deployment, "apps/v1", nil, cfg, Write{Manager: "kubectl", Now: at07}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := UpdateManagedFields(deployment, "apps/v1", nil, roundTrip(t, cfg), Write{Manager: "kubectl-create", Now: at07}); err != nil {
		t.Fatal(err)
	}
	// The top-level creationTimestamp is nobody's; the template's null one
	// is owned, as on a real cluster.
	if mf := js(t, managedFieldsOf(t, got)); !strings.Contains(mf, `"f:image":{}`) || !strings.Contains(mf, `"fieldsV1":{"f:metadata":{"f:labels"`) {
		t.Errorf("managedFields = %s", mf)
	}
}

func TestApplyWithUnknownFieldFailsAsKubeDoes(t *testing.T) {
	cfg := cmApply("x", "a", "b")
	cfg["bogus"] = 1
	_, err := Apply(configMap, "v1", nil, cfg, Write{Manager: "m", Now: at06}, false)
	if err == nil || err.Error() != "failed to create typed patch object (/x; /v1, Kind=ConfigMap): .bogus: field not declared in schema" {
		t.Errorf("got %v", err)
	}
	cfg = cmApply("x", "a", "b")
	cfg["kind"] = "Secret"
	_, err = Apply(configMap, "v1", nil, cfg, Write{Manager: "m", Now: at06}, false)
	if be, ok := err.(*BadRequestError); !ok || be.Message != "invalid object type: /v1, Kind=Secret" {
		t.Errorf("got %v", err)
	}
}
