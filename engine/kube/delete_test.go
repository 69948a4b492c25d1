package kube

import (
	"fmt"
	"testing"
	"time"
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

func finalizersOf(o Object) []string {
	var out []string
	for _, f := range finalizers(o) {
		out = append(out, f.(string))
	}
	return out
}

// A delete hands the dependents to the garbage collector through
// finalizers: Orphan and Foreground keep the object, with a
// deletionTimestamp, a new generation and the collector's finalizer, until
// the collector is done; Background (the default) deletes at once.
func TestPropagationPolicySetsTheGarbageCollectorsFinalizers(t *testing.T) {
	f := newFixture(t)
	yes, no := true, false
	for _, c := range []struct {
		opts DeleteOptions
		want []string // nil: deleted at once
	}{
		{DeleteOptions{PropagationPolicy: DeletePropagationOrphan}, []string{FinalizerOrphanDependents}},
		{DeleteOptions{PropagationPolicy: DeletePropagationForeground}, []string{FinalizerDeleteDependents}},
		{DeleteOptions{OrphanDependents: &yes}, []string{FinalizerOrphanDependents}},
		{DeleteOptions{PropagationPolicy: DeletePropagationBackground}, nil},
		{DeleteOptions{OrphanDependents: &no}, nil},
		{DeleteOptions{}, nil},
	} {
		created := f.create(t, deployments, "default", obj(t, nginx))
		res, err := f.s.Delete(f.ctx, deployments, "default", "nginx", c.opts)
		if err != nil {
			t.Fatal(err)
		}
		if c.want == nil {
			if st, ok := res.(*Status); !ok || st.Status != "Success" {
				t.Fatalf("%+v: %v, want deleted at once", c.opts, res)
			}
			continue
		}
		kept, ok := res.(Object)
		if !ok || fmt.Sprint(finalizersOf(kept)) != fmt.Sprint(c.want) || str(meta(kept), "deletionTimestamp") == "" ||
			intAt(kept, "metadata", "generation") != intAt(created, "metadata", "generation")+1 || intAt(kept, "metadata", "deletionGracePeriodSeconds") != 0 {
			t.Fatalf("%+v: %v", c.opts, res)
		}
		// the collector is done: removing its finalizer deletes
		setFinalizers(kept, nil)
		if _, err := f.s.Update(f.ctx, deployments, "default", "nginx", "", kept, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.s.Get(f.ctx, deployments, "default", "nginx", ""); AsStatus(err).Code() != 404 {
			t.Fatalf("%+v: still there after its finalizer went: %v", c.opts, err)
		}
	}
}

// A second delete changes the garbage collector's finalizer as its policy
// says, without a new deletionTimestamp or generation; without a policy the
// finalizer stays. An object kept by another finalizer is not deleted by a
// Background delete, only marked.
func TestASecondDeleteChangesThePolicy(t *testing.T) {
	f := newFixture(t)
	f.create(t, deployments, "default", obj(t, nginx))
	first, err := f.s.Delete(f.ctx, deployments, "default", "nginx", DeleteOptions{PropagationPolicy: DeletePropagationForeground})
	if err != nil {
		t.Fatal(err)
	}
	f.clock.Step(time.Minute)
	again, err := f.s.Delete(f.ctx, deployments, "default", "nginx", DeleteOptions{})
	if err != nil || fmt.Sprint(finalizersOf(again.(Object))) != "[foregroundDeletion]" || ResourceVersion(again.(Object)) != ResourceVersion(first.(Object)) {
		t.Fatalf("a delete without a policy changed the object: %v %v", again, err)
	}
	orphan, err := f.s.Delete(f.ctx, deployments, "default", "nginx", DeleteOptions{PropagationPolicy: DeletePropagationOrphan})
	if err != nil {
		t.Fatal(err)
	}
	om, fm := meta(orphan.(Object)), meta(first.(Object))
	if fmt.Sprint(finalizersOf(orphan.(Object))) != "[orphan]" || om["deletionTimestamp"] != fm["deletionTimestamp"] || om["generation"] != fm["generation"] {
		t.Fatalf("second delete: %v", orphan)
	}
	if _, err := f.s.Delete(f.ctx, deployments, "default", "nginx", DeleteOptions{PropagationPolicy: DeletePropagationBackground}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Get(f.ctx, deployments, "default", "nginx", ""); AsStatus(err).Code() != 404 {
		t.Fatalf("Background after Orphan: the last finalizer went, the object should be gone: %v", err)
	}

	o := cm("kept", nil)
	meta(o)["finalizers"] = []any{"example.com/keep"}
	f.create(t, configmaps, "default", o)
	res, err := f.s.Delete(f.ctx, configmaps, "default", "kept", DeleteOptions{PropagationPolicy: DeletePropagationBackground})
	if err != nil || fmt.Sprint(finalizersOf(res.(Object))) != "[example.com/keep]" || str(meta(res.(Object)), "deletionTimestamp") == "" {
		t.Fatalf("%v %v", res, err)
	}
}
