package schema

import (
	"bytes"
	"encoding/json"
	"sort"
)

// Zero returns the object kube's Go types encode for an empty value of t:
// only the fields marked emit, as null, zero scalars or nested zero
// objects. Structured-merge-diff compares against it when an object is
// created, which is why created objects own "f:spec" children without
// owning "f:spec" itself.
func Zero(t *Type) map[string]any {
	m := map[string]any{}
	for _, f := range t.Fields {
		if f.Emit {
			m[f.Name] = zeroField(f)
		}
	}
	return m
}

func zeroField(f *Field) any {
	if f.EmitNull {
		return nil
	}
	return zeroOf(f.Type)
}

func zeroOf(r *TypeRef) any {
	switch r.Kind {
	case KindString, KindBytes:
		return ""
	case KindInteger, KindNumber:
		return int64(0)
	case KindBoolean:
		return false
	case KindObject:
		switch r.Named.Scalar {
		case "":
			if r.Named.Untyped {
				return nil
			}
			return Zero(r.Named)
		case "intorstring":
			return int64(0)
		case "quantity":
			return "0"
		}
	}
	return nil // lists, maps, any, Time
}

// FillEmitted adds to obj, in place and recursively, the emit fields it
// lacks, so the stored object and every answer look like kube's (for
// example a Deployment always has "status":{} and every container
// "resources":{}). Call it on every object before storing it.
func FillEmitted(t *Type, obj map[string]any) {
	if t == nil || !t.IsObject() || t.Untyped {
		return
	}
	for _, f := range t.Fields {
		v, ok := obj[f.Name]
		if !ok {
			if f.Emit {
				obj[f.Name] = zeroField(f)
			}
			continue
		}
		fillValue(f.Type, v)
	}
}

func fillValue(r *TypeRef, v any) {
	switch r.Kind {
	case KindObject:
		if m, ok := v.(map[string]any); ok {
			FillEmitted(r.Named, m)
		}
	case KindList:
		if l, ok := v.([]any); ok {
			for _, e := range l {
				fillValue(r.Elem, e)
			}
		}
	case KindMap:
		if m, ok := v.(map[string]any); ok {
			for _, e := range m {
				fillValue(r.Elem, e)
			}
		}
	}
}

