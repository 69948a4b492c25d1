package kube

import (
	"encoding/json"
	"fmt"
	"testing"
)

// Deleting a namespace starts its termination, as kube-apiserver's
// namespace storage does: the namespace stays, Terminating, with a
// deletionTimestamp and its "kubernetes" finalizer; nothing new may be
// created in it (NamespaceLifecycle, with the cause controllers look
// for); a second delete changes nothing; the namespace goes when the
// finalize subresource empties spec.finalizers.
func TestDeletingANamespaceStartsItsTermination(t *testing.T) {
	f := newFixture(t)
	f.create(t, namespaces, "", obj(t, `{"metadata":{"name":"team"}}`))
	f.create(t, configmaps, "team", cm("a", nil))
	res, err := f.s.Delete(f.ctx, namespaces, "", "team", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ns := res.(Object)
	if pathString("status", "phase")(ns) != "Terminating" || str(meta(ns), "deletionTimestamp") == "" || len(finalizers(ns)) != 0 ||
		fmt.Sprint(namespaceSpecFinalizers(ns)) != "[kubernetes]" {
		t.Fatalf("%v", ns)
	}
	if _, err := f.s.Get(f.ctx, configmaps, "team", "a", ""); err != nil {
		t.Fatalf("the namespace's content went with the delete: %v", err)
	}
	_, err = f.s.Create(f.ctx, configmaps, "team", obj(t, `{"metadata":{"generateName":"b-"}}`), WriteOptions{})
	wantStatus(t, err, 403, ReasonForbidden, `configmaps "b-" is forbidden: unable to create new content in namespace team because it is being terminated`)
	if c := AsStatus(err).Status.Details.Causes; len(c) != 1 || c[0].Type != NamespaceTerminatingCause || c[0].Field != "metadata.namespace" {
		t.Fatalf("causes %+v", c)
	}
	again, err := f.s.Delete(f.ctx, namespaces, "", "team", DeleteOptions{})
	if err != nil || ResourceVersion(again.(Object)) != ResourceVersion(ns) {
		t.Fatalf("second delete: %v %v", again, err)
	}
	// the namespace controller's last step
	fin := copyObject(ns)
	fin["spec"] = map[string]any{}
	if _, err := f.s.Finalize(f.ctx, namespaces, "team", fin, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Get(f.ctx, namespaces, "", "team", ""); AsStatus(err).Code() != 404 {
		t.Fatalf("finalized namespace still there: %v", err)
	}
}

// An orphan delete of a namespace adds the garbage collector's finalizer
// too, so the namespace outlives its finalize until the collector is done.
func TestANamespaceDeletedWithOrphanWaitsForTheCollector(t *testing.T) {
	f := newFixture(t)
	f.create(t, namespaces, "", obj(t, `{"metadata":{"name":"team"}}`))
	res, err := f.s.Delete(f.ctx, namespaces, "", "team", DeleteOptions{PropagationPolicy: DeletePropagationOrphan})
	if err != nil || fmt.Sprint(finalizersOf(res.(Object))) != "[orphan]" {
		t.Fatalf("%v %v", res, err)
	}
	fin := copyObject(res.(Object))
	fin["spec"] = map[string]any{}
	out, err := f.s.Finalize(f.ctx, namespaces, "team", fin, WriteOptions{})
	if err != nil || len(namespaceSpecFinalizers(out.Object)) != 0 {
		t.Fatalf("%v %v", out, err)
	}
	if _, err := f.s.Get(f.ctx, namespaces, "", "team", ""); err != nil {
		t.Fatalf("gone before the collector removed its finalizer: %v", err)
	}
}

// A new Namespace gets the "kubernetes" finalizer from the namespace
// strategy's PrepareForCreate, after its managedFields are recorded (kube's
// create handler runs the field manager before rest.BeforeCreate): the
// finalizer is added to those the client gave and is owned by no manager;
// those the client gave are the client's.
func TestANewNamespacesFinalizerIsOwnedByNoManager(t *testing.T) {
	f := newFixture(t)
	for _, c := range []struct{ body, finalizers, fields string }{
		{`{"metadata":{"name":"plain"}}`, "[kubernetes]",
			`{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}}}`},
		{`{"metadata":{"name":"given"},"spec":{"finalizers":["example.com/keep"]}}`, "[example.com/keep kubernetes]",
			`{"f:metadata":{"f:labels":{".":{},"f:kubernetes.io/metadata.name":{}}},"f:spec":{"f:finalizers":{}}}`},
	} {
		ns := f.create(t, namespaces, "", obj(t, c.body))
		mf, _ := meta(ns)["managedFields"].([]any)
		if got := fmt.Sprint(namespaceSpecFinalizers(ns)); got != c.finalizers || len(mf) != 1 {
			t.Fatalf("%s: finalizers %s, managedFields %v", c.body, got, mf)
		}
		if got, _ := json.Marshal(mf[0].(map[string]any)["fieldsV1"]); string(got) != c.fields {
			t.Errorf("%s: fieldsV1 %s, want %s", c.body, got, c.fields)
		}
	}
}

// An update of a Namespace keeps its stored spec.finalizers, as the
// namespace strategy's PrepareForUpdate does: only the finalize
// subresource changes them, so a replace without them (or with others)
// cannot take the namespace controller's finalizer away.
func TestAnUpdateKeepsANamespacesFinalizers(t *testing.T) {
	f := newFixture(t)
	ns := f.create(t, namespaces, "", obj(t, `{"metadata":{"name":"team"}}`))
	for _, spec := range []any{nil, map[string]any{}, map[string]any{"finalizers": []any{"example.com/other"}}} {
		u := copyObject(ns)
		if spec == nil {
			delete(u, "spec")
		} else {
			u["spec"] = spec
		}
		w, err := f.s.Update(f.ctx, namespaces, "", "team", "", u, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(namespaceSpecFinalizers(w.Object)); got != "[kubernetes]" {
			t.Fatalf("spec %v: finalizers %s", spec, got)
		}
		ns = w.Object
	}
}
