package patch

import (
	"encoding/json"
	"errors"
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

// Errors of the format, with kube's texts. The first group answers 400,
// the second 422 (generic message), anything else 500.
var (
	errBadRetainKeys      = errors.New("invalid patch format of retainKeys")
	errBadSetElementOrder = errors.New("invalid patch format of setElementOrder list")
	errBadPrimitiveList   = errors.New("invalid patch format of primitive list")
	errNoListOfLists      = errors.New("lists of lists are not supported")
)

// StrategicMerge applies a strategic merge patch to original, an object of
// type t, following kube's implementation rule for rule (checked against
// k8s.io/apimachinery's strategicpatch by a differential test). Where the
// schema gives a field patchStrategy "merge", lists are merged instead of
// replaced: lists of objects by their patchMergeKey (containers by name,
// ports by containerPort, env by name, ...), lists of scalars as sets; the
// merged list keeps the patch's order, with server-only items interleaved
// by their original order. The directives $patch (replace, delete, merge),
// $retainKeys, $deleteFromPrimitiveList/<field> and
// $setElementOrder/<field> are supported. Everything else behaves as a
// JSON merge patch (null deletes, objects merge, other values replace),
// also for fields without a schema.
//
// As in kube, patch content that does not merge with anything is copied as
// sent (an appended list item keeps nulls and nested directives); the
// caller's pruning of unknown fields and typed normalisation removes them.
func StrategicMerge(t *schema.Type, original, patchJSON []byte) ([]byte, error) {
	orig, err := decodeObject(original)
	if err != nil {
		return nil, badRequest("invalid JSON document", err)
	}
	p, err := decodeObject(patchJSON)
	if err != nil {
		return nil, badRequest(err.Error(), err)
	}
	out, err := mergeMap(orig, p, objectOf(t))
	if err != nil {
		var pe *Error
		switch {
		case errors.As(err, &pe):
			return nil, pe
		case errors.Is(err, errBadRetainKeys), errors.Is(err, errBadSetElementOrder), errors.Is(err, errBadPrimitiveList):
			return nil, badRequest(err.Error(), err)
		case errors.Is(err, errNoListOfLists):
			return nil, invalid(err)
		}
		return nil, &Error{Code: 500, Message: err.Error(), Cause: err}
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

// listMeta is how a list field merges: by merge key, as a set, or not.
func (s shape) listMeta(k string) (merge bool, key string, elem *schema.TypeRef) {
	f, ft := s.field(k)
	if f == nil || ft == nil || ft.Kind != schema.KindList {
		return false, "", nil
	}
	return f.HasPatchStrategy("merge"), f.PatchMergeKey, ft.Elem
}

func mergeMap(orig, p map[string]any, s shape) (map[string]any, error) {
	if d, ok := p[directivePatch]; ok {
		switch d {
		case "replace":
			return without(p, directivePatch), nil
		case "delete":
			return map[string]any{}, nil
		}
		return nil, fmt.Errorf("unknown patch type: %v in map: %v", d, goMap(p))
	}
	out := make(map[string]any, len(orig)+len(p))
	for k, v := range orig {
		out[k] = v
	}
	p = without(p, "")
	if err := retainKeys(out, p); err != nil {
		return nil, err
	}
	if err := setElementOrders(out, p, s); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	// Deletions from primitive lists first; kube's order is a map's, and
	// both orders give the same result for the lists kubectl sends.
	sort.SliceStable(keys, func(i, j int) bool {
		return strings.HasPrefix(keys[i], prefixDeleteFromPrimList) && !strings.HasPrefix(keys[j], prefixDeleteFromPrimList)
	})
	for _, k := range keys {
		pv := p[k]
		isDeleteList := false
		if strings.HasPrefix(k, prefixDeleteFromPrimList) {
			k = strings.TrimPrefix(k, prefixDeleteFromPrimList)
			isDeleteList = true
		}
		if pv == nil {
			delete(out, k)
			continue
		}
		ov, exists := out[k]
		if !exists || reflect.TypeOf(ov) != reflect.TypeOf(pv) {
			if !isDeleteList {
				replaceWith(out, k, pv)
			}
			continue
		}
		switch pvv := pv.(type) {
		case map[string]any:
			_, ft := s.field(k)
			merged, err := mergeMap(ov.(map[string]any), pvv, shapeOf(ft))
			if err != nil {
				return nil, err
			}
			out[k] = merged
		case []any:
			merge, key, elem := s.listMeta(k)
			if !merge && !isDeleteList {
				out[k] = pvv
				continue
			}
			merged, err := mergeList(ov.([]any), pvv, key, elem, isDeleteList)
			if err != nil {
				return nil, err
			}
			out[k] = merged
		default:
			replaceWith(out, k, pv)
		}
	}
	return out, nil
}

// replaceWith sets out[k] to a patch value that merges with nothing:
// nulls are dropped and maps carrying a $patch directive removed (the key
// too, if the value itself carries one).
func replaceWith(out map[string]any, k string, pv any) {
	v, keep := removeDirectives(discardNulls(pv))
	if keep {
		out[k] = v
	} else {
		delete(out, k)
	}
}

// retainKeys applies $retainKeys: keys of the original not listed are
// dropped; the patch may only set listed keys.
func retainKeys(out, p map[string]any) error {
	rk, ok := p[directiveRetainKeys]
	if !ok {
		return nil
	}
	delete(p, directiveRetainKeys)
	list, ok := rk.([]any)
	if !ok {
		return errBadRetainKeys
	}
	keep := map[any]bool{}
	for _, k := range list {
		keep[k] = true
	}
	for k, v := range p {
		if v == nil || strings.HasPrefix(k, prefixDeleteFromPrimList) || strings.HasPrefix(k, prefixSetElementOrder) {
			continue
		}
		if !keep[k] {
			return errBadRetainKeys
		}
	}
	for k := range out {
		if !keep[k] {
			delete(out, k)
		}
	}
	return nil
}

// setElementOrders merges every list that has a $setElementOrder/<k>
// directive and orders it: the patch's order list first, items only the
// server has interleaved by their original order. The list's patch is then
// consumed.
func setElementOrders(out, p map[string]any, s shape) error {
	for dk, dv := range p {
		if !strings.HasPrefix(dk, prefixSetElementOrder) {
			continue
		}
		delete(p, dk)
		order, ok := dv.([]any)
		if !ok {
			return errBadArgType(order, dv)
		}
		k := strings.TrimPrefix(dk, prefixSetElementOrder)
		origV, foundOrig := out[k]
		patchV, foundPatch := p[k]
		var origList, patchList []any
		if foundOrig {
			if origList, ok = origV.([]any); !ok {
				return errBadArgType(origList, origV)
			}
		}
		if foundPatch {
			if patchList, ok = patchV.([]any); !ok {
				return errBadArgType(patchList, patchV)
			}
		}
		merge, key, elem := s.listMeta(k)
		if foundPatch {
			if err := validateOrder(patchList, order, key); err != nil {
				return err
			}
		}
		var merged []any
		switch {
		case foundOrig && !foundPatch:
			merged = origList
		case !foundOrig && foundPatch:
			v, keep := removeDirectives(patchList)
			if !keep {
				continue
			}
			merged = v.([]any)
		case foundOrig && foundPatch:
			if !merge {
				merged = patchList
				break
			}
			var err error
			if merged, err = mergeList(origList, patchList, key, elem, false); err != nil {
				return err
			}
		default:
			continue
		}
		named, serverOnly, err := partition(merged, order, key)
		if err != nil {
			return err
		}
		if _, err := elementKind(origList, patchList); err != nil {
			return err
		}
		out[k] = interleave(named, serverOnly, order, origList, key)
		delete(p, k)
	}
	return nil
}

// errBadArgType is kube's text for a value of the wrong JSON type.
func errBadArgType(expected, actual any) error {
	return fmt.Errorf("expected a %s, but received a %s", reflect.TypeOf(expected), reflect.TypeOf(actual))
}

// validateOrder checks that the patch list follows the order list.
func validateOrder(patchList, order []any, key string) error {
	if len(order) == 0 || len(patchList) == 0 {
		return nil
	}
	var items []any
	for _, e := range patchList {
		if m, ok := e.(map[string]any); ok && key != "" && m[directivePatch] == "delete" {
			continue
		}
		items = append(items, e)
	}
	i, j := 0, 0
	for i < len(items) && j < len(order) {
		if m, ok := items[i].(map[string]any); ok && m[directivePatch] != nil {
			i++
			continue
		}
		if sameItem(items[i], order[j], key) {
			i++
		}
		j++
	}
	if i < len(items) && j >= len(order) {
		//lint:ignore ST1005 this is kube-apiserver's exact message, which clients see
		return fmt.Errorf("The order in patch list:\n%v\n doesn't match %s list:\n%v\n", patchList, "$setElementOrder", order)
	}
	return nil
}

// mergeList merges a list field whose strategy is "merge" (or applies a
// $deleteFromPrimitiveList). Like kube's implementation it works in place
// on the original list's backing array: deletions shift it and new items
// are appended into it. That is observable: a $setElementOrder list
// interleaves server-only items by the original list as it looks after
// those writes, and kube's answer depends on it, so we do the same.
func mergeList(orig, p []any, key string, elem *schema.TypeRef, isDeleteList bool) ([]any, error) {
	if len(orig) == 0 && len(p) == 0 {
		return orig, nil
	}
	kind, err := elementKind(orig, p)
	if err != nil {
		return nil, err
	}
	if kind != reflect.Map {
		if isDeleteList {
			kept := make([]any, 0, len(orig))
			for _, v := range orig {
				if !containsValue(p, v) {
					kept = append(kept, v)
				}
			}
			return kept, nil
		}
		merged := dedupeScalars(append(orig, p...))
		named, serverOnly, _ := partition(merged, p, "")
		return interleave(named, serverOnly, p, orig, ""), nil
	}
	if key == "" {
		return nil, fmt.Errorf("cannot merge lists without merge key for %s", "list")
	}
	// Directive items first: deletions (in place) and a replacement.
	work := orig
	plain := []any{}
	replace := false
	for _, e := range p {
		m := e.(map[string]any)
		d, ok := m[directivePatch]
		if !ok {
			plain = append(plain, e)
			continue
		}
		switch d {
		case "delete":
			kv, ok := m[key]
			if !ok {
				return nil, fmt.Errorf("map: %v does not contain declared merge key: %s", goMap(m), key)
			}
			for {
				i := indexOf(work, map[string]any{key: kv}, key)
				if i < 0 {
					break
				}
				work = append(work[:i], work[i+1:]...)
			}
		case "replace":
			replace = true
		case "merge":
			return nil, fmt.Errorf("merging lists cannot yet be specified in the patch")
		default:
			return nil, fmt.Errorf("unknown patch type: %v in map: %v", d, goMap(m))
		}
	}
	if replace {
		work, plain = plain, nil
	}
	serverOrder := work
	merged := work
	es := shapeOf(elem)
	for _, e := range plain {
		pm := e.(map[string]any)
		kv, ok := pm[key]
		if !ok {
			return nil, fmt.Errorf("map: %v does not contain declared merge key: %s", goMap(pm), key)
		}
		i := indexOf(merged, map[string]any{key: kv}, key)
		if i < 0 {
			merged = append(merged, pm) // as sent, like kube
			continue
		}
		om, ok := merged[i].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("expected map, but got %T", merged[i])
		}
		m, err := mergeMap(om, pm, es)
		if err != nil {
			return nil, err
		}
		merged[i] = m
	}
	named, serverOnly, err := partition(merged, plain, key)
	if err != nil {
		return nil, err
	}
	return interleave(named, serverOnly, plain, serverOrder, key), nil
}

// partition splits l into the items named by by (by merge key, or by
// value for scalars) and the others, keeping l's order.
func partition(l, by []any, key string) (named, serverOnly []any, err error) {
	named, serverOnly = []any{}, []any{}
	for _, v := range l {
		if key != "" {
			m, ok := v.(map[string]any)
			if !ok {
				return nil, nil, fmt.Errorf("expected map, but got %T", v)
			}
			if _, ok := m[key]; !ok {
				return nil, nil, fmt.Errorf("map: %v does not contain declared merge key: %s", goMap(m), key)
			}
		}
		if indexOf(by, v, key) >= 0 {
			named = append(named, v)
		} else {
			serverOnly = append(serverOnly, v)
		}
	}
	return named, serverOnly, nil
}

// interleave orders named by order and serverOnly by serverOrder (kube's
// comparator: only items both found are compared), then merges the two
// runs, taking a server-only item first only when serverOrder puts it
// before the next named item.
func interleave(named, serverOnly, order, serverOrder []any, key string) []any {
	named = sortByOrder(named, order, key)
	serverOnly = sortByOrder(serverOnly, serverOrder, key)
	out := make([]any, 0, len(named)+len(serverOnly))
	i, j := 0, 0
	for len(out) < cap(out) {
		switch {
		case i >= len(serverOnly):
			out = append(out, named[j])
			j++
		case j >= len(named):
			out = append(out, serverOnly[i])
			i++
		default:
			li, ri := indexOf(serverOrder, serverOnly[i], key), indexOf(serverOrder, named[j], key)
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

// sortByOrder sorts l by position in order with kube's comparator, which
// treats an item missing from order as "less"; items carrying a $patch
// directive go last.
func sortByOrder(l, order []any, key string) []any {
	var items, directives []any
	for _, v := range l {
		if m, ok := v.(map[string]any); ok && key != "" && m[directivePatch] != nil {
			directives = append(directives, v)
			continue
		}
		items = append(items, v)
	}
	sort.SliceStable(items, func(i, j int) bool {
		if a := indexOf(order, items[i], key); a >= 0 {
			if b := indexOf(order, items[j], key); b >= 0 {
				return a < b
			}
		}
		return true
	})
	return append(items, directives...)
}

func indexOf(l []any, v any, key string) int {
	for i, o := range l {
		if sameItem(o, v, key) {
			return i
		}
	}
	return -1
}

func sameItem(a, b any, key string) bool {
	if key == "" {
		return schema.JSONEqual(a, b)
	}
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if !ok1 || !ok2 {
		return false
	}
	av, ok1 := am[key]
	bv, ok2 := bm[key]
	return ok1 && ok2 && schema.JSONEqual(av, bv)
}

// elementKind is the common kind of the items of the lists (maps or
// scalars); lists of lists and mixed lists are errors, as in kube.
func elementKind(lists ...[]any) (reflect.Kind, error) {
	var prev reflect.Type
	for _, l := range lists {
		for _, v := range l {
			cur := reflect.TypeOf(v)
			if prev == nil {
				prev = cur
				if cur != nil && cur.Kind() == reflect.Slice {
					return 0, errNoListOfLists
				}
				continue
			}
			if prev != cur {
				return 0, fmt.Errorf("list element types are not identical: %v", lists)
			}
		}
	}
	if prev == nil {
		return 0, fmt.Errorf("no elements in any of the given slices")
	}
	return prev.Kind(), nil
}

// dedupeScalars removes repeated values the way kube does (moving the last
// item into a removed duplicate's place).
func dedupeScalars(s []any) []any {
	last := len(s) - 1
	for i := 0; i < last; i++ {
		for j := i + 1; j <= last; j++ {
			if schema.JSONEqual(s[i], s[j]) {
				s[j] = s[last]
				s = s[:last]
				last--
				j--
			}
		}
	}
	return s
}

func discardNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if e != nil {
				m[k] = discardNulls(e)
			}
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = discardNulls(e)
		}
		return l
	}
	return v
}

// removeDirectives drops every map carrying $patch (false if v itself
// does).
func removeDirectives(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x[directivePatch]; ok {
			return nil, false
		}
		m := make(map[string]any, len(x))
		for k, e := range x {
			if r, keep := removeDirectives(e); keep {
				m[k] = r
			}
		}
		return m, true
	case []any:
		l := []any{}
		for _, e := range x {
			if r, keep := removeDirectives(e); keep {
				l = append(l, r)
			}
		}
		return l, true
	}
	return v, true
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
		if schema.JSONEqual(e, v) {
			return true
		}
	}
	return false
}

// goMap renders a patch element as Go's %v of a map, which is what kube's
// error texts show.
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
