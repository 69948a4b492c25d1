package schema

import "strings"

// How the OpenAPI documents publish a custom resource: its version's
// schema as written, with apiVersion, kind and metadata added as
// kube-apiserver adds them, and a list type beside it.

const (
	objectMeta = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
	listMeta   = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"

	apiVersionDoc = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources"
	kindDoc       = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds"
	conventions   = "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md"
)

// refWithDoc is a reference with a description: v3 wraps it in allOf.
func refWithDoc(name, doc string, v3 bool) map[string]any {
	if v3 {
		return map[string]any{"description": doc, "allOf": []any{map[string]any{"$ref": refTo(name, true)}}}
	}
	return map[string]any{"description": doc, "$ref": refTo(name, false)}
}

func customJSON(r Resource, v3 bool) map[string]any {
	s := map[string]any{"type": "object"}
	if r.Custom.Schema != nil {
		s = publishedSchema(r.Custom.Schema, v3).(map[string]any)
	}
	props, _ := s["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
		s["properties"] = props
	}
	props["apiVersion"] = map[string]any{"description": apiVersionDoc, "type": "string"}
	props["kind"] = map[string]any{"description": kindDoc, "type": "string"}
	props["metadata"] = refWithDoc(objectMeta, "Standard object's metadata. "+conventions+"#metadata", v3)
	s["x-kubernetes-group-version-kind"] = []any{map[string]any{"group": r.Group, "kind": r.Kind, "version": r.Version}}
	return s
}

func customListJSON(r Resource, v3 bool) map[string]any {
	return map[string]any{
		"description": r.Kind + "List is a list of " + r.Kind,
		"type":        "object",
		"required":    []any{"items"},
		"properties": map[string]any{
			"apiVersion": map[string]any{"description": apiVersionDoc, "type": "string"},
			"items": map[string]any{"description": "List of " + r.Plural + ". " + conventions, "type": "array",
				"items": map[string]any{"$ref": refTo(r.Custom.Name, v3)}},
			"kind":     map[string]any{"description": kindDoc, "type": "string"},
			"metadata": refWithDoc(listMeta, "Standard list metadata. "+conventions+"#types-kinds", v3),
		},
		"x-kubernetes-group-version-kind": []any{map[string]any{"group": r.Group, "kind": r.Kind + "List", "version": r.Version}},
	}
}

// publishedSchema copies a schema for publication; swagger 2.0 (v3
// false) has no nullable, anyOf, oneOf or not, and kube leaves them out.
func publishedSchema(v any, v3 bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			if !v3 && (k == "nullable" || k == "anyOf" || k == "oneOf" || k == "not" || k == "allOf" || strings.HasPrefix(k, "x-kubernetes-validations")) {
				continue
			}
			if k == "default" || k == "enum" || k == "example" {
				out[k] = e
				continue
			}
			out[k] = publishedSchema(e, v3)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = publishedSchema(e, v3)
		}
		return out
	}
	return v
}
