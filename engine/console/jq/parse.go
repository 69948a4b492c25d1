package jq

import (
	"fmt"
	"strconv"
	"strings"
)

// The grammar is jq 1.6's, less function definitions, modules, labels,
// reduce/foreach and destructuring: pipes, commas, alternatives,
// assignments, boolean and arithmetic operators, paths with optional
// suffixes, literals, string interpolation with formats, array and object
// construction, variables bound with `as`, if/elif/else, try/catch and
// calls of the builtins.

type node interface{}

type (
	identity   struct{}
	recurseAll struct{}
	literal    struct{ v any }
	indexNode  struct {
		target, key node
	}
	sliceNode struct {
		target, from, to node
	}
	iterate  struct{ target node }
	optional struct{ body node }
	pipe     struct{ l, r node }
	comma    struct{ l, r node }
	binop    struct {
		op   string
		l, r node
	}
	assign struct {
		op   string
		l, r node
	}
	neg  struct{ x node }
	call struct {
		name string
		args []node
	}
	formatNode struct{ name string }
	strNode    struct {
		parts  []node // string literals and expressions
		format string // "" or a format applied to the expressions
	}
	arrayNode  struct{ body node }
	objectNode struct{ entries []objEntry }
	ifNode     struct {
		cond, then, els node
	}
	tryNode struct{ body, catch node }
	varRef  struct{ name string }
	bind    struct {
		source node
		name   string
		body   node
	}
	reduceNode struct {
		source       node
		name         string
		init, update node
	}
)

type objEntry struct {
	key   node // a literal string, an expression, or a variable
	value node // nil: the key's value in the input (or the variable)
}

type tok struct {
	kind string // "ident", "field", "var", "num", "str", "format", "kw", or the punctuation itself; "eof"
	text string
	num  float64
	str  *strNode
	pos  int
}

var keywords = map[string]bool{"if": true, "then": true, "elif": true, "else": true, "end": true, "as": true,
	"def": true, "reduce": true, "foreach": true, "try": true, "catch": true, "label": true, "import": true,
	"include": true, "and": true, "or": true, "__loc__": true}

// compileError is a syntax error in a filter.
type compileError struct{ msg string }

func (e *compileError) Error() string { return e.msg }

type parser struct {
	src  string
	toks []tok
	i    int
}

// parseFilter parses a jq program.
func parseFilter(src string) (node, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &parser{src: src, toks: toks}
	if p.peek().kind == "eof" {
		return identity{}, nil
	}
	n, err := p.parsePipe()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != "eof" {
		return nil, p.unexpected(t)
	}
	return n, nil
}

func (p *parser) peek() tok { return p.toks[p.i] }

func (p *parser) next() tok {
	t := p.toks[p.i]
	if t.kind != "eof" {
		p.i++
	}
	return t
}

func (p *parser) accept(kind string) bool {
	if p.peek().kind == kind {
		p.i++
		return true
	}
	return false
}

func (p *parser) acceptKw(word string) bool {
	if t := p.peek(); t.kind == "kw" && t.text == word {
		p.i++
		return true
	}
	return false
}

func (p *parser) unexpected(t tok) error {
	var what string
	switch t.kind {
	case "eof":
		what = "$end"
	case "ident":
		what = "IDENT"
	case "num":
		what = "LITERAL"
	case "str":
		what = "QQSTRING_START"
	case "field":
		what = "FIELD"
	case "var":
		what = "'$'"
	case "format":
		what = "FORMAT"
	case "kw":
		what = t.text
	default:
		what = "'" + t.text + "'"
		if len(t.text) > 1 {
			what = t.text
		}
	}
	// jq prints the program and then pads to where the error is (the end
	// of the input counts as its last character).
	pad := t.pos
	if t.kind == "eof" && pad > 0 {
		pad--
	}
	return &compileError{fmt.Sprintf("syntax error, unexpected %s (Unix shell quoting issues?) at <top-level>, line 1:\n%s%s", what, p.src, strings.Repeat(" ", pad))}
}

