package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// schemaType is a position in the schema as server-side apply sees it.
type schemaType struct {
	kind     int // kindScalar, kindList, kindMap, kindDeduced, kindAtomicAny
	atomic   bool
	scalar   string          // kindScalar: "string", "numeric", "boolean" or "untyped"
	obj      *schema.Type    // declared fields of a struct (kind kindMap)
	elem     *schema.TypeRef // list or map element type
	anyElems bool            // elements are kindAtomicAny (no elem)
	listType string          // "set", "map" or "" (atomic)
	keys     []string
	elemObj  *schema.Type // the list element's struct type, for key defaults
}

const (
	kindScalar = iota
	kindList
	kindMap
	kindDeduced   // any JSON: maps granular (deduced elements), lists atomic
	kindAtomicAny // any JSON, atomic all the way down
)

func schemaTypeOf(t *schema.Type) schemaType {
	switch {
	case t.Scalar != "":
		// Time, Quantity, IntOrString: untyped scalars for apply.
		return schemaType{kind: kindScalar, scalar: "untyped"}
	case t.Untyped && t.PreserveUnknown:
		// a custom resource's x-kubernetes-preserve-unknown-fields object
		return schemaType{kind: kindDeduced}
	case t.Untyped:
		return schemaType{kind: kindMap, atomic: true, anyElems: true}
	}
	return schemaType{kind: kindMap, atomic: t.Atomic, obj: t}
}

// schemaTypeOfRef resolves r; f is the struct field holding it (nil for
// nested element types) and carries list and map options.
func schemaTypeOfRef(f *schema.Field, r *schema.TypeRef) schemaType {
	switch r.Kind {
	case schema.KindString, schema.KindBytes:
		return schemaType{kind: kindScalar, scalar: "string"}
	case schema.KindInteger, schema.KindNumber:
		return schemaType{kind: kindScalar, scalar: "numeric"}
	case schema.KindBoolean:
		return schemaType{kind: kindScalar, scalar: "boolean"}
	case schema.KindObject:
		return schemaTypeOf(r.Named)
	case schema.KindList:
		l := schemaType{kind: kindList, atomic: true, elem: r.Elem}
		if f != nil && (f.ListType == "set" || f.ListType == "map") {
			l.atomic = false
			l.listType = f.ListType
			if f.ListType == "map" {
				l.keys = f.ListMapKeys
				if r.Elem.Kind == schema.KindObject {
					l.elemObj = r.Elem.Named
				}
			}
		}
		return l
	case schema.KindMap:
		return schemaType{kind: kindMap, elem: r.Elem, atomic: f != nil && f.MapType == "atomic"}
	}
	return schemaType{kind: kindDeduced}
}

// at resolves an untyped position against a value.
func (t schemaType) at(v any) schemaType {
	if t.kind != kindDeduced && t.kind != kindAtomicAny {
		return t
	}
	switch v.(type) {
	case map[string]any:
		if t.kind == kindAtomicAny {
			return schemaType{kind: kindMap, atomic: true, anyElems: true}
		}
		return schemaType{kind: kindMap}
	case []any:
		return schemaType{kind: kindList, atomic: true, anyElems: true}
	}
	return schemaType{kind: kindScalar, scalar: "untyped"}
}

// field returns the type of key k of a map and whether it is a declared
// struct field.
func (t schemaType) field(k string) (schemaType, bool) {
	if t.obj != nil {
		for _, f := range t.obj.Fields {
			if f.Name == k {
				return schemaTypeOfRef(f, f.Type), true
			}
		}
		return schemaType{kind: kindDeduced}, false
	}
	if t.elem != nil {
		return schemaTypeOfRef(nil, t.elem), false
	}
	if t.anyElems {
		return schemaType{kind: kindAtomicAny}, false
	}
	return schemaType{kind: kindDeduced}, false
}

func (t schemaType) item() schemaType {
	if t.elem != nil {
		return schemaTypeOfRef(nil, t.elem)
	}
	if t.anyElems {
		return schemaType{kind: kindAtomicAny}
	}
	return schemaType{kind: kindDeduced}
}

