package schema

import (
	"encoding/json"
	"fmt"
)

// TypeError reports the first value of o whose JSON type cannot decode
// into the field t declares, as encoding/json reports it to kube-apiserver
// ("json: cannot unmarshal string into Go struct field
// ConfigMap.data of type map[string]string"), or "".
func TypeError(t *Type, o map[string]any) string {
	if t == nil {
		return ""
	}
	return checkObject(t, o, t.Short)
}

func checkObject(t *Type, o map[string]any, path string) string {
	if t == nil || t.Untyped || !t.IsObject() {
		return ""
	}
	for k, v := range o {
		f := t.Field(k)
		if f == nil {
			continue
		}
		if msg := checkValue(f.Type, v, path, k); msg != "" {
			return msg
		}
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number, float64, int64, int:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func goType(r *TypeRef) string {
	switch r.Kind {
	case KindString:
		return "string"
	case KindInteger:
		if r.Format == "int32" {
			return "int32"
		}
		return "int64"
	case KindNumber:
		return "float64"
	case KindBoolean:
		return "bool"
	case KindBytes:
		return "[]uint8"
	case KindList:
		return "[]" + goType(r.Elem)
	case KindMap:
		return "map[string]" + goType(r.Elem)
	case KindObject:
		if r.Named.Scalar == "string" {
			return "string"
		}
		return "v1." + r.Named.Short
	}
	return "interface {}"
}

// unmarshalFieldError is encoding/json's error for a value of the wrong
// JSON type. It is not inlined: checkValue would copy it into each of its
// nine checks.
//
//go:noinline
func unmarshalFieldError(v any, r *TypeRef, parent, key string) string {
	return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s of type %s", jsonKind(v), parent+"."+key, goType(r))
}

// checkValue checks the value of field key of the object at parent; the
// path "parent.key" is only built when needed (an error, or an object to
// descend into), not for every field of every write.
func checkValue(r *TypeRef, v any, parent, key string) string {
	if v == nil || r == nil {
		return ""
	}
	bad := func() string { return unmarshalFieldError(v, r, parent, key) }
	switch r.Kind {
	case KindString, KindBytes:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case KindInteger:
		n, ok := v.(json.Number)
		if !ok {
			if jsonKind(v) != "number" {
				return bad()
			}
			return ""
		}
		if _, err := n.Int64(); err != nil {
			return fmt.Sprintf("json: cannot unmarshal number %s into Go struct field %s of type %s", n, parent+"."+key, goType(r))
		}
	case KindNumber:
		if jsonKind(v) != "number" {
			return bad()
		}
	case KindBoolean:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case KindList:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		for _, e := range l {
			if msg := checkValue(r.Elem, e, parent, key); msg != "" {
				return msg
			}
		}
	case KindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for _, e := range m {
			if msg := checkValue(r.Elem, e, parent, key); msg != "" {
				return msg
			}
		}
	case KindObject:
		switch r.Named.Scalar {
		case "string", "quantity":
			if _, ok := v.(string); !ok && r.Named.Scalar == "string" {
				return bad()
			}
		case "intorstring":
			if k := jsonKind(v); k != "string" && k != "number" {
				return bad()
			}
		case "":
			if r.Named.Untyped {
				return ""
			}
			m, ok := v.(map[string]any)
			if !ok {
				return bad()
			}
			return checkObject(r.Named, m, parent+"."+key)
		}
	}
	return ""
}
