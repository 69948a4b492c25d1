package apply

import (
	"encoding/json"
	"testing"
)

// Apply configurations and stored managedFields are client-controlled: no
// input may panic.
func FuzzApplyNeverPanics(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":{"template":{"spec":{"containers":[{"name":"a"},{"name":"a"}]}}}}`),
		[]byte(`{"metadata":{"managedFields":[{"manager":"m","operation":"Update","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}}}]},"spec":{"replicas":1}}`))
	f.Add([]byte(`{"apiVersion":"apps/v1","spec":{"replicas":"x"}}`), []byte(`{"metadata":{"managedFields":[{"fieldsV1":{"k:bad":{}}}]}}`))
	f.Fuzz(func(t *testing.T, cfgJSON, liveJSON []byte) {
		var cfg, live map[string]any
		if json.Unmarshal(cfgJSON, &cfg) != nil || json.Unmarshal(liveJSON, &live) != nil || cfg == nil {
			return
		}
		Apply(deployment, "apps/v1", live, cfg, Write{Manager: "f", Now: at06}, false)
		UpdateManagedFields(deployment, "apps/v1", live, cfg, Write{Manager: "g", Now: at06})
		// Forced, on fresh copies (the calls above may change their input).
		var cfg2, live2 map[string]any
		json.Unmarshal(cfgJSON, &cfg2)
		json.Unmarshal(liveJSON, &live2)
		Apply(deployment, "apps/v1", live2, cfg2, Write{Manager: "f", Now: at06}, true)
	})
}
