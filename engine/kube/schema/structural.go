package schema

import (
	"encoding/json"
	"sort"
	"strings"
)

// Structural is a custom resource's schema: the openAPIV3Schema of one
// version of a CustomResourceDefinition, read as kube-apiserver reads it
// (apiextensions' structural schema). Its type, properties, items,
// additionalProperties and x-kubernetes-* extensions say what is stored
// (pruning, defaulting, apply, the Type kube's other rules use); the value
// validations beside them, and in allOf, anyOf, oneOf and not, say what
// is accepted (Validate).
type Structural struct {
	Type        string // object, array, string, integer, number, boolean or "" (any)
	Format      string
	Description string

	Nullable        bool
	IntOrString     bool // x-kubernetes-int-or-string
	PreserveUnknown bool // x-kubernetes-preserve-unknown-fields
	Embedded        bool // x-kubernetes-embedded-resource

	// Properties are an object's fields; Keys lists them sorted.
	Properties map[string]*Structural
	Keys       []string
	// Items is an array's element; AdditionalProperties a map's value.
	Items, AdditionalProperties *Structural

	// Default is the default value; a null default is none, as in kube.
	Default any

	ListType    string // x-kubernetes-list-type
	ListMapKeys []string
	MapType     string // x-kubernetes-map-type

	// Value validations.
	Required                           []string
	Enum                               []any
	Maximum, Minimum, MultipleOf       *float64
	ExclusiveMaximum, ExclusiveMinimum bool
	MaxLength, MinLength               *int64
	MaxItems, MinItems                 *int64
	MaxProperties, MinProperties       *int64
	Pattern                            string
	UniqueItems                        bool
	AllOf, AnyOf, OneOf                []*Structural
	Not                                *Structural
}

// ParseStructural reads a JSONSchemaProps document (decoded JSON, numbers
// as json.Number or float64). It accepts what it does not know, as
// kube's decoding of a stored definition does; StructuralErrors says
// what a definition may not contain.
func ParseStructural(v any) *Structural {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	s := &Structural{}
	s.Type, _ = m["type"].(string)
	s.Format, _ = m["format"].(string)
	s.Description, _ = m["description"].(string)
	s.Pattern, _ = m["pattern"].(string)
	s.Nullable = m["nullable"] == true
	s.IntOrString = m["x-kubernetes-int-or-string"] == true
	s.PreserveUnknown = m["x-kubernetes-preserve-unknown-fields"] == true
	s.Embedded = m["x-kubernetes-embedded-resource"] == true
	s.UniqueItems = m["uniqueItems"] == true
	s.ExclusiveMaximum = m["exclusiveMaximum"] == true
	s.ExclusiveMinimum = m["exclusiveMinimum"] == true
	s.ListType, _ = m["x-kubernetes-list-type"].(string)
	s.MapType, _ = m["x-kubernetes-map-type"].(string)
	s.ListMapKeys = stringList(m["x-kubernetes-list-map-keys"])
	s.Required = stringList(m["required"])
	s.Default = m["default"]
	s.Enum, _ = m["enum"].([]any)
	s.Maximum, s.Minimum, s.MultipleOf = float(m["maximum"]), float(m["minimum"]), float(m["multipleOf"])
	s.MaxLength, s.MinLength = integer(m["maxLength"]), integer(m["minLength"])
	s.MaxItems, s.MinItems = integer(m["maxItems"]), integer(m["minItems"])
	s.MaxProperties, s.MinProperties = integer(m["maxProperties"]), integer(m["minProperties"])
	if props, ok := m["properties"].(map[string]any); ok {
		s.Properties = make(map[string]*Structural, len(props))
		for k, p := range props {
			if ps := ParseStructural(p); ps != nil {
				s.Properties[k] = ps
				s.Keys = append(s.Keys, k)
			}
		}
		sort.Strings(s.Keys)
	}
	s.Items = ParseStructural(m["items"])
	s.AdditionalProperties = ParseStructural(m["additionalProperties"])
	s.AllOf, s.AnyOf, s.OneOf = parseList(m["allOf"]), parseList(m["anyOf"]), parseList(m["oneOf"])
	s.Not = ParseStructural(m["not"])
	return s
}

