// Package schema describes the Kubernetes types rvplay serves (v1 Namespace,
// ConfigMap, Secret, Pod, Event, apps/v1 Deployment and ReplicaSet,
// autoscaling/v1 Scale, apiextensions.k8s.io/v1 CustomResourceDefinition,
// events.k8s.io/v1 Event on the server, and the nested types they use) as
// data, and derives from that one description everything that needs type
// knowledge: strategic-merge-patch strategies (package patch),
// structured-merge-diff list/map semantics (package apply), unknown-field
// detection and pruning for fieldValidation, and the OpenAPI v2 and v3
// documents kubectl downloads. For custom resources it is also a
// definition's structural schema: pruning, defaulting and validation as
// kube-openapi words them (structural.go).
//
// The description lives in types.txt, types_definitions.txt and
// types_events.txt (a small line-oriented format documented at the top of
// types.txt), so adding a type or a field is a data change. The package
// depends on the standard library only: it must not import net/http,
// syscall/js, k8s.io/* or any schema library, because it is linked into the
// WebAssembly build.
package schema

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed types.txt
var typesText string

// moreTypes are described in other files of the build (the native
// build's CustomResourceDefinition, openapi_definitions.go).
var moreTypes []string

// Kind is the shape of a value.
type Kind uint8

const (
	KindString Kind = iota + 1
	KindInteger
	KindNumber
	KindBoolean
	KindBytes  // base64 string
	KindObject // a named type (object or named scalar such as Time)
	KindList
	KindMap // string-keyed map
	KindAny // arbitrary JSON, unknown fields preserved
)

// TypeRef is the type of a field or of a list/map element.
type TypeRef struct {
	Kind   Kind
	Format string   // int32, int64, double, byte (for scalars)
	Named  *Type    // KindObject
	Elem   *TypeRef // KindList, KindMap
}

// Type is a named definition, such as io.k8s.api.core.v1.ConfigMap.
type Type struct {
	Name        string // OpenAPI definition name
	Short       string // last segment of Name
	Description string
	GVKs        []GVK // x-kubernetes-group-version-kind, for top-level kinds

	// Scalar is set for named scalars: "string" (Time, MicroTime),
	// "intorstring" (IntOrString), "quantity" (Quantity). Scalars have no Fields.
	Scalar string
	Format string

	Fields []*Field
	// Atomic marks a struct replaced as a whole by apply and strategic merge
	// (x-kubernetes-map-type: atomic).
	Atomic bool
	// Untyped marks an object with no declared fields (FieldsV1): any content.
	Untyped bool
	// PreserveUnknown keeps, beside the declared fields, those the type
	// does not declare (a custom resource's
	// x-kubernetes-preserve-unknown-fields): they are neither unknown nor
	// pruned.
	PreserveUnknown bool

	index map[string]*Field
}

// Field is one property of an object type.
type Field struct {
	Name        string
	Description string
	Type        *TypeRef
	Required    bool
	// PatchStrategy is the strategic-merge-patch strategy: "merge", "replace",
	// "retainKeys" or "merge,retainKeys"; PatchMergeKey names the key field of
	// merged lists of objects.
	PatchStrategy string
	PatchMergeKey string
	// ListType is "atomic" (default), "set" or "map"; ListMapKeys are the keys
	// of a "map" list (x-kubernetes-list-map-keys).
	ListType    string
	ListMapKeys []string
	// MapType is "granular" (default) or "atomic" for maps.
	MapType string
	Default any
	// Emit marks fields kube's Go encoding always writes (non-omitempty
	// fields and struct values), as null, a zero scalar or {} when unset;
	// EmitNull marks pointers to structs, written as null.
	Emit, EmitNull bool
	// Ptr marks scalar fields that are Go pointers: kube keeps their zero
	// values, where it drops zero values of other optional scalars.
	Ptr bool
}

// GVK is a group/version/kind; Group is empty for the core group.
type GVK struct{ Group, Version, Kind string }

// APIVersion is "v1" for core, "group/version" otherwise.
func (g GVK) APIVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// Field returns the field called name, or nil.
func (t *Type) Field(name string) *Field {
	if t == nil {
		return nil
	}
	return t.index[name]
}

// IsObject reports whether t is a struct (not a named scalar).
func (t *Type) IsObject() bool { return t != nil && t.Scalar == "" }

// HasPatchStrategy reports whether the field's strategy includes s ("merge", "retainKeys", "replace").
func (f *Field) HasPatchStrategy(s string) bool {
	for _, p := range strings.Split(f.PatchStrategy, ",") {
		if p == s {
			return true
		}
	}
	return false
}

// typeSet is the description parsed: each type by its definition name,
// by its short name (the first type to have it) and by group, version and
// kind, and all of them sorted by name.
type typeSet struct {
	byName  map[string]*Type
	byShort map[string]*Type
	byGVK   map[GVK]*Type
	ordered []*Type
}

