//go:build !(js && wasm)

package apply

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The direct FieldsV1 conversions build what the JSON round trips build.
func TestFieldsV1ConversionsAgreeWithTheJSONRoundTrips(t *testing.T) {
	tries := []string{
		`{}`,
		`{"f:data":{".":{},"f:n":{}}}`,
		`{"f:metadata":{"f:labels":{".":{},"f:app":{}},"f:annotations":{}},"f:spec":{"f:containers":{"k:{\"name\":\"web\"}":{".":{},"f:image":{},"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}}}}}}`,
		`{"f:x":{".":{}},"f:y":{"f:z":{".":{}}},"v:\"a\"":{},"i:3":{"f:q":{}},"z:unknown":{"f:w":{}},"f:only":{"z:unknown":{}}}`,
		`{"f:a":{"f:b":{"f:c":{"f:d":{}}},".":{}},"k:{\"port\":8080,\"protocol\":\"<&>\"}":{}}`,
	}
	for _, tr := range tries {
		var v any
		if err := json.Unmarshal([]byte(tr), &v); err != nil {
			t.Fatal(err)
		}
		want := &fieldpath.Set{}
		if err := want.FromJSON(bytes.NewReader([]byte(tr))); err != nil {
			t.Fatal(err)
		}
		got, ok := setFromFieldsV1(v)
		if !ok || !got.Equals(want) {
			t.Errorf("%s: set %v (ok %v), FromJSON %v", tr, got, ok, want)
			continue
		}
		wantTrie, err := fieldsV1JSON(want)
		if err != nil {
			t.Fatal(err)
		}
		gotTrie, ok := fieldsV1FromSet(want)
		if !ok || !reflect.DeepEqual(any(gotTrie), wantTrie) {
			t.Errorf("%s: trie %v, ToJSON %v", tr, gotTrie, wantTrie)
		}
	}
	// not a trie of objects: the JSON path decides
	for _, v := range []any{nil, "x", []any{}, map[string]any{"f:a": "x"}, map[string]any{"k:notjson": map[string]any{}}} {
		if _, ok := setFromFieldsV1(v); ok {
			t.Errorf("%#v: converted directly", v)
		}
	}
}

// normalizeForCompare builds what normalizeObject builds and leaves its
// argument as it was (even after managedFields are removed from the result).
func TestNormalizeForCompareEqualsNormalizeAndSharesOnlyUnchanged(t *testing.T) {
	obj := map[string]any{
		"kind": "ConfigMap", "metadata": map[string]any{"name": "c", "generation": json.Number("3"), "managedFields": []any{map[string]any{"manager": "m"}}},
		"data": map[string]any{"a": "b"}, "spec": map[string]any{"replicas": json.Number("2"), "f": 1.5, "g": 2.0, "i": 7,
			"l": []any{"x", json.Number("1"), nil, map[string]any{"n": json.Number("-4")}}, "nil": []any(nil), "nilmap": map[string]any(nil), "e": map[string]any{}},
	}
	before, _ := json.Marshal(obj)
	want := normalizeObject(obj)
	got := normalizeForCompare(obj)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("normalizeForCompare %#v\nnormalizeObject %#v", got, want)
	}
	removeManagedFields(got)
	if after, _ := json.Marshal(obj); !bytes.Equal(before, after) {
		t.Fatalf("the argument changed: %s", after)
	}
	if _, ok := obj["metadata"].(map[string]any)["managedFields"]; !ok {
		t.Fatal("removeManagedFields reached the argument")
	}
}

// parseKey answers the same from its memo as the first time.
func TestParseKeyRemembersWhatItParsed(t *testing.T) {
	k := managerKey("kubectl-client-side-apply", OperationUpdate, "apps/v1", "status")
	for i := 0; i < 2; i++ {
		p, err := parseKey(k)
		if err != nil || p != (keyParts{"kubectl-client-side-apply", OperationUpdate, "apps/v1", "status"}) {
			t.Fatalf("round %d: %+v %v", i, p, err)
		}
	}
	if _, err := parseKey(`{"manager":`); err == nil {
		t.Fatal("a malformed key parsed")
	}
}
