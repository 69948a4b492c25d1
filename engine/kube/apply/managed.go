package apply

import (
	"fmt"
	"sort"
)

// versionedSet is one manager's field set (structured-merge-diff's
// VersionedSet).
type versionedSet struct {
	set        *fieldSet
	apiVersion string
	applied    bool
}

// managedSet is the decoded form of metadata.managedFields: field sets by
// manager key, and the time of each entry (absent for entries without
// one).
type managedSet struct {
	fields map[string]*versionedSet
	times  map[string]string
}

func newManaged() *managedSet {
	return &managedSet{fields: map[string]*versionedSet{}, times: map[string]string{}}
}

func decodeManagedFields(obj map[string]any) (*managedSet, error) {
	m := newManaged()
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
		set, err := fieldSetFromFieldsV1(entry["fieldsV1"])
		if err != nil {
			return nil, fmt.Errorf("metadata.managedFields[%d].fieldsV1: %v", i, err)
		}
		key := managerKey(str("manager"), op, str("apiVersion"), str("subresource"))
		if _, dup := m.fields[key]; dup {
			return nil, fmt.Errorf("metadata.managedFields: duplicate entry for %s", key)
		}
		m.fields[key] = &versionedSet{set: set, apiVersion: str("apiVersion"), applied: op == OperationApply}
		if t := str("time"); t != "" {
			m.times[key] = t
		}
	}
	return m, nil
}

// encodeManagedFields writes m into obj's metadata.managedFields in kube's
// order (as encodeManagedFields does).
func encodeManagedFields(obj map[string]any, m *managedSet) {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		if len(m.fields) == 0 {
			return
		}
		md = map[string]any{}
		obj["metadata"] = md
	}
	var entries []managedFieldsEntry
	for key, v := range m.fields {
		if v.set.empty() {
			continue
		}
		p, err := parseKey(key)
		if err != nil {
			continue
		}
		entries = append(entries, managedFieldsEntry{Manager: p.Manager, Operation: p.Operation, APIVersion: v.apiVersion,
			Time: m.times[key], FieldsType: "FieldsV1", FieldsV1: v.set.toFieldsV1(), Subresource: p.Subresource})
	}
	if len(entries) == 0 {
		delete(md, "managedFields")
		return
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.Operation != b.Operation {
			return a.Operation < b.Operation
		}
		if a.Time != b.Time {
			return a.Time < b.Time
		}
		if a.Manager != b.Manager {
			return a.Manager < b.Manager
		}
		if a.APIVersion != b.APIVersion {
			return a.APIVersion < b.APIVersion
		}
		return a.Subresource < b.Subresource
	})
	out := make([]any, len(entries))
	for i, e := range entries {
		out[i] = e.toMap()
	}
	md["managedFields"] = out
}

// capUpdateManagers folds the oldest Update entries beyond
// MaxUpdateManagers into "ancient-changes", per apiVersion, as kube's
// field manager does.
func capUpdateManagers(m *managedSet) {
	var updaters []string
	for k, v := range m.fields {
		if !v.applied {
			updaters = append(updaters, k)
		}
	}
	if len(updaters) <= MaxUpdateManagers {
		return
	}
	sort.Slice(updaters, func(i, j int) bool {
		ti, tj := m.times[updaters[i]], m.times[updaters[j]]
		if ti != tj {
			return ti < tj
		}
		return updaters[i] < updaters[j]
	})
	firstOf := map[string]string{}
	length := len(updaters)
	for _, k := range updaters {
		if length <= MaxUpdateManagers {
			break
		}
		v := m.fields[k]
		first, seen := firstOf[v.apiVersion]
		if !seen {
			firstOf[v.apiVersion] = k
			continue
		}
		bucket := managerKey(ancientChanges, OperationUpdate, v.apiVersion, "")
		if _, ok := m.fields[bucket]; !ok {
			m.fields[bucket] = m.fields[first]
			delete(m.fields, first)
			delete(m.times, first)
		}
		m.fields[bucket] = &versionedSet{set: v.set.union(m.fields[bucket].set), apiVersion: v.apiVersion}
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
