package goldenfile

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func write(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "exchanges.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestReadDecodesEveryLineInOrder(t *testing.T) {
	p := write(t,
		`{"note":"create","status":201,"received":{"kind":"ConfigMap"}}`,
		`{"note":"get","status":200,"received":{"kind":"ConfigMap","extra":1}}`)
	got := Read[Exchange](t, p)
	want := []Exchange{
		{Note: "create", Status: 201, Received: json.RawMessage(`{"kind":"ConfigMap"}`)},
		{Note: "get", Status: 200, Received: json.RawMessage(`{"kind":"ConfigMap","extra":1}`)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Read = %+v, want %+v", got, want)
	}
}

func TestFindIsTheFirstLineWithTheNote(t *testing.T) {
	p := write(t,
		`{"note":"create","status":201}`,
		`{"note":"conflict","status":409}`,
		`{"note":"conflict","status":500}`)
	if got := Find[Exchange](t, p, "conflict"); got.Status != 409 {
		t.Fatalf("Find = %+v, want the first conflict (409)", got)
	}
}

// A line longer than bufio.Scanner's default 64 KiB (an OpenAPI document)
// is read whole.
func TestALongLineIsReadWhole(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	p := write(t, `{"note":"openapi","received":"`+big+`"}`)
	var s string
	if err := json.Unmarshal(Find[Exchange](t, p, "openapi").Received, &s); err != nil || s != big {
		t.Fatalf("the long line was not read whole (%d bytes, %v)", len(s), err)
	}
}

// fatalTB records a Fatalf instead of ending the test, so that a failure
// of Find can be checked.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func TestFindWithoutTheNoteFails(t *testing.T) {
	p := write(t, `{"note":"create","status":201}`)
	tb := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != tb {
				panic(r)
			}
		}()
		Find[Exchange](tb, p, "missing")
	}()
	if !strings.Contains(tb.msg, "no golden exchange") {
		t.Fatalf("Find of a missing note: %q, want a failure naming it", tb.msg)
	}
}
