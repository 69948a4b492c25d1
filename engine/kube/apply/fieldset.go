package apply

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// fieldSet is a field set (structured-merge-diff's fieldpath.Set): a trie of
// path elements kept in their FieldsV1 spelling ("f:name",
// `k:{"name":"x"}`, `v:"a"`, "i:0").

type fieldSet struct {
	members  map[string]bool
	children map[string]*fieldSet
}

func newFieldSet() *fieldSet { return &fieldSet{} }

func (s *fieldSet) empty() bool {
	if s == nil {
		return true
	}
	if len(s.members) > 0 {
		return false
	}
	for _, c := range s.children {
		if !c.empty() {
			return false
		}
	}
	return true
}

// (not inlined: its map code would be copied into its 27 callers)
//
//go:noinline
func (s *fieldSet) child(pe string) *fieldSet {
	if s.children == nil {
		s.children = map[string]*fieldSet{}
	}
	c := s.children[pe]
	if c == nil {
		c = newFieldSet()
		s.children[pe] = c
	}
	return c
}

// insert adds the path.
func (s *fieldSet) insert(path []string) {
	if len(path) == 0 {
		return
	}
	for len(path) > 1 {
		s = s.child(path[0])
		path = path[1:]
	}
	if s.members == nil {
		s.members = map[string]bool{}
	}
	s.members[path[0]] = true
}

func (s *fieldSet) has(path []string) bool {
	for s != nil && len(path) > 1 {
		s = s.children[path[0]]
		path = path[1:]
	}
	return s != nil && len(path) == 1 && s.members[path[0]]
}

func (s *fieldSet) copy() *fieldSet {
	out := newFieldSet()
	if s == nil {
		return out
	}
	for m := range s.members {
		if out.members == nil {
			out.members = map[string]bool{}
		}
		out.members[m] = true
	}
	for pe, c := range s.children {
		if !c.empty() {
			out.child(pe)
			out.children[pe] = c.copy()
		}
	}
	return out
}

func (s *fieldSet) union(o *fieldSet) *fieldSet {
	out := s.copy()
	if o == nil {
		return out
	}
	for m := range o.members {
		if out.members == nil {
			out.members = map[string]bool{}
		}
		out.members[m] = true
	}
	for pe, c := range o.children {
		if c.empty() {
			continue
		}
		if oc := out.children[pe]; oc != nil {
			out.children[pe] = oc.union(c)
		} else {
			out.child(pe)
			out.children[pe] = c.copy()
		}
	}
	return out
}

func (s *fieldSet) difference(o *fieldSet) *fieldSet {
	out := newFieldSet()
	if s == nil {
		return out
	}
	for m := range s.members {
		if o == nil || !o.members[m] {
			if out.members == nil {
				out.members = map[string]bool{}
			}
			out.members[m] = true
		}
	}
	for pe, c := range s.children {
		var oc *fieldSet
		if o != nil {
			oc = o.children[pe]
		}
		d := c.copy()
		if oc != nil {
			d = c.difference(oc)
		}
		if !d.empty() {
			out.child(pe)
			out.children[pe] = d
		}
	}
	return out
}

func (s *fieldSet) intersection(o *fieldSet) *fieldSet {
	out := newFieldSet()
	if s == nil || o == nil {
		return out
	}
	for m := range s.members {
		if o.members[m] {
			if out.members == nil {
				out.members = map[string]bool{}
			}
			out.members[m] = true
		}
	}
	for pe, c := range s.children {
		if oc := o.children[pe]; oc != nil {
			if d := c.intersection(oc); !d.empty() {
				out.child(pe)
				out.children[pe] = d
			}
		}
	}
	return out
}

// recursiveDifference removes o's members and everything below them.
func (s *fieldSet) recursiveDifference(o *fieldSet) *fieldSet {
	out := newFieldSet()
	if s == nil {
		return out
	}
	for m := range s.members {
		if o == nil || !o.members[m] {
			if out.members == nil {
				out.members = map[string]bool{}
			}
			out.members[m] = true
		}
	}
	for pe, c := range s.children {
		if o != nil && o.members[pe] {
			continue
		}
		d := c.copy()
		if o != nil && o.children[pe] != nil {
			d = c.recursiveDifference(o.children[pe])
		}
		if !d.empty() {
			out.child(pe)
			out.children[pe] = d
		}
	}
	return out
}

// iterate calls f for every path: a node's members (in path element
// order) before its children's paths, as structured-merge-diff does.
func (s *fieldSet) iterate(prefix []string, f func([]string)) {
	if s == nil {
		return
	}
	for _, m := range sortedPEs(s.members) {
		f(append(append([]string(nil), prefix...), m))
	}
	var kids []string
	for pe := range s.children {
		kids = append(kids, pe)
	}
	sort.Slice(kids, func(i, j int) bool { return peLess(kids[i], kids[j]) })
	for _, pe := range kids {
		s.children[pe].iterate(append(append([]string(nil), prefix...), pe), f)
	}
}

