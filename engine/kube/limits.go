package kube

import (
	"fmt"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// The bounds on what one write makes the server do and store, applied
// before the expensive work where they can be.
//
// kube-apiserver meets etcd's request limit (--max-request-bytes, 1.5 MiB)
// as a plain 500 with etcd's text, "etcdserver: request is too large"; on a
// create or a non-apply patch it first tries again without managedFields,
// which can be larger than the object (a field of a ConfigMap's data is
// `"f:key":{}` in them). A write here is held to the same limit, and
// answered the same way (TooLargeForEtcd).
//
// Computing managedFields costs time that grows with the fields of an
// object; in structured-merge-diff, which kube-apiserver uses, with the
// square of the keys of one map: 100,000 ConfigMap keys took 8 s of CPU
// in it, and 60,000 annotations 8 s in a sample-apiserver built on
// kube-apiserver's own code, which bounds it only by the request timeout
// and lets the work go on after it (package apply's own field manager
// takes 0.6 s for 80,000 keys). rvplay bounds the work itself:
// managedFields are tracked for objects of at most MaxTrackedFields fields.
// A larger object is stored without them, as kube-apiserver stores an
// object whose managedFields would not fit in etcd; a server-side apply,
// which cannot do without them, is refused with 413 (NewTooManyFields).
// Both differ from kube-apiserver, which spends the time.

// MaxEtcdRequestBytes is etcd's --max-request-bytes default, the largest
// write kube-apiserver can make.
const MaxEtcdRequestBytes = 1536 * 1024

// MaxTrackedFields is how many fields (map keys and list items, at any
// depth) an object may have for its managedFields to be computed. Ten
// thousand fields take about 70 ms of package apply's field manager.
const MaxTrackedFields = 10000

// etcdRequestSize is what kube-apiserver's etcd txn that writes value
// under key weighs in protobuf, to within a few bytes: a compare on the
// key's revision, a put of key and value, and etcd's raft envelope.
func etcdRequestSize(key string, value []byte) int { return 2*len(key) + len(value) + 48 }

// checkEtcdRequest is etcd's answer to a write above its request limit.
func checkEtcdRequest(key string, value []byte) error {
	if etcdRequestSize(key, value) > MaxEtcdRequestBytes {
		return mvcc.ErrRequestTooLarge
	}
	return nil
}

// tracked is o as the field manager sees it: without
// metadata.managedFields, which it never tracks (a shallow copy).
func tracked(o Object) Object {
	m, ok := o["metadata"].(map[string]any)
	if !ok {
		return o
	}
	if _, has := m["managedFields"]; !has {
		return o
	}
	c := make(Object, len(o))
	for k, v := range o {
		c[k] = v
	}
	cm := make(map[string]any, len(m))
	for k, v := range m {
		if k != "managedFields" {
			cm[k] = v
		}
	}
	c["metadata"] = cm
	return c
}

// measure counts o's fields as managedFields' field sets hold
// them (every map key and list item at any depth, managedFields aside),
// and two lower bounds of what storing o takes in etcd: stored, every
// string and key of o (but its old managedFields) once in JSON; and
// owned, what managedFields add when one manager owns all of o's fields:
// `"f:key":{}` for each key of the maps kube tracks key by key whatever the
// schema (a ConfigMap's or Secret's data, labels, annotations). What is
// stored is never smaller than stored, nor than stored+owned when a create
// or an apply makes one manager own every field it sets.
func measure(o Object) (fields, stored, owned int) {
	o = tracked(o)
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			fields += len(x)
			for k, e := range x {
				stored += len(k) + 3 // "k":
				walk(e)
			}
		case []any:
			fields += len(x)
			for _, e := range x {
				walk(e)
			}
		case string:
			stored += len(x) + 2
		default:
			stored++
		}
	}
	walk(o)
	m := meta(o)
	for _, granular := range []any{o["data"], o["binaryData"], o["stringData"], m["labels"], m["annotations"]} {
		if g, ok := granular.(map[string]any); ok {
			for k := range g {
				owned += len(k) + len(`"f:":{}`)
			}
		}
	}
	return fields, stored, owned
}

// NewTooManyFields is the 413 a server-side apply gets when the
// configuration or the live object has more than MaxTrackedFields fields,
// worded as kube-apiserver words its bound on JSON patch operations.
func NewTooManyFields(got int) *StatusError {
	return newStatusError(413, ReasonRequestEntityTooLarge,
		fmt.Sprintf("Request entity too large: The allowed maximum fields in an object under server-side apply is %d, got %d", MaxTrackedFields, got), nil)
}

// managedBy says who makes a write's managedFields: the field manager for
// a create, an update or a patch, or the applier, which made them already.
type managedBy int

const (
	byApplier managedBy = iota
	byCreate
	byUpdate
	byPatch
)

// updateManagedFields is FieldManager.Update within the bounds. An object
// (or the live one it replaces) with more than MaxTrackedFields fields is
// stored without managedFields. So is a created one that etcd could not
// store with managedFields naming all its fields, as kube-apiserver's
// second try stores it. An update whose object alone etcd could not store
// is refused as etcd refuses it (kube-apiserver does not try an update
// again); a patch's is stored without managedFields if that fits (the
// write itself checks).
func (reg *Registry) updateManagedFields(r *Resource, live, obj Object, manager, sub string, by managedBy, now time.Time) error {
	fields, floor, owned := measure(obj)
	if live == nil {
		floor += owned // the creator owns every field
	}
	if floor > MaxEtcdRequestBytes && by == byUpdate {
		return mvcc.ErrRequestTooLarge
	}
	if live != nil && fields <= MaxTrackedFields {
		fields, _, _ = measure(live)
	}
	if floor > MaxEtcdRequestBytes || fields > MaxTrackedFields {
		delete(meta(obj), "managedFields")
		return nil
	}
	return reg.fm.Update(r, live, obj, manager, sub, now)
}

// checkApply bounds a server-side apply before the field manager runs: a
// configuration whose fields alone cannot be stored is refused as etcd
// would refuse the result (kube-apiserver does not retry an apply without
// managedFields), and one with too many fields with 413.
func checkApply(config Object) error {
	fields, stored, owned := measure(config)
	if stored+owned > MaxEtcdRequestBytes {
		return mvcc.ErrRequestTooLarge
	}
	if fields > MaxTrackedFields {
		return NewTooManyFields(fields)
	}
	return nil
}
