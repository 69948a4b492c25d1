package schema

import (
	"encoding/json"
	"strconv"
)

// JSONEqual compares two decoded JSON values: objects member by member,
// arrays item by item, numbers by value whether they were decoded as
// json.Number, float64 or an integer (kube compares what json.Unmarshal
// decodes, where 1 and 1.0 are the same float64), anything else with ==.
// The API server's no-op and generation rules, apply, strategic merge
// patch and the lesson engine's predicates all compare with it.
func JSONEqual(a, b any) bool { return jsonEqual(a, b, true) }

// jsonEqual is JSONEqual with numbers compared by value or, as
// reflect.DeepEqual does, by their decoded type and value.
func jsonEqual(a, b any, numbersByValue bool) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w, numbersByValue) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i], numbersByValue) {
				return false
			}
		}
		return true
	}
	if x, ok := canonNumber(a); ok && numbersByValue {
		y, ok := canonNumber(b)
		return ok && x == y
	}
	return a == b
}

// canonNumber renders a JSON number (json.Number, int64, int, float64)
// canonically so that values decoded differently compare equal.
func canonNumber(v any) (string, bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return strconv.FormatInt(i, 10), true
		}
		f, err := x.Float64()
		if err != nil {
			return string(x), true
		}
		return canonFloat(f), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	case int32:
		return strconv.FormatInt(int64(x), 10), true
	case float64:
		return canonFloat(x), true
	}
	return "", false
}

func canonFloat(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
