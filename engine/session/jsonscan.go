package session

import (
	"bytes"
	"encoding/json"
)

// The record of exchanges reads a few fields of request and answer bodies
// (metadata.resourceVersion, a Status' reason) on every request. Decoding
// each body would cost as much as the request itself, so these helpers
// walk the JSON text to the one member they need and stop there. They
// never fail: a body that is not the JSON they expect yields "".

// memberRaw returns the JSON text of the value at a path of object
// members (["metadata", "resourceVersion"]), or nil when there is none.
func memberRaw(b []byte, path ...string) []byte {
	i := skipSpace(b, 0)
	for _, name := range path {
		if i >= len(b) || b[i] != '{' {
			return nil
		}
		j, ok := findMember(b, i, name)
		if !ok {
			return nil
		}
		i = j
	}
	end := skipValue(b, i)
	if end < 0 {
		return nil
	}
	return b[i:end]
}

// memberPath returns the string value at a path, as it is written (member
// names and resourceVersions have no escapes), or "" when there is none.
func memberPath(b []byte, path ...string) string {
	v := memberRaw(b, path...)
	if len(v) < 2 || v[0] != '"' {
		return ""
	}
	return string(v[1 : len(v)-1])
}

// memberText decodes the string value at a path (a message may hold
// escapes).
func memberText(b []byte, path ...string) string {
	var s string
	if v := memberRaw(b, path...); len(v) > 0 && v[0] == '"' {
		json.Unmarshal(v, &s)
	}
	return s
}

// memberNumber returns the number at a path as its text, or "".
func memberNumber(b []byte, path ...string) string {
	v := memberRaw(b, path...)
	if len(v) == 0 || v[0] == '"' || v[0] == '{' || v[0] == '[' {
		return ""
	}
	return string(v)
}

// findMember looks in the object starting at b[i] ('{') for the member
// name and returns the index where its value starts.
func findMember(b []byte, i int, name string) (int, bool) {
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		key, v, ok := memberAt(b, i)
		if !ok {
			return 0, false
		}
		if string(key) == name { // compared without a copy
			return v, true
		}
		end := skipValue(b, v)
		if end < 0 {
			return 0, false
		}
		i = nextMember(b, end)
	}
	return 0, false
}

// membersOf finds, in one walk over the object at the start of b, the
// JSON text of the first member of each name in names, into the same
// index of values (len(names)); a member that is not there stays nil. An
// etcd request's record reads two or three members of its body: walked
// once rather than once a member, most of them absent, which takes a
// walk to the end each (BenchmarkRecordEtcdExchange).
func membersOf(b []byte, names []string, values [][]byte) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return
	}
	i = skipSpace(b, i+1)
	for found := 0; found < len(names) && i < len(b) && b[i] != '}'; {
		key, v, ok := memberAt(b, i)
		if !ok {
			return
		}
		end := skipValue(b, v)
		if end < 0 {
			return
		}
		for n, name := range names {
			if values[n] == nil && string(key) == name {
				values[n] = b[v:end]
				found++
				break
			}
		}
		i = nextMember(b, end)
	}
}

// memberAt reads the member whose name's opening quote is at b[i]: its
// name, and where its value starts.
func memberAt(b []byte, i int) (name []byte, value int, ok bool) {
	if b[i] != '"' {
		return nil, 0, false
	}
	end, ok := stringEnd(b, i)
	if !ok {
		return nil, 0, false
	}
	name = b[i+1 : end-1]
	i = skipSpace(b, end)
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	return name, skipSpace(b, i+1), true
}

// nextMember returns where the member after a value that ends at b[end]
// starts (or the object's closing brace).
func nextMember(b []byte, end int) int {
	i := skipSpace(b, end)
	if i < len(b) && b[i] == ',' {
		i = skipSpace(b, i+1)
	}
	return i
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// stringEnd returns the index after the closing quote of the string at
// b[i] ('"'). It jumps from quote to quote (bytes.IndexByte) and skips
// those that an odd run of backslashes escapes.
func stringEnd(b []byte, i int) (int, bool) {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return 0, false
		}
		q := j + k
		n := 0
		for p := q - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q + 1, true
		}
		j = q + 1
	}
}

// skipValue returns the index after the value starting at b[i], or -1.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, ok := stringEnd(b, i)
		if !ok {
			return -1
		}
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, ok := stringEnd(b, j)
				if !ok {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default: // number, true, false, null
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}
