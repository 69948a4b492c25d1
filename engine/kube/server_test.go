package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type fixture struct {
	s     *Registry
	store *mvcc.Store
	clock *FakeClock
	ctx   context.Context
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c := NewFakeClock(t0)
	n := 0
	s := New(StoreKV(st), Options{Clock: c, NewUID: func() string { n++; return fmt.Sprintf("uid-%d", n) }})
	t.Cleanup(s.Close)
	return &fixture{s: s, store: st, clock: c, ctx: context.Background()}
}

var (
	configmaps  = Lookup("", "v1", "configmaps")
	deployments = Lookup("apps", "v1", "deployments")
	namespaces  = Lookup("", "v1", "namespaces")
	pods        = Lookup("", "v1", "pods")
)

func obj(t testing.TB, s string) Object {
	t.Helper()
	o, err := DecodeObject([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func cm(name string, data map[string]any) Object {
	return Object{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name}, "data": data}
}

func wantStatus(t *testing.T, err error, code int, reason, msg string) {
	t.Helper()
	var se *StatusError
	if !errors.As(err, &se) {
		if code == 500 && reason == "" && err != nil && err.Error() == msg {
			return
		}
		t.Fatalf("got %v, want Status %d %s", err, code, reason)
	}
	if se.Code() != code || se.Status.Reason != reason || (msg != "" && se.Status.Message != msg) {
		t.Fatalf("got %d %s %q, want %d %s %q", se.Code(), se.Status.Reason, se.Status.Message, code, reason, msg)
	}
}

func (f *fixture) create(t *testing.T, r *Resource, ns string, o Object) Object {
	t.Helper()
	out, err := f.s.Create(f.ctx, r, ns, o, WriteOptions{FieldManager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestCreateStoresUnderKubeKeyWithModRevisionAsResourceVersion(t *testing.T) {
	f := newFixture(t)
	out := f.create(t, configmaps, "default", cm("a", map[string]any{"k": "v"}))
	resp, err := f.store.Range(f.ctx, &mvcc.RangeRequest{Key: []byte("/registry/configmaps/default/a")})
	if err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("range: %v %v", resp, err)
	}
	kv := resp.Kvs[0]
	if ResourceVersion(out) != formatRV(kv.ModRevision) {
		t.Fatalf("rv %s, mod_revision %d", ResourceVersion(out), kv.ModRevision)
	}
	if strings.Contains(string(kv.Value), "resourceVersion") {
		t.Fatalf("stored value carries resourceVersion: %s", kv.Value)
	}
	if UID(out) == "" || str(meta(out), "creationTimestamp") != "2026-01-02T03:04:05Z" {
		t.Fatalf("system fields: %v", meta(out))
	}
}

func TestCreateTwiceIsAlreadyExists(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	_, err := f.s.Create(f.ctx, configmaps, "default", cm("a", nil), WriteOptions{})
	wantStatus(t, err, 409, ReasonAlreadyExists, `configmaps "a" already exists`)
}

func TestCreateWithResourceVersionIsPlain500(t *testing.T) {
	f := newFixture(t)
	o := cm("a", nil)
	meta(o)["resourceVersion"] = "5"
	_, err := f.s.Create(f.ctx, configmaps, "default", o, WriteOptions{})
	if err == nil || AsStatus(err).Code() != 500 || AsStatus(err).Status.Reason != "" ||
		err.Error() != "resourceVersion should not be set on objects to be created" {
		t.Fatalf("got %v", err)
	}
}

func TestCreateGenerateNameMakesAName(t *testing.T) {
	f := newFixture(t)
	o := cm("", nil)
	meta(o)["generateName"] = "x-"
	out := f.create(t, configmaps, "default", o)
	if n := Name(out); !strings.HasPrefix(n, "x-") || len(n) != 7 {
		t.Fatalf("name %q", n)
	}
}

func TestCreateInMissingNamespaceIsNotFound(t *testing.T) {
	f := newFixture(t)
	_, err := f.s.Create(f.ctx, configmaps, "nope", cm("a", nil), WriteOptions{})
	wantStatus(t, err, 404, ReasonNotFound, `namespaces "nope" not found`)
}

func TestUpdateWithStaleResourceVersionIsConflict(t *testing.T) {
	f := newFixture(t)
	a := f.create(t, configmaps, "default", cm("a", map[string]any{"k": "1"}))
	b := copyObject(a)
	b["data"] = map[string]any{"k": "2"}
	b2, err := f.s.Update(f.ctx, configmaps, "default", "a", "", b, WriteOptions{FieldManager: "test"})
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
	out, err := f.s.Update(f.ctx, configmaps, "default", "a", "", cm("a", map[string]any{"k": "2"}), WriteOptions{})
	if err != nil || pathValue(out, "data", "k") != "2" {
		t.Fatalf("%v %v", out, err)
	}
}

func TestNoOpUpdateKeepsResourceVersion(t *testing.T) {
	f := newFixture(t)
	a := f.create(t, configmaps, "default", cm("a", map[string]any{"k": "1"}))
	rev := f.store.Rev()
	out, err := f.s.Update(f.ctx, configmaps, "default", "a", "", copyObject(a), WriteOptions{FieldManager: "test"})
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

const nginx = `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","labels":{"app":"nginx"}},"spec":{"replicas":3,"selector":{"matchLabels":{"app":"nginx"}},"template":{"metadata":{"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.21"}]}}}}`

func TestGenerationMovesOnSpecChangesOnly(t *testing.T) {
	f := newFixture(t)
	d := f.create(t, deployments, "default", obj(t, nginx))
	if g, _ := numberInt(meta(d)["generation"]); g != 1 {
		t.Fatalf("generation %v", meta(d)["generation"])
	}
	d2 := copyObject(d)
	meta(d2)["labels"] = map[string]any{"app": "nginx", "x": "y"}
	d2, err := f.s.Update(f.ctx, deployments, "default", "nginx", "", d2, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g, _ := numberInt(meta(d2)["generation"]); g != 1 {
		t.Fatalf("label change moved generation: %v", g)
	}
	d3 := copyObject(d2)
	d3["spec"].(map[string]any)["replicas"] = json.Number("5")
	d3, err = f.s.Update(f.ctx, deployments, "default", "nginx", "", d3, WriteOptions{})
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
	d2, err := f.s.Update(f.ctx, deployments, "default", "nginx", "", d, WriteOptions{})
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
	d4, err := f.s.Update(f.ctx, deployments, "default", "nginx", "status", d3, WriteOptions{})
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

func TestDeletePreconditions(t *testing.T) {
	f := newFixture(t)
	a := f.create(t, configmaps, "default", cm("a", nil))
	stale, wrong := "1", "nope"
	_, err := f.s.Delete(f.ctx, configmaps, "default", "a", DeleteOptions{Preconditions: &Preconditions{ResourceVersion: &stale}})
	wantStatus(t, err, 409, ReasonConflict, fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "a": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (%s). The object might have been modified`, ResourceVersion(a)))
	_, err = f.s.Delete(f.ctx, configmaps, "default", "a", DeleteOptions{Preconditions: &Preconditions{UID: &wrong}})
	wantStatus(t, err, 409, ReasonConflict, fmt.Sprintf(`Operation cannot be fulfilled on ConfigMap "a": the UID in the precondition (nope) does not match the UID in record (%s). The object might have been deleted and then recreated`, UID(a)))
	res, err := f.s.Delete(f.ctx, configmaps, "default", "a", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st, ok := res.(*Status)
	if !ok || st.Status != "Success" || st.Details.UID != UID(a) {
		t.Fatalf("%#v", res)
	}
	_, err = f.s.Delete(f.ctx, configmaps, "default", "a", DeleteOptions{})
	wantStatus(t, err, 404, ReasonNotFound, `configmaps "a" not found`)
}

func TestScaleSubresource(t *testing.T) {
	f := newFixture(t)
	f.create(t, deployments, "default", obj(t, nginx))
	sc, err := f.s.GetScale(f.ctx, deployments, "default", "nginx")
	if err != nil {
		t.Fatal(err)
	}
	if pathValue(sc, "status", "selector") != "app=nginx" {
		t.Fatalf("%v", sc)
	}
	sc["spec"] = map[string]any{"replicas": json.Number("5")}
	sc2, err := f.s.UpdateScale(f.ctx, deployments, "default", "nginx", sc, WriteOptions{FieldManager: "test"})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := f.s.Get(f.ctx, deployments, "default", "nginx", "")
	if r, _ := numberInt(pathValue(d, "spec", "replicas")); r != 5 || ResourceVersion(d) != ResourceVersion(sc2) {
		t.Fatalf("%v", d)
	}
	if g, _ := numberInt(meta(d)["generation"]); g != 2 {
		t.Fatalf("generation %v", g)
	}
	_, err = f.s.UpdateScale(f.ctx, deployments, "default", "nginx", sc, WriteOptions{})
	wantStatus(t, err, 409, ReasonConflict, "")
}

func TestGetFutureResourceVersionIsTooLarge(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", nil))
	_, err := f.s.Get(f.ctx, configmaps, "default", "a", "999")
	wantStatus(t, err, 504, ReasonTimeout, fmt.Sprintf("Timeout: Too large resource version: 999, current: %d", f.store.Rev()))
	_, err = f.s.Get(f.ctx, configmaps, "default", "a", "abc")
	wantStatus(t, err, 400, ReasonBadRequest, `invalid resource version: resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax`)
}

func TestSplicedAnswersEqualDecodedAnswers(t *testing.T) {
	f := newFixture(t)
	f.create(t, configmaps, "default", cm("a", map[string]any{"k": "v<&>"}))
	o := obj(t, nginx)
	meta(o)["annotations"] = map[string]any{"x": "y"}
	meta(o)["finalizers"] = []any{"f"}
	f.create(t, deployments, "default", o)
	for _, c := range []struct {
		r   *Resource
		key string
	}{{configmaps, "/registry/configmaps/default/a"}, {deployments, "/registry/deployments/default/nginx"},
		{namespaces, "/registry/namespaces/default"}} {
		kv, _, _ := f.s.get(f.ctx, c.key, 0)
		dec, _ := decodeKV(kv)
		want := string(c.r.Encode(dec))
		got, ok := spliceRV(kv.Value, formatRV(kv.ModRevision), false)
		if !ok || string(got) != want {
			t.Errorf("%s:\n got %s\nwant %s", c.key, got, want)
		}
	}
	for _, bad := range []string{`[]`, `{"metadata":5}`, `{"kind":"X"}`, `{"metadata":{"resourceVersion":"1"}}`, `{"a":`, `{"metadata":{}} x`} {
		if _, ok := spliceRV([]byte(bad), "1", false); ok {
			t.Errorf("%s: spliced", bad)
		}
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

func TestFinalizersMakeDeleteGraceful(t *testing.T) {
	f := newFixture(t)
	o := cm("a", nil)
	meta(o)["finalizers"] = []any{"example.com/keep"}
	f.create(t, configmaps, "default", o)
	res, err := f.s.Delete(f.ctx, configmaps, "default", "a", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kept, ok := res.(Object)
	if !ok || str(meta(kept), "deletionTimestamp") == "" {
		t.Fatalf("%v", res)
	}
	delete(meta(kept), "finalizers")
	out, err := f.s.Update(f.ctx, configmaps, "default", "a", "", kept, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Get(f.ctx, configmaps, "default", "a", ""); AsStatus(err).Code() != 404 {
		t.Fatalf("removing the last finalizer did not delete: %v %v", out, err)
	}
}
