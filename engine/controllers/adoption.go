package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rvplay/rvplay/engine/client"
)

// claim is kube's ControllerRefManager: of objs (those the owner controls
// and the orphans), the ones the owner keeps. It adopts the orphans its
// selector matches (unless either side is being deleted), making itself
// their controller, and releases the objects it controls that its
// selector no longer matches; both with a strategic merge patch of
// ownerReferences that names the object's UID, so a recreated object of
// the same name is not touched.
func claim(ctx context.Context, c *client.Client, res, ownerRes client.Resource, owner client.Object, apiVersion, kind string,
	sel labelSelector, objs []client.Object) ([]client.Object, error) {
	var claimed []client.Object
	var errs []error
	checked := false
	var canAdopt error
	rc := c.Resource(res).Namespace(owner.Namespace())
	for _, o := range objs {
		if ref := controllerOf(o); ref != nil {
			if ref.UID != owner.UID() {
				continue
			}
			if sel.matches(labelsOf(o)) {
				claimed = append(claimed, o)
				continue
			}
			if beingDeleted(owner) {
				continue
			}
			if err := patchOwnerRefs(ctx, rc, o, releasePatch(o.UID(), owner.UID())); err != nil && !client.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		if beingDeleted(owner) || !sel.matches(labelsOf(o)) || beingDeleted(o) {
			continue
		}
		if !checked {
			checked, canAdopt = true, recheckOwner(ctx, c, ownerRes, kind, owner)
		}
		if canAdopt != nil {
			errs = append(errs, canAdopt)
			continue
		}
		ref := controllerRef(owner, apiVersion, kind).json()
		p := map[string]any{"metadata": map[string]any{"ownerReferences": []any{ref}, "uid": o.UID()}}
		if err := patchOwnerRefs(ctx, rc, o, p); err != nil {
			if !client.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue
		}
		claimed = append(claimed, o)
	}
	return claimed, errors.Join(errs...)
}

// releasePatch is GenerateDeleteOwnerRefStrategicMergeBytes.
func releasePatch(dependentUID string, ownerUIDs ...string) map[string]any {
	refs := make([]any, len(ownerUIDs))
	for i, u := range ownerUIDs {
		refs[i] = map[string]any{"$patch": "delete", "uid": u}
	}
	return map[string]any{"metadata": map[string]any{"ownerReferences": refs, "uid": dependentUID}}
}

func patchOwnerRefs(ctx context.Context, rc client.ResourceClient, o client.Object, p map[string]any) error {
	b, _ := json.Marshal(p)
	_, err := rc.Patch(ctx, o.Name(), client.StrategicMergePatch, b, client.PatchOptions{})
	return err
}

// recheckOwner is RecheckDeletionTimestamp: before adopting, the owner is
// read from the API, not the cache, to be sure it is still the same one
// and not being deleted.
func recheckOwner(ctx context.Context, c *client.Client, res client.Resource, kind string, owner client.Object) error {
	fresh, err := c.Resource(res).Namespace(owner.Namespace()).Get(ctx, owner.Name(), client.GetOptions{})
	if err != nil {
		return err
	}
	if fresh.UID() != owner.UID() {
		return fmt.Errorf("original %s %s/%s is gone: got uid %s, wanted %s", kind, owner.Namespace(), owner.Name(), fresh.UID(), owner.UID())
	}
	if beingDeleted(fresh) {
		return fmt.Errorf("%s %s/%s has just been deleted at %s", kind, owner.Namespace(), owner.Name(), stringAt(fresh, "metadata", "deletionTimestamp"))
	}
	return nil
}