func parseList(v any) []*Structural {
	l, _ := v.([]any)
	var out []*Structural
	for _, e := range l {
		if s := ParseStructural(e); s != nil {
			out = append(out, s)
		}
	}
	return out
}

func stringList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func float(v any) *float64 {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return &f
		}
	case float64:
		return &x
	}
	return nil
}

func integer(v any) *int64 {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return &i
		}
	case float64:
		i := int64(x)
		return &i
	}
	return nil
}

// ResourceType is the Type kube's other rules see for a custom resource of kind
// gvk with schema s: what pruning keeps (fields s does not declare go,
// unless x-kubernetes-preserve-unknown-fields), apply's list and map
// semantics, and apiVersion, kind and metadata (ObjectMeta) at the root
// and in embedded resources. s may be nil: a definition without a schema
// keeps everything.
func (s *Structural) ResourceType(name string, gvk GVK) *Type {
	if s == nil {
		return &Type{Name: name, Short: gvk.Kind, GVKs: []GVK{gvk}, Untyped: true}
	}
	t := s.objectType(name, true)
	t.Short, t.GVKs = gvk.Kind, []GVK{gvk}
	return t
}

func (s *Structural) objectType(name string, resource bool) *Type {
	t := &Type{Name: name, Short: name[strings.LastIndexByte(name, '.')+1:], Description: s.Description,
		Atomic: s.MapType == "atomic", PreserveUnknown: s.PreserveUnknown, index: map[string]*Field{}}
	add := func(f *Field) {
		if t.index[f.Name] == nil {
			t.Fields = append(t.Fields, f)
		}
		t.index[f.Name] = f
	}
	if resource {
		add(&Field{Name: "apiVersion", Type: &TypeRef{Kind: KindString}})
		add(&Field{Name: "kind", Type: &TypeRef{Kind: KindString}})
		// what kube keeps of the metadata, whatever the schema says (it
		// may only restrict name and generateName)
		add(&Field{Name: "metadata", Type: &TypeRef{Kind: KindObject, Named: described().byShort["ObjectMeta"]}})
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	for _, k := range s.Keys {
		if resource && (k == "apiVersion" || k == "kind" || k == "metadata") {
			continue
		}
		p := s.Properties[k]
		add(&Field{Name: k, Description: p.Description, Type: p.typeRef(name + "." + k), Required: required[k],
			ListType: p.ListType, ListMapKeys: p.ListMapKeys, MapType: p.MapType, Default: p.Default})
	}
	if len(s.Properties) == 0 && !resource {
		// an object without fields keeps what it is given only when it
		// preserves unknown fields; else it is always empty
		t.Untyped = s.PreserveUnknown
	}
	return t
}

func (s *Structural) typeRef(name string) *TypeRef {
	switch {
	case s.IntOrString:
		return &TypeRef{Kind: KindObject, Named: described().byShort["IntOrString"]}
	case s.Embedded:
		return &TypeRef{Kind: KindObject, Named: s.objectType(name, true)}
	}
	switch s.Type {
	case "string":
		if s.Format == "byte" {
			return &TypeRef{Kind: KindBytes, Format: "byte"}
		}
		return &TypeRef{Kind: KindString, Format: s.Format}
	case "integer":
		return &TypeRef{Kind: KindInteger, Format: s.Format}
	case "number":
		return &TypeRef{Kind: KindNumber, Format: s.Format}
	case "boolean":
		return &TypeRef{Kind: KindBoolean}
	case "array":
		if s.Items == nil {
			return &TypeRef{Kind: KindAny}
		}
		return &TypeRef{Kind: KindList, Elem: s.Items.typeRef(name)}
	case "object":
		if s.AdditionalProperties != nil {
			return &TypeRef{Kind: KindMap, Elem: s.AdditionalProperties.typeRef(name)}
		}
		return &TypeRef{Kind: KindObject, Named: s.objectType(name, false)}
	}
	return &TypeRef{Kind: KindAny}
}