func (p *parser) expect(kind string) error {
	if t := p.peek(); t.kind != kind {
		return p.unexpected(t)
	}
	p.i++
	return nil
}

func (p *parser) expectKw(word string) error {
	if !p.acceptKw(word) {
		return p.unexpected(p.peek())
	}
	return nil
}

func (p *parser) parsePipe() (node, error) {
	start := p.i
	l, err := p.parseComma()
	if err != nil {
		return nil, err
	}
	if p.acceptKw("as") {
		// Term as $x | body: the left side must be a single term.
		_ = start
		v := p.next()
		if v.kind != "var" {
			return nil, p.unexpected(v)
		}
		if err := p.expect("|"); err != nil {
			return nil, err
		}
		body, err := p.parsePipe()
		if err != nil {
			return nil, err
		}
		return bind{l, v.text, body}, nil
	}
	if p.accept("|") {
		r, err := p.parsePipe()
		if err != nil {
			return nil, err
		}
		return pipe{l, r}, nil
	}
	return l, nil
}

func (p *parser) parseComma() (node, error) {
	l, err := p.parseAlt()
	if err != nil {
		return nil, err
	}
	for p.accept(",") {
		r, err := p.parseAlt()
		if err != nil {
			return nil, err
		}
		l = comma{l, r}
	}
	return l, nil
}

func (p *parser) parseAlt() (node, error) {
	l, err := p.parseAssign()
	if err != nil {
		return nil, err
	}
	if p.accept("//") {
		r, err := p.parseAlt()
		if err != nil {
			return nil, err
		}
		return binop{"//", l, r}, nil
	}
	return l, nil
}

var assignOps = map[string]bool{"=": true, "|=": true, "+=": true, "-=": true, "*=": true, "/=": true, "%=": true, "//=": true}

func (p *parser) parseAssign() (node, error) {
	l, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); assignOps[t.kind] {
		p.i++
		r, err := p.parseAlt()
		if err != nil {
			return nil, err
		}
		return assign{t.kind, l, r}, nil
	}
	return l, nil
}

func (p *parser) parseOr() (node, error) {
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.acceptKw("or") {
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = binop{"or", l, r}
	}
	return l, nil
}

func (p *parser) parseAnd() (node, error) {
	l, err := p.parseCompare()
	if err != nil {
		return nil, err
	}
	for p.acceptKw("and") {
		r, err := p.parseCompare()
		if err != nil {
			return nil, err
		}
		l = binop{"and", l, r}
	}
	return l, nil
}

func (p *parser) parseCompare() (node, error) {
	l, err := p.parseAdditive()
	if err != nil {
		return nil, err
	}
	switch t := p.peek(); t.kind {
	case "==", "!=", "<", "<=", ">", ">=":
		p.i++
		r, err := p.parseAdditive()
		if err != nil {
			return nil, err
		}
		return binop{t.kind, l, r}, nil
	}
	return l, nil
}

func (p *parser) parseAdditive() (node, error) {
	l, err := p.parseMul()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != "+" && t.kind != "-" {
			return l, nil
		}
		p.i++
		r, err := p.parseMul()
		if err != nil {
			return nil, err
		}
		l = binop{t.kind, l, r}
	}
}

func (p *parser) parseMul() (node, error) {
	l, err := p.parseUnary()
	if err != nil {
		return nil, err
	}
	for {
		t := p.peek()
		if t.kind != "*" && t.kind != "/" && t.kind != "%" {
			return l, nil
		}
		p.i++
		r, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		l = binop{t.kind, l, r}
	}
}

func (p *parser) parseUnary() (node, error) {
	if p.accept("-") {
		x, err := p.parseUnary()
		if err != nil {
			return nil, err
		}
		return neg{x}, nil
	}
	return p.parsePostfix()
}

func (p *parser) parsePostfix() (node, error) {
	t, err := p.parseTerm()
	if err != nil {
		return nil, err
	}
	return p.suffixes(t)
}

