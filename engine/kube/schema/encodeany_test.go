package schema

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
)

// encodeAny writes exactly what encoding/json writes, for the values it
// writes itself and for those it hands over.
func TestEncodeAnyWritesWhatEncodingJSONWrites(t *testing.T) {
	values := []any{
		"", "plain", "a\"b", `back\slash`, "<tag>&", "tab\there", "nl\n", "\b\f\r\x01\x1f", "\x7f", "héllo ☃",
		"\xff\xfe", "\u2028\u2029", json.Number("0"), json.Number("-12"), json.Number("1.5e-3"), json.Number("1E+9"),
		json.Number(""), json.Number("01"), json.Number("1."), json.Number("x"), json.Number("-"), json.Number(".5"),
		true, false, nil, int64(7), 2.5, math.NaN(), 3,
		map[string]any{}, map[string]any(nil), []any{}, []any(nil),
		map[string]any{"b": []any{"x", json.Number("1"), nil, map[string]any{"<": "&"}}, "a": true, "é": "\n"},
		[]any{map[string]any{"k": map[string]string{"z": "y"}}, []string{"q"}},
	}
	for _, v := range values {
		var b bytes.Buffer
		err := encodeAny(&b, v)
		want, werr := json.Marshal(v)
		if (err == nil) != (werr == nil) {
			t.Errorf("%#v: error %v, encoding/json %v", v, err, werr)
			continue
		}
		if err != nil {
			if err.Error() != werr.Error() {
				t.Errorf("%#v: error %q, encoding/json %q", v, err, werr)
			}
			continue
		}
		if b.String() != string(want) {
			t.Errorf("%#v: wrote %s, encoding/json %s", v, b.String(), want)
		}
	}
}

// hasUnknown (the allocation-free pre-check) agrees with the full walk.
func TestHasUnknownAgreesWithTheWalk(t *testing.T) {
	dep := ForGVK("apps/v1", "Deployment")
	objs := []map[string]any{
		{"metadata": map[string]any{"name": "d", "labels": map[string]any{"a": "b"}}, "spec": map[string]any{"replicas": json.Number("1")}},
		{"metadata": map[string]any{"name": "d"}, "bogus": true},
		{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "x": 1}}}}}},
		{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "i"}}}}}},
		{"spec": map[string]any{"selector": "not an object"}},
	}
	for _, o := range objs {
		var walked []string
		walkUnknown(dep, o, "", false, &walked)
		if hasUnknown(dep, o) != (len(walked) > 0) {
			t.Errorf("%v: hasUnknown %v, walk %v", o, hasUnknown(dep, o), walked)
		}
	}
}
