//go:build js && wasm

package kubegolden

import (
	"encoding/json"
	"strings"

	yaml "go.yaml.in/yaml/v2"
)

// pageBody is the body as the lab page sends it to the in-browser engine:
// YAML is converted to JSON in the page (the WebAssembly build carries no
// YAML library), and YAML that does not parse is never sent.
func pageBody(contentType string, body []byte) ([]byte, bool) {
	if !strings.Contains(contentType, "yaml") || json.Valid(body) {
		return body, true
	}
	var v any
	if err := yaml.Unmarshal(body, &v); err != nil {
		return nil, false
	}
	j, err := json.Marshal(toJSONable(v))
	if err != nil {
		return nil, false
	}
	return j, true
}

func toJSONable(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			ks, _ := k.(string)
			m[ks] = toJSONable(e)
		}
		return m
	case []any:
		for i := range x {
			x[i] = toJSONable(x[i])
		}
	}
	return v
}
