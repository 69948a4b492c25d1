package schema

import (
	"encoding/json"
	"sort"
	"strings"
)

// encodeV2Proto encodes the swagger document (as built by buildV2) in the
// protobuf form of gnostic's openapi_v2.Document, which client-go's
// OpenAPISchema() requests. Only the messages and fields the document uses
// are written; field numbers follow gnostic's OpenAPIv2.proto. Vendor
// extensions and defaults are gnostic Any values holding YAML text (JSON is
// valid YAML).
func encodeV2Proto(doc map[string]any) []byte {
	var w pbw
	w.str(1, doc["swagger"].(string))
	info := doc["info"].(map[string]any)
	w.msg(2, func(w *pbw) {
		w.str(1, info["title"].(string))
		w.str(2, info["version"].(string))
	})
	paths := doc["paths"].(map[string]any)
	w.msg(8, func(w *pbw) {
		for _, name := range sortedKeys(paths) {
			item := paths[name].(map[string]any)
			w.msg(2, func(w *pbw) {
				w.str(1, name)
				w.msg(2, func(w *pbw) { pbPathItem(w, item) })
			})
		}
	})
	defs := doc["definitions"].(map[string]any)
	w.msg(9, func(w *pbw) {
		for _, name := range sortedKeys(defs) {
			s := defs[name].(map[string]any)
			w.msg(1, func(w *pbw) {
				w.str(1, name)
				w.msg(2, func(w *pbw) { pbSchema(w, s) })
			})
		}
	})
	return w.b
}

var pbMethods = []struct {
	name  string
	field int
}{{"get", 2}, {"put", 3}, {"post", 4}, {"delete", 5}, {"options", 6}, {"head", 7}, {"patch", 8}}

func pbPathItem(w *pbw, item map[string]any) {
	for _, m := range pbMethods {
		if op, ok := item[m.name].(map[string]any); ok {
			w.msg(m.field, func(w *pbw) { pbOperation(w, op) })
		}
	}
	if ps, ok := item["parameters"].([]any); ok {
		for _, p := range ps {
			w.msg(9, func(w *pbw) { pbParameter(w, p.(map[string]any)) })
		}
	}
}

func pbOperation(w *pbw, op map[string]any) {
	for _, t := range strs(op["tags"]) {
		w.str(1, t)
	}
	w.str(3, str(op["description"]))
	w.str(5, str(op["operationId"]))
	for _, s := range strs(op["produces"]) {
		w.str(6, s)
	}
	for _, s := range strs(op["consumes"]) {
		w.str(7, s)
	}
	if ps, ok := op["parameters"].([]any); ok {
		for _, p := range ps {
			w.msg(8, func(w *pbw) { pbParameter(w, p.(map[string]any)) })
		}
	}
	if rs, ok := op["responses"].(map[string]any); ok {
		w.msg(9, func(w *pbw) {
			for _, code := range sortedKeys(rs) {
				r := rs[code].(map[string]any)
				w.msg(1, func(w *pbw) {
					w.str(1, code)
					w.msg(2, func(w *pbw) {
						w.msg(1, func(w *pbw) {
							w.str(1, str(r["description"]))
							if s, ok := r["schema"].(map[string]any); ok {
								w.msg(2, func(w *pbw) { w.msg(1, func(w *pbw) { pbSchema(w, s) }) })
							}
						})
					})
				})
			}
		})
	}
	for _, s := range strs(op["schemes"]) {
		w.str(10, s)
	}
	pbExtensions(w, 13, op)
}

