package console

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// kubectl apply and kubectl edit send strategic merge patches that they
// compute on the client: apply a three-way patch (the last applied
// configuration, the file, the live object), edit a two-way one. The list
// fields that merge by key (containers by name, ports by containerPort...)
// and those replaced whole come from the session's OpenAPI, as kubectl
// reads them: nothing about a type is written here.

// patchSchema is the strategic merge metadata of one object type, read
// from an OpenAPI v3 document (nil: no metadata, every list is replaced).
type patchSchema struct {
	schemas map[string]obj
	node    obj
}

// resolve follows $ref and a single allOf, as kube's OpenAPI nests them.
func (s *patchSchema) resolve(n obj) obj {
	for i := 0; i < 10 && n != nil; i++ {
		if ref, ok := n["$ref"].(string); ok {
			n = s.schemas[strings.TrimPrefix(ref, "#/components/schemas/")]
			continue
		}
		if all, ok := n["allOf"].([]any); ok && len(all) == 1 {
			if a, ok := all[0].(obj); ok {
				n = a
				continue
			}
		}
		break
	}
	return n
}

// field returns a field's schema and its patch strategy and merge key.
func (s *patchSchema) field(key string) (sub *patchSchema, strategy, mergeKey string) {
	if s == nil || s.node == nil {
		return nil, "", ""
	}
	props, _ := s.node["properties"].(obj)
	f, _ := props[key].(obj)
	if f == nil {
		if ap, ok := s.node["additionalProperties"].(obj); ok {
			return &patchSchema{schemas: s.schemas, node: s.resolve(ap)}, "", ""
		}
		return nil, "", ""
	}
	strategy, _ = f["x-kubernetes-patch-strategy"].(string)
	mergeKey, _ = f["x-kubernetes-patch-merge-key"].(string)
	r := s.resolve(f)
	if strategy == "" {
		strategy, _ = r["x-kubernetes-patch-strategy"].(string)
	}
	if mergeKey == "" {
		mergeKey, _ = r["x-kubernetes-patch-merge-key"].(string)
	}
	return &patchSchema{schemas: s.schemas, node: r}, strategy, mergeKey
}

// items is the schema of a list's elements.
func (s *patchSchema) items() *patchSchema {
	if s == nil || s.node == nil {
		return nil
	}
	it, _ := s.node["items"].(obj)
	return &patchSchema{schemas: s.schemas, node: s.resolve(it)}
}

// schemaFor reads the OpenAPI v3 document of r's group-version and finds
// its kind.
func (k *kubectlRun) schemaFor(r resource) *patchSchema {
	p := "/openapi/v3/apis/" + r.groupVersion()
	if r.Group == "" {
		p = "/openapi/v3/api/" + r.Version
	}
	k.c.mu.Lock()
	doc := k.c.openapi[p]
	k.c.mu.Unlock()
	if doc == nil {
		data, err := k.do("GET", p, nil, nil, "", "application/json")
		if err != nil {
			return nil
		}
		var d struct {
			Components struct {
				Schemas map[string]obj `json:"schemas"`
			} `json:"components"`
		}
		if json.Unmarshal(data, &d) != nil {
			return nil
		}
		doc = d.Components.Schemas
		k.c.mu.Lock()
		if k.c.openapi == nil {
			k.c.openapi = map[string]map[string]obj{}
		}
		k.c.openapi[p] = doc
		k.c.mu.Unlock()
	}
	for _, s := range doc {
		gvks, _ := s["x-kubernetes-group-version-kind"].([]any)
		for _, g := range gvks {
			gm, _ := g.(obj)
			if gm["group"] == r.Group && gm["version"] == r.Version && gm["kind"] == r.Kind {
				return &patchSchema{schemas: doc, node: s}
			}
		}
	}
	return nil
}

type diffOptions struct {
	ignoreDeletions, ignoreChangesAndAdditions bool
}

// diffMaps is the strategic merge diff of two maps.
func diffMaps(original, modified obj, s *patchSchema, o diffOptions) obj {
	patch := obj{}
	for _, key := range sortedKeys(modified) {
		mv := modified[key]
		ov, ok := original[key]
		if !ok {
			if !o.ignoreChangesAndAdditions {
				patch[key] = mv
			}
			continue
		}
		if reflect.TypeOf(ov) != reflect.TypeOf(mv) {
			if !o.ignoreChangesAndAdditions {
				patch[key] = mv
			}
			continue
		}
		switch ot := ov.(type) {
		case obj:
			sub, strategy, _ := s.field(key)
			if strategy == "replace" {
				if !o.ignoreChangesAndAdditions && !reflect.DeepEqual(ov, mv) {
					patch[key] = mv
				}
				continue
			}
			if p := diffMaps(ot, mv.(obj), sub, o); len(p) > 0 {
				patch[key] = p
			}
		case []any:
			sub, strategy, mergeKey := s.field(key)
			if strings.Contains(strategy, "merge") {
				add, del, order := diffLists(ot, mv.([]any), sub.items(), mergeKey, o)
				if len(add) > 0 {
					patch[key] = add
				}
				if len(del) > 0 {
					patch["$deleteFromPrimitiveList/"+key] = del
				}
				if len(order) > 0 {
					patch["$setElementOrder/"+key] = order
				}
				continue
			}
			if !o.ignoreChangesAndAdditions && !reflect.DeepEqual(ov, mv) {
				patch[key] = mv
			}
		default:
			if !o.ignoreChangesAndAdditions && !reflect.DeepEqual(ov, mv) {
				patch[key] = mv
			}
		}
	}
	if !o.ignoreDeletions {
		for key := range original {
			if _, ok := modified[key]; !ok {
				patch[key] = nil
			}
		}
	}
	return patch
}

