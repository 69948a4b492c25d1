//go:build !(js && wasm)

package apply

import (
	"sync"

	"github.com/rvplay/rvplay/engine/kube/schema"
	smdschema "sigs.k8s.io/structured-merge-diff/v6/schema"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
)

// The structured-merge-diff schema is derived once from package schema:
// every object type becomes a map with declared fields (atomic when the type
// is), lists get their list type (atomic, or associative with keys for set
// and map lists), Quantity and IntOrString are untyped scalars (clients send
// either numbers or strings), and "any" fields use the deduced untyped type.
const (
	untypedAtomic  = "__untyped_atomic_"
	untypedDeduced = "__untyped_deduced_"
)

var (
	smdOnce   sync.Once
	smdSchema *smdschema.Schema
)

func smd() *smdschema.Schema {
	smdOnce.Do(func() { smdSchema = buildSMD() })
	return smdSchema
}

// parseableType returns the structured-merge-diff type for t.
func parseableType(t *schema.Type) typed.ParseableType {
	name := t.Name
	return typed.ParseableType{Schema: smd(), TypeRef: smdschema.TypeRef{NamedType: &name}}
}

func buildSMD() *smdschema.Schema {
	s := &smdschema.Schema{}
	ua, ud := untypedAtomic, untypedDeduced
	untyped := smdschema.Untyped
	s.Types = append(s.Types,
		smdschema.TypeDef{Name: untypedAtomic, Atom: smdschema.Atom{
			Scalar: &untyped,
			List:   &smdschema.List{ElementType: smdschema.TypeRef{NamedType: &ua}, ElementRelationship: smdschema.Atomic},
			Map:    &smdschema.Map{ElementType: smdschema.TypeRef{NamedType: &ua}, ElementRelationship: smdschema.Atomic},
		}},
		smdschema.TypeDef{Name: untypedDeduced, Atom: smdschema.Atom{
			Scalar: &untyped,
			List:   &smdschema.List{ElementType: smdschema.TypeRef{NamedType: &ua}, ElementRelationship: smdschema.Atomic},
			Map:    &smdschema.Map{ElementType: smdschema.TypeRef{NamedType: &ud}, ElementRelationship: smdschema.Separable},
		}},
	)
	for _, t := range schema.Types() {
		s.Types = append(s.Types, smdschema.TypeDef{Name: t.Name, Atom: typeAtom(t)})
	}
	return s
}

func typeAtom(t *schema.Type) smdschema.Atom {
	if t.Scalar != "" {
		// Time, MicroTime, Quantity and IntOrString are untyped scalars in
		// kube's apply schema (clients may send numbers for the latter two).
		sc := smdschema.Untyped
		return smdschema.Atom{Scalar: &sc}
	}
	if t.Untyped { // FieldsV1: opaque to apply
		ua := untypedAtomic
		return smdschema.Atom{Map: &smdschema.Map{ElementType: smdschema.TypeRef{NamedType: &ua}, ElementRelationship: smdschema.Atomic}}
	}
	m := &smdschema.Map{}
	if t.Atomic {
		m.ElementRelationship = smdschema.Atomic
	}
	for _, f := range t.Fields {
		sf := smdschema.StructField{Name: f.Name, Type: fieldTypeRef(f, f.Type)}
		if f.Default != nil {
			sf.Default = f.Default
		}
		m.Fields = append(m.Fields, sf)
	}
	return smdschema.Atom{Map: m}
}

// fieldTypeRef converts r; f carries the list/map options of the field
// (nil for nested element types).
func fieldTypeRef(f *schema.Field, r *schema.TypeRef) smdschema.TypeRef {
	scalar := func(s smdschema.Scalar) smdschema.TypeRef {
		return smdschema.TypeRef{Inlined: smdschema.Atom{Scalar: &s}}
	}
	switch r.Kind {
	case schema.KindString, schema.KindBytes:
		return scalar(smdschema.String)
	case schema.KindInteger, schema.KindNumber:
		return scalar(smdschema.Numeric)
	case schema.KindBoolean:
		return scalar(smdschema.Boolean)
	case schema.KindAny:
		ud := untypedDeduced
		return smdschema.TypeRef{NamedType: &ud}
	case schema.KindObject:
		n := r.Named.Name
		return smdschema.TypeRef{NamedType: &n}
	case schema.KindList:
		l := &smdschema.List{ElementType: fieldTypeRef(nil, r.Elem), ElementRelationship: smdschema.Atomic}
		if f != nil {
			switch f.ListType {
			case "set":
				l.ElementRelationship = smdschema.Associative
			case "map":
				l.ElementRelationship = smdschema.Associative
				l.Keys = f.ListMapKeys
			}
		}
		return smdschema.TypeRef{Inlined: smdschema.Atom{List: l}}
	case schema.KindMap:
		m := &smdschema.Map{ElementType: fieldTypeRef(nil, r.Elem)}
		if f != nil && f.MapType == "atomic" {
			m.ElementRelationship = smdschema.Atomic
		}
		return smdschema.TypeRef{Inlined: smdschema.Atom{Map: m}}
	}
	ud := untypedDeduced
	return smdschema.TypeRef{NamedType: &ud}
}
