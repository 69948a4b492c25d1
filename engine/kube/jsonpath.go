package kube

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
)

// A jsonPath is the part of client-go's JSONPath that custom resource
// definitions use to name a value (printer columns, selectable fields):
// fields (.spec.replicas, ['a.b']), indices ([0]) and filters on a field
// ([?(@.type=="Ready")]). A path selects the first value it reaches, as
// kube's table convertor takes results[0][0].
type jsonPath []pathStep

type pathStep struct {
	field  string // a field, or
	index  int    // an index (field "" and filter "")
	filter string // [?(@.<filter>==<value>)]: the field compared
	value  string
}

var errBadPath = errors.New("unrecognized JSONPath")

// parseJSONPath reads a path such as .status.conditions[?(@.type=="Ready")].status.
func parseJSONPath(p string) (jsonPath, error) {
	if !strings.HasPrefix(p, ".") && !strings.HasPrefix(p, "[") {
		return nil, errBadPath
	}
	var out jsonPath
	for p != "" {
		switch {
		case strings.HasPrefix(p, "["):
			end := strings.Index(p, "]")
			if end < 0 {
				return nil, errBadPath
			}
			in := p[1:end]
			p = p[end+1:]
			switch {
			case strings.HasPrefix(in, "?(@.") && strings.HasSuffix(in, ")"):
				f, v, ok := strings.Cut(in[4:len(in)-1], "==")
				if !ok {
					return nil, errBadPath
				}
				v = strings.TrimSpace(v)
				if uq, err := strconv.Unquote(strings.ReplaceAll(v, "'", `"`)); err == nil {
					v = uq
				}
				out = append(out, pathStep{filter: strings.TrimSpace(f), value: v})
			case len(in) > 1 && (in[0] == '\'' || in[0] == '"') && in[len(in)-1] == in[0]:
				out = append(out, pathStep{field: in[1 : len(in)-1]})
			default:
				i, err := strconv.Atoi(in)
				if err != nil || i < 0 {
					return nil, errBadPath
				}
				out = append(out, pathStep{index: i})
			}
		case strings.HasPrefix(p, "."):
			p = p[1:]
			end := strings.IndexAny(p, ".[")
			if end < 0 {
				end = len(p)
			}
			if end == 0 {
				return nil, errBadPath
			}
			out = append(out, pathStep{field: p[:end]})
			p = p[end:]
		default:
			return nil, errBadPath
		}
	}
	return out, nil
}

// get returns the value the path reaches in v, or false.
func (jp jsonPath) get(v any) (any, bool) {
	for _, s := range jp {
		switch {
		case s.filter != "":
			l, _ := v.([]any)
			found := false
			for _, e := range l {
				if m, ok := e.(map[string]any); ok && scalarText(m[s.filter]) == s.value {
					v, found = e, true
					break
				}
			}
			if !found {
				return nil, false
			}
		case s.field != "":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s.field]; !ok {
				return nil, false
			}
		default:
			l, ok := v.([]any)
			if !ok || s.index >= len(l) {
				return nil, false
			}
			v = l[s.index]
		}
	}
	return v, true
}

// scalarText is how JSONPath prints a scalar.
func scalarText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	}
	return renderValue(v)
}
