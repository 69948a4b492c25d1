package controllers

// labelSelector is a metav1.LabelSelector, evaluated as
// LabelSelectorAsSelector does: every matchLabels pair and every
// matchExpressions requirement must hold. A nil selector (no
// spec.selector) matches nothing; an empty one everything.
type labelSelector struct {
	ok           bool
	matchLabels  map[string]string
	expressions  []requirement
	unparseable  bool
	emptyMatches bool
}

type requirement struct {
	key, operator string
	values        []string
}

func selectorOf(sel map[string]any) labelSelector {
	if sel == nil {
		return labelSelector{}
	}
	s := labelSelector{ok: true, matchLabels: stringMap(mapOf(sel["matchLabels"]))}
	exprs, _ := sel["matchExpressions"].([]any)
	for _, e := range exprs {
		m, _ := e.(map[string]any)
		key, _ := m["key"].(string)
		op, _ := m["operator"].(string)
		r := requirement{key: key, operator: op}
		vals, _ := m["values"].([]any)
		for _, v := range vals {
			if str, ok := v.(string); ok {
				r.values = append(r.values, str)
			}
		}
		switch op {
		case "In", "NotIn", "Exists", "DoesNotExist":
		default:
			s.unparseable = true
		}
		s.expressions = append(s.expressions, r)
	}
	s.emptyMatches = len(s.matchLabels) == 0 && len(s.expressions) == 0
	return s
}

func mapOf(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// empty is labels.Selector.Empty: it selects everything.
func (s labelSelector) empty() bool { return s.ok && s.emptyMatches }

func (s labelSelector) matches(labels map[string]string) bool {
	if !s.ok || s.unparseable {
		return false
	}
	for k, v := range s.matchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, r := range s.expressions {
		v, has := labels[r.key]
		in := false
		for _, x := range r.values {
			if x == v {
				in = true
			}
		}
		switch r.operator {
		case "In":
			if !has || !in {
				return false
			}
		case "NotIn":
			if has && in {
				return false
			}
		case "Exists":
			if !has {
				return false
			}
		case "DoesNotExist":
			if has {
				return false
			}
		}
	}
	return true
}
