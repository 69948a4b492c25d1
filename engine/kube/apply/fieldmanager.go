package apply

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Apply merges the apply configuration config (the decoded body of an
// application/apply-patch+yaml request) into live, the stored object, or
// nil when the object does not exist (apply creates it). It returns the
// object to store, with metadata.managedFields updated, or a
// *ConflictError, a *BadRequestError, or another error (answer 500).
//
// apiVersion is the API version of the URL ("v1", "apps/v1"); a
// configuration of another apiVersion or kind is 400 "invalid object
// type: …". Unknown fields in the configuration fail as they fail in
// structured-merge-diff ("failed to create typed patch object (…): .x:
// field not declared in schema"): kube answers that plain error as a 500. If the configuration carries
// metadata.resourceVersion, the returned object carries it too, so the
// caller's usual resourceVersion precondition applies. Fields the
// subresource does not own (status on the main resource, spec on /status)
// are merged but not owned; the caller resets them as for any write.
//
// Known gaps beside kube's field manager: one version per type, so no
// conversion between versions; an undeclared field stops validation of
// its map at the first such field in sorted order (structured-merge-diff
// stops at the first in Go's map order, so with several errors the
// message can differ).
func Apply(t *schema.Type, apiVersion string, live, config map[string]any, w Write, force bool) (map[string]any, error) {
	cfg, liveObj, err := prepareApply(t, apiVersion, live, config)
	if err != nil {
		return nil, err
	}
	managed, err := decodeManagedFields(liveObj)
	if err != nil {
		managed = newManaged()
	}
	removeManagedFields(liveObj)
	root := schemaTypeOf(t)
	if live != nil && len(managed.fields) == 0 {
		zero := normalizeObject(schema.Zero(t))
		if err := validateTyped(zero, liveObj, root, t); err != nil {
			return nil, err
		}
		updateManaged(t, apiVersion, zero, liveObj, Write{Manager: BeforeFirstApplyManager, Now: w.Now}, managed)
	}
	if errs := validateValue(liveObj, root, true); len(errs) > 0 {
		return nil, fmt.Errorf("failed to create typed live object (%s): %s", objectID(liveObj, t), joinValidation(errs))
	}
	if errs := validateValue(cfg, root, false); len(errs) > 0 {
		return nil, fmt.Errorf("failed to create typed patch object (%s): %s", objectID(cfg, t), joinValidation(errs))
	}
	key := managerKey(w.Manager, OperationApply, apiVersion, w.Subresource)
	reset := resetSet(t, w.Subresource)
	newObj, fields, conflicts, err := applyFields(root, liveObj, cfg, apiVersion, managed.fields, key, force, reset)
	if err != nil {
		return nil, err
	}
	if conflicts != nil {
		if w.Manager != kubectlManager {
			return nil, conflicts.err
		}
		allowed := allowedByLastApplied(root, apiVersion, liveObj)
		if allowed == nil {
			return nil, conflicts.err
		}
		var rest []Conflict
		for i, c := range conflicts.err.Conflicts {
			if !allowed.has(conflicts.paths[i]) {
				rest = append(rest, c)
			}
		}
		if len(rest) > 0 {
			return nil, &ConflictError{Conflicts: rest}
		}
		newObj, fields, _, err = applyFields(root, liveObj, cfg, apiVersion, managed.fields, key, true, reset)
		if err != nil {
			return nil, err
		}
	}
	managed.fields = stripMeta(fields)
	out, _ := newObj.(map[string]any)
	if out == nil {
		out = map[string]any{}
	}
	if !schema.JSONEqual(liveObj, newObj) || live == nil {
		managed.times[key] = stamp(w.Now)
	}
	capUpdateManagers(managed)
	if w.Manager == kubectlManager {
		syncLastApplied(liveObj, cfg, out)
	}
	encodeManagedFields(out, managed)
	return out, nil
}

// UpdateManagedFields records a non-apply write by w.Manager: newObj (the
// object about to be stored) replaces oldObj (nil on create). It sets
// newObj's metadata.managedFields in place: the manager's Update entry
// (apiVersion, subresource) gains the fields this write added or changed,
// other managers lose them, and every manager loses removed fields. The
// entry's time moves only when the write changed a field, so a no-op write
// leaves managedFields byte-identical. Entries beyond MaxUpdateManagers
// are folded into "ancient-changes".
//
// As kube does, managedFields sent by the client in newObj replace the
// stored ones (an explicit [] or [{}] clears them, keeping only what this
// write changed); subresource writes always start from the stored ones. If tracking fails (an object the
// schema cannot type), the write must still succeed: newObj's
// managedFields are removed and the error is returned for logging only.
func UpdateManagedFields(t *schema.Type, apiVersion string, oldObj, newObj map[string]any, w Write) error {
	md, _ := newObj["metadata"].(map[string]any)
	if md == nil {
		return nil
	}
	managed, skip := startingManaged(oldObj, newObj, w, decodeManagedFields,
		func(m *managedSet) int { return len(m.fields) }, newManaged)
	if skip {
		delete(md, "managedFields")
		return nil
	}
	var liveObj map[string]any
	if oldObj == nil {
		liveObj = normalizeObject(schema.Zero(t))
	} else {
		liveObj = normalizeObject(oldObj)
	}
	removeManagedFields(liveObj)
	nObj := normalizeObject(newObj)
	removeManagedFields(nObj)
	if err := validateTyped(liveObj, nObj, schemaTypeOf(t), t); err != nil {
		delete(md, "managedFields")
		return err
	}
	updateManaged(t, apiVersion, liveObj, nObj, w, managed)
	encodeManagedFields(newObj, managed)
	return nil
}

// validateTyped checks the two objects of an update as
// structured-merge-diff's typed conversion (duplicates allowed) does.
func validateTyped(liveObj, nObj map[string]any, root schemaType, t *schema.Type) error {
	if errs := validateValue(liveObj, root, true); len(errs) > 0 {
		return fmt.Errorf("failed to create typed live object (%s): %s", objectID(liveObj, t), joinValidation(errs))
	}
	if errs := validateValue(nObj, root, true); len(errs) > 0 {
		return fmt.Errorf("failed to create typed new object (%s): %s", objectID(nObj, t), joinValidation(errs))
	}
	return nil
}

func updateManaged(t *schema.Type, apiVersion string, liveObj, nObj map[string]any, w Write, managed *managedSet) {
	key := managerKey(w.Manager, OperationUpdate, apiVersion, w.Subresource)
	const current = "current-operation"
	root := schemaTypeOf(t)
	reset := resetSet(t, w.Subresource)
	fields := managed.fields
	for _, v := range fields {
		v.set = reconcileWithSchema(v.set, root)
	}
	cmp := compareObjects(liveObj, nObj, root)
	updateManagersForce(cmp, fields, current, reset, true)
	// The write runs as a temporary manager (as in updateManaged): only
	// if it took a field does the manager's entry (and its time) change.
	set := cmp.modified.union(cmp.added).recursiveDifference(reset)
	if !set.empty() {
		if prev, ok := fields[key]; ok {
			set = set.union(prev.set)
		}
		fields[key] = &versionedSet{set: set, apiVersion: apiVersion}
		if w.Subresource == "scale" {
			delete(managed.times, key)
		} else {
			managed.times[key] = stamp(w.Now)
		}
	}
	managed.fields = stripMeta(fields)
	capUpdateManagers(managed)
}

// updateManagersForce takes the changed fields from every manager but
// workflow and the removed fields from all of them, or (without force)
// reports the changed fields other managers own, with their paths.
func updateManagersForce(cmp *comparison, fields map[string]*versionedSet, workflow string, reset *fieldSet, force bool) (*ConflictError, [][]string) {
	added := cmp.added.recursiveDifference(reset)
	modified := cmp.modified.recursiveDifference(reset)
	removed := cmp.removed.recursiveDifference(reset)
	changed := modified.union(added)
	conflicts := map[string]*fieldSet{}
	for m, v := range fields {
		if m == workflow {
			continue
		}
		if c := v.set.intersection(changed); !c.empty() {
			conflicts[m] = c
		}
	}
	if !force && len(conflicts) > 0 {
		var ms []string
		for m := range conflicts {
			ms = append(ms, m)
		}
		sort.Strings(ms)
		e := &ConflictError{}
		var paths [][]string
		for _, m := range ms {
			conflicts[m].iterate(nil, func(p []string) {
				e.Conflicts = append(e.Conflicts, Conflict{Manager: printManager(m), Field: pathString(p)})
				paths = append(paths, p)
			})
		}
		return e, paths
	}
	for m, c := range conflicts {
		fields[m].set = fields[m].set.difference(c)
	}
	if !removed.empty() {
		for m, v := range fields {
			if m != workflow {
				v.set = v.set.difference(removed)
			}
		}
	}
	for m, v := range fields {
		if v.set.empty() {
			delete(fields, m)
		}
	}
	return nil, nil
}

// applyFields is the apply step of the field manager: merge, own the
// configuration's fields, prune what the applier dropped, then take the
// changed fields from the other managers (or report conflicts).
type applyConflicts struct {
	err   *ConflictError
	paths [][]string
}

func applyFields(root schemaType, liveObj, cfg map[string]any, apiVersion string, managedIn map[string]*versionedSet, key string, force bool, reset *fieldSet) (any, map[string]*versionedSet, *applyConflicts, error) {
	fields := map[string]*versionedSet{}
	for k, v := range managedIn {
		fields[k] = &versionedSet{set: reconcileWithSchema(v.set, root).copy(), apiVersion: v.apiVersion, applied: v.applied}
	}
	merged, ok, err := mergeObjects(liveObj, cfg, true, true, root)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("failed to merge config: %v", err)
	}
	if !ok {
		merged = nil
	}
	var lastSet *fieldSet
	if v := fields[key]; v != nil {
		lastSet = v.set
	}
	set := toFieldSet(cfg, root).recursiveDifference(reset)
	fields[key] = &versionedSet{set: set, apiVersion: apiVersion, applied: true}
	merged = prune(root, merged, fields, lastSet)
	cmp := compareObjects(liveObj, merged, root)
	if ce, paths := updateManagersForce(cmp, fields, key, reset, force); ce != nil {
		return nil, nil, &applyConflicts{ce, paths}, nil
	}
	return merged, fields, nil, nil
}

