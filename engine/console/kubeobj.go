package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// obj is a Kubernetes object as kubectl holds it (unstructured): maps,
// slices, strings, booleans, int64 and float64.
type obj = map[string]any

// decodeObject reads JSON into an obj, integers as int64 as
// unstructured.Unstructured has them (jsonpath filters compare numbers).
func decodeObject(data []byte) (obj, error) {
	v, err := decodeValue(data)
	if err != nil {
		return nil, err
	}
	o, ok := v.(obj)
	if !ok {
		return nil, fmt.Errorf("expected a JSON object, got %s", bytes.TrimSpace(data))
	}
	return o, nil
}

func decodeValue(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return unNumber(v), nil
}

func unNumber(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = unNumber(e)
		}
	case []any:
		for i, e := range x {
			x[i] = unNumber(e)
		}
	}
	return v
}

func nested(o obj, path ...string) any {
	var cur any = o
	for _, p := range path {
		m, ok := cur.(obj)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

func nestedString(o obj, path ...string) string {
	s, _ := nested(o, path...).(string)
	return s
}

func nestedMap(o obj, path ...string) obj {
	m, _ := nested(o, path...).(obj)
	return m
}

func nestedInt(o obj, path ...string) (int64, bool) {
	switch n := nested(o, path...).(type) {
	case int64:
		return n, true
	case float64:
		return int64(n), true
	}
	return 0, false
}

// setNested sets a value, creating the maps on the way.
func setNested(o obj, v any, path ...string) {
	for _, p := range path[:len(path)-1] {
		m, ok := o[p].(obj)
		if !ok {
			m = obj{}
			o[p] = m
		}
		o = m
	}
	o[path[len(path)-1]] = v
}

func metaName(o obj) string      { return nestedString(o, "metadata", "name") }
func metaNamespace(o obj) string { return nestedString(o, "metadata", "namespace") }
func resourceVersion(o obj) string {
	return nestedString(o, "metadata", "resourceVersion")
}

// deepCopy copies an obj (or any JSON value).
func deepCopy(v any) any {
	switch x := v.(type) {
	case obj:
		c := make(obj, len(x))
		for k, e := range x {
			c[k] = deepCopy(e)
		}
		return c
	case []any:
		c := make([]any, len(x))
		for i, e := range x {
			c[i] = deepCopy(e)
		}
		return c
	}
	return v
}

// withoutManagedFields is what kubectl prints unless --show-managed-fields.
func withoutManagedFields(o obj) obj {
	md, ok := o["metadata"].(obj)
	if !ok {
		return o
	}
	if _, has := md["managedFields"]; !has {
		if items, ok := o["items"].([]any); ok {
			c := make(obj, len(o))
			for k, v := range o {
				c[k] = v
			}
			ni := make([]any, len(items))
			for i, it := range items {
				if io, ok := it.(obj); ok {
					ni[i] = withoutManagedFields(io)
				} else {
					ni[i] = it
				}
			}
			c["items"] = ni
			return c
		}
		return o
	}
	c := make(obj, len(o))
	for k, v := range o {
		c[k] = v
	}
	nmd := make(obj, len(md))
	for k, v := range md {
		if k != "managedFields" {
			nmd[k] = v
		}
	}
	c["metadata"] = nmd
	return c
}

// printJSON is kubectl -o json: encoding/json with four-space indentation
// (map keys sorted, <, > and & escaped).
func printJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	return string(b) + "\n"
}

// printYAML is kubectl -o yaml: sigs.k8s.io/yaml, as kubectl uses it.
func printYAML(v any) string {
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Sprintf("error: %v\n", err)
	}
	return string(b)
}

// manifest is one object read from -f (a file, a URL, a heredoc or the
// lab's editor), with where it came from for kubectl's error messages.
type manifest struct {
	obj    obj
	source string
}

// decodeManifests reads YAML or JSON documents (separated by ---), and
// expands kind: List, as kubectl's resource builder does.
func decodeManifests(data []byte, source string) ([]manifest, error) {
	var out []manifest
	for _, doc := range splitYAMLDocuments(data) {
		if strings.TrimSpace(stripYAMLComments(doc)) == "" {
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			return nil, fmt.Errorf("error parsing %s: error converting YAML to JSON: %v", source, err)
		}
		if string(js) == "null" {
			continue
		}
		o, err := decodeObject(js)
		if err != nil {
			return nil, fmt.Errorf("error parsing %s: %v", source, err)
		}
		if strings.HasSuffix(nestedString(o, "kind"), "List") {
			if items, ok := o["items"].([]any); ok {
				for _, it := range items {
					if io, ok := it.(obj); ok {
						out = append(out, manifest{io, source})
					}
				}
				continue
			}
		}
		if nestedString(o, "kind") == "" {
			return nil, fmt.Errorf("error: unable to decode %q: Object 'Kind' is missing in '%s'", source, strings.TrimSpace(string(js)))
		}
		out = append(out, manifest{o, source})
	}
	return out, nil
}

func splitYAMLDocuments(data []byte) []string {
	var docs []string
	var cur strings.Builder
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if strings.TrimRight(line, " \t\r\n") == "---" {
			docs = append(docs, cur.String())
			cur.Reset()
			continue
		}
		cur.WriteString(line)
	}
	return append(docs, cur.String())
}

func stripYAMLComments(doc string) string {
	var b strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(line); t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// sortedKeys returns the keys of m in order.
func sortedKeys(m obj) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
