//go:build !(js && wasm)

package apply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/rvplay/rvplay/engine/kube/schema"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/merge"
	"sigs.k8s.io/structured-merge-diff/v6/typed"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// applySMD is Apply computed by structured-merge-diff, kube's own
// library: the oracle the hand-written Apply is held to (oracle_test.go).
func applySMD(t *schema.Type, apiVersion string, live, config map[string]any, w Write, force bool) (map[string]any, error) {
	cfg, liveObj, err := prepareApply(t, apiVersion, live, config)
	if err != nil {
		return nil, err
	}
	managed, err := decodeSMDManaged(liveObj)
	if err != nil {
		managed = newSMDManaged()
	}
	removeManagedFields(liveObj)
	if live != nil && len(managed.fields) == 0 {
		// An object nobody tracked (written before tracking, through the
		// etcd gateway, or with managedFields cleared): kube first gives
		// every existing field to "before-first-apply", so the apply
		// conflicts on values it would change.
		if err := updateSMDManaged(t, apiVersion, nil, liveObj, Write{Manager: BeforeFirstApplyManager, Now: w.Now}, managed); err != nil {
			return nil, err
		}
	}

	pt := parseableType(t)
	liveTV, err := pt.FromUnstructured(liveObj, typed.AllowDuplicates)
	if err != nil {
		return nil, fmt.Errorf("failed to create typed live object (%s): %v", objectID(liveObj, t), err)
	}
	cfgTV, err := pt.FromUnstructured(cfg)
	if err != nil {
		return nil, fmt.Errorf("failed to create typed patch object (%s): %v", objectID(cfg, t), err)
	}
	key := managerKey(w.Manager, OperationApply, apiVersion, w.Subresource)
	up := updater(t, apiVersion, w.Subresource)
	newTV, fields, err := up.Apply(liveTV, cfgTV, fieldpath.APIVersion(apiVersion), managed.fields.Copy(), key, force)
	if err != nil {
		var cs merge.Conflicts
		switch e := err.(type) {
		case merge.Conflicts:
			cs = e
		case merge.Conflict:
			cs = merge.Conflicts{e}
		default:
			return nil, err
		}
		// kubectl apply --server-side after client-side apply: conflicts on
		// fields the last-applied annotation already set to the live values
		// are not conflicts (kube's migration from client-side apply).
		if w.Manager != kubectlManager {
			return nil, smdConflictError(cs)
		}
		allowed := smdAllowedByLastApplied(pt, apiVersion, liveTV, liveObj)
		if allowed == nil {
			return nil, smdConflictError(cs)
		}
		var rest merge.Conflicts
		for _, c := range cs {
			if !allowed.Has(c.Path) {
				rest = append(rest, c)
			}
		}
		if len(rest) > 0 {
			return nil, smdConflictError(rest)
		}
		newTV, fields, err = up.Apply(liveTV, cfgTV, fieldpath.APIVersion(apiVersion), managed.fields.Copy(), key, true)
		if err != nil {
			return nil, err
		}
	}
	managed.fields = smdStripMeta(fields)
	out, _ := newTV.AsValue().Unstructured().(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	if !value.Equals(liveTV.AsValue(), newTV.AsValue()) || live == nil {
		managed.times[key] = stamp(w.Now)
	}
	capSMDUpdateManagers(managed)
	if w.Manager == kubectlManager {
		syncLastApplied(liveObj, cfg, out)
	}
	if err := encodeSMDManaged(out, managed); err != nil {
		return nil, err
	}
	return out, nil
}

// updateManagedFieldsSMD is UpdateManagedFields computed by
// structured-merge-diff (see applySMD).
func updateManagedFieldsSMD(t *schema.Type, apiVersion string, oldObj, newObj map[string]any, w Write) error {
	md, _ := newObj["metadata"].(map[string]any)
	if md == nil {
		return nil // nothing to record on
	}
	managed, skip := startingManaged(oldObj, newObj, w, decodeSMDManaged,
		func(m *smdManagedSet) int { return len(m.fields) }, newSMDManaged)
	if skip {
		delete(md, "managedFields")
		return nil
	}
	err := updateSMDManaged(t, apiVersion, oldObj, newObj, w, managed)
	if err != nil {
		delete(md, "managedFields")
		return err
	}
	return encodeSMDManaged(newObj, managed)
}

func updateSMDManaged(t *schema.Type, apiVersion string, oldObj, newObj map[string]any, w Write, managed *smdManagedSet) error {
	var liveObj map[string]any
	if oldObj == nil {
		// kube compares a create against the empty typed object, whose
		// encoding already has spec, template, ... (but not labels).
		liveObj = normalizeObject(schema.Zero(t))
	} else {
		liveObj = normalizeForCompare(oldObj)
	}
	removeManagedFields(liveObj)
	nObj := normalizeForCompare(newObj)
	removeManagedFields(nObj)
	pt := parseableType(t)
	liveTV, err := pt.FromUnstructured(liveObj, typed.AllowDuplicates)
	if err != nil {
		return fmt.Errorf("failed to create typed live object (%s): %v", objectID(liveObj, t), err)
	}
	newTV, err := pt.FromUnstructured(nObj, typed.AllowDuplicates)
	if err != nil {
		return fmt.Errorf("failed to create typed new object (%s): %v", objectID(nObj, t), err)
	}
	key := managerKey(w.Manager, OperationUpdate, apiVersion, w.Subresource)
	// The write runs as a temporary manager so we can tell whether it took
	// any field; only then does the manager's entry (and its time) change.
	const current = "current-operation"
	up := updater(t, apiVersion, w.Subresource)
	_, fields, err := up.Update(liveTV, newTV, fieldpath.APIVersion(apiVersion), managed.fields, current)
	if err != nil {
		return err
	}
	if vs, ok := fields[current]; ok {
		delete(fields, current)
		set := vs.Set()
		if prev, ok := fields[key]; ok {
			set = set.Union(prev.Set())
		}
		fields[key] = fieldpath.NewVersionedSet(set, fieldpath.APIVersion(apiVersion), false)
		if w.Subresource == "scale" {
			// kube rebuilds the parent's entries from the Scale object's
			// managedFields and the scale entry ends up without a time.
			delete(managed.times, key)
		} else {
			managed.times[key] = stamp(w.Now)
		}
	}
	managed.fields = smdStripMeta(fields)
	capSMDUpdateManagers(managed)
	return nil
}

// smdAllowedByLastApplied returns the fields of the live object's
// last-applied configuration whose values are still the live ones, or nil
// when there is no usable annotation.
func smdAllowedByLastApplied(pt typed.ParseableType, apiVersion string, liveTV *typed.TypedValue, live map[string]any) *fieldpath.Set {
	s, _ := annotations(live)[LastAppliedAnnotation].(string)
	if s == "" {
		return nil
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(s), &last); err != nil || last["apiVersion"] != apiVersion {
		return nil
	}
	lastTV, err := pt.FromUnstructured(normalize(last), typed.AllowDuplicates)
	if err != nil {
		return nil
	}
	set, err := lastTV.ToFieldSet()
	if err != nil {
		return nil
	}
	cmp, err := lastTV.Compare(liveTV)
	if err != nil {
		return nil
	}
	return set.Difference(cmp.Modified).Difference(cmp.Added).Difference(cmp.Removed)
}

type converter struct{}

func (converter) Convert(o *typed.TypedValue, _ fieldpath.APIVersion) (*typed.TypedValue, error) {
	return o, nil // one version per type: nothing to convert
}
func (converter) IsMissingVersionError(error) bool { return false }

func updater(t *schema.Type, apiVersion, subresource string) *merge.Updater {
	b := merge.UpdaterBuilder{Converter: converter{}, ReturnInputOnNoop: true}
	if reset := schema.ResetFields(t, subresource); len(reset) > 0 {
		s := fieldpath.NewSet()
		for _, f := range reset {
			var parts []any
			for _, p := range strings.Split(f, ".") {
				parts = append(parts, p)
			}
			s.Insert(fieldpath.MakePathOrDie(parts...))
		}
		b.IgnoreFilter = map[fieldpath.APIVersion]fieldpath.Filter{fieldpath.APIVersion(apiVersion): fieldpath.NewExcludeSetFilter(s)}
	}
	return b.BuildUpdater()
}

// smdStripSet lists the fields nobody owns: identity and server-set metadata.
var smdStripSet = fieldpath.NewSet(
	fieldpath.MakePathOrDie("apiVersion"),
	fieldpath.MakePathOrDie("kind"),
	fieldpath.MakePathOrDie("metadata"),
	fieldpath.MakePathOrDie("metadata", "name"),
	fieldpath.MakePathOrDie("metadata", "namespace"),
	fieldpath.MakePathOrDie("metadata", "creationTimestamp"),
	fieldpath.MakePathOrDie("metadata", "selfLink"),
	fieldpath.MakePathOrDie("metadata", "uid"),
	fieldpath.MakePathOrDie("metadata", "clusterName"),
	fieldpath.MakePathOrDie("metadata", "generation"),
	fieldpath.MakePathOrDie("metadata", "managedFields"),
	fieldpath.MakePathOrDie("metadata", "resourceVersion"),
)

func smdStripMeta(f fieldpath.ManagedFields) fieldpath.ManagedFields {
	for k, vs := range f {
		s := vs.Set().Difference(smdStripSet)
		if s.Empty() {
			delete(f, k)
			continue
		}
		f[k] = fieldpath.NewVersionedSet(s, vs.APIVersion(), vs.Applied())
	}
	return f
}

func smdConflictError(cs merge.Conflicts) *ConflictError {
	sorted := append(merge.Conflicts(nil), cs...)
	// Managers sorted (as kube's message does); each manager's paths stay
	// in the order structured-merge-diff reports them (its set order:
	// a node's own fields before deeper paths), as kube prints them.
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Manager < sorted[j].Manager })
	e := &ConflictError{}
	for _, c := range sorted {
		e.Conflicts = append(e.Conflicts, Conflict{Manager: printManager(c.Manager), Field: c.Path.String()})
	}
	return e
}

