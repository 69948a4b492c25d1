package kube

import (
	"encoding/base64"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func base64Std(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// Operator is a label selector operator.
type Operator string

const (
	OpEquals       Operator = "="
	OpDoubleEquals Operator = "=="
	OpNotEquals    Operator = "!="
	OpIn           Operator = "in"
	OpNotIn        Operator = "notin"
	OpExists       Operator = "exists"
	OpDoesNotExist Operator = "!"
	OpGreaterThan  Operator = "gt"
	OpLessThan     Operator = "lt"
)

// Requirement is one term of a label selector.
type Requirement struct {
	Key    string
	Op     Operator
	Values []string // sorted
}

// LabelSelector is a parsed label selector: all requirements must hold.
type LabelSelector []Requirement

// Matches reports whether labels satisfy every requirement.
func (s LabelSelector) Matches(labels map[string]string) bool {
	for _, r := range s {
		if !r.matches(labels) {
			return false
		}
	}
	return true
}

func (r Requirement) matches(ls map[string]string) bool {
	v, has := ls[r.Key]
	switch r.Op {
	case OpEquals, OpDoubleEquals, OpIn:
		return has && slices.Contains(r.Values, v)
	case OpNotEquals, OpNotIn:
		return !has || !slices.Contains(r.Values, v)
	case OpExists:
		return has
	case OpDoesNotExist:
		return !has
	case OpGreaterThan, OpLessThan:
		if !has || len(r.Values) != 1 {
			return false
		}
		lv, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		rv, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return false
		}
		if r.Op == OpGreaterThan {
			return lv > rv
		}
		return lv < rv
	}
	return false
}

// String renders the selector as kube does (labels.Selector.String()).
func (s LabelSelector) String() string {
	parts := make([]string, 0, len(s))
	for _, r := range s {
		switch r.Op {
		case OpExists:
			parts = append(parts, r.Key)
		case OpDoesNotExist:
			parts = append(parts, "!"+r.Key)
		case OpIn, OpNotIn:
			parts = append(parts, r.Key+" "+string(r.Op)+" ("+strings.Join(r.Values, ",")+")")
		case OpGreaterThan:
			parts = append(parts, r.Key+">"+strings.Join(r.Values, ""))
		case OpLessThan:
			parts = append(parts, r.Key+"<"+strings.Join(r.Values, ""))
		default:
			parts = append(parts, r.Key+string(r.Op)+strings.Join(r.Values, ""))
		}
	}
	return strings.Join(parts, ",")
}

// --- the label selector language (labels.Parse) ---

type token int

const (
	tokError token = iota
	tokEnd
	tokClosedPar
	tokComma
	tokDoesNotExist
	tokDoubleEquals
	tokEquals
	tokGreaterThan
	tokIdentifier
	tokIn
	tokLessThan
	tokNotEquals
	tokNotIn
	tokOpenPar
)

var symbolTokens = map[string]token{
	")": tokClosedPar, ",": tokComma, "!": tokDoesNotExist, "==": tokDoubleEquals, "=": tokEquals,
	">": tokGreaterThan, "<": tokLessThan, "!=": tokNotEquals, "(": tokOpenPar,
}

func isSpecial(c byte) bool {
	return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

type item struct {
	tok token
	lit string
}

func lex(s string) []item {
	var out []item
	i := 0
	for {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i >= len(s) {
			return append(out, item{tokEnd, ""})
		}
		c := s[i]
		switch {
		case isSpecial(c):
			var last item
			j := i
			for j < len(s) && isSpecial(s[j]) {
				if t, ok := symbolTokens[s[i:j+1]]; ok {
					last = item{t, s[i : j+1]}
				} else if last.tok != tokError {
					break
				}
				j++
			}
			if last.tok == tokError {
				out = append(out, item{tokError, fmt.Sprintf("error expected: keyword found '%s'", s[i:j])})
				return append(out, item{tokEnd, ""})
			}
			out = append(out, last)
			i += len(last.lit)
		default:
			j := i
			for j < len(s) && !isSpecial(s[j]) && !isSpace(s[j]) {
				j++
			}
			lit := s[i:j]
			switch lit {
			case "in":
				out = append(out, item{tokIn, lit})
			case "notin":
				out = append(out, item{tokNotIn, lit})
			default:
				out = append(out, item{tokIdentifier, lit})
			}
			i = j
		}
	}
}

type parser struct {
	items []item
	pos   int
}

// In the values context the keywords in/notin are identifiers.
func (p *parser) lookahead(values bool) (token, string) {
	it := p.items[p.pos]
	if values && (it.tok == tokIn || it.tok == tokNotIn) {
		return tokIdentifier, it.lit
	}
	return it.tok, it.lit
}

func (p *parser) consume(values bool) (token, string) {
	t, l := p.lookahead(values)
	if p.pos < len(p.items)-1 {
		p.pos++
	}
	return t, l
}

// ParseLabelSelector parses a label selector with kube's messages.
func ParseLabelSelector(s string) (LabelSelector, error) {
	p := &parser{items: lex(s)}
	var sel LabelSelector
	for {
		tok, lit := p.lookahead(true)
		switch tok {
		case tokIdentifier, tokDoesNotExist:
			r, err := p.parseRequirement()
			if err != nil {
				return nil, fmt.Errorf("unable to parse requirement: %v", err)
			}
			sel = append(sel, *r)
			t, l := p.consume(true)
			switch t {
			case tokEnd:
				return sortSelector(sel), nil
			case tokComma:
				t2, l2 := p.lookahead(true)
				if t2 != tokIdentifier && t2 != tokDoesNotExist {
					return nil, fmt.Errorf("found '%s', expected: identifier after ','", l2)
				}
			default:
				return nil, fmt.Errorf("found '%s', expected: ',' or 'end of string'", l)
			}
		case tokEnd:
			return sortSelector(sel), nil
		default:
			return nil, fmt.Errorf("found '%s', expected: !, identifier, or 'end of string'", lit)
		}
	}
}

func sortSelector(s LabelSelector) LabelSelector {
	sort.SliceStable(s, func(i, j int) bool { return s[i].Key < s[j].Key })
	return s
}

func (p *parser) parseRequirement() (*Requirement, error) {
	var op Operator
	tok, lit := p.consume(true)
	if tok == tokDoesNotExist {
		op = OpDoesNotExist
		tok, lit = p.consume(true)
	}
	if tok != tokIdentifier {
		return nil, fmt.Errorf("found '%s', expected: identifier", lit)
	}
	key := lit
	if errs := IsQualifiedName(key); len(errs) > 0 {
		return nil, fmt.Errorf("key: Invalid value: %q: %s", key, strings.Join(errs, "; "))
	}
	if t, _ := p.lookahead(true); t == tokEnd || t == tokComma {
		if op != OpDoesNotExist {
			op = OpExists
		}
		return &Requirement{Key: key, Op: op}, nil
	}
	if op == OpDoesNotExist {
		// "!key" followed by anything but end or comma.
		t, l := p.lookahead(true)
		_ = t
		return nil, fmt.Errorf("found '%s', expected: ',' or 'end of string'", l)
	}
	tok, lit = p.consume(false)
	switch tok {
	case tokDoesNotExist:
		op = OpDoesNotExist
	case tokEquals:
		op = OpEquals
	case tokDoubleEquals:
		op = OpDoubleEquals
	case tokGreaterThan:
		op = OpGreaterThan
	case tokLessThan:
		op = OpLessThan
	case tokIn:
		op = OpIn
	case tokNotEquals:
		op = OpNotEquals
	case tokNotIn:
		op = OpNotIn
	default:
		return nil, fmt.Errorf("found '%s', expected: %s", lit, "in, notin, =, ==, !=, gt, lt")
	}
	var values []string
	switch op {
	case OpIn, OpNotIn:
		v, err := p.parseValues()
		if err != nil {
			return nil, err
		}
		values = v
	case OpDoesNotExist:
		return nil, fmt.Errorf("found '%s', expected: %s", lit, "in, notin, =, ==, !=, gt, lt")
	default:
		t, _ := p.lookahead(true)
		if t == tokEnd || t == tokComma {
			values = []string{""}
		} else {
			t, l := p.consume(true)
			if t != tokIdentifier {
				return nil, fmt.Errorf("found '%s', expected: identifier", l)
			}
			values = []string{l}
		}
	}
	for _, v := range values {
		if op == OpGreaterThan || op == OpLessThan {
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				return nil, fmt.Errorf("values[0]: Invalid value: %q: for 'Gt', 'Lt' operators, the value must be an integer", v)
			}
			continue
		}
		if errs := IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("values[0][%s]: Invalid value: %q: %s", key, v, strings.Join(errs, "; "))
		}
	}
	sort.Strings(values)
	return &Requirement{Key: key, Op: op, Values: dedupe(values)}, nil
}

