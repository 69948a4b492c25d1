package kube

import (
	"encoding/json"
	"testing"
)

func TestUpdateWithStaleResourceVersionIsConflict(t *testing.T) {
	f := newFixture(t)
	a := f.create(t, configmaps, "default", cm("a", map[string]any{"k": "1"}))
	b := copyObject(a)
	b["data"] = map[string]any{"k": "2"}
	b2, err := object(f.s.Update(f.ctx, configmaps, "default", "a", "", b, WriteOptions{FieldManager: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	if ResourceVersion(b2) == ResourceVersion(a) {
		t.Fatal("rv did not move")
	}
	c := copyObject(a)
	c["data"] = map[string]any{"k": "3"}
	_, err = f.s.Update(f.ctx, configmaps, "default", "a", "", c, WriteOptions{})
	wantStatus(t, err, 409, ReasonConflict, `Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again`)
}

func TestUpdateWithoutResourceVersionIsUnconditional(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", map[string]any{"k": "1"}))
	out, err := object(f.s.Update(f.ctx, configmaps, "default", "a", "", cm("a", map[string]any{"k": "2"}), WriteOptions{}))
	if err != nil || pathValue(out, "data", "k") != "2" {
		t.Fatalf("%v %v", out, err)
	}
}

func TestNoOpUpdateKeepsResourceVersion(t *testing.T) {
	f := newFixture(t)
	a := f.create(t, configmaps, "default", cm("a", map[string]any{"k": "1"}))
	rev := f.store.Rev()
	out, err := object(f.s.Update(f.ctx, configmaps, "default", "a", "", copyObject(a), WriteOptions{FieldManager: "test"}))
	if err != nil {
		t.Fatal(err)
	}
	if ResourceVersion(out) != ResourceVersion(a) || f.store.Rev() != rev {
		t.Fatalf("no-op moved rv: %s -> %s (store %d -> %d)", ResourceVersion(a), ResourceVersion(out), rev, f.store.Rev())
	}
}

func TestUpdateOfMissingObjectIsNotFound(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Update(f.ctx, configmaps, "default", "a", "", cm("a", nil), WriteOptions{})
	wantStatus(t, err, 404, ReasonNotFound, `configmaps "a" not found`)
}

func TestUpdateNameMismatchIsBadRequest(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Update(f.ctx, configmaps, "default", "a", "", cm("b", nil), WriteOptions{})
	wantStatus(t, err, 400, ReasonBadRequest, `the name of the object (b) does not match the name on the URL (a)`)
}

func TestUpdateWithOtherUIDIsStorageConflict(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	o := cm("a", nil)
	meta(o)["uid"] = "other"
	_, err := f.s.Update(f.ctx, configmaps, "default", "a", "", o, WriteOptions{})
	wantStatus(t, err, 409, ReasonConflict, `Operation cannot be fulfilled on configmaps "a": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/a, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: uid-5`)
}

func TestGenerationMovesOnSpecChangesOnly(t *testing.T) {
	f := newFixture(t)
	d := f.create(t, deployments, "default", obj(t, nginx))
	if g, _ := numberInt(meta(d)["generation"]); g != 1 {
		t.Fatalf("generation %v", meta(d)["generation"])
	}
	d2 := copyObject(d)
	meta(d2)["labels"] = map[string]any{"app": "nginx", "x": "y"}
	d2, err := object(f.s.Update(f.ctx, deployments, "default", "nginx", "", d2, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := numberInt(meta(d2)["generation"]); g != 1 {
		t.Fatalf("label change moved generation: %v", g)
	}
	d3 := copyObject(d2)
	d3["spec"].(map[string]any)["replicas"] = json.Number("5")
	d3, err = object(f.s.Update(f.ctx, deployments, "default", "nginx", "", d3, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := numberInt(meta(d3)["generation"]); g != 2 {
		t.Fatalf("spec change: generation %v", g)
	}
}

func TestStatusSubresourceSplit(t *testing.T) {
	f := newFixture(t)
	d := f.create(t, deployments, "default", obj(t, nginx))
	// main endpoint ignores status
	d["status"] = map[string]any{"observedGeneration": json.Number("9")}
	d2, err := object(f.s.Update(f.ctx, deployments, "default", "nginx", "", d, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if ResourceVersion(d2) != ResourceVersion(d) {
		t.Fatalf("status-only change on main endpoint was written: %v", d2["status"])
	}
	// status endpoint ignores spec
	d3 := copyObject(d2)
	d3["spec"].(map[string]any)["replicas"] = json.Number("9")
	d3["status"] = map[string]any{"replicas": json.Number("3")}
	d4, err := object(f.s.Update(f.ctx, deployments, "default", "nginx", "status", d3, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := numberInt(pathValue(d4, "spec", "replicas")); r != 3 {
		t.Fatalf("status update changed spec: %v", r)
	}
	if r, _ := numberInt(pathValue(d4, "status", "replicas")); r != 3 {
		t.Fatalf("status not written: %v", d4["status"])
	}
}

func TestUpdateWithoutResourceVersionIsInvalidWhereTheTypeForbidsIt(t *testing.T) {
	f := newFixture(t)
	strict := &Resource{Version: "v1", Kind: "ConfigMap", ListKind: "ConfigMapList", Resource: "configmaps", Namespaced: true}
	f.create(t, strict, "default", cm("a", nil))
	_, err := f.s.Update(f.ctx, strict, "default", "a", "", cm("a", nil), WriteOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `configmaps "a" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`)
	if d := AsStatus(err).Status.Details; d.Kind != "configmaps" || d.Causes[0].Field != "metadata.resourceVersion" {
		t.Fatalf("%+v", d)
	}
}
