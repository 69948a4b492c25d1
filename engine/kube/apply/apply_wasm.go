//go:build js && wasm

package apply

import "github.com/rvplay/rvplay/engine/kube/schema"

// In the js/wasm build, server-side apply and field tracking are the
// hand-written ApplyLite and UpdateManagedFieldsLite: structured-merge-diff
// does not fit the WebAssembly size budget (see the package doc). They
// agree with kube's own field manager on every sequence of the kubediff
// oracle, as the structured-merge-diff build does.

// Apply: see apply_smd.go (ApplyLite here).
func Apply(t *schema.Type, apiVersion string, live, config map[string]any, w Write, force bool) (map[string]any, error) {
	return ApplyLite(t, apiVersion, live, config, w, force)
}

// UpdateManagedFields: see apply_smd.go (UpdateManagedFieldsLite here).
func UpdateManagedFields(t *schema.Type, apiVersion string, oldObj, newObj map[string]any, w Write) error {
	return UpdateManagedFieldsLite(t, apiVersion, oldObj, newObj, w)
}
