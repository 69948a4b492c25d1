package schema

import _ "embed"

// CustomResourceDefinitions' types and their entry in the OpenAPI
// documents (openapi_custom.go: how those publish a custom resource's
// schema).

//go:embed types_definitions.txt
var definitionTypes string

var _ = func() bool {
	moreTypes = append(moreTypes, definitionTypes)
	customDefinitions = func(r Resource, v3 bool) (map[string]any, map[string]any) {
		return customJSON(r, v3), customListJSON(r, v3)
	}
	return true
}()

func init() {
	Resources = append(Resources, Resource{"apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", false, []string{"status"}, nil})
}
