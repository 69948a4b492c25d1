//go:build js && wasm

package apply

import "github.com/rvplay/rvplay/engine/kube/schema"

// UnavailableMessage is the message of the error Apply answers in the
// js/wasm build.
const UnavailableMessage = "server-side apply is not available in the in-browser lab: " +
	"its library (sigs.k8s.io/structured-merge-diff) does not fit the WebAssembly size budget; " +
	"open a server session to use server-side apply, or use create, replace or patch " +
	"(JSON, merge or strategic merge) here"

// Apply, in the js/wasm build, checks the configuration as the server build
// does (version and kind, no managedFields) and then answers a
// *BadRequestError with UnavailableMessage, which the REST layer turns into
// a 400 BadRequest Status. Nothing is written.
func Apply(t *schema.Type, apiVersion string, live, config map[string]any, w Write, force bool) (map[string]any, error) {
	av, _ := config["apiVersion"].(string)
	kind, _ := config["kind"].(string)
	if want := t.GVKs[0]; av != apiVersion || kind != want.Kind {
		return nil, &BadRequestError{"invalid object type: " + gvkString(av, kind)}
	}
	if md, ok := config["metadata"].(map[string]any); ok {
		if mf, present := md["managedFields"]; present && mf != nil {
			return nil, &BadRequestError{"metadata.managedFields must be nil"}
		}
	}
	return nil, &BadRequestError{UnavailableMessage}
}

// UpdateManagedFields, in the js/wasm build, does not track fields: the
// stored managedFields are carried over unchanged (no new entries, no
// times moved, nothing taken from other managers). What the client may do
// with them stays as in the server build: managedFields sent by the client
// on a main-resource write replace the stored ones, and an explicit [] or
// [{}] removes them. Subresource writes always keep the stored ones.
// It never fails.
func UpdateManagedFields(t *schema.Type, apiVersion string, oldObj, newObj map[string]any, w Write) error {
	md, _ := newObj["metadata"].(map[string]any)
	if md == nil {
		return nil
	}
	sent, present := md["managedFields"]
	switch {
	case w.Subresource == "" && present && isResetManagedFields(sent):
		delete(md, "managedFields")
	case w.Subresource == "" && present && sent != nil:
		// the client's replace the stored ones
	default:
		delete(md, "managedFields")
		if oldObj == nil {
			return nil
		}
		omd, _ := oldObj["metadata"].(map[string]any)
		if mf, ok := omd["managedFields"]; ok && mf != nil {
			md["managedFields"] = deepCopy(mf)
		}
	}
	return nil
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}
