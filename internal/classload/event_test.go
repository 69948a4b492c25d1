package classload

import (
	"encoding/json"
	"strings"
	"testing"
)

// Events as kube-apiserver encodes them (and rvplay, whose encoding
// test/kubediff compares with its): the scan reads what a full decoding
// reads, and leaves to it what it cannot read.
func TestAnEventIsScannedAsItIsDecoded(t *testing.T) {
	for _, c := range []struct {
		line    string
		scanned bool
	}{
		{`{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"w001-1","namespace":"default","uid":"1b4e","resourceVersion":"1042","creationTimestamp":"2026-11-26T01:00:00Z","labels":{"name":"other"},"managedFields":[{"manager":"classload","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:pad":{}}}}]},"data":{"pad":"xx","resourceVersion":"7"}}}`, true},
		{`{"type":"DELETED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"w001-1","namespace":"default","resourceVersion":"1043"}}}`, true},
		{`{"type":"BOOKMARK","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"resourceVersion":"1050","annotations":{"k8s.io/initial-events-end":"true"}}}}`, true},
		{`{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a\"b","resourceVersion":"9"}}}`, false},
		{`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (9)","reason":"Expired","code":410}}`, false},
		{`{"object":{"metadata":{"name":"a","resourceVersion":"3"}},"type":"ADDED"}`, false},
	} {
		var scanned, full watchEvent
		if err := json.Unmarshal([]byte(c.line), &full); err != nil {
			t.Fatal(err)
		}
		if ok := scanEvent([]byte(c.line), &scanned); ok != c.scanned {
			t.Errorf("%s: scanned %v, want %v", c.line, ok, c.scanned)
		} else if ok && scanned != full {
			t.Errorf("%s: scanned %+v, decoded %+v", c.line, scanned, full)
		}
		var er eventReader
		var ev watchEvent
		if err := er.decode([]byte(c.line), &ev); err != nil || ev != full {
			t.Errorf("%s: read %+v (%v), decoded %+v", c.line, ev, err, full)
		}
	}
}

// Every decodeEvery events, the scan is checked against a full decoding:
// an event it would misread is reported.
func TestAMisreadEventIsReported(t *testing.T) {
	// Well formed, but its metadata's first resourceVersion member is
	// not the object's own (a layout kube never writes).
	line := []byte(`{"type":"ADDED","object":{"metadata":{"name":"a","annotations":{"x":{"resourceVersion":"1"}},"resourceVersion":"3"}}}`)
	er := eventReader{seen: decodeEvery - 1}
	var ev watchEvent
	if err := er.decode(line, &ev); err == nil {
		t.Fatalf("read as %+v without an error", ev)
	}
}

// BenchmarkReadEvent reads a class load's event as a watcher does.
func BenchmarkReadEvent(b *testing.B) {
	line := []byte(`{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"w001-1","namespace":"default",` +
		`"uid":"1b4e8c1e-4c1f-4d8a-9d35-6a0c6f1f2a10","resourceVersion":"1042","creationTimestamp":"2026-11-26T01:00:00Z",` +
		`"managedFields":[{"manager":"classload","operation":"Update","apiVersion":"v1","time":"2026-11-26T01:00:00Z","fieldsType":"FieldsV1",` +
		`"fieldsV1":{"f:data":{".":{},"f:pad":{},"f:seq":{},"f:writer":{}}}}]},` +
		`"data":{"pad":"` + strings.Repeat("x", 256) + `","seq":"12","writer":"s-001"}}}`)
	b.Run("scanned", func(b *testing.B) {
		var er eventReader
		var ev watchEvent
		for b.Loop() {
			if err := er.decode(line, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decoded", func(b *testing.B) {
		for b.Loop() {
			var ev watchEvent
			if err := json.Unmarshal(line, &ev); err != nil {
				b.Fatal(err)
			}
		}
	})
}