// itemPE is the path element of a list item: `k:{...}` for map lists
// (the keys present, or defaulted, sorted by name), `v:...` for sets.
func (t schemaType) itemPE(item any) (string, error) {
	if t.listType == "set" {
		switch item.(type) {
		case map[string]any:
			return "", errors.New("associative list without keys has an element that's a map type")
		case []any:
			return "", errors.New("not supported: associative list with lists as elements")
		case nil:
			return "", errors.New("associative list without keys has an element that's an explicit null")
		}
		b, err := json.Marshal(item)
		return "v:" + string(b), err
	}
	if item == nil {
		return "", errors.New("associative list with keys may not have a null element")
	}
	m, ok := item.(map[string]any)
	if !ok {
		return "", errors.New("associative list with keys may not have non-map elements")
	}
	keys := append([]string(nil), t.keys...)
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("k:{")
	n := 0
	for _, k := range keys {
		v, ok := m[k]
		if !ok {
			if v, ok = t.keyDefault(k); !ok {
				continue // a key left out names another entry
			}
		}
		kb, _ := json.Marshal(k)
		vb, _ := json.Marshal(v)
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(kb)
		b.WriteByte(':')
		b.Write(vb)
	}
	if n == 0 {
		return "", fmt.Errorf("associative list with keys has an element that omits all key fields %q (and doesn't have default values for any key fields)", t.keys)
	}
	b.WriteByte('}')
	return b.String(), nil
}

func (t schemaType) keyDefault(k string) (any, bool) {
	if t.elemObj == nil {
		return nil, false
	}
	for _, f := range t.elemObj.Fields {
		if f.Name == k && f.Default != nil {
			return normalize(f.Default), true
		}
	}
	return nil, false
}

func appendPath(p []string, pe string) []string {
	return append(append(make([]string, 0, len(p)+1), p...), pe)
}

// toFieldSet is the set of fields v sets: scalars and atomic values as
// leaves, list items as members, map entries that are null or empty or
// not declared struct fields as members.
func toFieldSet(v any, t schemaType) *fieldSet {
	s := newFieldSet()
	var walk func(path []string, v any, t schemaType)
	walk = func(path []string, v any, t schemaType) {
		t = t.at(v)
		switch t.kind {
		case kindList:
			l, _ := v.([]any)
			if t.atomic {
				s.insert(path)
				return
			}
			if l == nil {
				return
			}
			seen, dup := map[string]bool{}, map[string]bool{}
			for _, it := range l {
				pe, err := t.itemPE(it)
				if err != nil {
					continue
				}
				if seen[pe] && !dup[pe] {
					s.insert(appendPath(path, pe))
					dup[pe] = true
				}
				seen[pe] = true
			}
			for _, it := range l {
				pe, err := t.itemPE(it)
				if err != nil || dup[pe] {
					continue
				}
				p := appendPath(path, pe)
				walk(p, it, t.item())
				s.insert(p)
			}
		case kindMap:
			m, isMap := v.(map[string]any)
			if t.atomic || !isMap && v != nil {
				s.insert(path)
				return
			}
			for k, e := range m {
				ft, declared := t.field(k)
				p := appendPath(path, "f:"+k)
				walk(p, e, ft)
				em, isMap := e.(map[string]any)
				if e == nil || isMap && len(em) == 0 || !declared {
					s.insert(p)
				}
			}
		default:
			s.insert(path)
		}
	}
	walk(nil, v, t)
	return s
}

// comparison is what changed between two objects.
type comparison struct{ added, removed, modified *fieldSet }

