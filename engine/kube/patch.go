package kube

import (
	"context"
	"errors"
	"fmt"

	"github.com/rvplay/rvplay/engine/kube/patch"
	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Patch types (the Content-Type of a PATCH decides).
const (
	JSONPatch      = "json"
	MergePatch     = "merge"
	StrategicPatch = "strategic"
	ApplyPatch     = "apply"
)

// SchemaPatcher is the Patcher of package patch.
type SchemaPatcher struct{}

func (SchemaPatcher) Patch(r *Resource, patchType string, original, p []byte) ([]byte, error) {
	var out []byte
	var err error
	switch patchType {
	case JSONPatch:
		out, err = patch.JSONPatch(original, p)
	case MergePatch:
		out, err = patch.MergePatch(original, p)
	case StrategicPatch:
		t := r.Schema()
		if r.Custom() {
			return nil, newStatusError(415, ReasonUnsupportedMediaType,
				"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml", nil)
		}
		if t == nil {
			return nil, NewUnsupportedMediaType()
		}
		out, err = patch.StrategicMerge(t, original, p)
	default:
		return nil, NewUnsupportedMediaType()
	}
	if err == nil {
		return out, nil
	}
	var pe *patch.Error
	if errors.As(err, &pe) {
		if pe.Code == 422 && pe.Message == patch.GenericInvalidMessage {
			return nil, NewGenericInvalid()
		}
		return nil, newStatusError(int32(pe.Code), pe.Reason, pe.Message, nil)
	}
	return nil, err
}

// PatchOptions are the options of a patch.
type PatchOptions struct {
	WriteOptions
	// Force takes over conflicting fields (apply only).
	Force *bool
	// FieldValidation "Strict" refuses a patch that leaves fields the type
	// does not declare (otherwise they are dropped).
	FieldValidation string
}

// Patch patches an object (sub "" or "status"). A resourceVersion the
// patch sets is a precondition. Apply creates a missing object; the bool
// reports a create.
func (reg *Registry) Patch(ctx context.Context, r *Resource, ns, name, sub, patchType string, body []byte, o PatchOptions) (Written, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return Written{}, err
	}
	if patchType == ApplyPatch {
		w, err := reg.apply(ctx, r, ns, name, sub, body, o)
		return reg.written(ctx, r, w, o.DryRun, err)
	}
	if o.Force != nil {
		return Written{}, NewInvalid("meta.k8s.io", "PatchOptions", "", []FieldError{{Type: CauseFieldValueForbidden, Field: "force", Detail: "may not be specified for non-apply patch"}})
	}
	w, err := reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, true, nil, func(cur Object) (Object, error) {
		patched, err := reg.patcher.Patch(r, patchType, r.Encode(cur), body)
		if err != nil {
			return nil, err
		}
		nobj, err := DecodeObject(patched)
		if err != nil {
			return nil, NewBadRequest(err.Error())
		}
		if o.FieldValidation == "Strict" && r.Schema() != nil {
			if unknown := schema.UnknownFields(r.Schema(), nobj); len(unknown) > 0 {
				return nil, NewBadRequest(schema.StrictDecodingError(unknown))
			}
		}
		return reg.preparePatched(ctx, r, cur, nobj, ns, name, sub, o.FieldManager, byPatch)
	})
	return reg.written(ctx, r, w, o.DryRun, err)
}

// preparePatched checks a patched object like an update body: identity
// unchanged, a resourceVersion it carries must be the current one.
func (reg *Registry) preparePatched(ctx context.Context, r *Resource, cur, nobj Object, ns, name, sub, manager string, by managedBy) (Object, error) {
	m := meta(nobj)
	if n := str(m, "name"); n != name {
		return nil, NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	if r.Namespaced {
		if bns := str(m, "namespace"); bns != "" && bns != ns {
			return nil, NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		m["namespace"] = ns
	}
	if k, _ := nobj["kind"].(string); k != "" && k != r.Kind {
		return nil, NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting to %s: unknown conversion", k, nobj["apiVersion"], r.Kind, r.Kind))
	}
	nobj["kind"], nobj["apiVersion"] = r.Kind, r.GroupVersion()
	r.PruneUnknown(nobj)
	rv, err := parseRV(str(m, "resourceVersion"))
	if err != nil {
		return nil, err
	}
	if rv != 0 && formatRV(rv) != ResourceVersion(cur) {
		return nil, NewConflict(r.Group, r.Resource, name, OptimisticLockErrorMsg)
	}
	if uid := str(m, "uid"); uid != "" && uid != UID(cur) {
		return nil, NewConflict(r.Group, r.Resource, name, fmt.Sprintf(
			"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
			r.Key(ns, name), uid, UID(cur)))
	}
	if r.Default != nil && sub == "" {
		r.Default(nobj)
	}
	return reg.prepareUpdate(ctx, r, cur, nobj, sub, manager, by)
}

func (reg *Registry) apply(ctx context.Context, r *Resource, ns, name, sub string, body []byte, o PatchOptions) (Written, error) {
	if o.FieldManager == "" {
		return Written{}, NewInvalid("meta.k8s.io", "PatchOptions", "", []FieldError{{Type: CauseFieldValueRequired, Field: "fieldManager", Detail: "is required for apply patch"}})
	}
	config, err := DecodeObject(body)
	if err != nil {
		return Written{}, NewBadRequest(err.Error())
	}
	if err := checkApply(config); err != nil {
		return Written{}, err
	}
	force := o.Force != nil && *o.Force
	create := func() (Written, error) {
		if sub != "" {
			return Written{}, NewNotFound(r.Group, r.Resource, name)
		}
		out, err := reg.applier.Apply(r, nil, config, o.FieldManager, force, reg.now())
		if err != nil {
			return Written{}, err
		}
		m := meta(out)
		if n := str(m, "name"); n != name {
			return Written{}, NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
		}
		delete(m, "resourceVersion")
		wo := o.WriteOptions
		wo.keepManagedFields = true // the applier's
		return reg.create(ctx, r, ns, out, wo)
	}
	return reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, false, create, func(cur Object) (Object, error) {
		if fields, _, _ := measure(cur); fields > MaxTrackedFields {
			return nil, NewTooManyFields(fields)
		}
		live := copyObject(cur)
		nobj, err := reg.applier.Apply(r, live, config, o.FieldManager, force, reg.now())
		if err != nil {
			return nil, err
		}
		return reg.preparePatched(ctx, r, cur, nobj, ns, name, sub, "", byApplier)
	})
}

// scaleResource describes autoscaling/v1 Scale for patching.
var scaleResource = &Resource{Group: "autoscaling", Version: "v1", Kind: "Scale", Resource: "scale"}
