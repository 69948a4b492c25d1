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
