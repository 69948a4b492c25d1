package etcdgw

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
)

// A fast path for request bodies: it finds the members and raw values of a
// JSON object in one pass without allocating, where decodeMessage's
// reference path (encoding/json into a map[string]json.RawMessage, then
// each value through encoding/json again) costs most of a put's CPU in the
// gateway. It accepts exactly the JSON encoding/json accepts, up to
// encoding/json's own nesting limit, so the reference path only ever sees
// invalid input, which encoding/json refuses in one linear pass with its
// own error text. The rule the tests check: when the scanner succeeds, its
// members are exactly what json.Unmarshal into a map would hold.
//
// Splitting a message and then decoding each member's value scans a nested
// message once per level above it. For a txn, whose ops may be txns again,
// that is quadratic in the nesting; so while it validates a txn body the
// scanner remembers where the larger containers of the txn's structure end
// (spans), and later splits jump over them.
//
// Why a second decoder is kept beside encoding/json (measured 2026-11-25,
// BENCHMARKS.md, "Through the etcd v3 JSON gateway"): it is what bounds
// the cost of a txn body, issue 10's defect 6. The costliest txn etcd
// accepts (127 nested txns around a put of 1 MiB) decodes in 5 ms with it
// and in 8.9 s of CPU with encoding/json alone; the hostile body of 3,300
// nested txns in 2 ms against 0.77 s. It does not hold the gateway's put
// target: through the server binary, a put is 0.99-1.11x as fast with it
// as without (kube-apiserver's CAS 1.20-1.27x), so a decoder kept only for
// the put would not be worth its second implementation.
// BenchmarkDecoders and BenchmarkDecodeDeepTxnWithLargeValue measure it.

// member is one name and raw value of a JSON object, in input order.
type member struct {
	name []byte
	raw  []byte
}

// maxScanDepth is encoding/json's maxNestingDepth: a body nested deeper is
// invalid for encoding/json too, which says so at once.
const maxScanDepth = 10000

// shape is where a value sits in a txn request: the scanner remembers the
// ends of the containers the decoder will split again, and only those.
type shape uint8

const (
	otherShape       shape = iota // outside a txn's messages, or ignored by them
	txnShape                      // a TxnRequest
	compareListShape              // its compare list
	opListShape                   // its success or failure list
	opShape                       // a RequestOp
	leafShape                     // a Compare, RangeRequest, PutRequest or DeleteRangeRequest
)

// member is the shape of the value of the member called name.
func (s shape) member(name []byte) shape {
	switch s {
	case txnShape:
		switch string(name) {
		case "compare":
			return compareListShape
		case "success", "failure":
			return opListShape
		}
	case opShape:
		switch string(name) {
		case "request_txn", "requestTxn":
			return txnShape
		case "request_range", "requestRange", "request_put", "requestPut",
			"request_delete_range", "requestDeleteRange":
			return leafShape
		}
	}
	return otherShape
}

// element is the shape of an element of an array of this shape.
func (s shape) element() shape {
	switch s {
	case compareListShape:
		return leafShape
	case opListShape:
		return opShape
	}
	return otherShape
}

// spans remembers where the containers of a txn's structure that are at
// least minSpan bytes long end, by their offset in body. Smaller ones are
// cheaper to scan again than to remember. Txns nested deeper than any op
// budget allows are not remembered: the decoder never splits them.
type spans struct {
	body []byte
	ends map[int]int
}

const minSpan = 256

// maxTxnNesting is the deepest a txn can sit below the top one and still
// fit etcd's op budget: each level spends at least one op of it.
const maxTxnNesting = 128

// minSpannedBody is the smallest txn body whose spans are remembered: in a
// smaller one, scanning the few levels it can hold again costs less than
// tracking them (at most ~100 µs for the worst of them).
const minSpannedBody = 1 << 10

// where is a value's place in a txn request: its shape, and how many txns
// nest around it.
type where struct {
	sh      shape
	nesting uint8
}

func (w where) member(name []byte) where {
	w.sh = w.sh.member(name)
	if w.sh == txnShape {
		if w.nesting == maxTxnNesting {
			return where{}
		}
		w.nesting++
	}
	return w
}

func (w where) element() where {
	w.sh = w.sh.element()
	return w
}

