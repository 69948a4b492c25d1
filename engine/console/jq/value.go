package jq

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Values are what jq 1.6 has: null (nil), booleans, numbers (float64: jq
// 1.6 reads every number as a double, so etcd's 64-bit IDs print rounded
// exactly as the articles show them), strings, arrays ([]any) and objects
// (*Object, which keeps its keys in insertion order as jq does).

// Object is a JSON object with its keys in insertion order.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Get returns the value of key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Set sets key, appending it to the key order if it is new.
func (o *Object) Set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Delete removes key.
func (o *Object) Delete(key string) {
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in insertion order.
func (o *Object) Keys() []string { return o.keys }

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

func (o *Object) clone() *Object {
	c := &Object{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = v
	}
	return c
}

func sortedKeys(o *Object) []string {
	ks := append([]string(nil), o.keys...)
	sort.Strings(ks)
	return ks
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case *Object:
		return "object"
	}
	return "unknown"
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	}
	return true
}

// order ranks the types as jq sorts them.
func order(v any) int {
	switch x := v.(type) {
	case nil:
		return 0
	case bool:
		if x {
			return 2
		}
		return 1
	case float64:
		return 3
	case string:
		return 4
	case []any:
		return 5
	case *Object:
		return 6
	}
	return 7
}

// compare orders two values as jq does.
func compare(a, b any) int {
	oa, ob := order(a), order(b)
	if oa != ob {
		return cmpInt(oa, ob)
	}
	switch x := a.(type) {
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case []any:
		y := b.([]any)
		for i := 0; i < len(x) && i < len(y); i++ {
			if c := compare(x[i], y[i]); c != 0 {
				return c
			}
		}
		return cmpInt(len(x), len(y))
	case *Object:
		y := b.(*Object)
		ka, kb := sortedKeys(x), sortedKeys(y)
		if c := compare(strs(ka), strs(kb)); c != 0 {
			return c
		}
		for _, k := range ka {
			if c := compare(x.vals[k], y.vals[k]); c != 0 {
				return c
			}
		}
	}
	return 0
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Parse reads one JSON value, keeping object key order. Numbers become
// float64.
func Parse(data []byte) (any, error) {
	p := &jsonParser{b: data}
	p.ws()
	v, err := p.value()
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.b) {
		return nil, p.errorf("Unfinished JSON term")
	}
	return v, nil
}

type jsonParser struct {
	b []byte
	i int
}

func (p *jsonParser) errorf(format string, a ...any) error {
	line, col := 1, 0
	for _, c := range p.b[:p.i] {
		col++
		if c == '\n' {
			line, col = line+1, 0
		}
	}
	return fmt.Errorf("%s at line %d, column %d", fmt.Sprintf(format, a...), line, col)
}

func (p *jsonParser) ws() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) value() (any, error) {
	if p.i >= len(p.b) {
		return nil, p.errorf("Unfinished JSON term at EOF")
	}
	switch c := p.b[p.i]; {
	case c == '{':
		p.i++
		o := NewObject()
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == '}' {
			p.i++
			return o, nil
		}
		for {
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != '"' {
				return nil, p.errorf("Object keys must be strings")
			}
			k, err := p.str()
			if err != nil {
				return nil, err
			}
			p.ws()
			if p.i >= len(p.b) || p.b[p.i] != ':' {
				return nil, p.errorf("Objects must consist of key:value pairs")
			}
			p.i++
			p.ws()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
			p.ws()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == '}' {
				p.i++
				return o, nil
			}
			return nil, p.errorf("Expected separator between values")
		}
	case c == '[':
		p.i++
		arr := []any{}
		p.ws()
		if p.i < len(p.b) && p.b[p.i] == ']' {
			p.i++
			return arr, nil
		}
		for {
			p.ws()
			v, err := p.value()
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
			p.ws()
			if p.i < len(p.b) && p.b[p.i] == ',' {
				p.i++
				continue
			}
			if p.i < len(p.b) && p.b[p.i] == ']' {
				p.i++
				return arr, nil
			}
			return nil, p.errorf("Expected separator between values")
		}
	case c == '"':
		return p.str()
	case c == 't' && bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return true, nil
	case c == 'f' && bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return false, nil
	case c == 'n' && bytes.HasPrefix(p.b[p.i:], []byte("null")):
		p.i += 4
		return nil, nil
	case c == '-' || ('0' <= c && c <= '9'):
		j := p.i + 1
		for j < len(p.b) && strings.IndexByte("0123456789.eE+-", p.b[j]) >= 0 {
			j++
		}
		f, err := strconv.ParseFloat(string(p.b[p.i:j]), 64)
		if err != nil && !isRangeErr(err) {
			return nil, p.errorf("Invalid numeric literal")
		}
		p.i = j
		return f, nil
	}
	for p.i < len(p.b) && strings.IndexByte(" \t\r\n,]}:", p.b[p.i]) < 0 {
		p.i++
	}
	return nil, p.errorf("Invalid literal")
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (p *jsonParser) str() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c == '\\':
			if p.i+1 >= len(p.b) {
				return "", p.errorf("Unfinished string")
			}
			e := p.b[p.i+1]
			p.i += 2
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
				r, ok := p.hex4()
				if !ok {
					return "", p.errorf("Invalid escape")
				}
				if utf16.IsSurrogate(r) && p.i+1 < len(p.b) && p.b[p.i] == '\\' && p.b[p.i+1] == 'u' {
					p.i += 2
					r2, ok := p.hex4()
					if !ok {
						return "", p.errorf("Invalid escape")
					}
					r = utf16.DecodeRune(r, r2)
				}
				b.WriteRune(r)
			default:
				return "", p.errorf("Invalid escape")
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", p.errorf("Unfinished string")
}

