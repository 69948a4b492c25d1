package etcdgw

import (
	"encoding/base64"
	"strconv"
)

// A fast path for the common request body: a well-formed JSON object whose
// names are plain ASCII, as every etcd client sends. decodeMessage's
// reference path (encoding/json into a map[string]json.RawMessage, then each
// value through encoding/json again) costs most of a put's CPU in the
// gateway; this scanner finds the same members and raw values in one pass
// without allocating. Anything it does not fully understand (escapes in a
// name, invalid JSON, deep nesting) makes it give up, and the reference path
// then decides, so every error text stays encoding/json's own. The rule the
// tests check: when the scanner succeeds, its members are exactly what
// json.Unmarshal into a map would hold.

// member is one name and raw value of a JSON object, in input order.
type member struct {
	name []byte
	raw  []byte
}

// maxScanDepth bounds the nesting the scanner follows; deeper input (legal
// up to encoding/json's own limit) goes to the reference path.
const maxScanDepth = 32

// splitObject appends the members of the JSON object raw (surrounding white
// space allowed) to ms. ok is false when raw is not an object the scanner
// fully validated. Its loop is scanValue's object case again, collecting:
// sharing one loop through a *[]member parameter moved the caller's member
// buffer to the heap (escape analysis), doubling a txn decode's allocations.
func splitObject(raw []byte, ms []member) (_ []member, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return ms, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return ms, skipSpace(raw, i+1) == len(raw)
	}
	for {
		nameEnd, ok := scanName(raw, i)
		if !ok {
			return ms, false
		}
		name := raw[i+1 : nameEnd-1]
		i = skipSpace(raw, nameEnd)
		if i >= len(raw) || raw[i] != ':' {
			return ms, false
		}
		i = skipSpace(raw, i+1)
		end, ok := scanValue(raw, i, 1)
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
func splitArray(raw []byte, elems [][]byte) (_ [][]byte, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return elems, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return elems, skipSpace(raw, i+1) == len(raw)
	}
	for {
		end, ok := scanValue(raw, i, 1)
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
// body holds no value at all. ok is false when the scanner gives up.
func firstValue(body []byte) (start, end int, empty, ok bool) {
	start = skipSpace(body, 0)
	if start == len(body) {
		return start, start, true, true
	}
	end, ok = scanValue(body, start, 0)
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

// scanName scans a member name starting at b[i]: a string of printable
// ASCII without escapes (a name needing unescaping goes to the reference
// path). It returns the index after the closing quote.
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

// scanValue returns the index after the JSON value starting at b[i].
func scanValue(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > maxScanDepth {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == '}' {
			return i + 1, true
		}
		for {
			end, ok := scanName(b, i)
			if !ok {
				return 0, false
			}
			i = skipSpace(b, end)
			if i >= len(b) || b[i] != ':' {
				return 0, false
			}
			if i, ok = scanValue(b, skipSpace(b, i+1), depth+1); !ok {
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
				return i + 1, true
			default:
				return 0, false
			}
		}
	case c == '[':
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			var ok bool
			if i, ok = scanValue(b, i, depth+1); !ok {
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

// scanString accepts a string without escapes; bytes from 0x80 up pass
// through as they are, as json.RawMessage keeps them.
func scanString(b []byte, i int) (int, bool) {
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
