//go:build !(js && wasm)

package apply

import (
	"encoding/json"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// FieldsV1 tries are converted to and from structured-merge-diff sets
// directly: going through their JSON text (json.Marshal then Set.FromJSON,
// Set.ToJSON then json.Unmarshal) was an eighth of the cost of an update.
// The conversions build exactly what the JSON round trips build; anything
// they are not sure of (a key that is not a path element, a value that is
// not an object) takes the JSON path, with its errors.

// setFromFieldsV1 is Set.FromJSON of v's JSON, or !ok.
func setFromFieldsV1(v any) (*fieldpath.Set, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	found, _, ok := trieSet(m)
	if !ok {
		return nil, false
	}
	if found == nil {
		return &fieldpath.Set{}, true
	}
	return found, true
}

// trieSet mirrors structured-merge-diff's reader: "." marks the node as a
// member of its parent, keys of unknown path-element types are dropped, a
// node without children is a member.
func trieSet(m map[string]any) (children *fieldpath.Set, isMember, ok bool) {
	for key, v := range m {
		if key == "." {
			isMember = true
			continue
		}
		pe, err := fieldpath.DeserializePathElement(key)
		if err == fieldpath.ErrUnknownPathElementType {
			continue
		}
		if err != nil {
			return nil, false, false
		}
		sub, isMap := v.(map[string]any)
		if !isMap {
			return nil, false, false
		}
		grandchildren, childIsMember, ok := trieSet(sub)
		if !ok {
			return nil, false, false
		}
		if childIsMember {
			if children == nil {
				children = &fieldpath.Set{}
			}
			children.Members.Insert(pe)
		}
		if grandchildren != nil {
			if children == nil {
				children = &fieldpath.Set{}
			}
			*children.Children.Descend(pe) = *grandchildren
		}
	}
	if children == nil {
		isMember = true
	}
	return children, isMember, true
}

// fieldsV1FromSet is json.Unmarshal of s.ToJSON(), or !ok.
func fieldsV1FromSet(s *fieldpath.Set) (map[string]any, bool) {
	out := map[string]any{}
	ok := true
	s.Members.Iterate(func(pe fieldpath.PathElement) {
		if _, child := s.Children.Get(pe); child || !ok {
			return // written with the children
		}
		key, err := fieldpath.SerializePathElement(pe)
		if err != nil {
			ok = false
			return
		}
		out[key] = map[string]any{}
	})
	s.Children.Iterate(func(pe fieldpath.PathElement) {
		if !ok {
			return
		}
		key, err := fieldpath.SerializePathElement(pe)
		if err != nil {
			ok = false
			return
		}
		c, _ := s.Children.Get(pe)
		m, cok := fieldsV1FromSet(c)
		if !cok {
			ok = false
			return
		}
		// the node is also a member: "." unless the child set writes
		// nothing (then {} alone says member)
		if s.Members.Has(pe) && (c.Members.Size() > 0 || hasChildren(c)) {
			m["."] = map[string]any{}
		}
		out[key] = m
	})
	return out, ok
}

func hasChildren(s *fieldpath.Set) bool {
	has := false
	s.Children.Iterate(func(fieldpath.PathElement) { has = true })
	return has
}

// fieldsV1JSON is the JSON round trip fieldsV1FromSet stands for.
func fieldsV1JSON(s *fieldpath.Set) (any, error) {
	b, err := s.ToJSON()
	if err != nil {
		return nil, err
	}
	var fields any
	if err := json.Unmarshal(b, &fields); err != nil {
		return nil, err
	}
	return fields, nil
}