// pbParameter writes a ParametersItem: a body parameter or a query/path
// parameter (oneof of NonBodyParameter).
func pbParameter(w *pbw, p map[string]any) {
	w.msg(1, func(w *pbw) { // ParametersItem.parameter
		if p["in"] == "body" {
			w.msg(1, func(w *pbw) { // Parameter.body_parameter
				w.str(1, str(p["description"]))
				w.str(2, str(p["name"]))
				w.str(3, "body")
				w.boolean(4, p["required"] == true)
				if s, ok := p["schema"].(map[string]any); ok {
					w.msg(5, func(w *pbw) { pbSchema(w, s) })
				}
			})
			return
		}
		w.msg(2, func(w *pbw) { // Parameter.non_body_parameter
			isPath := p["in"] == "path"
			sub, typeField, uniqueField := 3, 6, 20 // QueryParameterSubSchema
			if isPath {
				sub, typeField, uniqueField = 4, 5, 19 // PathParameterSubSchema
			}
			w.msg(sub, func(w *pbw) {
				w.boolean(1, p["required"] == true)
				w.str(2, str(p["in"]))
				w.str(3, str(p["description"]))
				w.str(4, str(p["name"]))
				w.str(typeField, str(p["type"]))
				w.boolean(uniqueField, p["uniqueItems"] == true)
			})
		})
	})
}

func pbSchema(w *pbw, s map[string]any) {
	w.str(1, str(s["$ref"]))
	w.str(2, str(s["format"]))
	w.str(4, str(s["description"]))
	if d, ok := s["default"]; ok {
		w.msg(5, func(w *pbw) { w.str(2, yamlOf(d)) })
	}
	for _, r := range strs(s["required"]) {
		w.str(19, r)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		w.msg(21, func(w *pbw) { w.msg(1, func(w *pbw) { pbSchema(w, ap) }) })
	}
	if t := str(s["type"]); t != "" {
		w.msg(22, func(w *pbw) { w.str(1, t) })
	}
	if it, ok := s["items"].(map[string]any); ok {
		w.msg(23, func(w *pbw) { w.msg(1, func(w *pbw) { pbSchema(w, it) }) })
	}
	if props, ok := s["properties"].(map[string]any); ok {
		w.msg(25, func(w *pbw) {
			for _, name := range sortedKeys(props) {
				ps := props[name].(map[string]any)
				w.msg(1, func(w *pbw) {
					w.str(1, name)
					w.msg(2, func(w *pbw) { pbSchema(w, ps) })
				})
			}
		})
	}
	pbExtensions(w, 31, s)
}

// pbExtensions writes the x- keys of m as repeated NamedAny.
func pbExtensions(w *pbw, field int, m map[string]any) {
	for _, k := range sortedKeys(m) {
		if !strings.HasPrefix(k, "x-") {
			continue
		}
		v := m[k]
		w.msg(field, func(w *pbw) {
			w.str(1, k)
			w.msg(2, func(w *pbw) { w.str(2, yamlOf(v)) })
		})
	}
}

func yamlOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b) + "\n"
}

func str(v any) string { s, _ := v.(string); return s }

func strs(v any) []string {
	switch x := v.(type) {
	case []string:
		return x
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			out = append(out, str(e))
		}
		return out
	}
	return nil
}

// (not inlined: a map iteration copied into each caller)
//
//go:noinline
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// pbw is a minimal protobuf writer (proto3: zero values are not written).
type pbw struct{ b []byte }

func (w *pbw) varint(v uint64) {
	for v >= 0x80 {
		w.b = append(w.b, byte(v)|0x80)
		v >>= 7
	}
	w.b = append(w.b, byte(v))
}

//go:noinline
func (w *pbw) tag(field, wire int) { w.varint(uint64(field)<<3 | uint64(wire)) }

// str and tag are not inlined: the document is written once, and inlined
// into every field it writes they were 8 KB gzip of the WebAssembly build.
//
//go:noinline
func (w *pbw) str(field int, s string) {
	if s == "" {
		return
	}
	w.tag(field, 2)
	w.varint(uint64(len(s)))
	w.b = append(w.b, s...)
}

func (w *pbw) boolean(field int, v bool) {
	if !v {
		return
	}
	w.tag(field, 0)
	w.varint(1)
}

// msg writes a length-delimited sub-message, even when empty (oneof
// members and list elements must be present).
func (w *pbw) msg(field int, fill func(*pbw)) {
	var sub pbw
	fill(&sub)
	w.tag(field, 2)
	w.varint(uint64(len(sub.b)))
	w.b = append(w.b, sub.b...)
}
