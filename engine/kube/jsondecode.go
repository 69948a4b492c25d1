package kube

import (
	"encoding/json"
)

// fastDecodeObject is DecodeObject's common case without encoding/json:
// one pass of recursive descent over a well-formed object, building the
// same values (maps, []any, json.Number, strings, bools, nil) that
// encoding/json's UseNumber decoding builds. Decoding dominated the cost of
// a write (the request body and the stored object are both decoded), and
// encoding/json scans each byte twice through its state machine.
//
// It only answers for input it is sure of: anything unusual (a syntax
// error, trailing data, nesting past encoding/json's limit) reports !ok so
// that DecodeObject falls back to encoding/json and its exact errors.
// Strings with escapes or non-ASCII bytes are handed to encoding/json one
// by one, so that unescaping and invalid UTF-8 are treated as it does.
func fastDecodeObject(b []byte) (Object, bool) {
	p := jsonParser{b: b}
	p.space()
	if p.i >= len(p.b) || p.b[p.i] != '{' {
		return nil, false
	}
	v, ok := p.object(1)
	if !ok {
		return nil, false
	}
	p.space()
	if p.i != len(p.b) {
		return nil, false
	}
	return v, true
}

// maxDepth is encoding/json's nesting limit; deeper input falls back.
const maxDepth = 10000

type jsonParser struct {
	b []byte
	i int
}

func (p *jsonParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value(depth int) (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		m, ok := p.object(depth + 1)
		return m, ok
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, false
}

func (p *jsonParser) literal(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// object parses {...} with p.i at '{'.
func (p *jsonParser) object(depth int) (map[string]any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	p.i++
	m := map[string]any{}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return nil, false
		}
		p.i++
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

// array parses [...] with p.i at '['; an empty array is a non-nil []any.
func (p *jsonParser) array(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	p.i++
	l := make([]any, 0)
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		return l, true
	}
	for {
		p.space()
		v, ok := p.value(depth)
		if !ok {
			return nil, false
		}
		l = append(l, v)
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return l, true
		default:
			return nil, false
		}
	}
}

// str parses a string literal with p.i at its opening quote.
func (p *jsonParser) str() (string, bool) {
	start := p.i
	p.i++
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			s := string(p.b[start+1 : p.i])
			p.i++
			return s, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return p.slowString(start)
		}
		p.i++
	}
	return "", false
}

// slowString finds the end of the literal at start and lets encoding/json
// unquote it (escapes, UTF-8 checks and replacement).
func (p *jsonParser) slowString(start int) (string, bool) {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case '\\':
			p.i += 2
			continue
		case '"':
			p.i++
			var s string
			if json.Unmarshal(p.b[start:p.i], &s) != nil {
				return "", false
			}
			return s, true
		}
		p.i++
	}
	return "", false
}

// number parses JSON's number grammar into a json.Number.
func (p *jsonParser) number() (any, bool) {
	start := p.i
	if p.b[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.b) && p.b[p.i] == '0':
		p.i++
	case p.i < len(p.b) && p.b[p.i] >= '1' && p.b[p.i] <= '9':
		p.digits()
	default:
		return nil, false
	}
	if p.i < len(p.b) && p.b[p.i] == '.' {
		p.i++
		if !p.digits() {
			return nil, false
		}
	}
	if p.i < len(p.b) && (p.b[p.i] == 'e' || p.b[p.i] == 'E') {
		p.i++
		if p.i < len(p.b) && (p.b[p.i] == '+' || p.b[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return nil, false
		}
	}
	return json.Number(p.b[start:p.i]), true
}

// digits consumes [0-9]+ and reports whether there was one.
func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}