// described parses the description on first use, not at start: parsed it
// is some 300 KB of live heap, which every collection of a process marks,
// and a server whose sessions serve only etcd's API never needs it.
func described() *typeSet {
	describeOnce.Do(func() {
		ts := &typeSet{byName: map[string]*Type{}, byShort: map[string]*Type{}, byGVK: map[GVK]*Type{}}
		if err := ts.parse(strings.Join(append([]string{typesText}, moreTypes...), "\n")); err != nil {
			panic("schema: types.txt: " + err.Error())
		}
		ts.addListTypes()
		parsedTypes = ts
	})
	return parsedTypes
}

var (
	describeOnce sync.Once
	parsedTypes  *typeSet
)

// ByName returns the type with the given OpenAPI definition name.
func ByName(name string) *Type { return described().byName[name] }

// ForGVK returns the top-level type for apiVersion ("v1", "apps/v1") and kind, or nil.
func ForGVK(apiVersion, kind string) *Type {
	g, v := "", apiVersion
	if i := strings.IndexByte(apiVersion, '/'); i >= 0 {
		g, v = apiVersion[:i], apiVersion[i+1:]
	}
	return described().byGVK[GVK{g, v, kind}]
}

// Types returns all definitions sorted by name.
func Types() []*Type { return described().ordered }

// ResetFields lists the fields a write through the given subresource
// does not own and cannot change (kube's ResetFieldsStrategy), as dotted
// paths: the main resource ignores status; the status subresource ignores
// spec and what each kind's status strategy restores.
func ResetFields(t *Type, subresource string) []string {
	if t == nil || t.Field("status") == nil || t.Short == "Scale" {
		return nil
	}
	switch subresource {
	case "":
		return []string{"status"}
	case "status":
		switch t.Short {
		case "Deployment":
			return []string{"spec", "metadata.labels"}
		case "Pod":
			return []string{"spec", "metadata.deletionTimestamp", "metadata.ownerReferences"}
		}
		return []string{"spec"}
	}
	return nil
}

type pendingRef struct {
	ref  *TypeRef
	name string
	line int
}

func (ts *typeSet) parse(text string) error {
	var (
		cur      *Type
		curField *Field
		pending  []pendingRef
		includes = map[*Type]string{}
	)
	for n, raw := range strings.Split(text, "\n") {
		line := strings.TrimSpace(raw)
		lineNo := n + 1
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		desc := ""
		if i := strings.Index(line, "|"); i >= 0 {
			desc = strings.TrimSpace(line[i+1:])
			line = strings.TrimSpace(line[:i])
		}
		if line == "" { // description line
			switch {
			case curField != nil:
				curField.Description = joinDesc(curField.Description, desc)
			case cur != nil:
				cur.Description = joinDesc(cur.Description, desc)
			default:
				return fmt.Errorf("line %d: description outside a type", lineNo)
			}
			continue
		}
		tok := strings.Fields(line)
		if tok[0] == "type" && len(tok) > 1 && strings.Contains(tok[1], ".") {
			t := &Type{Name: tok[1], Short: tok[1][strings.LastIndexByte(tok[1], '.')+1:], Description: desc, index: map[string]*Field{}}
			if ts.byName[t.Name] != nil {
				return fmt.Errorf("line %d: duplicate type %s", lineNo, t.Name)
			}
			for _, o := range tok[2:] {
				k, v, _ := strings.Cut(o, "=")
				switch k {
				case "gvk":
					p := strings.Split(v, "/")
					if len(p) != 3 {
						return fmt.Errorf("line %d: bad gvk %q", lineNo, v)
					}
					g := GVK{p[0], p[1], p[2]}
					t.GVKs = append(t.GVKs, g)
					ts.byGVK[g] = t
				case "scalar":
					t.Scalar = v
				case "format":
					t.Format = v
				case "atomic":
					t.Atomic = true
				case "include":
					includes[t] = v
				case "untyped":
					t.Untyped = true
				default:
					return fmt.Errorf("line %d: unknown type option %q", lineNo, o)
				}
			}
			// A short name another type has (events.k8s.io/v1's Event
			// and core/v1's) stays the first's: refer to the second by
			// its full name.
			ts.byName[t.Name] = t
			if ts.byShort[t.Short] == nil {
				ts.byShort[t.Short] = t
			}
			ts.ordered = append(ts.ordered, t)
			cur, curField = t, nil
			continue
		}
		if cur == nil || len(tok) < 2 {
			return fmt.Errorf("line %d: field outside a type or without a type: %q", lineNo, line)
		}
		f := &Field{Name: tok[0], Description: desc}
		ref, names, err := parseTypeRef(tok[1])
		if err != nil {
			return fmt.Errorf("line %d: %v", lineNo, err)
		}
		for _, nm := range names {
			pending = append(pending, pendingRef{nm.ref, nm.name, lineNo})
		}
		f.Type = ref
		for _, o := range tok[2:] {
			k, v, _ := strings.Cut(o, "=")
			switch k {
			case "req":
				f.Required = true
			case "patch":
				f.PatchStrategy = v
			case "key":
				f.PatchMergeKey = v
			case "list":
				f.ListType = v
			case "keys":
				f.ListMapKeys = strings.Split(v, ",")
			case "map":
				f.MapType = v
			case "default":
				f.Default = v
				if n, err := strconv.ParseInt(v, 10, 64); err == nil && ref.Kind == KindInteger {
					f.Default = n
				}
			case "emit":
				f.Emit, f.EmitNull = true, v == "null"
			case "ptr":
				f.Ptr = true
			default:
				return fmt.Errorf("line %d: unknown field option %q", lineNo, o)
			}
		}
		if _, dup := cur.index[f.Name]; dup {
			return fmt.Errorf("line %d: duplicate field %s.%s", lineNo, cur.Short, f.Name)
		}
		cur.Fields = append(cur.Fields, f)
		cur.index[f.Name] = f
		curField = f
	}
	for _, p := range pending {
		t := ts.byShort[p.name]
		if t == nil {
			t = ts.byName[p.name]
		}
		if t == nil {
			return fmt.Errorf("line %d: unknown type %q", p.line, p.name)
		}
		p.ref.Named = t
	}
	for t, from := range includes {
		src := ts.byShort[from]
		if src == nil {
			return fmt.Errorf("type %s includes unknown %s", t.Name, from)
		}
		own := t.Fields
		t.Fields = append(append([]*Field{}, src.Fields...), own...)
		for _, f := range src.Fields {
			t.index[f.Name] = f
		}
	}
	sort.Slice(ts.ordered, func(i, j int) bool { return ts.ordered[i].Name < ts.ordered[j].Name })
	return nil
}

