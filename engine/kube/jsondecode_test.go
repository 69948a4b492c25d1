package kube

import (
	"bufio"
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
)

// slowDecodeObject is DecodeObject's encoding/json path, the reference.
func slowDecodeObject(b []byte) (Object, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var o Object
	if err := d.Decode(&o); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, &json.SyntaxError{}
	}
	return o, nil
}

// checkFastDecode: whenever the fast decoder answers, encoding/json
// accepts the input and builds the same value.
func checkFastDecode(t *testing.T, b []byte) bool {
	t.Helper()
	fast, ok := fastDecodeObject(b)
	if !ok {
		return false
	}
	slow, err := slowDecodeObject(b)
	if err != nil {
		t.Fatalf("fast decoder accepted what encoding/json refuses (%v): %q", err, b)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("fast decoder disagrees on %q:\n%#v\n%#v", b, fast, slow)
	}
	return true
}

func goldenBodies(t *testing.T) [][]byte {
	f, err := os.Open("../api/kubeapi/testdata/exchanges.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e map[string]json.RawMessage
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		for _, k := range []string{"sent", "received"} {
			if v := e[k]; len(v) > 0 && v[0] == '{' {
				out = append(out, v)
			}
		}
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

func TestFastDecodeObjectBuildsWhatEncodingJSONBuilds(t *testing.T) {
	corpus := append(goldenBodies(t), [][]byte{
		[]byte(` {"a":[],"b":{},"c":[1,-0,0.5,-1.25e+10,1E-3,true,false,null,""]} ` + "\n"),
		[]byte(`{"esc":"a\"b\\c\u00e9\ud83d\ude00\n","utf8":"héllo ☃","dup":1,"dup":2}`),
		[]byte("{\"bad\":\"\xff\xfe\"}"),
		[]byte(`{"a":{"b":{"c":[[[{"d":"e"}]]]}}}`),
	}...)
	answered := 0
	for _, b := range corpus {
		if checkFastDecode(t, b) {
			answered++
		}
	}
	if answered < len(corpus)*9/10 {
		t.Fatalf("fast decoder answered only %d of %d well-formed documents", answered, len(corpus))
	}
	// Refusals fall back, so DecodeObject's errors stay encoding/json's.
	for _, s := range []string{``, `null`, `[]`, `{`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`,
		`{"a":1,}`, `{"a" 1}`, `{a:1}`, `{} {}`, `{} }`, `{}x`, "{\"a\":\"\x01\"}", `{"a":"\x"}`, `{"a":"unterminated}`} {
		if _, ok := fastDecodeObject([]byte(s)); ok {
			t.Errorf("fast decoder answered %q", s)
		}
		_, e1 := DecodeObject([]byte(s))
		_, e2 := slowDecodeObject([]byte(s))
		if (e1 == nil) != (e2 == nil) || e1 != nil && e1.Error() != e2.Error() {
			t.Errorf("%q: DecodeObject %v, encoding/json %v", s, e1, e2)
		}
	}
	if _, ok := fastDecodeObject([]byte(strings.Repeat(`{"a":`, maxDepth+1) + `1` + strings.Repeat(`}`, maxDepth+1))); ok {
		t.Error("fast decoder answered past encoding/json's nesting limit")
	}
}

// Mutations of golden bodies (bytes changed, dropped, duplicated): the
// fast decoder either refuses or agrees with encoding/json.
func TestFastDecodeObjectAgreesOnMutatedBodies(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("{}[]\":,\\ -+.eE0129tfnulx\xc3\xa9\xff\t\n")
	for _, b := range goldenBodies(t) {
		for n := 0; n < 40; n++ {
			m := append([]byte(nil), b...)
			for k := 0; k < 1+rng.IntN(3); k++ {
				i := rng.IntN(len(m))
				switch rng.IntN(3) {
				case 0:
					m[i] = alphabet[rng.IntN(len(alphabet))]
				case 1:
					m = append(m[:i], m[i+1:]...)
				default:
					m = append(m[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, m[i:]...)...)
				}
				if len(m) == 0 {
					break
				}
			}
			checkFastDecode(t, m)
		}
	}
}

func FuzzFastDecodeObject(f *testing.F) {
	f.Add([]byte(`{"a":[1,"x",{"b":null}],"c":"\u00e9"}`))
	f.Fuzz(func(t *testing.T, b []byte) { checkFastDecode(t, b) })
}

func BenchmarkDecodeObject(b *testing.B) {
	body := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","namespace":"default","uid":"dc6a35fd-cf39-4d5f-b239-430946a92560","resourceVersion":"56","creationTimestamp":"2026-11-22T01:45:06Z","managedFields":[{"manager":"Go-http-client","operation":"Update","apiVersion":"v1","time":"2026-11-22T01:45:06Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{".":{},"f:n":{}}}}]},"data":{"n":"12345"}}`)
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			DecodeObject(body)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			slowDecodeObject(body)
		}
	})
}
