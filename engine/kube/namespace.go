package kube

import (
	"context"
	"fmt"
)

func isNamespaces(r *Resource) bool { return r.Group == "" && r.Resource == "namespaces" }

// NamespaceFinalizerKubernetes is the namespace controller's finalizer, in
// spec.finalizers: a namespace is deleted only once it has removed it
// (through the finalize subresource), after deleting what the namespace
// held.
const NamespaceFinalizerKubernetes = "kubernetes"

// deleteNamespace is the namespace REST's Delete: the first delete puts
// the namespace in the Terminating phase (with a deletionTimestamp and the
// garbage collector's finalizers the options ask for) and answers it; the
// namespace controller then empties it and removes its spec finalizer,
// which deletes it. A delete once spec.finalizers is empty is the generic
// one.
func (reg *Registry) deleteNamespace(ctx context.Context, r *Resource, name string, o DeleteOptions) (any, error) {
	_, cur, err := reg.current(ctx, r, r.Key("", name), name)
	if err != nil {
		return nil, err
	}
	if p := o.Preconditions; p != nil {
		if p.UID != nil && *p.UID != UID(cur) {
			return nil, NewConflict("", "namespaces", name, fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", *p.UID, UID(cur)))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != ResourceVersion(cur) {
			return nil, NewConflict("", "namespaces", name, fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *p.ResourceVersion, ResourceVersion(cur)))
		}
	}
	uid := UID(cur)
	if str(meta(cur), "deletionTimestamp") == "" {
		w, err := reg.guaranteedUpdate(ctx, r, "", name, o.DryRun, false, nil, func(c Object) (Object, error) {
			if UID(c) != uid {
				return nil, NewConflict("", "namespaces", name, fmt.Sprintf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, UID(c)))
			}
			c = copyObject(c)
			m := meta(c)
			if str(m, "deletionTimestamp") == "" {
				m["deletionTimestamp"] = reg.timestamp()
			}
			st, _ := c["status"].(map[string]any)
			if st == nil {
				st = map[string]any{}
				c["status"] = st
			}
			st["phase"] = "Terminating"
			// shouldHaveOrphanFinalizer, shouldHaveDeleteDependentsFinalizer:
			// only what the options say changes the finalizers
			if o.OrphanDependents != nil || o.PropagationPolicy != "" {
				if changed, fs := gcFinalizers(c, o); changed {
					setFinalizers(c, fs)
				}
			}
			return c, nil
		})
		if err != nil {
			return nil, err
		}
		return w.Object, nil
	}
	if len(namespaceSpecFinalizers(cur)) != 0 {
		return cur, nil
	}
	return reg.deleteObject(ctx, r, "", name, o)
}

func namespaceSpecFinalizers(o Object) []any {
	l, _ := pathValue(o, "spec", "finalizers").([]any)
	return l
}

// Finalize is PUT .../namespaces/<name>/finalize: it writes only
// spec.finalizers (the namespace controller removes "kubernetes" there
// once the namespace is empty), and a terminating namespace left with no
// finalizer of either kind is deleted.
func (reg *Registry) Finalize(ctx context.Context, r *Resource, name string, obj Object, o WriteOptions) (Written, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return Written{}, err
	}
	m, _ := obj["metadata"].(map[string]any)
	if n := str(m, "name"); n != name {
		return Written{}, NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	clientRV, err := parseRV(str(m, "resourceVersion"))
	if err != nil {
		return Written{}, err
	}
	bodyUID := str(m, "uid")
	return reg.guaranteedUpdate(ctx, r, "", name, o.DryRun, false, nil, func(cur Object) (Object, error) {
		if err := reg.checkUpdatePreconditions(r, cur, name, bodyUID, clientRV); err != nil {
			return nil, err
		}
		nobj := copyObject(cur)
		spec, _ := nobj["spec"].(map[string]any)
		if spec == nil {
			spec = map[string]any{}
			nobj["spec"] = spec
		}
		if fs, ok := pathValue(obj, "spec", "finalizers").([]any); ok && len(fs) > 0 {
			spec["finalizers"] = fs
		} else {
			delete(spec, "finalizers")
		}
		if err := reg.fm.Update(r, cur, nobj, o.FieldManager, "finalize", reg.now()); err != nil {
			return nil, err
		}
		return nobj, nil
	})
}

// namespaceState says whether a namespace exists and whether it is
// terminating.
func (reg *Registry) namespaceState(ctx context.Context, ns string) (exists, terminating bool, err error) {
	kv, _, err := reg.get(ctx, "/registry/namespaces/"+ns, 0)
	if err != nil || kv == nil {
		return false, false, err
	}
	o, err := decodeKV(kv)
	if err != nil {
		return false, false, err
	}
	return true, pathString("status", "phase")(o) == "Terminating", nil
}