// spanned is a slice being scanned that is part of a body with spans: its
// offsets are at base in sp.body. The scanner takes a *spanned, nil when
// the slice tracks nothing.
type spanned struct {
	sp   *spans
	base int
}

// of returns b's place in sp.body; its track() is nil when b is not a part
// of it (or sp is nil).
func (sp *spans) of(b []byte) spanned {
	if sp == nil || len(b) == 0 || cap(b) > cap(sp.body) {
		return spanned{base: -1}
	}
	if off := cap(sp.body) - cap(b); off+len(b) <= len(sp.body) && &sp.body[off] == &b[0] {
		return spanned{sp: sp, base: off}
	}
	return spanned{base: -1}
}

func (s *spanned) track() *spanned {
	if s.base < 0 {
		return nil
	}
	return s
}

func (s *spanned) end(w where, start int) (int, bool) {
	if w.sh == otherShape || s.sp.ends == nil {
		return 0, false
	}
	end, ok := s.sp.ends[s.base+start]
	return end - s.base, ok
}

func (s *spanned) remember(w where, start, end int) {
	if w.sh == otherShape || end-start < minSpan {
		return
	}
	if s.sp.ends == nil {
		s.sp.ends = map[int]int{}
	}
	s.sp.ends[s.base+start] = s.base + end
}

// splitObject appends the members of the JSON object raw (surrounding white
// space allowed) to ms. ok is false when raw is not a valid object. Its
// loop is scanValue's object case again, collecting: sharing one loop
// through a *[]member parameter moved the caller's member buffer to the
// heap (escape analysis), doubling a txn decode's allocations.
func splitObject(raw []byte, ms []member, sp *spanned, w where) (_ []member, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return ms, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return ms, skipSpace(raw, i+1) == len(raw)
	}
	for {
		nameEnd, plain := scanName(raw, i)
		ok := plain
		if !plain {
			nameEnd, ok = scanOtherName(raw, i)
		}
		if !ok {
			return ms, false
		}
		name := raw[i+1 : nameEnd-1]
		if !plain {
			name = unquoteName(raw[i:nameEnd])
		}
		i = skipSpace(raw, nameEnd)
		if i >= len(raw) || raw[i] != ':' {
			return ms, false
		}
		i = skipSpace(raw, i+1)
		var in where
		if sp != nil {
			in = w.member(name)
		}
		end, ok := scanValue(raw, i, 1, sp, in)
		if !ok {
			return ms, false
		}
		ms = append(ms, member{name: name, raw: raw[i:end]})
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return ms, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			return ms, skipSpace(raw, i+1) == len(raw)
		default:
			return ms, false
		}
	}
}

// splitArray appends the elements of the JSON array raw to elems, like
// json.Unmarshal into a []json.RawMessage; ok as for splitObject.
func splitArray(raw []byte, elems [][]byte, sp *spanned, w where) (_ [][]byte, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return elems, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return elems, skipSpace(raw, i+1) == len(raw)
	}
	el := w.element()
	for {
		end, ok := scanValue(raw, i, 1, sp, el)
		if !ok {
			return elems, false
		}
		elems = append(elems, raw[i:end])
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return elems, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case ']':
			return elems, skipSpace(raw, i+1) == len(raw)
		default:
			return elems, false
		}
	}
}

// firstValue returns the extent of the first JSON value in body, as
// json.Decoder reads it (what follows is not looked at), and whether the
// body holds no value at all. ok is false when the value is not valid.
func firstValue(body []byte, sp *spanned, w where) (start, end int, empty, ok bool) {
	start = skipSpace(body, 0)
	if start == len(body) {
		return start, start, true, true
	}
	end, ok = scanValue(body, start, 0, sp, w)
	return start, end, false, ok
}

func skipSpace(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// scanName scans a plain member name starting at b[i]: printable ASCII
// without escapes, its own decoded form, as every etcd client sends. It
// returns the index after its closing quote; ok is false for any other
// name, which the caller then scans with scanString. (Kept small enough to
// be inlined.)
func scanName(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return 0, false
		}
	}
	return 0, false
}

// scanOtherName scans a member name that scanName did not take.
func scanOtherName(b []byte, i int) (int, bool) {
	if i >= len(b) || b[i] != '"' {
		return 0, false
	}
	return scanString(b, i)
}

