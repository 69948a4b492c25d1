package controllers

import (
	_ "embed"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The pod-template-hash label and the name of a Deployment's ReplicaSets
// (<deployment>-<hash>) come from kube-controller-manager's
// controller.ComputeHash: an FNV-32a hash of the pod template as the Go
// value v1.PodTemplateSpec, printed by spew with types ("%#v", sorted map
// keys, no pointer addresses; apimachinery's dump.ForHash), then the
// collision count, then the decimal sum written in the alphabet of
// rand.SafeEncodeString. Reproducing it needs the Go shape of the
// template: every field of every struct, in declaration order, with Go's
// type names, including the fields a template leaves empty. That shape is
// data, podtemplate.types, written from k8s.io/api of the served
// Kubernetes version by test/schemadiff, which also checks
// the hash against kube's own code.
//
// The template is read as kube-controller-manager's informer decodes it
// from protobuf: a missing field is its zero value, an empty list or map
// is nil, a pointer is set when the field is present. Quantities are
// parsed as resource.ParseQuantity parses the canonical form kube-apiserver
// stores. Two things cannot be reproduced: a time in the template's
// metadata (never set by kubectl) is a time.Time in the controller's local
// time zone, whose location spew prints; and a quantity with more than 18
// significant digits is held in an inf.Dec. Both hash here as if their
// location or decimal were nil.

//go:embed podtemplate.types
var podTemplateTypesText string

// goType is one Go type as spew prints it.
type goType struct {
	name   string // reflect's Type.String()
	kind   goKind
	elem   *goType // pointer, slice: the element; map: the value
	key    *goType // map: the key
	fields []goField
}

type goField struct {
	goName string
	json   string // "," an inline (embedded) struct, "-" no JSON name
	typ    *goType
}

type goKind uint8

const (
	goString goKind = iota
	goBool
	goInt
	goUint
	goFloat
	goPointer
	goSlice
	goMap
	goStruct
	goOpaque
)

var (
	goTypesOnce sync.Once
	goTypes     map[string]*goType
)

// typeOf returns the goType of a type string ("*v1.PodSpec",
// "[]v1.Container", "map[string]string", "int32", a named type).
func typeOf(name string) *goType {
	if t, ok := goTypes[name]; ok {
		return t
	}
	t := &goType{name: name}
	goTypes[name] = t
	switch {
	case strings.HasPrefix(name, "*"):
		t.kind, t.elem = goPointer, typeOf(name[1:])
	case strings.HasPrefix(name, "[]"):
		t.kind, t.elem = goSlice, typeOf(name[2:])
	case strings.HasPrefix(name, "map["):
		depth, i := 0, 3
		for ; i < len(name); i++ {
			if name[i] == '[' {
				depth++
			} else if name[i] == ']' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		t.kind, t.key, t.elem = goMap, typeOf(name[4:i]), typeOf(name[i+1:])
	default:
		t.kind = basicKind(name)
	}
	return t
}

func basicKind(k string) goKind {
	switch {
	case k == "string":
		return goString
	case k == "bool":
		return goBool
	case strings.HasPrefix(k, "int"):
		return goInt
	case strings.HasPrefix(k, "uint"):
		return goUint
	case strings.HasPrefix(k, "float"):
		return goFloat
	case k == "struct":
		return goStruct
	}
	return goOpaque
}

func loadGoTypes() {
	goTypes = map[string]*goType{}
	var cur *goType
	for _, line := range strings.Split(podTemplateTypesText, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if line[0] == ' ' {
			cur.fields = append(cur.fields, goField{goName: f[0], json: f[1], typ: typeOf(f[2])})
			continue
		}
		cur = typeOf(f[0])
		if k := basicKind(f[1]); k != goOpaque || f[1] == "opaque" {
			cur.kind = k
			continue
		}
		// a named map or slice: the shape of its underlying type
		u := typeOf(f[1])
		cur.kind, cur.key, cur.elem = u.kind, u.key, u.elem
	}
}

// hashAlphabet is rand.SafeEncodeString's: no vowels, no look-alikes.
const hashAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// PodTemplateHash is kube's pod-template-hash of a Deployment's
// spec.template (decoded JSON), salted with status.collisionCount when
// it is set.
func PodTemplateHash(template map[string]any, collisionCount *int64) string {
	h := fnv.New32a()
	h.Write(dumpTemplate(template))
	if collisionCount != nil {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], uint32(*collisionCount))
		h.Write(b[:])
	}
	sum := strconv.FormatUint(uint64(h.Sum32()), 10)
	out := make([]byte, len(sum))
	for i := 0; i < len(sum); i++ {
		out[i] = hashAlphabet[int(sum[i])%len(hashAlphabet)]
	}
	return string(out)
}

// DefaultDeploymentUniqueLabelKey is the label a Deployment's controller
// adds to its ReplicaSets, their selectors and their pods.
const DefaultDeploymentUniqueLabelKey = "pod-template-hash"

// EqualIgnoreHash is kube's deployment util EqualIgnoreHash: the two pod
// templates are semantically equal once their pod-template-hash labels
// are dropped (the typed values are compared, so a missing field equals
// its zero value and an empty list a missing one).
func EqualIgnoreHash(a, b map[string]any) bool {
	return string(dumpTemplate(withoutHashLabel(a))) == string(dumpTemplate(withoutHashLabel(b)))
}

