package schema

import (
	"encoding/json"
	"testing"
)

// Values compare as kube compares what json.Unmarshal decodes: a number is
// its value at any depth, however it is written.
func TestJSONEqualComparesNumbersByValueAtEveryDepth(t *testing.T) {
	a := map[string]any{"port": json.Number("80"), "tags": []any{json.Number("1e3")}}
	b := map[string]any{"port": json.Number("80.0"), "tags": []any{json.Number("1000")}}
	if !JSONEqual(a, b) {
		t.Errorf("%v and %v differ", a, b)
	}
	if JSONEqual(a, map[string]any{"port": json.Number("81"), "tags": []any{json.Number("1000")}}) {
		t.Error("80 and 81 are equal")
	}
	if JSONEqual([]any{"x"}, []any{"x", "y"}) || JSONEqual(map[string]any{"a": nil}, map[string]any{"b": nil}) {
		t.Error("lists or objects of different members are equal")
	}
}
