package etcdgw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The scanner is only a shortcut: whenever it answers, its answer must be
// exactly what encoding/json (the reference path) would have produced.

func FuzzScannerAgreesWithEncodingJSON(f *testing.F) {
	for _, s := range []string{
		`{"key":"Zm9v","value":"YmFy"}`,
		` {"key" : "Zm9v" , "key":"YmFy", "prevKv":true} trailing`,
		`{"compare":[{"key":"Zm9v","target":"MOD","result":"EQUAL","mod_revision":"2"}],"success":[{"request_put":{"key":"Zm9v","value":"eA=="}}],"failure":[]}`,
		`{"a":-0.5e+10,"b":[1,[2,{}]],"c":null,"d":false,"é":1}`,
		`{"a":"\u0041"}`, `{"a":01}`, `[1, 2 ,3]`, `[]`, `{}`, ``, `   `, `"x"`, `123abc`,
		`{"a":"\xff"}`, `{"limit":"9223372036854775808"}`, `{"limit":"-0"}`, `{"key":"Zm9v="}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if start, end, empty, ok := firstValue(body, nil, where{}); ok {
			var first json.RawMessage
			err := json.NewDecoder(bytes.NewReader(body)).Decode(&first)
			switch {
			case empty && err == nil, !empty && err != nil:
				t.Fatalf("firstValue(%q) = %q, empty %v; json.Decoder: %q, %v", body, body[start:end], empty, first, err)
			case !empty && !bytes.Equal(first, body[start:end]):
				t.Fatalf("firstValue(%q) = %q; json.Decoder: %q", body, body[start:end], first)
			}
		}
		if ms, ok := splitObject(body, nil, nil, where{}); ok {
			var want map[string]json.RawMessage
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatalf("splitObject accepted %q; encoding/json: %v", body, err)
			}
			got := map[string]json.RawMessage{}
			for _, m := range ms {
				got[string(m.name)] = m.raw
			}
			if len(got) != len(want) {
				t.Fatalf("splitObject(%q) = %q; encoding/json: %q", body, got, want)
			}
			for k, v := range want {
				if !bytes.Equal(got[k], v) {
					t.Fatalf("splitObject(%q)[%q] = %q; encoding/json: %q", body, k, got[k], v)
				}
			}
		}
		if elems, ok := splitArray(body, nil, nil, where{}); ok {
			var want []json.RawMessage
			if err := json.Unmarshal(body, &want); err != nil {
				t.Fatalf("splitArray accepted %q; encoding/json: %v", body, err)
			}
			if len(elems) != len(want) {
				t.Fatalf("splitArray(%q) = %q; encoding/json: %q", body, elems, want)
			}
			for i := range want {
				if !bytes.Equal(elems[i], want[i]) {
					t.Fatalf("splitArray(%q)[%d] = %q; encoding/json: %q", body, i, elems[i], want[i])
				}
			}
		}
		if b, ok := plainBytes(body); ok {
			var want []byte
			if err := json.Unmarshal(body, &want); err != nil || !bytes.Equal(b, want) || (b == nil) != (want == nil) {
				t.Fatalf("plainBytes(%q) = %q; encoding/json: %q, %v", body, b, want, err)
			}
		}
		if v, ok := plainInt64(body); ok {
			var want int64
			if err := json.Unmarshal(body, &want); err != nil || v != want {
				t.Fatalf("plainInt64(%q) = %d; encoding/json: %d, %v", body, v, want, err)
			}
		}
		// The whole decoder, both ways: the same request or the same error.
		for _, d := range messageDecoders {
			fast, fastErr := d.decode(body, false)
			ref, refErr := d.decode(body, true)
			if errText(fastErr) != errText(refErr) || !equalJSON(fast, ref) {
				t.Fatalf("%s(%q): scanner %+v, %v; reference %+v, %v", d.name, body, fast, fastErr, ref, refErr)
			}
		}
	})
}

func TestScannerDecodesLikeTheReference(t *testing.T) {
	for _, body := range []string{
		`{"key":"Zm9v","value":"YmFy","prev_kv":true,"lease":"7","ignore_value":false}`,
		`{"key":"Zm9v","key":"YmFy","prevKv":null}`,
		`{"prevKv":true,"prev_kv":false,"sortTarget":"MOD","sort_target":"KEY","rangeEnd":"AA==","range_end":"YQ=="}`,
		`{"key":"Zm9v","limit":"5","sort_order":"DESCEND","sortTarget":3,"revision":"-1"}`,
		`{"compare":[{"key":"Zm9v","target":"MOD","result":"EQUAL","mod_revision":"2"}],"success":[{"request_put":{"key":"Zm9v","value":"eA=="}},{"requestRange":{"key":"Zm9v"}}],"failure":[{"request_range":null}]}`,
		`{"key":"Zm9v!"}`, `{"limit":"1e2"}`, `{"limit":1.5}`, `{"prev_kv":"true"}`, `{"compare":[null]}`,
		`{"success":[{"request_txn":{"success":[{"request_put":{"key":"YQ=="}}]}}]}`,
		`{"create_request":{"key":"Zm9v","start_revision":"3","filters":["NOPUT",1]}}`,
		`{"cancel_request":{"watch_id":"4"}}`, `{"progress_request":{}}`,
	} {
		for _, d := range messageDecoders {
			fast, fastErr := d.decode([]byte(body), false)
			ref, refErr := d.decode([]byte(body), true)
			if errText(fastErr) != errText(refErr) || !equalJSON(fast, ref) {
				t.Errorf("%s(%s): scanner %+v, %v; reference %+v, %v", d.name, body, fast, fastErr, ref, refErr)
			}
		}
	}
}

// messageDecoders decode a body into each request type, through the scanner
// or through the reference path alone, so that both can be compared.
var messageDecoders = []struct {
	name   string
	decode func(body []byte, reference bool) (any, error)
}{
	{"range", func(body []byte, reference bool) (any, error) {
		var r mvcc.RangeRequest
		err := withPath(reference, func() error {
			return decodeBody(body, func(raw []byte) error { return decodeRange(raw, &r) })
		})
		return r, err
	}},
	{"put", func(body []byte, reference bool) (any, error) {
		var r mvcc.PutRequest
		err := withPath(reference, func() error {
			return decodeBody(body, func(raw []byte) error { return decodePut(raw, &r) })
		})
		return r, err
	}},
	{"txn", func(body []byte, reference bool) (any, error) {
		var r mvcc.TxnRequest
		err := withPath(reference, func() error {
			return decodeTxnBody(body, &r, mvcc.DefaultMaxTxnOps)
		})
		return r, err
	}},
	{"watch", func(body []byte, reference bool) (any, error) {
		var r watchRequest
		err := withPath(reference, func() error {
			return decodeBody(body, func(raw []byte) error { return decodeWatchRequest(raw, &r) })
		})
		var create any
		if r.create != nil {
			create = *r.create
		}
		return []any{create, r.cancel, r.progress}, err
	}},
}

// withPath runs fn with the scanner on (reference false) or off.
func withPath(reference bool, fn func() error) error {
	referenceOnly = reference
	defer func() { referenceOnly = false }()
	return fn()
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// The scanner accepts exactly what encoding/json accepts, so that the
// reference path only ever sees invalid input (which it refuses in one
// pass) and never decodes a deep body level by level.
func TestScannerAcceptsExactlyValidJSON(t *testing.T) {
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, body := range []string{
		`{"a":"\u0041"}`, `{"\u0061":1}`, `{"é":1}`, `{"a\"b":1,"a\"b":2}`, `{"\ud800":1}`, "{\"\xff\":1}",
		`{"k":"\n\t\/\\"}`, `{"a":01}`, `{"a":1.}`, `{"a":tru}`, `{"a":1,}`, `{"a" 1}`, `{"a":1} x`,
		`[1,]`, `{"a":"\x"}`, `{"a":"\u12"}`, `{"a":"\u12G4"}`, `{"\q":1}`, "{\"a\x01\":1}",
		`{"a":` + nest(maxScanDepth-1) + `}`, `{"a":` + nest(maxScanDepth) + `}`,
		nest(maxScanDepth), nest(maxScanDepth + 1),
	} {
		b := []byte(body)
		_, end, _, ok := firstValue(b, nil, where{})
		if ok = ok && skipSpace(b, end) == len(b); ok != json.Valid(b) {
			t.Errorf("firstValue(%.40s...): ok %v, json.Valid %v", body, ok, !ok)
		}
		if _, ok := splitObject(b, nil, nil, where{}); ok && !json.Valid(b) {
			t.Errorf("splitObject accepted %.40s", body)
		}
	}
}