func (p *jsonParser) hex4() (rune, bool) {
	if p.i+4 > len(p.b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(p.b[p.i:p.i+4]), 16, 32)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(n), true
}

// Format controls how values print.
type Format struct {
	Indent   int  // spaces per level; 0 with Compact
	Compact  bool // -c
	SortKeys bool // -S
	ASCII    bool // -a
	Tab      bool // --tab
}

// Marshal prints v as jq prints it.
func Marshal(v any, f Format) string {
	var b strings.Builder
	writeValue(&b, v, f, 0)
	return b.String()
}

func writeValue(b *strings.Builder, v any, f Format, level int) {
	newline := func(l int) {
		if f.Compact {
			return
		}
		b.WriteByte('\n')
		if f.Tab {
			b.WriteString(strings.Repeat("\t", l))
		} else {
			b.WriteString(strings.Repeat(" ", l*f.Indent))
		}
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case float64:
		b.WriteString(FormatNumber(x))
	case string:
		writeString(b, x, f.ASCII)
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(level + 1)
			writeValue(b, e, f, level+1)
		}
		newline(level)
		b.WriteByte(']')
	case *Object:
		if x.Len() == 0 {
			b.WriteString("{}")
			return
		}
		keys := x.keys
		if f.SortKeys {
			keys = sortedKeys(x)
		}
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(level + 1)
			writeString(b, k, f.ASCII)
			b.WriteByte(':')
			if !f.Compact {
				b.WriteByte(' ')
			}
			writeValue(b, x.vals[k], f, level+1)
		}
		newline(level)
		b.WriteByte('}')
	}
}

func writeString(b *strings.Builder, s string, ascii bool) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(b, `\u%04x`, r)
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case ascii && r > 0x7e:
			if r > 0xffff {
				r1, r2 := utf16.EncodeRune(r)
				fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// FormatNumber prints a number as jq 1.6 does: the shortest digits that
// read back to the same double, in plain notation unless the exponent is
// below -4 or more than 15 past the last digit, where it is 1e+17 style
// with at least two exponent digits.
func FormatNumber(f float64) string {
	if math.IsNaN(f) {
		return "null"
	}
	if f > math.MaxFloat64 {
		f = math.MaxFloat64
	} else if f < -math.MaxFloat64 {
		f = -math.MaxFloat64
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // d.ddddde±XX
	sign := ""
	if e[0] == '-' {
		sign, e = "-", e[1:]
	}
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	decpt := x + 1
	n := len(digits)
	if decpt <= -4 || decpt > n+15 {
		m := digits[:1]
		if n > 1 {
			m += "." + digits[1:]
		}
		es := "+"
		if x < 0 {
			es, x = "-", -x
		}
		return fmt.Sprintf("%s%se%s%02d", sign, m, es, x)
	}
	switch {
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= n:
		return sign + digits + strings.Repeat("0", decpt-n)
	}
	return sign + digits[:decpt] + "." + digits[decpt:]
}
