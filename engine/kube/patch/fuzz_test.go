package patch

import (
	"testing"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Patches come straight from clients: no input may panic.
func FuzzStrategicMergeNeverPanics(f *testing.F) {
	f.Add([]byte(deploy), []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"log","$patch":"delete"}]}}}}`))
	f.Add([]byte(deploy), []byte(`{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`))
	f.Add([]byte(deploy), []byte(`{"metadata":{"$deleteFromPrimitiveList/finalizers":["a"],"$setElementOrder/finalizers":["b"]}}`))
	f.Add([]byte(`{}`), []byte(`{"spec":{"template":{"spec":{"containers":[{"$patch":"replace"},1]}}}}`))
	f.Fuzz(func(t *testing.T, orig, p []byte) {
		StrategicMerge(schema.ForGVK("apps/v1", "Deployment"), orig, p)
		MergePatch(orig, p)
		JSONPatch(orig, p)
	})
}