func compareObjects(l, r any, t schemaType) *comparison {
	c := &comparison{newFieldSet(), newFieldSet(), newFieldSet()}
	var walk func(path []string, l, r any, lok, rok bool, t schemaType)
	leaf := func(path []string, l, r any, lok, rok bool) {
		switch {
		case !lok:
			c.added.insert(path)
		case !rok:
			c.removed.insert(path)
		case !schema.JSONEqual(l, r):
			c.modified.insert(path)
		}
	}
	walk = func(path []string, l, r any, lok, rok bool, t schemaType) {
		if rok {
			t = t.at(r)
		} else {
			t = t.at(l)
		}
		isLeaf := false
		switch t.kind {
		case kindList:
			ll, _ := l.([]any)
			rl, _ := r.([]any)
			if t.atomic || len(ll) == 0 && len(rl) == 0 {
				leaf(path, l, r, lok, rok)
				isLeaf = true
				break
			}
			lpes, lvals := indexItems(t, ll)
			rpes, rvals := indexItems(t, rl)
			all := append([]string(nil), lpes...)
			for _, pe := range rpes {
				if _, ok := lvals[pe]; !ok {
					all = append(all, pe)
				}
			}
			for _, pe := range all {
				lv, rv := lvals[pe], rvals[pe]
				p := appendPath(path, pe)
				switch {
				case len(lv) <= 1 && len(rv) <= 1:
					var a, b any
					if len(lv) == 1 {
						a = lv[0]
					}
					if len(rv) == 1 {
						b = rv[0]
					}
					walk(p, a, b, len(lv) == 1, len(rv) == 1, t.item())
				case len(lv) >= 2 && len(rv) >= 2:
					if !schema.JSONEqual(lv, rv) {
						c.modified.insert(p)
					}
				case len(lv) >= 2:
					if len(rv) != 0 {
						walk(p, nil, rv[0], false, true, t.item())
					}
					c.removed.insert(p)
				default:
					if len(lv) != 0 {
						walk(p, lv[0], nil, true, false, t.item())
					}
					c.added.insert(p)
				}
			}
		case kindMap:
			lm, lIsMap := l.(map[string]any)
			rm, rIsMap := r.(map[string]any)
			if t.atomic || len(lm) == 0 && len(rm) == 0 || (lok && l != nil && !lIsMap) || (rok && r != nil && !rIsMap) {
				leaf(path, l, r, lok, rok)
				isLeaf = true
				break
			}
			for k, lv := range lm {
				ft, _ := t.field(k)
				rv, ok := rm[k]
				walk(appendPath(path, "f:"+k), lv, rv, true, ok, ft)
			}
			for k, rv := range rm {
				if _, ok := lm[k]; !ok {
					ft, _ := t.field(k)
					walk(appendPath(path, "f:"+k), nil, rv, false, true, ft)
				}
			}
		default:
			leaf(path, l, r, lok, rok)
			isLeaf = true
		}
		if !isLeaf && len(path) > 0 {
			if !lok {
				c.added.insert(path)
			} else if !rok {
				c.removed.insert(path)
			}
		}
	}
	walk(nil, l, r, true, true, t)
	return c
}

// indexItems lists the path elements of a granular list in order (first
// occurrence) and the items under each.
func indexItems(t schemaType, l []any) ([]string, map[string][]any) {
	var pes []string
	vals := map[string][]any{}
	for _, it := range l {
		pe, err := t.itemPE(it)
		if err != nil {
			continue
		}
		if _, ok := vals[pe]; !ok {
			pes = append(pes, pe)
		}
		vals[pe] = append(vals[pe], it)
	}
	return pes, vals
}

