package schema

import "strconv"

// ListErrors finds the duplicates x-kubernetes-list-type forbids in obj:
// equal items of a set, items of a map list with equal keys, as
// apiextensions' ValidateListSetsAndMaps reports them (after the schema's
// own validation): "Duplicate value" at the later item, with the item (a
// set) or its keys (a map list) as the value.
func (s *Structural) ListErrors(obj any) []Violation {
	var out []Violation
	s.listErrors("", obj, &out)
	return out
}

func (s *Structural) listErrors(path string, x any, out *[]Violation) {
	if s == nil {
		return
	}
	switch v := x.(type) {
	case map[string]any:
		for _, k := range sortedKeys(v) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if ps, ok := s.Properties[k]; ok {
				ps.listErrors(p, v[k], out)
			} else if s.AdditionalProperties != nil {
				s.AdditionalProperties.listErrors(p, v[k], out)
			}
		}
	case []any:
		var seen []any
		for i, e := range v {
			p := path + "[" + strconv.Itoa(i) + "]"
			var id any
			switch s.ListType {
			case "set":
				id = e
			case "map":
				m, ok := e.(map[string]any)
				if !ok {
					break
				}
				keys := map[string]any{}
				for _, k := range s.ListMapKeys {
					if kv, ok := m[k]; ok {
						keys[k] = kv
					}
				}
				id = keys
			}
			if id != nil {
				dup := false
				for _, o := range seen {
					if JSONEqual(o, id) {
						dup = true
						break
					}
				}
				if dup {
					*out = append(*out, Violation{Type: "FieldValueDuplicate", Field: p, Value: id})
				} else {
					seen = append(seen, id)
				}
			}
			s.Items.listErrors(p, e, out)
		}
	}
}