func sortedPEs(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return peLess(out[i], out[j]) })
	return out
}

func peRank(pe string) int {
	switch {
	case strings.HasPrefix(pe, "f:"):
		return 0
	case strings.HasPrefix(pe, "k:"):
		return 1
	case strings.HasPrefix(pe, "v:"):
		return 2
	}
	return 3
}

// peLess orders path elements as structured-merge-diff does: field names,
// then keys, values and indexes, each by content.
func peLess(a, b string) bool {
	ra, rb := peRank(a), peRank(b)
	if ra != rb {
		return ra < rb
	}
	switch ra {
	case 0:
		return a < b
	case 1:
		ka, kb := parseKeyPE(a), parseKeyPE(b)
		for i := 0; i < len(ka) && i < len(kb); i++ {
			if ka[i].name != kb[i].name {
				return ka[i].name < kb[i].name
			}
			if c := compareValues(ka[i].value, kb[i].value); c != 0 {
				return c < 0
			}
		}
		return len(ka) < len(kb)
	case 2:
		return compareValues(parsePEValue(a[2:]), parsePEValue(b[2:])) < 0
	}
	ia, _ := strconv.Atoi(a[2:])
	ib, _ := strconv.Atoi(b[2:])
	return ia < ib
}

type keyField struct {
	name  string
	value any
}

func parseKeyPE(pe string) []keyField {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(pe[2:]))
	d.UseNumber()
	if d.Decode(&m) != nil {
		return nil
	}
	out := make([]keyField, 0, len(m))
	for k, v := range m {
		out = append(out, keyField{k, normalize(v)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

func parsePEValue(s string) any {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	d.Decode(&v)
	return normalize(v)
}

// compareValues orders scalar values: numbers numerically, strings, bools,
// then anything else by its JSON.
func compareValues(a, b any) int {
	fa, aNum := toFloat(a)
	fb, bNum := toFloat(b)
	switch {
	case aNum && bNum:
		switch {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	case aNum:
		return -1
	case bNum:
		return 1
	}
	sa, aStr := a.(string)
	sb, bStr := b.(string)
	switch {
	case aStr && bStr:
		return strings.Compare(sa, sb)
	case aStr:
		return -1
	case bStr:
		return 1
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return strings.Compare(string(ja), string(jb))
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	}
	return 0, false
}

// valueString is how a value shows in a conflict path.
func valueString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		s := make([]string, len(x))
		for i, e := range x {
			s[i] = valueString(e)
		}
		return "[" + strings.Join(s, ",") + "]"
	}
	return fmt.Sprint(v)
}

// pathString renders a path as kube's conflict messages do.
func pathString(path []string) string {
	var b strings.Builder
	for _, pe := range path {
		switch peRank(pe) {
		case 0:
			b.WriteString("." + pe[2:])
		case 1:
			var parts []string
			for _, k := range parseKeyPE(pe) {
				parts = append(parts, k.name+"="+valueString(k.value))
			}
			b.WriteString("[" + strings.Join(parts, ",") + "]")
		case 2:
			b.WriteString("[=" + valueString(parsePEValue(pe[2:])) + "]")
		default:
			b.WriteString("[" + pe[2:] + "]")
		}
	}
	return b.String()
}

// toFieldsV1 encodes the set as a FieldsV1 JSON value.
func (s *fieldSet) toFieldsV1() map[string]any {
	out := map[string]any{}
	for m := range s.members {
		out[m] = map[string]any{}
	}
	for pe, c := range s.children {
		if c.empty() {
			continue
		}
		sub := c.toFieldsV1()
		if s.members[pe] {
			sub["."] = map[string]any{}
		}
		out[pe] = sub
	}
	return out
}

// fieldSetFromFieldsV1 decodes a FieldsV1 JSON value.
func fieldSetFromFieldsV1(v any) (*fieldSet, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("FieldsV1 must be an object")
	}
	s := newFieldSet()
	for k, e := range m {
		if k == "." {
			continue
		}
		if len(k) < 2 || k[1] != ':' || !strings.ContainsRune("fkvi", rune(k[0])) {
			return nil, fmt.Errorf("unknown path element %q", k)
		}
		em, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("FieldsV1 must be an object at %q", k)
		}
		if _, self := em["."]; self || len(em) == 0 {
			if s.members == nil {
				s.members = map[string]bool{}
			}
			s.members[k] = true
		}
		if len(em) > 0 {
			c, err := fieldSetFromFieldsV1(em)
			if err != nil {
				return nil, err
			}
			if !c.empty() {
				s.child(k)
				s.children[k] = c
			}
		}
	}
	return s, nil
}
