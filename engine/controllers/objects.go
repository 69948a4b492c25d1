package controllers

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/rvplay/rvplay/engine/client"
)

// The controllers read the objects of their informers as decoded JSON;
// these are the typed reads they need, with the defaults kube's Go types
// would give a missing field.

func int64At(o client.Object, path ...string) int64 {
	n, _ := o.NestedInt64(path...)
	return n
}

func stringAt(o client.Object, path ...string) string {
	s, _ := o.NestedString(path...)
	return s
}

func mapAt(o client.Object, path ...string) map[string]any {
	v, _ := o.Nested(path...)
	m, _ := v.(map[string]any)
	return m
}

func listAt(o client.Object, path ...string) []any {
	v, _ := o.Nested(path...)
	l, _ := v.([]any)
	return l
}

// specReplicas is *spec.replicas, which kube-apiserver always defaults.
func specReplicas(o client.Object) int64 {
	if n, ok := o.NestedInt64("spec", "replicas"); ok {
		return n
	}
	return 1
}

func labelsOf(o client.Object) map[string]string { return stringMap(mapAt(o, "metadata", "labels")) }

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func toAnyMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func beingDeleted(o client.Object) bool { return stringAt(o, "metadata", "deletionTimestamp") != "" }

func hasFinalizer(o client.Object, f string) bool {
	for _, x := range listAt(o, "metadata", "finalizers") {
		if x == f {
			return true
		}
	}
	return false
}

func timeAt(o client.Object, path ...string) time.Time {
	t, _ := time.Parse(time.RFC3339, stringAt(o, path...))
	return t
}

func rfc3339(t time.Time) string { return t.UTC().Truncate(time.Second).Format(time.RFC3339) }

// ownerRef is a metav1.OwnerReference.
type ownerRef struct {
	APIVersion, Kind, Name, UID    string
	Controller, BlockOwnerDeletion bool
}

func ownerRefsOf(o client.Object) []ownerRef {
	var out []ownerRef
	for _, x := range listAt(o, "metadata", "ownerReferences") {
		m, _ := x.(map[string]any)
		r := client.Object(m)
		c, _ := m["controller"].(bool)
		b, _ := m["blockOwnerDeletion"].(bool)
		out = append(out, ownerRef{APIVersion: stringAt(r, "apiVersion"), Kind: stringAt(r, "kind"), Name: stringAt(r, "name"),
			UID: stringAt(r, "uid"), Controller: c, BlockOwnerDeletion: b})
	}
	return out
}

// controllerOf is metav1.GetControllerOf: the owner reference that says
// controller: true.
func controllerOf(o client.Object) *ownerRef {
	for _, r := range ownerRefsOf(o) {
		if r.Controller {
			return &r
		}
	}
	return nil
}

func (r ownerRef) json() map[string]any {
	return map[string]any{"apiVersion": r.APIVersion, "kind": r.Kind, "name": r.Name, "uid": r.UID,
		"controller": r.Controller, "blockOwnerDeletion": r.BlockOwnerDeletion}
}

// controllerRef is metav1.NewControllerRef: owner as the controller,
// blocking its foreground deletion.
func controllerRef(owner client.Object, apiVersion, kind string) ownerRef {
	return ownerRef{APIVersion: apiVersion, Kind: kind, Name: owner.Name(), UID: owner.UID(), Controller: true, BlockOwnerDeletion: true}
}

// condition is a status condition (deployment, replica set, pod,
// namespace) as JSON.
func conditionOf(o client.Object, typ string) map[string]any {
	for _, c := range listAt(o, "status", "conditions") {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			return m
		}
	}
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// decodeInto reads an object of an informer into a Go struct of the
// fields a controller needs (encoding/json, already linked: under
// WebAssembly reading typed fields takes far less code than walking
// decoded JSON).
func decodeInto(o client.Object, v any) error { return json.Unmarshal(o.JSON(), v) }

// toJSONValue is v as decoded JSON (maps, slices, json.Number), as an
// Object's fields are.
func toJSONValue(v any) any {
	b, _ := json.Marshal(v)
	o, _ := client.DecodeObject([]byte(`{"v":` + string(b) + `}`))
	return o["v"]
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339, s)
	return t
}

// onDeleted adapts a handler of deleted objects to client.Handler's
// OnDelete, which gets a DeletedFinalStateUnknown for a delete the
// informer only inferred from a relist: kube's controllers then handle the
// last state they knew (the tombstone's Obj), as this does.
func onDeleted(f func(client.Object)) func(any) {
	return func(obj any) {
		switch o := obj.(type) {
		case client.Object:
			f(o)
		case client.DeletedFinalStateUnknown:
			if o.Obj != nil {
				f(o.Obj)
			}
		}
	}
}
