package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// The work of apiextensions-apiserver's controllers, done as soon as a
// definition is written rather than by informers a moment later: the
// naming controller (acceptedNames and NamesAccepted), the establishing
// controller (Established) and the finalizer that removes a deleted
// definition's custom resources. Each step is its own write of the
// definition's status, as kube-apiserver's are, so a learner sees the
// same succession of resourceVersions.

// written runs what a write sets off: after a definition's, its
// controllers.
func (reg *Registry) written(ctx context.Context, r *Resource, w Written, dryRun bool, err error) (Written, error) {
	if err != nil || dryRun || r != definitions {
		return w, err
	}
	return w, reg.definitionWritten(ctx, groupOf(w.Object))
}

// definitionWritten runs the naming and establishing controllers over
// the definitions of group after a write.
func (reg *Registry) definitionWritten(ctx context.Context, group string) error {
	defs, err := reg.definitionObjects(ctx)
	if err != nil {
		return err
	}
	for _, crd := range defs {
		if groupOf(crd) != group || str(meta(crd), "deletionTimestamp") != "" {
			continue
		}
		if err := reg.nameDefinition(ctx, Name(crd)); err != nil {
			return err
		}
		if err := reg.establishDefinition(ctx, Name(crd)); err != nil {
			return err
		}
	}
	return nil
}

func groupOf(crd Object) string {
	spec, _ := crd["spec"].(map[string]any)
	return str(spec, "group")
}

// updateDefinitionStatus writes a definition's status as the controllers
// do (UpdateStatus, as kube-apiserver's own manager); change returns
// false when there is nothing to write.
func (reg *Registry) updateDefinitionStatus(ctx context.Context, name string, change func(crd Object) (bool, error)) error {
	_, err := reg.guaranteedUpdate(ctx, definitions, "", name, false, false, nil, func(cur Object) (Object, error) {
		nobj := copyObject(cur)
		ok, err := change(nobj)
		if err != nil {
			return nil, err
		}
		if !ok {
			return cur, nil
		}
		out, err := reg.prepareUpdate(ctx, definitions, cur, nobj, "status", definitionManager, byUpdate)
		if err != nil {
			return nil, err
		}
		// a definition's status update may change its finalizers (the
		// finalizer controller removes its own so)
		if f, ok := meta(nobj)["finalizers"]; ok {
			meta(out)["finalizers"] = f
		} else {
			delete(meta(out), "finalizers")
		}
		return out, nil
	})
	var se *StatusError
	if errors.As(err, &se) && se.Status.Reason == ReasonNotFound {
		return nil // deleted meanwhile
	}
	return err
}

// nameDefinition is the naming controller's sync of one definition.
func (reg *Registry) nameDefinition(ctx context.Context, name string) error {
	defs, err := reg.definitionObjects(ctx)
	if err != nil {
		return err
	}
	return reg.updateDefinitionStatus(ctx, name, func(crd Object) (bool, error) {
		if str(meta(crd), "deletionTimestamp") != "" {
			return false, nil
		}
		names, cond := acceptedNames(crd, defs)
		st, _ := crd["status"].(map[string]any)
		if st == nil {
			st = map[string]any{}
			crd["status"] = st
		}
		old := conditionOf(crd, "NamesAccepted")
		if old != nil && str(old, "status") == cond[0] && str(old, "reason") == cond[1] && str(old, "message") == cond[2] &&
			schema.JSONEqual(st["acceptedNames"], names) {
			return false, nil
		}
		st["acceptedNames"] = names
		now := reg.timestamp()
		setCondition(crd, "NamesAccepted", cond[0], cond[1], cond[2], now)
		switch {
		case isEstablished(crd):
		case cond[0] == "True":
			setCondition(crd, "Established", "False", "Installing", "the initial names have been accepted", now)
		default:
			setCondition(crd, "Established", "False", "NotAccepted", "not all names are accepted", now)
		}
		return true, nil
	})
}

