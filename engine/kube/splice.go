package kube

// Stored objects are kube-ordered JSON without metadata.resourceVersion.
// Answers need the resourceVersion (the key's mod_revision) inserted at
// its place in ObjectMeta order and, for list items, kind and apiVersion
// dropped. Decoding and re-encoding every object of a 500-item page or of
// an event fanned out to hundreds of watchers is the dominant cost, so
// spliceRV does it on the bytes. It reports false for anything it does not
// recognise (a value written through the etcd gateway, say); callers then
// take the decode/encode path, which gives the same bytes for canonical
// input.

var rvMetaIndex = func() int {
	for i, k := range metaOrder {
		if k == "resourceVersion" {
			return i
		}
	}
	return -1
}()

func metaIndex(k string) int {
	for i, m := range metaOrder {
		if m == k {
			return i
		}
	}
	return len(metaOrder)
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'
// and whether it contains escapes.
func skipString(b []byte, i int) (int, bool, bool) {
	esc := false
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j + 1, esc, true
		}
	}
	return 0, false, false
}

// skipValue returns the index after the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		j, _, ok := skipString(b, i)
		return j, ok
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k, _, ok := skipString(b, j)
				if !ok {
					return 0, false
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, true
				}
			}
		}
		return 0, false
	default:
		j := i
		for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' {
			j++
		}
		return j, j > i
	}
}

// members calls fn for each member of the object at b (key without
// quotes, raw key, raw value); false if b is not a plain object.
func members(b []byte, fn func(key string, rawKey, val []byte) bool) bool {
	i := skipWS(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipWS(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipWS(b, i+1) == len(b)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return false
		}
		ke, esc, ok := skipString(b, i)
		if !ok || esc {
			return false
		}
		rawKey := b[i:ke]
		i = skipWS(b, ke)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = skipWS(b, i+1)
		ve, ok := skipValue(b, i)
		if !ok {
			return false
		}
		if !fn(string(rawKey[1:len(rawKey)-1]), rawKey, b[i:ve]) {
			return false
		}
		i = skipWS(b, ve)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			return skipWS(b, i+1) == len(b)
		}
		if b[i] != ',' {
			return false
		}
		i = skipWS(b, i+1)
	}
}

// spliceRV returns the stored object v with metadata.resourceVersion set
// to rv (and without kind and apiVersion when dropTypeMeta).
func spliceRV(v []byte, rv string, dropTypeMeta bool) ([]byte, bool) {
	out := make([]byte, 0, len(v)+len(rv)+24)
	out = append(out, '{')
	first, sawMeta := true, false
	ok := members(v, func(key string, rawKey, val []byte) bool {
		if dropTypeMeta && (key == "kind" || key == "apiVersion") {
			return true
		}
		if !first {
			out = append(out, ',')
		}
		first = false
		out = append(out, rawKey...)
		out = append(out, ':')
		if key != "metadata" {
			out = append(out, val...)
			return true
		}
		if sawMeta {
			return false
		}
		sawMeta = true
		return spliceMeta(&out, val, rv)
	})
	if !ok || !sawMeta {
		return nil, false
	}
	return append(out, '}'), true
}

func spliceMeta(out *[]byte, m []byte, rv string) bool {
	// a custom resource's metadata is unstructured JSON, its keys sorted;
	// kube's ObjectMeta order never is (name comes first, and
	// creationTimestamp, which every stored object has, after it)
	prev, sorted := "", true
	if sorted {
		members(m, func(key string, _, _ []byte) bool {
			sorted = sorted && key > prev
			prev = key
			return sorted
		})
	}
	after := func(key string) bool { return metaIndex(key) > rvMetaIndex }
	if sorted {
		after = func(key string) bool { return key > "resourceVersion" }
	}
	*out = append(*out, '{')
	n, inserted := 0, false
	insert := func() {
		if n > 0 {
			*out = append(*out, ',')
		}
		*out = append(*out, `"resourceVersion":"`...)
		*out = append(*out, rv...)
		*out = append(*out, '"')
		n++
		inserted = true
	}
	ok := members(m, func(key string, rawKey, val []byte) bool {
		if key == "resourceVersion" {
			return false
		}
		if !inserted && after(key) {
			insert()
		}
		if n > 0 {
			*out = append(*out, ',')
		}
		n++
		*out = append(*out, rawKey...)
		*out = append(*out, ':')
		*out = append(*out, val...)
		return true
	})
	if !ok {
		return false
	}
	if !inserted {
		insert()
	}
	*out = append(*out, '}')
	return true
}
