package kube

import "github.com/rvplay/rvplay/engine/mvcc"

// A conversion is how one served version of a resource is kept in the
// form of another: kube-apiserver stores every object of a resource in
// one version (a custom resource's storage version; events.k8s.io/v1
// Events as core/v1 Events, the two resources cohabiting under
// /registry/events) and converts on the way in and out. Each served
// version reads and watches its own form: its gets, lists, watches and
// watch cache (one per served version, as kube's crdHandler builds one
// storage each) hold objects converted from storage.
//
// Conversions are those of custom resources with several versions and,
// in the server build, of events.k8s.io.
type conversion struct {
	// storage encodes the stored form (nil: the served resource's own
	// encoding, as for a custom resource's versions).
	// It is also the group a 422 names, since kube validates the
	// internal object: an events.k8s.io/v1 Event's errors say Event,
	// core's kind (invalidObject).
	storage *Resource
	// fromStorage turns a stored object into the served version's,
	// toStorage the other way round; both work in place.
	fromStorage, toStorage func(o Object)
	// validateUpdate, when set, replaces the resource's Validate on
	// updates: the stored type's rules on the new object given the
	// current one (ValidateEventUpdate). It lives here, not in Resource,
	// because only the server build has such rules.
	validateUpdate func(cur, next Object) []FieldError
}

// decodeStored decodes a stored object as r's version.
func (r *Resource) decodeStored(kv *mvcc.KeyValue) (Object, error) {
	o, err := decodeKV(kv)
	if err == nil && r.conv != nil {
		r.conv.fromStorage(o)
	}
	return o, err
}

// served is kv with its value in r's version (kv itself when r is stored
// as served).
func (r *Resource) served(kv *mvcc.KeyValue) *mvcc.KeyValue {
	if r.conv == nil || kv == nil {
		return kv
	}
	o, err := DecodeObject(kv.Value)
	if err != nil {
		return kv // the reads that decode it report it
	}
	r.conv.fromStorage(o)
	c := *kv
	c.Value = r.Encode(o)
	return &c
}

// servedEvent is a store watch's event with its values in r's version.
func (r *Resource) servedEvent(ev *mvcc.Event) *mvcc.Event {
	if r.conv == nil {
		return ev
	}
	c := *ev
	c.Kv, c.PrevKv = r.served(ev.Kv), r.served(ev.PrevKv)
	return &c
}

// storedForm is o as stored: o itself, or a converted copy.
func (r *Resource) storedForm(o Object) (Object, *Resource) {
	if r.conv == nil {
		return o, r
	}
	c := copyObject(o)
	r.conv.toStorage(c)
	if r.conv.storage != nil {
		return c, r.conv.storage
	}
	return c, r
}

// invalidObject is the 422 of an object of r that breaks its type's
// rules; it names the stored form's group (see conversion.storage).
func invalidObject(r *Resource, name string, errs []FieldError) *StatusError {
	if r.conv != nil && r.conv.storage != nil {
		return NewInvalid(r.conv.storage.Group, r.Kind, name, errs)
	}
	return NewInvalid(r.Group, r.Kind, name, errs)
}
