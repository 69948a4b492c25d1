package kube

import (
	"fmt"
	"testing"
)

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
	out, err := object(f.s.Update(f.ctx, configmaps, "default", "a", "", kept, WriteOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Get(f.ctx, configmaps, "default", "a", ""); AsStatus(err).Code() != 404 {
		t.Fatalf("removing the last finalizer did not delete: %v %v", out, err)
	}
}