// mergeObjects merges r (the configuration) into l: r's leaves win, maps
// merge by key, granular lists by path element keeping l's items in place
// and r's order for the items r lists. ok is false when the result is
// absent.
func mergeObjects(l, r any, lok, rok bool, t schemaType) (any, bool, error) {
	if rok {
		t = t.at(r)
	} else {
		t = t.at(l)
	}
	keepRHS := func() (any, bool, error) {
		if rok {
			return r, true, nil
		}
		return l, lok, nil
	}
	switch t.kind {
	case kindList:
		ll, _ := l.([]any)
		rl, _ := r.([]any)
		if t.atomic || len(ll) == 0 && len(rl) == 0 {
			return keepRHS()
		}
		return mergeLists(ll, rl, t)
	case kindMap:
		lm, lIsMap := l.(map[string]any)
		rm, rIsMap := r.(map[string]any)
		if t.atomic || len(lm) == 0 && len(rm) == 0 || (lok && l != nil && !lIsMap) || (rok && r != nil && !rIsMap) {
			return keepRHS()
		}
		out := map[string]any{}
		for k, lv := range lm {
			ft, _ := t.field(k)
			rv, ok := rm[k]
			v, vok, err := mergeObjects(lv, rv, true, ok, ft)
			if err != nil {
				return nil, false, err
			}
			if vok {
				out[k] = v
			}
		}
		for k, rv := range rm {
			if _, ok := lm[k]; ok {
				continue
			}
			ft, _ := t.field(k)
			v, vok, err := mergeObjects(nil, rv, false, true, ft)
			if err != nil {
				return nil, false, err
			}
			if vok {
				out[k] = v
			}
		}
		if len(out) == 0 {
			return nil, false, nil
		}
		return out, true, nil
	}
	return keepRHS()
}

func mergeLists(lhs, rhs []any, t schemaType) (any, bool, error) {
	type entry struct {
		pe string
		v  any
		ok bool
	}
	index := func(l []any, allowDup bool) ([]string, map[string]entry, error) {
		var pes []string
		obs := map[string]entry{}
		for _, it := range l {
			pe, err := t.itemPE(it)
			if err != nil {
				return nil, nil, err
			}
			if _, found := obs[pe]; found {
				if !allowDup {
					return nil, nil, fmt.Errorf("duplicate entries for key %s", pathString([]string{pe}))
				}
				obs[pe] = entry{pe, nil, true} // a duplicated item merges as null
			} else {
				obs[pe] = entry{pe, it, true}
			}
			pes = append(pes, pe)
		}
		return pes, obs, nil
	}
	rpes, robs, err := index(rhs, false)
	if err != nil {
		return nil, false, err
	}
	lpes, lobs, err := index(lhs, true)
	if err != nil {
		return nil, false, err
	}
	var shared []string
	for _, pe := range rpes {
		if _, ok := lobs[pe]; ok {
			shared = append(shared, pe)
		}
	}
	next := ""
	hasNext := false
	pop := func() {
		hasNext = false
		if len(shared) > 0 {
			next, shared, hasNext = shared[0], shared[1:], true
		}
	}
	pop()
	var out []any
	merged := map[string]bool{}
	item := func(pe string, lv, rv entry) error {
		v, ok, err := mergeObjects(lv.v, rv.v, lv.ok, rv.ok, t.item())
		if err != nil {
			return err
		}
		if ok {
			out = append(out, v)
		}
		return nil
	}
	for li, ri := 0, 0; li < len(lpes) || ri < len(rpes); {
		if li < len(lpes) && ri < len(rpes) {
			pe := lpes[li]
			if pe == rpes[ri] {
				merged[pe] = true
				if err := item(pe, lobs[pe], robs[pe]); err != nil {
					return nil, false, err
				}
				li++
				ri++
				pop()
				continue
			}
			if _, ok := robs[pe]; ok && hasNext && next != pe {
				li++
				continue
			}
		}
		if li < len(lpes) {
			pe := lpes[li]
			if _, ok := robs[pe]; !ok {
				if err := item(pe, entry{pe, lhs[li], true}, entry{}); err != nil {
					return nil, false, err
				}
				li++
				continue
			} else if merged[pe] {
				li++
			}
		}
		if ri < len(rpes) {
			pe := rpes[ri]
			merged[pe] = true
			if err := item(pe, lobs[pe], robs[pe]); err != nil {
				return nil, false, err
			}
			ri++
			if hasNext && next == pe {
				pop()
			}
		}
	}
	if len(out) == 0 {
		return nil, false, nil
	}
	return out, true, nil
}