// decodeJSON turns a FieldsV1 trie (as a JSON value) into a Set.
func decodeFieldsV1(v any) (*fieldpath.Set, error) {
	if s, ok := setFromFieldsV1(v); ok {
		return s, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s := &fieldpath.Set{}
	if err := s.FromJSON(bytes.NewReader(b)); err != nil {
		return nil, err
	}
	return s, nil
}

// normalizeForCompare is normalizeObject for objects that are only read
// afterwards (typed and compared, as an update's live and new objects):
// subtrees normalize leaves unchanged are shared with m instead of copied
// (a write copied both objects whole). The object and its metadata are
// fresh maps, so that removeManagedFields leaves m alone.
func normalizeForCompare(m map[string]any) map[string]any {
	n, _ := normalizeShared(m)
	nm, _ := n.(map[string]any)
	out := make(map[string]any, len(nm))
	for k, v := range nm {
		out[k] = v
	}
	if md, ok := out["metadata"].(map[string]any); ok && md != nil {
		c := make(map[string]any, len(md))
		for k, v := range md {
			c[k] = v
		}
		out["metadata"] = c
	}
	return out
}

// normalizeShared is normalize that returns v itself (changed false) when
// nothing in it needs normalizing, and otherwise copies only the maps and
// lists on the way to what changed.
func normalizeShared(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return nil, true // as normalize: a Go nil map is JSON null
		}
		var c map[string]any
		for k, e := range x {
			ne, changed := normalizeShared(e)
			if changed && c == nil {
				c = make(map[string]any, len(x))
				for k2, e2 := range x {
					c[k2] = e2
				}
			}
			if c != nil && changed {
				c[k] = ne
			}
		}
		if c == nil {
			return v, false
		}
		return c, true
	case []any:
		if x == nil {
			return nil, true
		}
		var c []any
		for i, e := range x {
			ne, changed := normalizeShared(e)
			if changed && c == nil {
				c = make([]any, len(x))
				copy(c, x)
			}
			if changed {
				c[i] = ne
			}
		}
		if c == nil {
			return v, false
		}
		return c, true
	case json.Number, float64, int:
		return normalize(v), true
	}
	return v, false
}