func mergeKeyString(v any) string { return fmt.Sprintf("%v", v) }

// diffLists diffs two lists merged by key (or, for scalars, by value).
func diffLists(original, modified []any, s *patchSchema, mergeKey string, o diffOptions) (patchList, deleteList, setOrder []any) {
	maps := len(original)+len(modified) > 0
	for _, l := range [][]any{original, modified} {
		for _, e := range l {
			if _, ok := e.(obj); !ok {
				maps = false
			}
		}
	}
	if maps && mergeKey != "" {
		origSorted := sortByMergeKey(original, mergeKey)
		modSorted := sortByMergeKey(modified, mergeKey)
		oi, mi := 0, 0
		for oi < len(origSorted) || mi < len(modSorted) {
			var oe, me obj
			var ok, mk string
			if oi < len(origSorted) {
				oe = origSorted[oi].(obj)
				ok = mergeKeyString(oe[mergeKey])
			}
			if mi < len(modSorted) {
				me = modSorted[mi].(obj)
				mk = mergeKeyString(me[mergeKey])
			}
			switch {
			case oe != nil && me != nil && ok == mk:
				if p := diffMaps(oe, me, s, o); len(p) > 0 {
					p[mergeKey] = me[mergeKey]
					patchList = append(patchList, p)
				}
				oi++
				mi++
			case oe == nil || (me != nil && ok > mk):
				if !o.ignoreChangesAndAdditions {
					patchList = append(patchList, me)
				}
				mi++
			default:
				if !o.ignoreDeletions {
					deleteList = append(deleteList, obj{"$patch": "delete", mergeKey: oe[mergeKey]})
				}
				oi++
			}
		}
		patchList = inOrderOf(patchList, modified, mergeKey)
		orderSame := sameKeyOrder(original, modified, mergeKey)
		patchList = append(patchList, deleteList...)
		deleteList = nil
		if (!o.ignoreChangesAndAdditions && (len(patchList) > 0 || !orderSame)) || (!o.ignoreDeletions && len(patchList) > 0) {
			for _, e := range modified {
				setOrder = append(setOrder, obj{mergeKey: e.(obj)[mergeKey]})
			}
		}
		return patchList, deleteList, setOrder
	}
	// Lists of scalars merged as sets.
	in := func(l []any, v any) bool {
		for _, e := range l {
			if reflect.DeepEqual(e, v) {
				return true
			}
		}
		return false
	}
	if !o.ignoreChangesAndAdditions {
		for _, e := range modified {
			if !in(original, e) {
				patchList = append(patchList, e)
			}
		}
	}
	if !o.ignoreDeletions {
		for _, e := range original {
			if !in(modified, e) {
				deleteList = append(deleteList, e)
			}
		}
	}
	if (!o.ignoreDeletions && len(deleteList) > 0) || (!o.ignoreChangesAndAdditions && !reflect.DeepEqual(original, modified)) {
		setOrder = modified
	}
	return patchList, deleteList, setOrder
}

func sortByMergeKey(l []any, mergeKey string) []any {
	s := append([]any(nil), l...)
	sort.SliceStable(s, func(i, j int) bool {
		return mergeKeyString(s[i].(obj)[mergeKey]) < mergeKeyString(s[j].(obj)[mergeKey])
	})
	return s
}

// inOrderOf orders patch elements as their keys appear in modified.
func inOrderOf(patch, modified []any, mergeKey string) []any {
	pos := map[string]int{}
	for i, e := range modified {
		pos[mergeKeyString(e.(obj)[mergeKey])] = i
	}
	sort.SliceStable(patch, func(i, j int) bool {
		return pos[mergeKeyString(patch[i].(obj)[mergeKey])] < pos[mergeKeyString(patch[j].(obj)[mergeKey])]
	})
	return patch
}

func sameKeyOrder(a, b []any, mergeKey string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if mergeKeyString(a[i].(obj)[mergeKey]) != mergeKeyString(b[i].(obj)[mergeKey]) {
			return false
		}
	}
	return true
}

// mergePatches lays one patch over another (deltas over deletions).
func mergePatches(base, over obj) obj {
	out := deepCopy(base).(obj)
	for k, v := range over {
		bv, ok := out[k]
		if !ok {
			out[k] = v
			continue
		}
		bm, bIsMap := bv.(obj)
		vm, vIsMap := v.(obj)
		if bIsMap && vIsMap {
			out[k] = mergePatches(bm, vm)
			continue
		}
		bl, bIsList := bv.([]any)
		vl, vIsList := v.([]any)
		if bIsList && vIsList && !strings.HasPrefix(k, "$setElementOrder/") {
			out[k] = append(append([]any{}, vl...), bl...)
			continue
		}
		out[k] = v
	}
	return out
}

// threeWayPatch is CreateThreeWayMergePatch with overwrite: the changes
// from current to modified (no deletions), plus the deletions from
// original to modified.
func threeWayPatch(original, modified, current obj, s *patchSchema) obj {
	delta := diffMaps(current, modified, s, diffOptions{ignoreDeletions: true})
	deletions := diffMaps(original, modified, s, diffOptions{ignoreChangesAndAdditions: true})
	return mergePatches(deletions, delta)
}

// twoWayPatch is CreateTwoWayMergePatch.
func twoWayPatch(original, modified obj, s *patchSchema) obj {
	return diffMaps(original, modified, s, diffOptions{})
}