func prune(root schemaType, merged any, fields map[string]*versionedSet, lastSet *fieldSet) any {
	if lastSet.empty() {
		return merged
	}
	ens := func(s *fieldSet) *fieldSet { return ensureNamedFieldsAreMembers(s, root, nil) }
	pruned := removeItems(merged, ens(lastSet), root)
	all := newFieldSet()
	for _, v := range fields {
		all = all.union(v.set)
	}
	mergedSet := ens(toFieldSet(merged, root))
	prunedSet := ens(toFieldSet(pruned, root))
	pruned = removeItems(merged, mergedSet.difference(prunedSet.union(ens(all))), root)
	prunedSet = ens(toFieldSet(pruned, root))
	return removeItems(merged, mergedSet.difference(prunedSet).intersection(ens(lastSet)), root)
}

func allowedByLastApplied(root schemaType, apiVersion string, live map[string]any) *fieldSet {
	s, _ := annotations(live)[LastAppliedAnnotation].(string)
	if s == "" {
		return nil
	}
	var last map[string]any
	if err := json.Unmarshal([]byte(s), &last); err != nil || last["apiVersion"] != apiVersion {
		return nil
	}
	l := normalize(last)
	set := toFieldSet(l, root)
	cmp := compareObjects(l, live, root)
	return set.difference(cmp.modified).difference(cmp.added).difference(cmp.removed)
}

