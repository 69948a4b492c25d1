//go:build !(js && wasm)

package kubeapi

import (
	"encoding/json"
	"fmt"

	yaml "go.yaml.in/yaml/v2"
)

// yamlToJSON converts one YAML document to JSON, as kube's YAML decoder
// does before decoding (sigs.k8s.io/yaml's YAMLToJSON).
func yamlToJSON(b []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("error converting YAML to JSON: %v", err)
	}
	c, err := jsonable(v)
	if err != nil {
		return nil, fmt.Errorf("error converting YAML to JSON: %v", err)
	}
	return json.Marshal(c)
}

func jsonable(v any) (any, error) {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			var ks string
			switch kk := k.(type) {
			case string:
				ks = kk
			case int, int64, uint64, float64, bool:
				ks = fmt.Sprint(kk)
			case nil:
				ks = "null"
			default:
				return nil, fmt.Errorf("unsupported map key of type %T", k)
			}
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			m[ks] = c
		}
		return m, nil
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			c, err := jsonable(e)
			if err != nil {
				return nil, err
			}
			l[i] = c
		}
		return l, nil
	}
	return v, nil
}
