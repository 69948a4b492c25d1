// Package goldenfile reads the recordings that golden tests compare with:
// files of JSON lines, one exchange of a real server a line (kube-apiserver
// v1.36.3's in the testdata/*exchanges.jsonl files, copied from
// shared/spec/kube-golden or recorded by test/kubediff). Each test decodes
// a line into a type of its own, with the fields it compares; the reading
// lives here once. It is test tooling: product code must not import it.
package goldenfile

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// Exchange is what every recorded exchange has: the note that names it,
// the status, and the bodies sent and received, left as JSON for the test
// to decode as it compares. A test that compares more (the method, the
// headers) decodes into a type of its own.
type Exchange struct {
	Note     string          `json:"note"`
	Sent     json.RawMessage `json:"sent"`
	Status   int             `json:"status"`
	Received json.RawMessage `json:"received"`
}

// maxLine bounds one recorded exchange (an OpenAPI document is the largest).
const maxLine = 16 << 20

// Read decodes every line of the file at path into an E, in order; a
// line that is not such a JSON object ends the test.
func Read[E any](tb testing.TB, path string) []E {
	tb.Helper()
	var out []E
	each(tb, path, func(line []byte) bool {
		var e E
		if err := json.Unmarshal(line, &e); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		out = append(out, e)
		return true
	})
	return out
}

// Find decodes the first line of the file at path whose "note" is note
// into an E; a file without one ends the test.
func Find[E any](tb testing.TB, path, note string) E {
	tb.Helper()
	var e E
	found := false
	each(tb, path, func(line []byte) bool {
		var n struct {
			Note string `json:"note"`
		}
		if err := json.Unmarshal(line, &n); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		if n.Note != note {
			return true
		}
		if err := json.Unmarshal(line, &e); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		found = true
		return false
	})
	if !found {
		tb.Fatalf("no golden exchange %q in %s", note, path)
	}
	return e
}

// each passes the lines of the file at path to line until it returns false.
func each(tb testing.TB, path string, line func([]byte) bool) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, maxLine)
	for sc.Scan() {
		if !line(sc.Bytes()) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}
