package kube

import (
	"context"
	"testing"
)

// kube-apiserver's NamespaceLifecycle refuses to delete default,
// kube-system and kube-public, for everyone, dry run or not, present or not;
// any other namespace (kube-node-lease too) may be deleted.
func TestTheImmortalNamespacesMayNotBeDeleted(t *testing.T) {
	f := newFixture(t)
	for _, ns := range []string{"default", "kube-system", "kube-public"} {
		for _, dry := range []bool{false, true} {
			_, err := f.s.Delete(f.ctx, namespaces, "", ns, DeleteOptions{DryRun: dry})
			wantStatus(t, err, 403, ReasonForbidden, `namespaces "`+ns+`" is forbidden: this namespace may not be deleted`)
			se := err.(*StatusError)
			if d := se.Status.Details; d == nil || d.Name != ns || d.Kind != "namespaces" || d.Group != "" {
				t.Fatalf("details %+v", d)
			}
		}
	}
	// A deletecollection stops at the first immortal one, as kube's does.
	if _, err := f.s.DeleteCollection(f.ctx, namespaces, "", ListOptions{}, DeleteOptions{}); err == nil {
		t.Fatal("deletecollection of every namespace succeeded")
	}
	if _, err := f.s.Get(context.Background(), namespaces, "", "default", ""); err != nil {
		t.Fatalf("default is gone: %v", err)
	}
	f.create(t, configmaps, "default", cm("still", nil))
	if _, err := f.s.Delete(f.ctx, namespaces, "", "kube-node-lease", DeleteOptions{}); err != nil {
		t.Fatalf("kube-node-lease: %v", err)
	}
}