func withoutHashLabel(t map[string]any) map[string]any {
	md, _ := t["metadata"].(map[string]any)
	labels, _ := md["labels"].(map[string]any)
	if _, ok := labels[DefaultDeploymentUniqueLabelKey]; !ok {
		return t
	}
	l := make(map[string]any, len(labels))
	for k, v := range labels {
		if k != DefaultDeploymentUniqueLabelKey {
			l[k] = v
		}
	}
	m := make(map[string]any, len(md))
	for k, v := range md {
		m[k] = v
	}
	m["labels"] = l
	c := make(map[string]any, len(t))
	for k, v := range t {
		c[k] = v
	}
	c["metadata"] = m
	return c
}

func dumpTemplate(template map[string]any) []byte {
	goTypesOnce.Do(loadGoTypes)
	d := dumper{buf: make([]byte, 0, 4096)}
	d.value(goTypes["v1.PodTemplateSpec"], template)
	return d.buf
}

// dumper prints a JSON value as the Go value of a type, as spew's
// formatter does with "%#v": a value's type in parentheses unless the
// element of a list or map (or a pointer's target, whose type the pointer
// printed), structs as {Field:value ...}, nil as <nil>.
type dumper struct {
	buf            []byte
	ignoreNextType bool
}

func (d *dumper) str(s string) { d.buf = append(d.buf, s...) }

func (d *dumper) value(t *goType, v any) {
	if t.kind == goPointer {
		d.pointer(t, v)
		return
	}
	if !d.ignoreNextType {
		d.str("(" + t.name + ")")
	}
	d.ignoreNextType = false
	if conv := special[t.name]; conv != nil {
		v = conv(v)
	}
	switch t.kind {
	case goString:
		s, _ := v.(string)
		d.str(s)
	case goBool:
		if b, _ := v.(bool); b {
			d.str("true")
		} else {
			d.str("false")
		}
	case goInt:
		d.buf = strconv.AppendInt(d.buf, toInt64(v), 10)
	case goUint:
		d.buf = strconv.AppendUint(d.buf, uint64(toInt64(v)), 10)
	case goFloat:
		f, _ := toFloat(v)
		d.buf = strconv.AppendFloat(d.buf, f, 'g', -1, 64)
	case goSlice:
		l, _ := v.([]any)
		if len(l) == 0 {
			d.str("<nil>")
			return
		}
		d.str("[")
		for i, e := range l {
			if i > 0 {
				d.str(" ")
			}
			d.ignoreNextType = true
			d.value(t.elem, e)
		}
		d.str("]")
	case goMap:
		m, _ := v.(map[string]any)
		if len(m) == 0 {
			d.str("<nil>")
			return
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d.str("map[")
		for i, k := range keys {
			if i > 0 {
				d.str(" ")
			}
			d.ignoreNextType = true
			d.value(t.key, k)
			d.str(":")
			d.ignoreNextType = true
			d.value(t.elem, m[k])
		}
		d.str("]")
	case goStruct:
		obj, _ := v.(map[string]any)
		d.str("{")
		for i, f := range t.fields {
			if i > 0 {
				d.str(" ")
			}
			d.str(f.goName + ":")
			d.value(f.typ, fieldValue(obj, f))
		}
		d.str("}")
	}
}

// pointer is spew's formatPtr: the pointer's type, then the value it
// points to without its type; a nil one is <nil>.
func (d *dumper) pointer(t *goType, v any) {
	if v == nil && d.ignoreNextType {
		d.str("<nil>")
		return
	}
	if !d.ignoreNextType {
		d.str("(" + t.name + ")")
	} else {
		d.str("<*>")
	}
	if v == nil {
		d.str("<nil>")
		return
	}
	d.ignoreNextType = true
	d.value(t.elem, v)
}

func fieldValue(obj map[string]any, f goField) any {
	switch {
	case f.json == "," && f.typ.kind == goStruct:
		return obj // an inline struct reads the same JSON object
	case f.json == "," || f.json == "-":
		return obj[f.goName]
	}
	return obj[f.json]
}

// special turns the JSON of types that marshal themselves into the Go
// fields spew prints.
var special = map[string]func(any) any{
	"v1.Time":            goTime,
	"v1.MicroTime":       goTime,
	"intstr.IntOrString": goIntOrString,
	"resource.Quantity":  goQuantity,
}

// unixToInternal is the seconds from year 1 to 1970, time.Time's epoch
// for ext when the wall clock has no monotonic reading.
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 24 * 60 * 60

func goTime(v any) any {
	s, _ := v.(string)
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil || t.IsZero() {
		return map[string]any{}
	}
	return map[string]any{"wall": int64(t.Nanosecond()), "ext": t.Unix() + unixToInternal}
}

func goIntOrString(v any) any {
	if s, ok := v.(string); ok {
		return map[string]any{"Type": int64(1), "StrVal": s}
	}
	return map[string]any{"IntVal": toInt64(v)}
}

func goQuantity(v any) any {
	s, ok := v.(string)
	if !ok {
		if n, isNum := v.(json.Number); isNum {
			s = n.String()
		} else {
			return map[string]any{}
		}
	}
	q, ok := parseQuantity(s)
	if !ok {
		return map[string]any{}
	}
	// kube-apiserver stores the canonical form; the controller parses it.
	if q, ok = parseQuantity(q.String()); !ok {
		return map[string]any{}
	}
	out := map[string]any{"Format": q.format}
	if !q.dec {
		out["i"] = map[string]any{"value": q.value, "scale": int64(q.scale)}
		out["s"] = q.cached
	}
	return out
}

func toInt64(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		if i, err := n.Int64(); err == nil {
			return i
		}
		f, _ := n.Float64()
		return int64(f)
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case bool:
		if n {
			return 1
		}
	}
	return 0
}

func toFloat(v any) (float64, bool) {
	switch n := v.(type) {
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case float64:
		return n, true
	}
	return float64(toInt64(v)), true
}