// establishDefinition is the establishing controller: a definition whose
// names are accepted is served.
func (reg *Registry) establishDefinition(ctx context.Context, name string) error {
	return reg.updateDefinitionStatus(ctx, name, func(crd Object) (bool, error) {
		c := conditionOf(crd, "NamesAccepted")
		if c == nil || str(c, "status") != "True" || isEstablished(crd) {
			return false, nil
		}
		setCondition(crd, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted", reg.timestamp())
		return true, nil
	})
}

// deleteDefinition is apiextensions' delete of a definition: the first
// delete marks it (deletionTimestamp, the cleanup finalizer, a
// Terminating condition) and answers with it; the finalizer then deletes
// its custom resources and the definition goes.
func (reg *Registry) deleteDefinition(ctx context.Context, name string, o DeleteOptions) (any, error) {
	w, err := reg.guaranteedUpdate(ctx, definitions, "", name, o.DryRun, false, nil, func(cur Object) (Object, error) {
		if p := o.Preconditions; p != nil {
			if p.UID != nil && *p.UID != UID(cur) {
				return nil, NewConflict(definitions.Group, definitions.Kind, name, fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, UID(cur)))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != ResourceVersion(cur) {
				return nil, NewConflict(definitions.Group, definitions.Kind, name, fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, ResourceVersion(cur)))
			}
		}
		nobj := copyObject(cur)
		m := meta(nobj)
		if str(m, "deletionTimestamp") == "" {
			m["deletionTimestamp"] = reg.timestamp()
		}
		if !slices.Contains(stringList(m["finalizers"]), cleanupFinalizer) {
			m["finalizers"] = append(finalizers(nobj), cleanupFinalizer)
		}
		setCondition(nobj, "Terminating", "True", "InstanceDeletionPending", "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon", reg.timestamp())
		return nobj, nil
	})
	if err != nil || o.DryRun {
		return w.Object, err
	}
	if err := reg.finalizeDefinition(ctx, w.Object); err != nil {
		return nil, err
	}
	return w.Object, reg.definitionWritten(ctx, groupOf(w.Object))
}

// finalizeDefinition is the finalizer controller: every custom resource
// of the definition is deleted (those that finalizers keep hold the
// definition in Terminating), then the finalizer goes and with it the
// definition.
func (reg *Registry) finalizeDefinition(ctx context.Context, crd Object) error {
	name := Name(crd)
	if !isEstablished(crd) {
		return reg.updateDefinitionStatus(ctx, name, func(c Object) (bool, error) {
			setCondition(c, "Terminating", "False", "NeverEstablished", "resource was never established", reg.timestamp())
			removeFinalizer(c, cleanupFinalizer)
			return true, nil
		})
	}
	if err := reg.updateDefinitionStatus(ctx, name, func(c Object) (bool, error) {
		setCondition(c, "Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", reg.timestamp())
		return true, nil
	}); err != nil {
		return err
	}
	r := newCustomResource(crd, map[string]any{"name": storageVersion(crd)})
	l, err := reg.List(ctx, r, "", ListOptions{})
	if err != nil {
		return err
	}
	left := 0
	for _, it := range l.Objects() {
		d, err := reg.Delete(ctx, r, Namespace(it), Name(it), DeleteOptions{})
		var se *StatusError
		if errors.As(err, &se) && se.Status.Reason == ReasonNotFound {
			continue
		}
		if err != nil {
			return err
		}
		if obj, ok := d.(Object); ok && str(meta(obj), "deletionTimestamp") != "" {
			left++
		}
	}
	return reg.updateDefinitionStatus(ctx, name, func(c Object) (bool, error) {
		if left > 0 {
			setCondition(c, "Terminating", "True", "InstanceDeletionCheck",
				fmt.Sprintf("could not confirm zero CustomResources remaining: %d left, held by their finalizers", left), reg.timestamp())
			return true, nil
		}
		setCondition(c, "Terminating", "False", "InstanceDeletionCompleted", "removed all instances", reg.timestamp())
		removeFinalizer(c, cleanupFinalizer)
		return true, nil
	})
}

func removeFinalizer(o Object, f string) {
	m := meta(o)
	var kept []any
	for _, e := range finalizers(o) {
		if e != f {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		delete(m, "finalizers")
	} else {
		m["finalizers"] = kept
	}
}
