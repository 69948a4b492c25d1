package schema

import (
	"fmt"
	"strconv"
)

// StructuralErrors checks that the openAPIV3Schema v (decoded JSON), at
// field path f, is a structural schema kube-apiserver accepts: a type for
// every value the schema specifies (object at the root), items for
// arrays, properties and additionalProperties not both, no uniqueItems,
// keys for map lists, and valid patterns. It checks what learners meet,
// not every rule of apiextensions' validation.
func StructuralErrors(f string, v any) []Violation {
	var out []Violation
	structural(f, v, true, "", &out)
	return out
}

func structural(f string, v any, root bool, what string, out *[]Violation) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	add := func(typ, field string, value any, detail string) {
		*out = append(*out, Violation{Type: typ, Field: field, Value: value, Detail: detail})
	}
	typ, _ := m["type"].(string)
	switch {
	case root && typ == "":
		add("FieldValueRequired", f+".type", nil, "must not be empty at the root")
	case root && typ != "object":
		add("FieldValueInvalid", f+".type", typ, "must be object at the root")
	case typ == "" && m["x-kubernetes-int-or-string"] != true && m["x-kubernetes-preserve-unknown-fields"] != true:
		add("FieldValueRequired", f+".type", nil, "must not be empty for specified "+what)
	}
	if m["uniqueItems"] == true {
		add("FieldValueForbidden", f+".uniqueItems", nil, "uniqueItems cannot be set to true since the runtime complexity becomes quadratic")
	}
	if _, ok := m["properties"]; ok && m["additionalProperties"] != nil {
		if _, isBool := m["additionalProperties"].(bool); !isBool {
			add("FieldValueForbidden", f+".additionalProperties", nil, "additionalProperties and properties are mutual exclusive")
		}
	}
	if typ == "array" && m["items"] == nil {
		add("FieldValueRequired", f+".items", nil, "must be specified")
	}
	if m["x-kubernetes-list-type"] == "map" && len(stringList(m["x-kubernetes-list-map-keys"])) == 0 {
		add("FieldValueRequired", f+".x-kubernetes-list-map-keys", nil, "must not be empty if x-kubernetes-list-type is map")
	}
	if p, ok := m["pattern"].(string); ok {
		if err := CompilePattern(p); err != nil {
			add("FieldValueInvalid", f+".pattern", p, fmt.Sprintf("must be a valid regular expression, but isn't: %v", err))
		}
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for _, k := range sortedKeys(props) {
			structural(f+".properties["+k+"]", props[k], false, "object fields", out)
		}
	}
	if items, ok := m["items"].(map[string]any); ok {
		structural(f+".items", items, false, "array items", out)
	}
	if ap, ok := m["additionalProperties"].(map[string]any); ok {
		structural(f+".additionalProperties", ap, false, "object fields", out)
	}
	for _, j := range []string{"allOf", "anyOf", "oneOf"} {
		l, _ := m[j].([]any)
		for i, e := range l {
			junctor(f+"."+j+"["+strconv.Itoa(i)+"]", e, out)
		}
	}
}

// junctor checks a schema under allOf, anyOf or oneOf, which may not
// specify types of its own beyond the structural part (kube's rule is
// finer: types must match the structural ones; here only nested
// uniqueItems and patterns are checked).
func junctor(f string, v any, out *[]Violation) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if m["uniqueItems"] == true {
		*out = append(*out, Violation{Type: "FieldValueForbidden", Field: f + ".uniqueItems", Detail: "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"})
	}
	if p, ok := m["pattern"].(string); ok {
		if err := CompilePattern(p); err != nil {
			*out = append(*out, Violation{Type: "FieldValueInvalid", Field: f + ".pattern", Value: p, Detail: fmt.Sprintf("must be a valid regular expression, but isn't: %v", err)})
		}
	}
}
