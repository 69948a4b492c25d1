package kube

import "testing"

// Pruning unknown fields keeps an object's apiVersion and kind because
// every kind served declares them, as kube's Go types do (TypeMeta).
func TestEveryKindDeclaresAPIVersionAndKind(t *testing.T) {
	for _, r := range append(Resources, scaleResource) {
		typ := r.Schema()
		if typ == nil {
			continue // served without a schema: nothing is pruned
		}
		for _, f := range []string{"apiVersion", "kind"} {
			if typ.Field(f) == nil {
				t.Errorf("%s %s does not declare %s", r.GroupVersion(), r.Kind, f)
			}
		}
	}
}