// suffixes reads what may follow a term: .field, ."field", [..], ?.
func (p *parser) suffixes(t node) (node, error) {
	for {
		switch tk := p.peek(); tk.kind {
		case "field":
			p.i++
			t = indexNode{t, literal{tk.text}}
		case ".":
			if p.toks[p.i+1].kind == "str" {
				p.i++
				s := p.next()
				t = indexNode{t, s.str}
				continue
			}
			if p.toks[p.i+1].kind == "[" {
				p.i++ // jq 1.7's .a.[0]; 1.6 says the same with .a[0]
				continue
			}
			return t, nil
		case "[":
			p.i++
			n, err := p.bracket(t)
			if err != nil {
				return nil, err
			}
			t = n
		case "?":
			p.i++
			t = optional{t}
		default:
			return t, nil
		}
	}
}

// bracket reads what follows "[" after a term: ], expr], expr:expr].
func (p *parser) bracket(t node) (node, error) {
	if p.accept("]") {
		return iterate{t}, nil
	}
	if p.accept(":") {
		to, err := p.parsePipe()
		if err != nil {
			return nil, err
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
		return sliceNode{t, nil, to}, nil
	}
	k, err := p.parsePipe()
	if err != nil {
		return nil, err
	}
	if p.accept(":") {
		if p.accept("]") {
			return sliceNode{t, k, nil}, nil
		}
		to, err := p.parsePipe()
		if err != nil {
			return nil, err
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
		return sliceNode{t, k, to}, nil
	}
	if err := p.expect("]"); err != nil {
		return nil, err
	}
	return indexNode{t, k}, nil
}

func (p *parser) parseTerm() (node, error) {
	t := p.next()
	switch t.kind {
	case ".":
		switch nx := p.peek(); nx.kind {
		case "str":
			p.i++
			return indexNode{identity{}, nx.str}, nil
		case "[":
			p.i++
			return p.bracket(identity{})
		}
		return identity{}, nil
	case "..":
		return recurseAll{}, nil
	case "field":
		return indexNode{identity{}, literal{t.text}}, nil
	case "num":
		return literal{t.num}, nil
	case "str":
		return t.str, nil
	case "format":
		if s := p.peek(); s.kind == "str" {
			p.i++
			sn := *s.str
			sn.format = t.text
			return &sn, nil
		}
		return formatNode{t.text}, nil
	case "var":
		return varRef{t.text}, nil
	case "(":
		e, err := p.parsePipe()
		if err != nil {
			return nil, err
		}
		if err := p.expect(")"); err != nil {
			return nil, err
		}
		return e, nil
	case "[":
		if p.accept("]") {
			return arrayNode{nil}, nil
		}
		e, err := p.parsePipe()
		if err != nil {
			return nil, err
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
		return arrayNode{e}, nil
	case "{":
		return p.object()
	case "ident":
		c := call{name: t.text}
		if p.accept("(") {
			for {
				a, err := p.parsePipe()
				if err != nil {
					return nil, err
				}
				c.args = append(c.args, a)
				if p.accept(";") {
					continue
				}
				if err := p.expect(")"); err != nil {
					return nil, err
				}
				break
			}
		}
		return c, nil
	case "kw":
		switch t.text {
		case "if":
			return p.ifRest()
		case "try":
			body, err := p.parsePostfix()
			if err != nil {
				return nil, err
			}
			var catch node
			if p.acceptKw("catch") {
				if catch, err = p.parsePostfix(); err != nil {
					return nil, err
				}
			}
			return tryNode{body, catch}, nil
		case "reduce":
			src, err := p.parsePostfix()
			if err != nil {
				return nil, err
			}
			if err := p.expectKw("as"); err != nil {
				return nil, err
			}
			v := p.next()
			if v.kind != "var" {
				return nil, p.unexpected(v)
			}
			if err := p.expect("("); err != nil {
				return nil, err
			}
			init, err := p.parsePipe()
			if err != nil {
				return nil, err
			}
			if err := p.expect(";"); err != nil {
				return nil, err
			}
			update, err := p.parsePipe()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			return reduceNode{src, v.text, init, update}, nil
		}
	}
	return nil, p.unexpected(t)
}

func (p *parser) ifRest() (node, error) {
	cond, err := p.parsePipe()
	if err != nil {
		return nil, err
	}
	if err := p.expectKw("then"); err != nil {
		return nil, err
	}
	then, err := p.parsePipe()
	if err != nil {
		return nil, err
	}
	n := ifNode{cond: cond, then: then}
	switch {
	case p.acceptKw("elif"):
		els, err := p.ifRest()
		if err != nil {
			return nil, err
		}
		n.els = els
		return n, nil
	case p.acceptKw("else"):
		if n.els, err = p.parsePipe(); err != nil {
			return nil, err
		}
	}
	if err := p.expectKw("end"); err != nil {
		return nil, err
	}
	return n, nil
}

func (p *parser) object() (node, error) {
	var o objectNode
	if p.accept("}") {
		return o, nil
	}
	for {
		var e objEntry
		switch t := p.next(); t.kind {
		case "ident", "kw":
			e.key = literal{t.text}
		case "var":
			e.key = literal{t.text}
			e.value = varRef{t.text}
		case "str":
			e.key = t.str
		case "format":
			s := p.next()
			if s.kind != "str" {
				return nil, p.unexpected(s)
			}
			sn := *s.str
			sn.format = t.text
			e.key = &sn
		case "(":
			k, err := p.parsePipe()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")"); err != nil {
				return nil, err
			}
			e.key = k
			if p.peek().kind != ":" {
				return nil, p.unexpected(p.peek())
			}
		default:
			return nil, p.unexpected(t)
		}
		if p.accept(":") {
			v, err := p.objectValue()
			if err != nil {
				return nil, err
			}
			e.value = v
		}
		o.entries = append(o.entries, e)
		if p.accept(",") {
			continue
		}
		if err := p.expect("}"); err != nil {
			return nil, err
		}
		return o, nil
	}
}

// objectValue is jq's ExpD: terms joined by pipes, without commas.
func (p *parser) objectValue() (node, error) {
	var l node
	var err error
	if p.accept("-") {
		x, err := p.objectValue()
		if err != nil {
			return nil, err
		}
		return neg{x}, nil
	}
	if l, err = p.parsePostfix(); err != nil {
		return nil, err
	}
	if p.accept("|") {
		r, err := p.objectValue()
		if err != nil {
			return nil, err
		}
		return pipe{l, r}, nil
	}
	return l, nil
}

// lex splits a filter into tokens.
func lex(src string) ([]tok, error) {
	var toks []tok
	isIdent := func(c byte, first bool) bool {
		return c == '_' || ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') || (!first && '0' <= c && c <= '9')
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '.':
			if i+1 < len(src) && src[i+1] == '.' {
				toks = append(toks, tok{kind: "..", text: "..", pos: i})
				i += 2
				continue
			}
			j := i + 1
			if j < len(src) && isIdent(src[j], true) {
				for j < len(src) && isIdent(src[j], false) {
					j++
				}
				toks = append(toks, tok{kind: "field", text: src[i+1 : j], pos: i})
				i = j
				continue
			}
			toks = append(toks, tok{kind: ".", text: ".", pos: i})
			i++
		case c == '$':
			j := i + 1
			for j < len(src) && (isIdent(src[j], j == i+1) || (src[j] == ':' && j+1 < len(src) && src[j+1] == ':')) {
				if src[j] == ':' {
					j++
				}
				j++
			}
			if j == i+1 {
				return nil, &compileError{fmt.Sprintf("syntax error, unexpected INVALID_CHARACTER (Unix shell quoting issues?) at <top-level>, line 1:\n%s", src)}
			}
			toks = append(toks, tok{kind: "var", text: src[i+1 : j], pos: i})
			i = j
		case c == '@':
			j := i + 1
			for j < len(src) && isIdent(src[j], j == i+1) {
				j++
			}
			toks = append(toks, tok{kind: "format", text: src[i+1 : j], pos: i})
			i = j
		case isIdent(c, true):
			j := i
			for j < len(src) && (isIdent(src[j], false) || (src[j] == ':' && j+1 < len(src) && src[j+1] == ':')) {
				if src[j] == ':' {
					j++
				}
				j++
			}
			w := src[i:j]
			kind := "ident"
			if keywords[w] {
				kind = "kw"
			}
			toks = append(toks, tok{kind: kind, text: w, pos: i})
			i = j
		case '0' <= c && c <= '9':
			j := i
			for j < len(src) && (('0' <= src[j] && src[j] <= '9') || src[j] == '.' || src[j] == 'e' || src[j] == 'E' ||
				((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			f, err := strconv.ParseFloat(src[i:j], 64)
			if err != nil && !isRangeErr(err) {
				return nil, &compileError{fmt.Sprintf("syntax error, unexpected IDENT (Unix shell quoting issues?) at <top-level>, line 1:\n%s", src)}
			}
			toks = append(toks, tok{kind: "num", text: src[i:j], num: f, pos: i})
			i = j
		case c == '"':
			s, n, err := lexString(src, i)
			if err != nil {
				return nil, err
			}
			toks = append(toks, tok{kind: "str", str: s, pos: i})
			i = n
		default:
			ops := []string{"//=", "|=", "+=", "-=", "*=", "/=", "%=", "==", "!=", "<=", ">=", "//",
				"|", ",", "(", ")", "[", "]", "{", "}", ":", ";", "=", "<", ">", "+", "-", "*", "/", "%", "?"}
			found := false
			for _, op := range ops {
				if strings.HasPrefix(src[i:], op) {
					toks = append(toks, tok{kind: op, text: op, pos: i})
					i += len(op)
					found = true
					break
				}
			}
			if !found {
				return nil, &compileError{fmt.Sprintf("syntax error, unexpected INVALID_CHARACTER (Unix shell quoting issues?) at <top-level>, line 1:\n%s", src)}
			}
		}
	}
	return append(toks, tok{kind: "eof", pos: len(src)}), nil
}

// lexString reads a string literal starting at src[i] == '"', with its
// \(...) interpolations parsed as filters.
func lexString(src string, i int) (*strNode, int, error) {
	s := &strNode{}
	var b strings.Builder
	j := i + 1
	for j < len(src) {
		c := src[j]
		switch c {
		case '"':
			if b.Len() > 0 || len(s.parts) == 0 {
				s.parts = append(s.parts, literal{b.String()})
			}
			return s, j + 1, nil
		case '\\':
			if j+1 >= len(src) {
				break
			}
			e := src[j+1]
			j += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				if j+4 > len(src) {
					return nil, 0, &compileError{"invalid \\u escape"}
				}
				n, err := strconv.ParseUint(src[j:j+4], 16, 32)
				if err != nil {
					return nil, 0, &compileError{"invalid \\u escape"}
				}
				b.WriteRune(rune(n))
				j += 4
			case '(':
				depth, k := 1, j
				for k < len(src) && depth > 0 {
					switch src[k] {
					case '(':
						depth++
					case ')':
						depth--
					case '"':
						_, end, err := lexString(src, k)
						if err != nil {
							return nil, 0, err
						}
						k = end - 1
					}
					k++
				}
				if depth != 0 {
					return nil, 0, &compileError{fmt.Sprintf("syntax error, unexpected $end (Unix shell quoting issues?) at <top-level>, line 1:\n%s", src)}
				}
				inner, err := parseFilter(src[j : k-1])
				if err != nil {
					return nil, 0, err
				}
				if b.Len() > 0 {
					s.parts = append(s.parts, literal{b.String()})
					b.Reset()
				}
				s.parts = append(s.parts, inner)
				j = k
			default:
				return nil, 0, &compileError{fmt.Sprintf("jq: error: Invalid escape at line 1, column %d (while parsing '\"%s\"') at <top-level>, line 1:\n%s", j, src[i+1:], src)}
			}
			continue
		}
		b.WriteByte(c)
		j++
	}
	return nil, 0, &compileError{fmt.Sprintf("syntax error, unexpected $end, expecting QQSTRING_TEXT or QQSTRING_INTERP_START or QQSTRING_END (Unix shell quoting issues?) at <top-level>, line 1:\n%s", src)}
}
