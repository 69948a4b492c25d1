package schema

// ApplyDefaults fills in, in place, the defaults s declares, as kube-apiserver
// does to a custom resource after pruning it: nulls where s allows no
// null and has no default are dropped first; then a property that is
// missing, or null where s allows none, takes its default (a copy), and
// every value below is defaulted the same way. x is the object (or any
// value) as decoded JSON.
func (s *Structural) ApplyDefaults(x any) {
	s.pruneNulls(x)
	s.fillDefaults(x)
}

func (s *Structural) fieldSchema(k string) *Structural {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return p
	}
	return s.AdditionalProperties
}

func nonNullableNull(x any, s *Structural) bool { return x == nil && s != nil && !s.Nullable }

func (s *Structural) pruneNulls(x any) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			fs := s.fieldSchema(k)
			if nonNullableNull(v, fs) && fs.Default == nil {
				delete(x, k)
			} else {
				fs.pruneNulls(v)
			}
		}
	case []any:
		var items *Structural
		if s != nil {
			items = s.Items
		}
		for _, e := range x {
			items.pruneNulls(e)
		}
	}
}

func (s *Structural) fillDefaults(x any) {
	if s == nil {
		return
	}
	switch x := x.(type) {
	case map[string]any:
		for _, k := range s.Keys {
			p := s.Properties[k]
			if p.Default == nil {
				continue
			}
			if v, found := x[k]; !found || nonNullableNull(v, p) {
				x[k] = DeepCopy(p.Default)
			}
		}
		for k, v := range x {
			if p, ok := s.Properties[k]; ok {
				p.fillDefaults(v)
			} else if ap := s.AdditionalProperties; ap != nil {
				if nonNullableNull(v, ap) && ap.Default != nil {
					x[k] = DeepCopy(ap.Default)
				}
				ap.fillDefaults(x[k])
			}
		}
	case []any:
		for i, e := range x {
			if nonNullableNull(e, s.Items) && s.Items.Default != nil {
				x[i] = DeepCopy(s.Items.Default)
			}
			s.Items.fillDefaults(x[i])
		}
	}
}

// DeepCopy copies a decoded JSON value.
func DeepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = DeepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = DeepCopy(e)
		}
		return c
	}
	return v
}
