package schema

import (
	"reflect"
	"testing"
)

// An enum's values compare as kube-openapi compares them: a number
// converted to the enum value's type, anything else by reflect.DeepEqual,
// so that nested numbers of different decoded types differ.
func TestEnumValuesCompareAsKubeOpenAPI(t *testing.T) {
	values := []any{
		nil, true, false, "Allow", "", int64(1), float64(1), float64(1.5),
		map[string]any{"a": int64(1)}, map[string]any{"a": float64(1)}, map[string]any{"a": int64(1), "b": "x"},
		map[string]any{}, []any{"x", int64(2)}, []any{"x", float64(2)}, []any{}, []any{map[string]any{"a": "b"}},
	}
	converted := func(x, e any) bool { // kube-openapi's conversion of a number to the enum's type
		xi, xok := x.(int64)
		ef, eok := e.(float64)
		if xok && eok {
			return float64(xi) == ef
		}
		xf, xok := x.(float64)
		ei, eok := e.(int64)
		return xok && eok && int64(xf) == ei
	}
	for _, x := range values {
		for _, e := range values {
			want := e != nil && (reflect.DeepEqual(x, e) || converted(x, e))
			if got := enumEqual(x, e); got != want {
				t.Errorf("enumEqual(%#v, %#v) = %v, want %v", x, e, got, want)
			}
		}
	}
}
