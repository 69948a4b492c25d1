package patch

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Directives of the strategic merge patch format (as kubectl sends them).
const (
	directivePatch           = "$patch"
	directiveRetainKeys      = "$retainKeys"
	prefixSetElementOrder    = "$setElementOrder/"
	prefixDeleteFromPrimList = "$deleteFromPrimitiveList/"
)

// StrategicMerge applies a strategic merge patch to original, an object of
// type t. Where the schema gives a field patchStrategy "merge", lists are
// merged instead of replaced: lists of objects by their patchMergeKey
// (containers by name, ports by containerPort, env by name, ...), lists of
// scalars as sets. Fields with "retainKeys" honour $retainKeys. The
// directives $patch (replace, delete, merge), $retainKeys,
// $deleteFromPrimitiveList/<field> and $setElementOrder/<field> are
// supported. Everything else behaves as a JSON merge patch (null deletes,
// objects merge, other values replace); fields without a schema (unknown or
// "any") too.
func StrategicMerge(t *schema.Type, original, patchJSON []byte) ([]byte, error) {
	orig, err := decodeObject(original)
	if err != nil {
		return nil, badRequest(err.Error(), err)
	}
	p, err := decodeObject(patchJSON)
	if err != nil {
		return nil, badRequest(err.Error(), err)
	}
	if orig == nil {
		orig = map[string]any{}
	}
	out, deleted, err := mergeMap(orig, p, objectOf(t))
	if err != nil {
		return nil, err
	}
	if deleted {
		out = map[string]any{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, badRequest(err.Error(), err)
	}
	return b, nil
}

// shape is what the schema says about a map being merged: the fields of a
// named object type, the element type of a map, or nothing (untyped).
type shape struct {
	obj  *schema.Type
	elem *schema.TypeRef // for string-keyed maps
}

func objectOf(t *schema.Type) shape { return shape{obj: t} }

func shapeOf(r *schema.TypeRef) shape {
	if r == nil {
		return shape{}
	}
	switch r.Kind {
	case schema.KindObject:
		if r.Named.IsObject() && !r.Named.Untyped {
			return shape{obj: r.Named}
		}
	case schema.KindMap:
		return shape{elem: r.Elem}
	}
	return shape{}
}

// field returns the schema field for key k (nil when untyped or unknown)
// and the type of its value.
func (s shape) field(k string) (*schema.Field, *schema.TypeRef) {
	if s.obj != nil {
		if f := s.obj.Field(k); f != nil {
			return f, f.Type
		}
		return nil, nil
	}
	return nil, s.elem
}

func mergeMap(orig, p map[string]any, s shape) (map[string]any, bool, error) {
	if d, ok := p[directivePatch]; ok {
		switch d {
		case "replace":
			return clean(without(p, directivePatch)).(map[string]any), false, nil
		case "delete":
			return nil, true, nil
		case "merge":
			p = without(p, directivePatch)
		default:
			return nil, false, badRequest(fmt.Sprintf("unknown patch type: %v in map: %v", d, p), nil)
		}
	}
	out := make(map[string]any, len(orig)+len(p))
	for k, v := range orig {
		out[k] = v
	}
	if rk, ok := p[directiveRetainKeys]; ok {
		keys, ok := rk.([]any)
		if !ok {
			return nil, false, badRequest("invalid patch: $retainKeys must be a list", nil)
		}
		keep := map[string]bool{}
		for _, k := range keys {
			ks, ok := k.(string)
			if !ok {
				return nil, false, badRequest("invalid patch: $retainKeys must be a list of strings", nil)
			}
			keep[ks] = true
		}
		for k, v := range p {
			if !strings.HasPrefix(k, "$") && v != nil && !keep[k] {
				return nil, false, invalid(fmt.Errorf("the patch has a key %q not in $retainKeys", k))
			}
		}
		for k := range out {
			if !keep[k] {
				delete(out, k)
			}
		}
	}
	orders := map[string][]any{}
	for k, v := range p {
		switch {
		case k == directiveRetainKeys:
		case strings.HasPrefix(k, prefixDeleteFromPrimList):
			name := strings.TrimPrefix(k, prefixDeleteFromPrimList)
			del, ok := v.([]any)
			if !ok {
				return nil, false, badRequest("invalid patch: "+k+" must be a list", nil)
			}
			if cur, ok := out[name].([]any); ok {
				var kept []any
				for _, e := range cur {
					if !containsValue(del, e) {
						kept = append(kept, e)
					}
				}
				if kept == nil {
					kept = []any{}
				}
				out[name] = kept
			}
		case strings.HasPrefix(k, prefixSetElementOrder):
			l, ok := v.([]any)
			if !ok {
				return nil, false, badRequest("invalid patch: "+k+" must be a list", nil)
			}
			orders[strings.TrimPrefix(k, prefixSetElementOrder)] = l
		}
	}
	for k, pv := range p {
		if strings.HasPrefix(k, "$") {
			continue
		}
		if pv == nil {
			delete(out, k)
			continue
		}
		f, ft := s.field(k)
		ov, exists := out[k]
		if !exists || ov == nil {
			out[k] = clean(pv)
			continue
		}
		switch pvv := pv.(type) {
		case map[string]any:
			om, ok := ov.(map[string]any)
			if !ok {
				out[k] = clean(pv)
				continue
			}
			merged, del, err := mergeMap(om, pvv, shapeOf(ft))
			if err != nil {
				return nil, false, err
			}
			if del {
				delete(out, k)
			} else {
				out[k] = merged
			}
		case []any:
			ol, ok := ov.([]any)
			if !ok || f == nil || !f.HasPatchStrategy("merge") || ft == nil || ft.Kind != schema.KindList {
				out[k] = clean(pv)
				continue
			}
			merged, err := mergeList(ol, pvv, f, ft.Elem)
			if err != nil {
				return nil, false, err
			}
			out[k] = merged
		default:
			out[k] = pv
		}
	}
	for name, order := range orders {
		if l, ok := out[name].([]any); ok {
			key := ""
			if f, _ := s.field(name); f != nil {
				key = f.PatchMergeKey
			}
			orig, _ := orig[name].([]any)
			out[name] = applyOrder(l, order, orig, key)
		}
	}
	return out, false, nil
}

func mergeList(orig, p []any, f *schema.Field, elem *schema.TypeRef) ([]any, error) {
	// [{"$patch":"replace"}, items...] replaces the whole list.
	for i, e := range p {
		if m, ok := e.(map[string]any); ok && len(m) == 1 && m[directivePatch] == "replace" {
			rest := append(append([]any{}, p[:i]...), p[i+1:]...)
			return clean(rest).([]any), nil
		}
	}
	key := f.PatchMergeKey
	if key == "" || elem == nil || elem.Kind != schema.KindObject {
		// A set of scalars: the union, without duplicates.
		var out []any
		for _, e := range append(append([]any{}, orig...), p...) {
			if _, ok := e.(map[string]any); ok {
				continue
			}
			if !containsValue(out, e) {
				out = append(out, e)
			}
		}
		return applyOrder(out, p, orig, ""), nil
	}
	out := append([]any{}, orig...)
	es := shapeOf(elem)
	for _, e := range p {
		pm, ok := e.(map[string]any)
		if !ok {
			return nil, badRequest(fmt.Sprintf("invalid patch: element of %s is not an object: %v", f.Name, e), nil)
		}
		kv, has := pm[key]
		if !has {
			return nil, &Error{Code: 500, Message: fmt.Sprintf("map: %v does not contain declared merge key: %s", goMap(pm), key)}
		}
		idx := -1
		for i, o := range out {
			if om, ok := o.(map[string]any); ok && equalValue(om[key], kv) {
				idx = i
				break
			}
		}
		if pm[directivePatch] == "delete" {
			if idx >= 0 {
				out = append(out[:idx], out[idx+1:]...)
			}
			continue
		}
		if idx < 0 {
			out = append(out, clean(pm))
			continue
		}
		om, _ := out[idx].(map[string]any)
		merged, del, err := mergeMap(om, pm, es)
		if err != nil {
			return nil, err
		}
		if del {
			out = append(out[:idx], out[idx+1:]...)
		} else {
			out[idx] = merged
		}
	}
	// kube orders the result: the patch's items in the patch's order, the
	// server-only items in their original order, interleaved where the
	// original order relates them, so new items come before server-only
	// items they cannot be placed after.
	var named []any
	for _, e := range p {
		if m, ok := e.(map[string]any); ok && m[directivePatch] == nil {
			named = append(named, m)
		}
	}
	return applyOrder(out, named, orig, key), nil
}

// applyOrder enforces an order (a $setElementOrder list, or the patch's
// own list) on the merged list l, as kube does: the items the order names are sorted by it, the items only
// the server has keep their order in the original list, and the two runs
// are interleaved using the original list's order where both sides
// appear in it.
func applyOrder(l, order, original []any, key string) []any {
	id := func(v any) any {
		if key == "" {
			return v
		}
		if m, ok := v.(map[string]any); ok {
			return m[key]
		}
		return nil
	}
	indexIn := func(list []any, v any) int {
		for i, o := range list {
			if equalValue(id(o), id(v)) {
				return i
			}
		}
		return -1
	}
	var named, serverOnly []any
	for _, v := range l {
		if indexIn(order, v) >= 0 {
			named = append(named, v)
		} else {
			serverOnly = append(serverOnly, v)
		}
	}
	sort.SliceStable(named, func(i, j int) bool { return indexIn(order, named[i]) < indexIn(order, named[j]) })
	sort.SliceStable(serverOnly, func(i, j int) bool { return indexIn(original, serverOnly[i]) < indexIn(original, serverOnly[j]) })
	out := make([]any, 0, len(l))
	i, j := 0, 0
	for len(out) < len(l) {
		switch {
		case i >= len(serverOnly):
			out = append(out, named[j])
			j++
		case j >= len(named):
			out = append(out, serverOnly[i])
			i++
		default:
			li, ri := indexIn(original, serverOnly[i]), indexIn(original, named[j])
			if li >= 0 && ri >= 0 && li < ri {
				out = append(out, serverOnly[i])
				i++
			} else {
				out = append(out, named[j])
				j++
			}
		}
	}
	return out
}

// clean removes directives and nulls from a patch value that is copied in
// as is (nothing in the original to merge with).
func clean(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if strings.HasPrefix(k, "$") || e == nil {
				continue
			}
			m[k] = clean(e)
		}
		return m
	case []any:
		l := make([]any, 0, len(x))
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				if d, ok := m[directivePatch]; ok && (d == "delete" || len(m) == 1) {
					continue
				}
			}
			l = append(l, clean(e))
		}
		return l
	}
	return v
}

func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func containsValue(l []any, v any) bool {
	for _, e := range l {
		if equalValue(e, v) {
			return true
		}
	}
	return false
}

// equalValue compares decoded JSON values; numbers by their text.
func equalValue(a, b any) bool {
	an, aok := a.(json.Number)
	bn, bok := b.(json.Number)
	if aok && bok {
		return an == bn || an.String() == bn.String() || numEqual(an, bn)
	}
	return reflect.DeepEqual(a, b)
}

func numEqual(a, b json.Number) bool {
	af, err1 := a.Float64()
	bf, err2 := b.Float64()
	return err1 == nil && err2 == nil && af == bf
}

// goMap renders a patch element as Go's %v of a map, which is what kube's
// error text shows.
func goMap(m map[string]any) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("map[")
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s:%v", k, m[k])
	}
	b.WriteByte(']')
	return b.String()
}
