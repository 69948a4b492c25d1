//go:build js && wasm

package kubeapi

import (
	"encoding/json"
	"errors"
)

// yamlToJSON, in the browser build, accepts JSON only (JSON is YAML): the lab
// page converts YAML to JSON before it sends a request, because a YAML
// library costs about 0.1 MB gzip in the WebAssembly build.
func yamlToJSON(b []byte) ([]byte, error) {
	if json.Valid(b) {
		return b, nil
	}
	return nil, errors.New("error converting YAML to JSON: the in-browser lab takes YAML bodies as JSON (the page converts them)")
}
