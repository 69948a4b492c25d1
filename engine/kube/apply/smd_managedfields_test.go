//go:build !(js && wasm)

package apply

import (
	"fmt"
	"sort"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// smdManagedSet is the decoded form of metadata.managedFields: field sets by
// manager key, and the time of each entry (absent for entries without one).
type smdManagedSet struct {
	fields fieldpath.ManagedFields
	times  map[string]string
}

func newSMDManaged() *smdManagedSet {
	return &smdManagedSet{fields: fieldpath.ManagedFields{}, times: map[string]string{}}
}

func decodeSMDManaged(obj map[string]any) (*smdManagedSet, error) {
	m := newSMDManaged()
	md, _ := obj["metadata"].(map[string]any)
	raw, ok := md["managedFields"]
	if !ok || raw == nil {
		return m, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("metadata.managedFields must be a list")
	}
	for i, e := range list {
		entry, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("metadata.managedFields[%d] must be an object", i)
		}
		str := func(k string) string { s, _ := entry[k].(string); return s }
		op := str("operation")
		if op != OperationApply && op != OperationUpdate {
			return nil, fmt.Errorf("metadata.managedFields[%d].operation: unknown operation %q", i, op)
		}
		if ft := str("fieldsType"); ft != "FieldsV1" {
			return nil, fmt.Errorf("metadata.managedFields[%d].fieldsType: expected FieldsV1, got %q", i, ft)
		}
		set, err := decodeFieldsV1(entry["fieldsV1"])
		if err != nil {
			return nil, fmt.Errorf("metadata.managedFields[%d].fieldsV1: %v", i, err)
		}
		key := managerKey(str("manager"), op, str("apiVersion"), str("subresource"))
		if _, dup := m.fields[key]; dup {
			return nil, fmt.Errorf("metadata.managedFields: duplicate entry for %s", key)
		}
		m.fields[key] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(str("apiVersion")), op == OperationApply)
		if t := str("time"); t != "" {
			m.times[key] = t
		}
	}
	return m, nil
}

type encodedEntry struct {
	key, manager, operation, apiVersion, subresource, time string
	fields                                                 any
}

// encodeSMDManaged writes m into obj's metadata.managedFields, sorted as
// kube sorts them: by operation (Apply before Update), time (entries without
// time first), manager, apiVersion, subresource. An empty set removes the
// field.
func encodeSMDManaged(obj map[string]any, m *smdManagedSet) error {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		if len(m.fields) == 0 {
			return nil
		}
		md = map[string]any{}
		obj["metadata"] = md
	}
	var entries []encodedEntry
	for key, vs := range m.fields {
		if vs.Set().Empty() {
			continue
		}
		p, err := parseKey(key)
		if err != nil {
			return err
		}
		var fields any
		if m, ok := fieldsV1FromSet(vs.Set()); ok {
			fields = m
		} else if fields, err = fieldsV1JSON(vs.Set()); err != nil {
			return err
		}
		entries = append(entries, encodedEntry{key, p.Manager, p.Operation, string(vs.APIVersion()), p.Subresource, m.times[key], fields})
	}
	if len(entries) == 0 {
		delete(md, "managedFields")
		return nil
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.operation != b.operation {
			return a.operation < b.operation
		}
		if a.time != b.time { // RFC 3339 UTC seconds sort as strings; "" first
			return a.time < b.time
		}
		if a.manager != b.manager {
			return a.manager < b.manager
		}
		if a.apiVersion != b.apiVersion {
			return a.apiVersion < b.apiVersion
		}
		return a.subresource < b.subresource
	})
	out := make([]any, len(entries))
	for i, e := range entries {
		out[i] = managedFieldsEntry{
			Manager: e.manager, Operation: e.operation, APIVersion: e.apiVersion, Time: e.time,
			FieldsType: "FieldsV1", FieldsV1: e.fields, Subresource: e.subresource,
		}.toMap()
	}
	md["managedFields"] = out
	return nil
}

func capSMDUpdateManagers(m *smdManagedSet) {
	var updaters []string
	for k, vs := range m.fields {
		if !vs.Applied() {
			updaters = append(updaters, k)
		}
	}
	if len(updaters) <= MaxUpdateManagers {
		return
	}
	// Oldest first; entries without a time count as the oldest.
	sort.Slice(updaters, func(i, j int) bool {
		ti, tj := m.times[updaters[i]], m.times[updaters[j]]
		if ti != tj {
			return ti < tj
		}
		return updaters[i] < updaters[j]
	})
	// The first entry seen for an apiVersion stays until a second one of
	// that version comes along; then both go into the version's bucket
	// (which takes the newer one's time) and the count drops by one.
	firstOf := map[fieldpath.APIVersion]string{}
	length := len(updaters)
	for _, k := range updaters {
		if length <= MaxUpdateManagers {
			break
		}
		vs := m.fields[k]
		first, seen := firstOf[vs.APIVersion()]
		if !seen {
			firstOf[vs.APIVersion()] = k
			continue
		}
		bucket := managerKey(ancientChanges, OperationUpdate, string(vs.APIVersion()), "")
		if _, ok := m.fields[bucket]; !ok {
			m.fields[bucket] = m.fields[first]
			delete(m.fields, first)
			delete(m.times, first)
		}
		m.fields[bucket] = fieldpath.NewVersionedSet(vs.Set().Union(m.fields[bucket].Set()), vs.APIVersion(), false)
		if t, ok := m.times[k]; ok {
			m.times[bucket] = t
		} else {
			delete(m.times, bucket)
		}
		delete(m.fields, k)
		delete(m.times, k)
		length--
	}
}