// removeItems drops the paths of set from v (a removed map entry or list
// item disappears; a map or list left empty becomes null, as
// structured-merge-diff's RemoveItems leaves it).
func removeItems(v any, set *fieldSet, t schemaType) any {
	t = t.at(v)
	switch t.kind {
	case kindList:
		l, ok := v.([]any)
		if !ok || len(l) == 0 || t.atomic {
			return nil
		}
		var out []any
		for _, it := range l {
			pe, _ := t.itemPE(it)
			if set.members[pe] {
				continue
			}
			if sub := set.children[pe]; sub != nil && !sub.empty() {
				it = removeItems(it, sub, t.item())
			}
			out = append(out, it)
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case kindMap:
		m, ok := v.(map[string]any)
		if !ok || len(m) == 0 || t.atomic {
			return nil
		}
		out := map[string]any{}
		for k, e := range m {
			pe := "f:" + k
			if set.members[pe] {
				continue
			}
			if sub := set.children[pe]; sub != nil && !sub.empty() {
				ft, _ := t.field(k)
				e = removeItems(e, sub, ft)
			}
			out[k] = e
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// ensureNamedFieldsAreMembers makes every declared struct field with
// children in s also a member.
func ensureNamedFieldsAreMembers(s *fieldSet, t schemaType, v any) *fieldSet {
	out := newFieldSet()
	for m := range s.members {
		if out.members == nil {
			out.members = map[string]bool{}
		}
		out.members[m] = true
	}
	for pe, c := range s.children {
		var ct schemaType
		if t.kind == kindMap && strings.HasPrefix(pe, "f:") {
			ft, declared := t.field(pe[2:])
			ct = ft
			if declared && t.obj != nil {
				if out.members == nil {
					out.members = map[string]bool{}
				}
				out.members[pe] = true
			}
		} else if t.kind == kindList {
			ct = t.item()
		} else {
			ct = schemaType{kind: kindDeduced}
		}
		if t.kind == kindList && !strings.HasPrefix(pe, "k:") {
			ct = schemaType{kind: kindDeduced} // only keyed items carry their type on
		}
		out.child(pe)
		out.children[pe] = ensureNamedFieldsAreMembers(c, ct, nil)
	}
	return out
}

// reconcileWithSchema collapses what a field set holds below an atomic map
// or list into the atomic node itself, as structured-merge-diff does for
// managedFields written under another schema (or sent by a client).
func reconcileWithSchema(s *fieldSet, root schemaType) *fieldSet {
	collapse := newFieldSet()
	var walk func(path []string, node *fieldSet, t schemaType, isAtomic bool)
	visit := func(path []string, node *fieldSet, child func(pe string) (schemaType, bool)) {
		if node == nil {
			return
		}
		for _, pe := range sortedKeys(node.children) {
			if node.members[pe] {
				continue
			}
			if ct, ok := child(pe); ok {
				walk(appendPath(path, pe), node.children[pe], ct, false)
			}
		}
		for _, pe := range sortedPEs(node.members) {
			if ct, ok := child(pe); ok {
				c := node.children[pe]
				walk(appendPath(path, pe), c, ct, c.empty())
			}
		}
	}
	walk = func(path []string, node *fieldSet, t schemaType, isAtomic bool) {
		if t.kind == kindAtomicAny {
			t = schemaType{kind: kindMap, atomic: true, anyElems: true}
		}
		switch t.kind {
		case kindList:
			if !isAtomic && t.atomic {
				collapse.insert(path)
				return
			}
			visit(path, node, func(string) (schemaType, bool) { return t.item(), true })
		case kindMap:
			if !isAtomic && t.atomic {
				if !node.empty() {
					collapse.insert(path)
				}
				return
			}
			visit(path, node, func(pe string) (schemaType, bool) {
				if t.obj != nil && strings.HasPrefix(pe, "f:") {
					return t.field(pe[2:]) // fields not in the schema are left alone
				}
				if t.elem != nil {
					return schemaTypeOfRef(nil, t.elem), true
				}
				return schemaType{}, false
			})
		}
	}
	walk(nil, s, root, false)
	if collapse.empty() {
		return s
	}
	return s.recursiveDifference(collapse).union(collapse)
}

// (not inlined: a map iteration copied into each caller)
//
//go:noinline
func sortedKeys(m map[string]*fieldSet) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