// unquoteName decodes a valid quoted name that is not plain, as encoding/json
// decodes a map key (escapes resolved, invalid UTF-8 replaced).
func unquoteName(quoted []byte) []byte {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return nil // unreachable: scanString validated it
	}
	return []byte(s)
}

// scanValue returns the index after the JSON value starting at b[i], which
// sits inside depth containers, at w in a txn if sp is not nil.
func scanValue(b []byte, i, depth int, sp *spanned, w where) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		if end, ok := scanPlainString(b, i); ok {
			return end, true
		}
		return scanString(b, i)
	case c == '{':
		if sp != nil {
			if end, ok := sp.end(w, i); ok {
				return end, true
			}
		}
		if depth >= maxScanDepth {
			return 0, false
		}
		start := i
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			end, plain := scanName(b, i)
			ok := plain
			if !plain {
				end, ok = scanOtherName(b, i)
			}
			if !ok {
				return 0, false
			}
			var in where
			if sp != nil && w.sh != otherShape {
				name := b[i+1 : end-1]
				if !plain {
					name = unquoteName(b[i:end])
				}
				in = w.member(name)
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, false
			}
			if i, ok = scanValue(b, skipSpace(b, i+1), depth+1, sp, in); !ok {
				return 0, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case '}':
				if sp != nil && depth > 0 {
					sp.remember(w, start, i+1)
				}
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '[':
		if sp != nil {
			if end, ok := sp.end(w, i); ok {
				return end, true
			}
		}
		if depth >= maxScanDepth {
			return 0, false
		}
		start := i
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		el := w.element()
		for {
			var ok bool
			if i, ok = scanValue(b, i, depth+1, sp, el); !ok {
				return 0, false
			}
			i = skipSpace(b, i)
			if i >= len(b) {
				return 0, false
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case ']':
				if sp != nil && depth > 0 {
					sp.remember(w, start, i+1)
				}
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	}
	return 0, false
}

// scanPlainString accepts a JSON string without escapes; bytes from 0x80
// up pass through as they are, as encoding/json's scanner lets them
// (json.RawMessage keeps them; decoding a string replaces invalid UTF-8).
// ok is false for a string with an escape too, which scanString then
// takes. (Kept small enough to be inlined.)
func scanPlainString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c == '\\' || c < 0x20:
			return 0, false
		}
	}
	return 0, false
}

// scanString accepts any JSON string starting at b[i].
func scanString(b []byte, i int) (int, bool) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, true
		case c == '\\':
			j++
			if j >= len(b) {
				return 0, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) {
					return 0, false
				}
				for _, h := range b[j+1 : j+5] {
					if !isHex(h) {
						return 0, false
					}
				}
				j += 4
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		}
	}
	return 0, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func scanLiteral(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// scanNumber follows JSON's number grammar:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func scanNumber(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	return i, true
}

// lookup returns the value of a field the way the reference path takes it
// from the map: the last of duplicate names wins, and the lowerCamel name
// wins over the proto name.
func lookup(ms []member, f *field) ([]byte, bool) {
	var v []byte
	found, camel := false, false
	for i := range ms {
		n := ms[i].name
		switch {
		case string(n) == f.camel:
			v, found, camel = ms[i].raw, true, true
		case !camel && string(n) == f.name:
			v, found = ms[i].raw, true
		}
	}
	return v, found
}

// plainBytes decodes a JSON string holding standard base64, as
// encoding/json decodes a []byte; ok is false for anything else (escapes,
// bad base64), which the reference path then answers with its own error.
func plainBytes(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	s := raw[1 : len(raw)-1]
	for _, c := range s {
		// An escape needs unquoting; a control character (which base64
		// would skip if it is a line break) is invalid JSON.
		if c == '\\' || c < 0x20 {
			return nil, false
		}
	}
	b := make([]byte, base64.StdEncoding.DecodedLen(len(s)))
	n, err := base64.StdEncoding.Decode(b, s)
	if err != nil {
		return nil, false
	}
	return b[:n], true
}

// plainInt64 parses a JSON integer (the digits of a number or of a quoted
// number, as int64Into hands them over) that encoding/json would accept
// into an int64; ok is false for anything else.
func plainInt64(s []byte) (int64, bool) {
	d := s
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 1 && d[0] == '0' {
		return 0, false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(string(s), 10, 64)
	return v, err == nil
}
