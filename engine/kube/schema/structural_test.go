package schema

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func jsonOf(t *testing.T, s string) any {
	t.Helper()
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

const cronTab = `{"type":"object","properties":{"spec":{"type":"object","required":["image"],"properties":{
 "image":{"type":"string","minLength":1,"maxLength":8},
 "replicas":{"type":"integer","minimum":1,"maximum":10,"default":1},
 "policy":{"type":"string","enum":["Allow","Forbid"],"default":"Allow"},
 "cron":{"type":"string","pattern":"^\\d+$"},
 "suspend":{"type":"boolean","nullable":true},
 "note":{"type":"string"},
 "size":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
 "ports":{"type":"array","maxItems":2,"x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["port"],
  "items":{"type":"object","properties":{"port":{"type":"integer"}}}}}}}}`

func TestDefaultsFillMissingFieldsAndDropDisallowedNulls(t *testing.T) {
	s := ParseStructural(jsonOf(t, cronTab))
	obj := jsonOf(t, `{"spec":{"image":"x","note":null,"suspend":null,"replicas":null}}`)
	s.ApplyDefaults(obj)
	want := jsonOf(t, `{"spec":{"image":"x","suspend":null,"replicas":1,"policy":"Allow"}}`)
	if !JSONEqual(obj, want) {
		t.Fatalf("got %v, want %v", obj, want)
	}
}

func TestValidationIsWordedAsKubeApiserverWordsIt(t *testing.T) {
	s := ParseStructural(jsonOf(t, cronTab))
	got := s.Validate("", jsonOf(t, `{"spec":{"image":"","replicas":11,"policy":"Sometimes","cron":"x","size":true,
	 "ports":[{"port":1},{"port":2},{"port":3}]}}`))
	want := []Violation{
		{"FieldValueTooMany", "spec.ports", int64(3), "must have at most 2 items"},
		{"FieldValueNotSupported", "spec.policy", "Sometimes", `supported values: "Allow", "Forbid"`},
		{"FieldValueInvalid", "spec.replicas", int64(11), "spec.replicas in body should be less than or equal to 10"},
		{"FieldValueTypeInvalid", "spec.size", "boolean", `spec.size in body must be of type integer,string: "boolean"`},
		{"FieldValueInvalid", "<nil>", "", `"spec.size" must validate at least one schema (anyOf)`},
		{"FieldValueTypeInvalid", "spec.size", "boolean", `spec.size in body must be of type integer: "boolean"`},
	}
	// (cron and image follow: a pattern and a length)
	if len(got) != 8 {
		t.Fatalf("got %d violations: %+v", len(got), got)
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || reflect.DeepEqual(g, w)
		}
		if !found {
			t.Errorf("missing %+v in %+v", w, got)
		}
	}
	if v := s.Validate("", jsonOf(t, `{"spec":{}}`)); len(v) != 1 || v[0].Field != "spec.image" || v[0].Type != "FieldValueRequired" {
		t.Errorf("required: %+v", v)
	}
}

func TestMapListsRefuseDuplicateKeys(t *testing.T) {
	s := ParseStructural(jsonOf(t, cronTab))
	got := s.ListErrors(jsonOf(t, `{"spec":{"ports":[{"port":80},{"port":81},{"port":80}]}}`))
	want := []Violation{{Type: "FieldValueDuplicate", Field: "spec.ports[2]", Value: map[string]any{"port": json.Number("80")}}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v", got)
	}
}

func TestStructuralErrorsOfADefinitionsSchema(t *testing.T) {
	got := StructuralErrors("spec.validation.openAPIV3Schema", jsonOf(t, `{"type":"object","properties":{
	 "spec":{"properties":{"size":{"type":"integer"}}},
	 "status":{"type":"object","uniqueItems":true},
	 "list":{"type":"array"},
	 "name":{"type":"string","pattern":"(unclosed"}}}`))
	var fields []string
	for _, v := range got {
		fields = append(fields, v.Type+" "+v.Field)
	}
	want := []string{
		"FieldValueRequired spec.validation.openAPIV3Schema.properties[list].items",
		"FieldValueInvalid spec.validation.openAPIV3Schema.properties[name].pattern",
		"FieldValueRequired spec.validation.openAPIV3Schema.properties[spec].type",
		"FieldValueForbidden spec.validation.openAPIV3Schema.properties[status].uniqueItems",
	}
	if !reflect.DeepEqual(fields, want) {
		t.Fatalf("got %v\nwant %v", fields, want)
	}
	if v := StructuralErrors("s", jsonOf(t, `{"type":"string"}`)); len(v) != 1 || v[0].Detail != "must be object at the root" {
		t.Errorf("root: %+v", v)
	}
}

func TestPreservedUnknownFieldsAreNeitherUnknownNorPruned(t *testing.T) {
	s := ParseStructural(jsonOf(t, `{"type":"object","properties":{"spec":{"type":"object","properties":{
	 "config":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}`))
	typ := s.ResourceType("com.example.v1.Widget", GVK{"example.com", "v1", "Widget"})
	obj := jsonOf(t, `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"config":{"a":{"b":1}},"bogus":1}}`).(map[string]any)
	if got := PruneUnknownFields(typ, obj); !reflect.DeepEqual(got, []string{"spec.bogus"}) {
		t.Fatalf("pruned %v", got)
	}
	if !JSONEqual(obj["spec"], jsonOf(t, `{"config":{"a":{"b":1}}}`)) {
		t.Fatalf("kept %v", obj["spec"])
	}
}