func dedupe(l []string) []string {
	out := l[:0]
	for i, s := range l {
		if i == 0 || s != l[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func (p *parser) parseValues() ([]string, error) {
	tok, lit := p.consume(true)
	if tok != tokOpenPar {
		return nil, fmt.Errorf("found '%s' expected: '('", lit)
	}
	tok, lit = p.lookahead(true)
	switch tok {
	case tokIdentifier, tokComma:
		var vals []string
		for {
			t, l := p.consume(true)
			switch t {
			case tokIdentifier:
				vals = append(vals, l)
				t2, l2 := p.lookahead(true)
				switch t2 {
				case tokComma:
					continue
				case tokClosedPar:
					p.consume(true)
					return vals, nil
				default:
					return nil, fmt.Errorf("found '%s', expected: ',' or ')'", l2)
				}
			case tokComma:
				t2, _ := p.lookahead(true)
				if t2 == tokClosedPar {
					vals = append(vals, "")
					p.consume(true)
					return vals, nil
				}
				if t2 == tokComma {
					vals = append(vals, "")
				}
				if len(vals) == 0 {
					vals = append(vals, "")
				}
			default:
				return nil, fmt.Errorf("found '%s', expected: ',', or identifier", l)
			}
		}
	case tokClosedPar:
		p.consume(true)
		return []string{""}, nil
	default:
		return nil, fmt.Errorf("found '%s', expected: ',', ')' or identifier", lit)
	}
}

// selectorFromLabelSelector converts a metav1.LabelSelector object
// (matchLabels, matchExpressions) to a selector.
func selectorFromLabelSelector(ls map[string]any) (LabelSelector, error) {
	var sel LabelSelector
	ml, _ := ls["matchLabels"].(map[string]any)
	for _, k := range sortedKeys(ml) {
		v, _ := ml[k].(string)
		sel = append(sel, Requirement{Key: k, Op: OpEquals, Values: []string{v}})
	}
	me, _ := ls["matchExpressions"].([]any)
	for _, e := range me {
		em, _ := e.(map[string]any)
		key, _ := em["key"].(string)
		opS, _ := em["operator"].(string)
		var vals []string
		if vl, ok := em["values"].([]any); ok {
			for _, v := range vl {
				if s, ok := v.(string); ok {
					vals = append(vals, s)
				}
			}
		}
		sort.Strings(vals)
		var op Operator
		switch opS {
		case "In":
			op = OpIn
		case "NotIn":
			op = OpNotIn
		case "Exists":
			op = OpExists
		case "DoesNotExist":
			op = OpDoesNotExist
		default:
			return nil, fmt.Errorf("%q is not a valid label selector operator", opS)
		}
		sel = append(sel, Requirement{Key: key, Op: op, Values: vals})
	}
	return sortSelector(sel), nil
}

// --- field selectors (fields.ParseSelector) ---

// FieldTerm is one field selector term.
type FieldTerm struct {
	Field string
	Value string
	Not   bool
}

// FieldSelector is a parsed field selector: all terms must hold.
type FieldSelector []FieldTerm

// ParseFieldSelector parses a field selector with kube's messages.
func ParseFieldSelector(s string) (FieldSelector, error) {
	parts := splitTerms(s)
	sort.Strings(parts)
	var sel FieldSelector
	for _, part := range parts {
		if part == "" {
			continue
		}
		if l, r, ok := splitTerm(part, "!="); ok {
			v, err := unescapeFieldValue(r)
			if err != nil {
				return nil, err
			}
			sel = append(sel, FieldTerm{Field: strings.TrimSpace(l), Value: v, Not: true})
		} else if l, r, ok := splitTerm(part, "=="); ok {
			v, err := unescapeFieldValue(r)
			if err != nil {
				return nil, err
			}
			sel = append(sel, FieldTerm{Field: strings.TrimSpace(l), Value: v})
		} else if l, r, ok := splitTerm(part, "="); ok {
			v, err := unescapeFieldValue(r)
			if err != nil {
				return nil, err
			}
			sel = append(sel, FieldTerm{Field: strings.TrimSpace(l), Value: v})
		} else {
			return nil, fmt.Errorf("invalid selector: '%s'; can't understand '%s'", s, part)
		}
	}
	return sel, nil
}

func splitTerms(s string) []string {
	if s == "" {
		return nil
	}
	var terms []string
	start := 0
	esc := false
	for i := 0; i < len(s); i++ {
		switch {
		case esc:
			esc = false
		case s[i] == '\\':
			esc = true
		case s[i] == ',':
			terms = append(terms, s[start:i])
			start = i + 1
		}
	}
	return append(terms, s[start:])
}

func splitTerm(term, op string) (string, string, bool) {
	esc := false
	for i := 0; i < len(term); i++ {
		if esc {
			esc = false
			continue
		}
		if term[i] == '\\' {
			esc = true
			continue
		}
		if strings.HasPrefix(term[i:], op) {
			// "!=" must not be read as "=" and "==" not as two "=".
			if op == "=" && (i > 0 && term[i-1] == '!' || strings.HasPrefix(term[i:], "==")) {
				continue
			}
			return term[:i], term[i+len(op):], true
		}
	}
	return "", "", false
}

func unescapeFieldValue(s string) (string, error) {
	if !strings.ContainsAny(s, `\,=`) {
		return s, nil
	}
	var b strings.Builder
	esc := false
	for _, c := range s {
		if esc {
			switch c {
			case '\\', ',', '=':
				b.WriteRune(c)
			default:
				return "", fmt.Errorf("invalid field selector: invalid escape sequence: \\%c", c)
			}
			esc = false
			continue
		}
		switch c {
		case '\\':
			esc = true
		case ',', '=':
			return "", fmt.Errorf("invalid field selector: unescaped character: %c", c)
		default:
			b.WriteRune(c)
		}
	}
	if esc {
		return "", fmt.Errorf("invalid field selector: unterminated escape sequence")
	}
	return b.String(), nil
}

// fieldSelectorFor checks the selector's fields against what the resource
// supports, with the message kube's conversion functions give.
func (r *Resource) checkFieldSelector(sel FieldSelector) error {
	for _, t := range sel {
		if t.Field == "metadata.name" || t.Field == "metadata.namespace" {
			continue
		}
		if _, ok := r.FieldSelectors[t.Field]; ok {
			continue
		}
		if len(r.FieldSelectors) == 0 && !r.Custom() {
			return fmt.Errorf("%q is not a known field selector: only %q, %q", t.Field, "metadata.name", "metadata.namespace")
		}
		return fmt.Errorf("field label not supported: %s", t.Field)
	}
	return nil
}

func (r *Resource) fieldValue(o Object, field string) string {
	switch field {
	case "metadata.name":
		return Name(o)
	case "metadata.namespace":
		return Namespace(o)
	}
	if f := r.FieldSelectors[field]; f != nil {
		return f(o)
	}
	return ""
}

// matcher holds a request's selectors.
type matcher struct {
	r      *Resource
	labels LabelSelector
	fields FieldSelector
}

func (m *matcher) empty() bool { return len(m.labels) == 0 && len(m.fields) == 0 }

// matchesAttrs is matches for an object of a watch cache, whose labels
// and fields were read once (cache.go).
func (m *matcher) matchesAttrs(a *objectAttrs) bool {
	if a.bad {
		return false
	}
	if len(m.labels) > 0 && !m.labels.Matches(a.labels) {
		return false
	}
	for _, t := range m.fields {
		if (a.fields[t.Field] == t.Value) == t.Not {
			return false
		}
	}
	return true
}

func (m *matcher) matches(o Object) bool {
	if len(m.labels) > 0 && !m.labels.Matches(Labels(o)) {
		return false
	}
	for _, t := range m.fields {
		if (m.r.fieldValue(o, t.Field) == t.Value) == t.Not {
			return false
		}
	}
	return true
}
