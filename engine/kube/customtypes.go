package kube

import (
	"context"
	"strings"
)

// What the rest of the registry knows of custom resources; serving them
// is customresource.go, customresources.go and definition*.go.

// customScale is a version's scale subresource: where replicas and the
// selector are.
type customScale struct {
	specReplicas, statusReplicas, labelSelector string
}

// Custom reports whether r is a custom resource (served from a
// CustomResourceDefinition).
func (r *Resource) Custom() bool { return r.custom != nil }

// customScale is the scale subresource of a custom resource, or nil.
func (r *Resource) customScale() *customScale {
	if !r.Custom() {
		return nil
	}
	return r.custom.scale
}

// nestedField reads a dotted path such as .spec.replicas.
func nestedField(o Object, p string) (any, bool) {
	var v any = o
	for _, k := range strings.Split(strings.TrimPrefix(p, "."), ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// setNestedField writes a dotted path, creating the objects on the way.
func setNestedField(o Object, p string, val any) {
	keys := strings.Split(strings.TrimPrefix(p, "."), ".")
	m := o
	for _, k := range keys[:len(keys)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = val
}

// Lookup finds a served resource by group, version and plural name: the
// built-in table, then the custom resources of the session's
// definitions.
func (reg *Registry) Lookup(ctx context.Context, group, version, resource string) (*Resource, error) {
	if r := Lookup(group, version, resource); r != nil {
		return r, nil
	}
	custom, _, err := reg.CustomResources(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range custom {
		if r.Group == group && r.Version == version && r.Resource == resource {
			return r, nil
		}
	}
	return nil, nil
}