type namedRef struct {
	ref  *TypeRef
	name string
}

func parseTypeRef(s string) (*TypeRef, []namedRef, error) {
	switch {
	case strings.HasPrefix(s, "[]"):
		e, n, err := parseTypeRef(s[2:])
		return &TypeRef{Kind: KindList, Elem: e}, n, err
	case strings.HasPrefix(s, "map[") && strings.HasSuffix(s, "]"):
		e, n, err := parseTypeRef(s[4 : len(s)-1])
		return &TypeRef{Kind: KindMap, Elem: e}, n, err
	}
	switch s {
	case "string":
		return &TypeRef{Kind: KindString}, nil, nil
	case "int32", "int64":
		return &TypeRef{Kind: KindInteger, Format: s}, nil, nil
	case "double":
		return &TypeRef{Kind: KindNumber, Format: s}, nil, nil
	case "bool":
		return &TypeRef{Kind: KindBoolean}, nil, nil
	case "bytes":
		return &TypeRef{Kind: KindBytes, Format: "byte"}, nil, nil
	case "any":
		return &TypeRef{Kind: KindAny}, nil, nil
	}
	if s == "" || strings.ContainsAny(s, "[]") {
		return nil, nil, fmt.Errorf("bad type %q", s)
	}
	r := &TypeRef{Kind: KindObject}
	return r, []namedRef{{r, s}}, nil
}

func joinDesc(a, b string) string {
	if a == "" {
		return b
	}
	return a + " " + b
}

// addListTypes defines <Kind>List for every top-level kind except Scale, as
// kube's OpenAPI does (items, metadata ListMeta, gvk <Kind>List).
func (ts *typeSet) addListTypes() {
	listMeta := ts.byShort["ListMeta"]
	var add []*Type
	for _, t := range ts.ordered {
		if md := t.Field("metadata"); len(t.GVKs) == 0 || t.Short == "Scale" || md == nil || md.Type.Named.Short != "ObjectMeta" {
			continue
		}
		g := t.GVKs[0]
		lt := &Type{
			Name:        t.Name + "List",
			Short:       t.Short + "List",
			Description: t.Short + "List is a list of " + t.Short + " objects.",
			GVKs:        []GVK{{g.Group, g.Version, g.Kind + "List"}},
			index:       map[string]*Field{},
		}
		for _, f := range []*Field{
			{Name: "apiVersion", Type: &TypeRef{Kind: KindString}, Description: "APIVersion of this representation of the list."},
			{Name: "kind", Type: &TypeRef{Kind: KindString}, Description: "Kind of the list."},
			{Name: "metadata", Type: &TypeRef{Kind: KindObject, Named: listMeta}, Emit: true, Description: "Standard list metadata."},
			{Name: "items", Type: &TypeRef{Kind: KindList, Elem: &TypeRef{Kind: KindObject, Named: t}}, Required: true, Emit: true, Description: "Items of the list."},
		} {
			lt.Fields = append(lt.Fields, f)
			lt.index[f.Name] = f
		}
		add = append(add, lt)
	}
	for _, lt := range add {
		ts.byName[lt.Name] = lt
		if ts.byShort[lt.Short] == nil {
			ts.byShort[lt.Short] = lt
		}
		ts.byGVK[lt.GVKs[0]] = lt
		ts.ordered = append(ts.ordered, lt)
	}
	sort.Slice(ts.ordered, func(i, j int) bool { return ts.ordered[i].Name < ts.ordered[j].Name })
}
