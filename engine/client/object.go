package client

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// Object is a Kubernetes object as JSON decoded into maps (numbers stay
// json.Number so int64 fields survive a round trip). The clients here are
// "typed enough": they read metadata and a few well-known fields through
// accessors and leave the rest of the object alone.
type Object map[string]any

// DecodeObject parses one JSON object.
func DecodeObject(data []byte) (Object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var o Object
	if err := dec.Decode(&o); err != nil {
		return nil, err
	}
	return o, nil
}

// JSON encodes the object.
func (o Object) JSON() []byte {
	b, _ := json.Marshal(map[string]any(o))
	return b
}

// DeepCopy returns an independent copy.
func (o Object) DeepCopy() Object {
	if o == nil {
		return nil
	}
	c, _ := DecodeObject(o.JSON())
	return c
}

// Metadata returns the metadata map, creating it if missing.
func (o Object) Metadata() map[string]any {
	m, ok := o["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		o["metadata"] = m
	}
	return m
}

func (o Object) metaString(field string) string {
	m, _ := o["metadata"].(map[string]any)
	s, _ := m[field].(string)
	return s
}

func (o Object) Kind() string            { s, _ := o["kind"].(string); return s }
func (o Object) APIVersion() string      { s, _ := o["apiVersion"].(string); return s }
func (o Object) Name() string            { return o.metaString("name") }
func (o Object) Namespace() string       { return o.metaString("namespace") }
func (o Object) UID() string             { return o.metaString("uid") }
func (o Object) ResourceVersion() string { return o.metaString("resourceVersion") }

// SetResourceVersion sets (or with "" removes) metadata.resourceVersion.
func (o Object) SetResourceVersion(rv string) {
	if rv == "" {
		delete(o.Metadata(), "resourceVersion")
		return
	}
	o.Metadata()["resourceVersion"] = rv
}

// Generation is metadata.generation (0 when absent).
func (o Object) Generation() int64 {
	m, _ := o["metadata"].(map[string]any)
	n, _ := toInt64(m["generation"])
	return n
}

// Annotations returns metadata.annotations (nil when absent).
func (o Object) Annotations() map[string]string {
	m, _ := o["metadata"].(map[string]any)
	a, _ := m["annotations"].(map[string]any)
	if a == nil {
		return nil
	}
	out := make(map[string]string, len(a))
	for k, v := range a {
		s, _ := v.(string)
		out[k] = s
	}
	return out
}

// Key is the informer store key: "namespace/name", or "name" for
// cluster-scoped objects (client-go's MetaNamespaceKeyFunc).
func (o Object) Key() string {
	if ns := o.Namespace(); ns != "" {
		return ns + "/" + o.Name()
	}
	return o.Name()
}

// Nested returns the value at a path of map keys.
func (o Object) Nested(path ...string) (any, bool) {
	var cur any = map[string]any(o)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// NestedInt64 returns an integer at a path.
func (o Object) NestedInt64(path ...string) (int64, bool) {
	v, ok := o.Nested(path...)
	if !ok {
		return 0, false
	}
	return toInt64(v)
}

// NestedString returns a string at a path.
func (o Object) NestedString(path ...string) (string, bool) {
	v, ok := o.Nested(path...)
	s, isString := v.(string)
	return s, ok && isString
}

// SetNested sets a value at a path, creating maps on the way.
func (o Object) SetNested(value any, path ...string) {
	m := map[string]any(o)
	for _, p := range path[:len(path)-1] {
		next, ok := m[p].(map[string]any)
		if !ok {
			next = map[string]any{}
			m[p] = next
		}
		m = next
	}
	m[path[len(path)-1]] = value
}

func toInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case float64:
		return int64(n), true
	case int64:
		return n, true
	case int:
		return int64(n), true
	case string:
		i, err := strconv.ParseInt(n, 10, 64)
		return i, err == nil
	}
	return 0, false
}

// List is a decoded list response.
type List struct {
	Kind               string
	APIVersion         string
	ResourceVersion    string
	Continue           string
	RemainingItemCount *int64
	Items              []Object
}

func decodeList(data []byte) (*List, error) {
	var raw struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Metadata   struct {
			ResourceVersion    string `json:"resourceVersion"`
			Continue           string `json:"continue"`
			RemainingItemCount *int64 `json:"remainingItemCount"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, err
	}
	l := &List{Kind: raw.Kind, APIVersion: raw.APIVersion,
		ResourceVersion: raw.Metadata.ResourceVersion, Continue: raw.Metadata.Continue,
		RemainingItemCount: raw.Metadata.RemainingItemCount, Items: make([]Object, 0, len(raw.Items))}
	for _, it := range raw.Items {
		o, err := DecodeObject(it)
		if err != nil {
			return nil, err
		}
		l.Items = append(l.Items, o)
	}
	return l, nil
}
