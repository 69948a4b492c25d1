package kube

import (
	"context"
	"errors"
	"fmt"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// GetScale reads the scale subresource.
func (reg *Registry) GetScale(ctx context.Context, r *Resource, ns, name string) (Object, error) {
	o, err := reg.Get(ctx, r, ns, name, "")
	if err != nil {
		return nil, err
	}
	return scaleOf(r, o), nil
}

// scaleOf is the Scale of o: a custom resource's replicas and selector
// are where its definition's scale subresource says.
func scaleOf(r *Resource, o Object) Object {
	m := meta(o)
	sm := map[string]any{}
	for _, k := range []string{"name", "namespace", "uid", "resourceVersion", "creationTimestamp"} {
		if v, ok := m[k]; ok {
			sm[k] = v
		}
	}
	replicas := pathValue(o, "spec", "replicas")
	statusReplicas := pathValue(o, "status", "replicas")
	var selector string
	if sc := r.customScale(); sc != nil {
		replicas, _ = nestedField(o, sc.specReplicas)
		statusReplicas, _ = nestedField(o, sc.statusReplicas)
		if sc.labelSelector != "" {
			v, _ := nestedField(o, sc.labelSelector)
			selector, _ = v.(string)
		}
	} else if sel, ok := pathValue(o, "spec", "selector").(map[string]any); ok {
		if ls, err := selectorFromLabelSelector(sel); err == nil {
			selector = ls.String()
		}
	}
	if replicas == nil {
		replicas = jsonInt(0)
	}
	if statusReplicas == nil {
		statusReplicas = jsonInt(0)
	}
	st := map[string]any{"replicas": statusReplicas}
	if selector != "" {
		st["selector"] = selector
	}
	return Object{"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": sm,
		"spec": map[string]any{"replicas": replicas}, "status": st}
}

// UpdateScale writes spec.replicas through the scale subresource.
func (reg *Registry) UpdateScale(ctx context.Context, r *Resource, ns, name string, scale Object, o WriteOptions) (Object, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	m := meta(scale)
	if n := str(m, "name"); n != name {
		return nil, NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	clientRV, err := parseRV(str(m, "resourceVersion"))
	if err != nil {
		return nil, err
	}
	replicas, ok := numberInt(pathValue(scale, "spec", "replicas"))
	if !ok {
		replicas = 0
	}
	if replicas < 0 {
		return nil, NewInvalid("autoscaling", "Scale", name, []FieldError{{Type: CauseFieldValueInvalid,
			Field: "spec.replicas", Value: jsonInt(replicas), Detail: "must be greater than or equal to 0"}})
	}
	w, err := reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, false, nil, func(cur Object) (Object, error) {
		if clientRV != 0 && formatRV(clientRV) != ResourceVersion(cur) {
			return nil, NewConflict(r.Group, r.Resource, name, OptimisticLockErrorMsg)
		}
		nobj := copyObject(cur)
		if sc := r.customScale(); sc != nil {
			// the custom resource's own update, validated by its schema
			setNestedField(nobj, sc.specReplicas, jsonInt(replicas))
			if contentChanged(cur, nobj, r.Status) {
				g, _ := numberInt(meta(cur)["generation"])
				meta(nobj)["generation"] = jsonInt(g + 1)
			}
			errs := r.Validate(nobj)
			if r.ValidateRules != nil {
				errs = r.ValidateRules(ctx, nobj, cur, errs)
			}
			if len(errs) > 0 {
				return nil, NewInvalid(r.Group, r.Kind, name, errs)
			}
		} else {
			spec, _ := nobj["spec"].(map[string]any)
			if spec == nil {
				spec = map[string]any{}
				nobj["spec"] = spec
			}
			spec["replicas"] = jsonInt(replicas)
			if !schema.JSONEqual(cur["spec"], nobj["spec"]) {
				g, _ := numberInt(meta(cur)["generation"])
				meta(nobj)["generation"] = jsonInt(g + 1)
			}
		}
		if err := reg.fm.Update(r, cur, nobj, o.FieldManager, "scale", reg.now()); err != nil {
			return nil, err
		}
		return nobj, nil
	})
	if err != nil {
		return nil, err
	}
	return scaleOf(r, w.Object), nil
}

// PatchScale patches the scale subresource.
func (reg *Registry) PatchScale(ctx context.Context, r *Resource, ns, name, patchType string, body []byte, o PatchOptions) (Object, error) {
	if patchType == ApplyPatch {
		return nil, NewUnsupportedMediaType()
	}
	for attempt := 0; ; attempt++ {
		cur, err := reg.GetScale(ctx, r, ns, name)
		if err != nil {
			return nil, err
		}
		patched, err := reg.patcher.Patch(scaleResource, patchType, scaleResource.Encode(cur), body)
		if err != nil {
			return nil, err
		}
		sc, err := DecodeObject(patched)
		if err != nil {
			return nil, NewBadRequest(err.Error())
		}
		out, err := reg.UpdateScale(ctx, r, ns, name, sc, o.WriteOptions)
		var se *StatusError
		if attempt < 5 && errors.As(err, &se) && se.Status.Reason == ReasonConflict && ResourceVersion(sc) == ResourceVersion(cur) {
			continue // a concurrent write, not the patch's precondition
		}
		return out, err
	}
}
