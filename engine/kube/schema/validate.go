package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// UnknownFields returns the paths of the fields in obj that t does not
// declare, in kube's strict-decoding notation: "bogus", "spec.foo",
// "spec.template.spec.containers[0].imagePullPolicyy". Maps accept any key
// and "any" fields accept any content. Keys are visited in sorted order so
// the result is deterministic. obj is a JSON object as decoded by
// encoding/json (with or without UseNumber).
func UnknownFields(t *Type, obj map[string]any) []string {
	return unknownFields(t, obj, false)
}

// PruneUnknownFields removes from obj, in place, the fields t does not
// declare and returns their paths (as UnknownFields). kube drops unknown
// fields when fieldValidation is Ignore or Warn (the default), as decoding
// into its Go types does, so the stored object never has them.
func PruneUnknownFields(t *Type, obj map[string]any) []string {
	return unknownFields(t, obj, true)
}

// unknownFields is UnknownFields, and with prune PruneUnknownFields: one
// walk for both.
func unknownFields(t *Type, obj map[string]any, prune bool) []string {
	if !hasUnknown(t, obj) {
		return nil // the common case, without building a path per field
	}
	var out []string
	walkUnknown(t, obj, "", prune, &out)
	return out
}

// hasUnknown reports whether walkUnknown would find a field t does not
// declare; it walks the same values without sorting or building paths.
func hasUnknown(t *Type, obj map[string]any) bool {
	if t == nil || t.Untyped || !t.IsObject() {
		return false
	}
	for k, v := range obj {
		f := t.Field(k)
		if f == nil && !t.PreserveUnknown || f != nil && valueHasUnknown(f.Type, v) {
			return true
		}
	}
	return false
}

func valueHasUnknown(r *TypeRef, v any) bool {
	switch r.Kind {
	case KindObject:
		if m, ok := v.(map[string]any); ok {
			return hasUnknown(r.Named, m)
		}
	case KindList:
		if l, ok := v.([]any); ok {
			for _, e := range l {
				if valueHasUnknown(r.Elem, e) {
					return true
				}
			}
		}
	case KindMap:
		if m, ok := v.(map[string]any); ok {
			for _, e := range m {
				if valueHasUnknown(r.Elem, e) {
					return true
				}
			}
		}
	}
	return false
}

// StrictFieldErrors checks a JSON request body against t the way kube's
// strict decoder does, in document order: `unknown field "spec.foo"` for
// fields t does not declare, `duplicate field "data.a"` for keys that
// appear twice in one object (anywhere, also inside maps and untyped
// fields). List elements show as "[i]", map keys and fields as ".key".
// The strings are the items of StrictDecodingError / Warning headers. An
// error is returned only for malformed JSON.
func StrictFieldErrors(t *Type, data []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var out []string
	if err := walkTokens(dec, &TypeRef{Kind: KindObject, Named: t}, "", &out); err != nil {
		return nil, err
	}
	return out, nil
}

func walkTokens(dec *json.Decoder, r *TypeRef, path string, out *[]string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := kt.(string)
			p := k
			if path != "" {
				p = path + "." + k
			}
			if seen[k] {
				*out = append(*out, "duplicate field "+strconv.Quote(p))
			}
			seen[k] = true
			var child *TypeRef
			switch {
			case r == nil:
			case r.Kind == KindObject && r.Named.IsObject() && !r.Named.Untyped:
				if f := r.Named.Field(k); f != nil {
					child = f.Type
				} else if !r.Named.PreserveUnknown && !seen[k+"\x00unknown"] {
					seen[k+"\x00unknown"] = true
					*out = append(*out, UnknownFieldWarning(p))
				}
			case r.Kind == KindMap:
				child = r.Elem
			}
			if err := walkTokens(dec, child, p, out); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			var elem *TypeRef
			if r != nil && r.Kind == KindList {
				elem = r.Elem
			}
			if err := walkTokens(dec, elem, path+"["+strconv.Itoa(i)+"]", out); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unexpected %v", d)
	}
	_, err = dec.Token() // closing delimiter
	return err
}

// StrictDecodingError renders unknown fields as kube's strict decoding error,
// e.g. `strict decoding error: unknown field "bogus", unknown field "spec.x"`.
// The REST layer prefixes it with `<Kind> in version "<v>" cannot be handled
// as a <Kind>: ` and answers 400 BadRequest (fieldValidation=Strict); with
// fieldValidation=Warn each `unknown field "<path>"` becomes a Warning header.
// Items that are already messages (from StrictFieldErrors) are used as
// they are; bare paths (from UnknownFields) become `unknown field "<path>"`.
func StrictDecodingError(items []string) string {
	var b strings.Builder
	b.WriteString("strict decoding error: ")
	for i, p := range items {
		if i > 0 {
			b.WriteString(", ")
		}
		if strings.HasPrefix(p, "unknown field \"") || strings.HasPrefix(p, "duplicate field \"") {
			b.WriteString(p)
		} else {
			b.WriteString(UnknownFieldWarning(p))
		}
	}
	return b.String()
}

// UnknownFieldWarning is the text kube uses for one unknown field.
func UnknownFieldWarning(path string) string { return "unknown field " + strconv.Quote(path) }

func walkUnknown(t *Type, obj map[string]any, prefix string, prune bool, out *[]string) {
	if t == nil || t.Untyped || !t.IsObject() {
		return
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		f := t.Field(k)
		if f == nil {
			if !t.PreserveUnknown {
				*out = append(*out, p)
				if prune {
					delete(obj, k)
				}
			}
			continue
		}
		walkValue(f.Type, obj[k], p, prune, out)
	}
}

func walkValue(r *TypeRef, v any, path string, prune bool, out *[]string) {
	switch r.Kind {
	case KindObject:
		if m, ok := v.(map[string]any); ok {
			walkUnknown(r.Named, m, path, prune, out)
		}
	case KindList:
		if l, ok := v.([]any); ok {
			for i, e := range l {
				walkValue(r.Elem, e, path+"["+strconv.Itoa(i)+"]", prune, out)
			}
		}
	case KindMap:
		if m, ok := v.(map[string]any); ok {
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walkValue(r.Elem, m[k], path+"."+k, prune, out)
			}
		}
	}
}
