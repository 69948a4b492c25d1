package kube

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Object is a Kubernetes object as decoded JSON. Numbers are json.Number so
// that integers survive a round trip exactly.
type Object = map[string]any

// DecodeObject parses a JSON object, keeping numbers as json.Number.
func DecodeObject(b []byte) (Object, error) {
	if o, ok := fastDecodeObject(b); ok {
		return o, nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var o Object
	if err := d.Decode(&o); err != nil {
		return nil, err
	}
	if d.More() {
		return nil, &json.SyntaxError{}
	}
	return o, nil
}

// meta returns o.metadata, creating it when absent.
//
//go:noinline
func meta(o Object) map[string]any {
	m, ok := o["metadata"].(map[string]any)
	if !ok {
		m = map[string]any{}
		o["metadata"] = m
	}
	return m
}

//go:noinline
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// Name, Namespace, UID and ResourceVersion read o's metadata.
func Name(o Object) string            { return str(meta(o), "name") }
func Namespace(o Object) string       { return str(meta(o), "namespace") }
func UID(o Object) string             { return str(meta(o), "uid") }
func ResourceVersion(o Object) string { return str(meta(o), "resourceVersion") }

// Labels returns o's labels (string values only).
func Labels(o Object) map[string]string {
	l, _ := meta(o)["labels"].(map[string]any)
	out := make(map[string]string, len(l))
	for k, v := range l {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// DeepCopy copies a decoded JSON value.
func DeepCopy(v any) any { return schema.DeepCopy(v) }

func copyObject(o Object) Object { return DeepCopy(o).(map[string]any) }

// Field orders kube-apiserver's encoder produces (struct order).
var (
	topOrder  = []string{"kind", "apiVersion", "metadata"}
	metaOrder = []string{"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion",
		"generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
		"labels", "annotations", "ownerReferences", "finalizers", "managedFields"}
	managedOrder = []string{"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"}
)

// EncodeObject encodes o the way kube-apiserver orders a typed object's
// fields: kind, apiVersion, metadata (ObjectMeta order), then the rest
// (in order when given, else sorted).
func EncodeObject(o Object, order []string) []byte {
	var b bytes.Buffer
	encodeOrdered(&b, o, topOrder, order, encodeTop)
	return b.Bytes()
}

type level int

const (
	encodeTop level = iota
	encodeMeta
	encodeManaged
	encodePlain
)

func encodeOrdered(b *bytes.Buffer, m map[string]any, first, then []string, lv level) {
	b.WriteByte('{')
	n := 0
	done := make(map[string]bool, len(first)+len(then))
	emit := func(k string) {
		v, ok := m[k]
		if !ok || done[k] {
			return
		}
		done[k] = true
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		switch {
		case lv == encodeTop && k == "metadata":
			if mm, ok := v.(map[string]any); ok {
				encodeOrdered(b, mm, metaOrder, nil, encodeMeta)
				return
			}
		case lv == encodeMeta && k == "managedFields":
			if l, ok := v.([]any); ok {
				b.WriteByte('[')
				for i, e := range l {
					if i > 0 {
						b.WriteByte(',')
					}
					if em, ok := e.(map[string]any); ok {
						encodeOrdered(b, em, managedOrder, nil, encodeManaged)
					} else {
						writeJSON(b, e)
					}
				}
				b.WriteByte(']')
				return
			}
		}
		writeJSON(b, v)
	}
	for _, k := range first {
		emit(k)
	}
	for _, k := range then {
		emit(k)
	}
	if n < len(m) {
		rest := make([]string, 0, len(m)-n)
		for k := range m {
			if !done[k] {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		for _, k := range rest {
			emit(k)
		}
	}
	b.WriteByte('}')
}

func writeJSON(b *bytes.Buffer, v any) {
	j, err := json.Marshal(v)
	if err != nil {
		b.WriteString("null")
		return
	}
	b.Write(j)
}

// parseRV parses a resourceVersion as kube's APIObjectVersioner does: ""
// and "0" are 0, anything else must be a decimal uint64.
func parseRV(s string) (int64, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, invalidRVError(s, err)
	}
	return int64(v), nil
}

type rvError struct{ msg string }

func (e *rvError) Error() string { return e.msg }

func invalidRVError(s string, err error) error {
	return &rvError{"resourceVersion: Invalid value: " + strconv.Quote(s) + ": " + err.Error()}
}

//go:noinline
func formatRV(rev int64) string { return strconv.FormatInt(rev, 10) }

// numberInt reads an integer JSON value.
//
//go:noinline
func numberInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	case float64:
		return int64(x), float64(int64(x)) == x
	case int64:
		return x, true
	case int:
		return int64(x), true
	}
	return 0, false
}

type jsonNumber = json.Number