func resetSet(t *schema.Type, subresource string) *fieldSet {
	s := newFieldSet()
	for _, f := range schema.ResetFields(t, subresource) {
		var p []string
		for _, n := range strings.Split(f, ".") {
			p = append(p, "f:"+n)
		}
		s.insert(p)
	}
	return s
}

var stripSet = func() *fieldSet {
	s := newFieldSet()
	for _, p := range [][]string{{"apiVersion"}, {"kind"}, {"metadata"}, {"metadata", "name"}, {"metadata", "namespace"},
		{"metadata", "creationTimestamp"}, {"metadata", "selfLink"}, {"metadata", "uid"}, {"metadata", "clusterName"},
		{"metadata", "generation"}, {"metadata", "managedFields"}, {"metadata", "resourceVersion"}} {
		var path []string
		for _, n := range p {
			path = append(path, "f:"+n)
		}
		s.insert(path)
	}
	return s
}()

func stripMeta(f map[string]*versionedSet) map[string]*versionedSet {
	for k, v := range f {
		s := v.set.difference(stripSet)
		if s.empty() {
			delete(f, k)
			continue
		}
		f[k] = &versionedSet{set: s, apiVersion: v.apiVersion, applied: v.applied}
	}
	return f
}

// validateValue reports what structured-merge-diff's typed conversion
// refuses, in its words: values of the wrong kind, undeclared struct
// fields, list items without keys, and (unless allowDup) duplicate keys.
func validateValue(v any, t schemaType, allowDup bool) []string {
	var errs []string
	add := func(path []string, msg string) {
		if len(path) == 0 {
			errs = append(errs, msg)
			return
		}
		errs = append(errs, pathString(path)+": "+msg)
	}
	var walk func(path []string, v any, t schemaType)
	walk = func(path []string, v any, t schemaType) {
		if v == nil {
			return // null is valid everywhere
		}
		t = t.at(v)
		switch t.kind {
		case kindScalar:
			switch t.scalar {
			case "numeric":
				if _, ok := toFloat(v); !ok {
					add(path, fmt.Sprintf("expected numeric (int or float), got %T", v))
				}
			case "string":
				if _, ok := v.(string); !ok {
					add(path, fmt.Sprintf("expected string, got &value.valueUnstructured{Value:%#v}", v))
				}
			case "boolean":
				if _, ok := v.(bool); !ok {
					add(path, fmt.Sprintf("expected boolean, got &{%v}", v))
				}
			default:
				switch v.(type) {
				case map[string]any, []any:
					add(path, fmt.Sprintf("expected any scalar, got &{%v}", v))
				}
			}
		case kindMap:
			m, ok := v.(map[string]any)
			if !ok {
				add(path, fmt.Sprintf("expected map, got &{%v}", v))
				return
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p := appendPath(path, "f:"+k)
				ft, declared := t.field(k)
				if !declared && t.obj != nil && !t.obj.PreserveUnknown {
					add(p, "field not declared in schema")
					return
				}
				walk(p, m[k], ft)
			}
		case kindList:
			l, ok := v.([]any)
			if !ok {
				add(path, fmt.Sprintf("expected list, got &{%v}", v))
				return
			}
			seen := map[string]bool{}
			for i, it := range l {
				pe := fmt.Sprintf("i:%d", i)
				if !t.atomic {
					var err error
					if pe, err = t.itemPE(it); err != nil {
						add(path, fmt.Sprintf("element %d: %v", i, err))
						return
					}
					if seen[pe] && !allowDup {
						add(path, "duplicate entries for key "+pathString([]string{pe}))
					}
					seen[pe] = true
				}
				walk(appendPath(path, pe), it, t.item())
			}
		}
	}
	walk(nil, v, t)
	return errs
}

func joinValidation(errs []string) string {
	if len(errs) == 1 {
		return errs[0]
	}
	return "errors:\n  " + strings.Join(errs, "\n  ")
}