// Marshal encodes obj as kube-apiserver does: "kind" and "apiVersion"
// first, then the fields in the order of kube's Go types, map keys sorted;
// fields t does not declare come last, sorted. Values are encoded by
// encoding/json (numbers from json.Number keep their text). Together with
// FillEmitted this makes stored objects and responses byte-compatible.
func Marshal(t *Type, obj map[string]any) ([]byte, error) {
	var b bytes.Buffer
	if err := encodeObject(&b, t, obj, true); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func encodeObject(b *bytes.Buffer, t *Type, obj map[string]any, top bool) error {
	if obj == nil {
		b.WriteString("null")
		return nil
	}
	if t == nil || !t.IsObject() || t.Untyped {
		return encodeAny(b, obj)
	}
	b.WriteByte('{')
	first := true
	field := func(name string, r *TypeRef, v any) error {
		if !first {
			b.WriteByte(',')
		}
		first = false
		if err := encodeAny(b, name); err != nil {
			return err
		}
		b.WriteByte(':')
		return encodeValue(b, r, v)
	}
	done := map[string]bool{}
	if top {
		for _, k := range []string{"kind", "apiVersion"} {
			if v, ok := obj[k]; ok {
				if err := field(k, nil, v); err != nil {
					return err
				}
				done[k] = true
			}
		}
	}
	for _, f := range t.Fields {
		if done[f.Name] {
			continue
		}
		if v, ok := obj[f.Name]; ok {
			if err := field(f.Name, f.Type, v); err != nil {
				return err
			}
			done[f.Name] = true
		}
	}
	var rest []string
	for k := range obj {
		if !done[k] {
			rest = append(rest, k)
		}
	}
	sort.Strings(rest)
	for _, k := range rest {
		if err := field(k, nil, obj[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

func encodeValue(b *bytes.Buffer, r *TypeRef, v any) error {
	if r == nil || v == nil {
		return encodeAny(b, v)
	}
	switch r.Kind {
	case KindObject:
		if m, ok := v.(map[string]any); ok {
			return encodeObject(b, r.Named, m, false)
		}
	case KindList:
		if l, ok := v.([]any); ok {
			b.WriteByte('[')
			for i, e := range l {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := encodeValue(b, r.Elem, e); err != nil {
					return err
				}
			}
			b.WriteByte(']')
			return nil
		}
	case KindMap:
		if m, ok := v.(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				if err := encodeAny(b, k); err != nil {
					return err
				}
				b.WriteByte(':')
				if err := encodeValue(b, r.Elem, m[k]); err != nil {
					return err
				}
			}
			b.WriteByte('}')
			return nil
		}
	}
	return encodeAny(b, v)
}

// encodeAny writes what encoding/json writes for v (it escapes <, > and &
// as kube's encoder, also encoding/json, does). The common values (plain
// ASCII strings, valid json.Numbers, bools, null, and maps and lists of
// them) are written directly: encoding/json's reflection was a tenth of
// the cost of a write. Anything else goes to encoding/json itself.
func encodeAny(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case string:
		if plainString(x) {
			b.WriteByte('"')
			b.WriteString(x)
			b.WriteByte('"')
			return nil
		}
	case json.Number:
		if validNumber(string(x)) {
			b.WriteString(string(x))
			return nil
		}
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
		return nil
	case nil:
		b.WriteString("null")
		return nil
	case map[string]any:
		if x == nil {
			b.WriteString("null")
			return nil
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeAny(b, k); err != nil {
				return err
			}
			b.WriteByte(':')
			if err := encodeAny(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
		return nil
	case []any:
		if x == nil {
			b.WriteString("null")
			return nil
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeAny(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
		return nil
	}
	j, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b.Write(j)
	return nil
}

// Normalize makes obj look as it does after kube decodes it into its Go
// types and encodes it again, in place: fields t does not declare are
// dropped (their paths are returned, as PruneUnknownFields does), nulls
// and empty lists and maps are dropped from optional fields (Go's
// omitempty) and set to their zero on always-written ones, zero scalars
// ("", 0, false) are dropped from optional fields that are not Go
// pointers, and the always-written fields are filled in (FillEmitted).
func Normalize(t *Type, obj map[string]any) []string {
	pruned := PruneUnknownFields(t, obj)
	normalizeObject(t, obj)
	FillEmitted(t, obj)
	return pruned
}

func normalizeObject(t *Type, obj map[string]any) {
	if t == nil || !t.IsObject() || t.Untyped {
		return
	}
	for _, f := range t.Fields {
		v, ok := obj[f.Name]
		if !ok {
			continue
		}
		if !f.Emit && !f.Ptr && isZeroScalar(v, f.Type) {
			delete(obj, f.Name)
			continue
		}
		if isEmptyJSON(v, f.Type) {
			if f.Emit {
				if v == nil {
					obj[f.Name] = zeroField(f)
				}
				continue
			}
			delete(obj, f.Name)
			continue
		}
		normalizeValue(f.Type, v)
	}
}

// isZeroScalar reports "", 0 and false for plain scalar fields.
func isZeroScalar(v any, r *TypeRef) bool {
	switch r.Kind {
	case KindString, KindBytes:
		return v == ""
	case KindBoolean:
		return v == false
	case KindInteger, KindNumber:
		switch n := v.(type) {
		case json.Number:
			f, err := n.Float64()
			return err == nil && f == 0
		case float64:
			return n == 0
		case int64:
			return n == 0
		case int:
			return n == 0
		}
	}
	return false
}

// isEmptyJSON reports null, and empty lists and maps (not empty objects:
// a pointer to an empty struct stays {}).
func isEmptyJSON(v any, r *TypeRef) bool {
	switch x := v.(type) {
	case nil:
		return true
	case []any:
		return len(x) == 0 && r.Kind == KindList
	case map[string]any:
		return len(x) == 0 && r.Kind == KindMap
	}
	return false
}

func normalizeValue(r *TypeRef, v any) {
	switch r.Kind {
	case KindObject:
		if m, ok := v.(map[string]any); ok {
			normalizeObject(r.Named, m)
		}
	case KindList:
		if l, ok := v.([]any); ok {
			for _, e := range l {
				normalizeValue(r.Elem, e)
			}
		}
	case KindMap:
		if m, ok := v.(map[string]any); ok {
			for _, e := range m {
				normalizeValue(r.Elem, e)
			}
		}
	}
}

// plainString reports a string encoding/json writes as is between quotes:
// printable ASCII without the characters it escapes.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// validNumber is JSON's number grammar (encoding/json refuses a
// json.Number that is not one, and writes "" as 0).
func validNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == j {
			return false
		}
	}
	return i == len(s)
}
