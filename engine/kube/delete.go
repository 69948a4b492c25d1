package kube

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rvplay/rvplay/engine/mvcc"
)

func finalizers(o Object) []any {
	l, _ := meta(o)["finalizers"].([]any)
	return l
}

// The garbage collector's finalizers (metav1.FinalizerOrphanDependents,
// FinalizerDeleteDependents): an object deleted with one of them waits
// until the garbage collector has orphaned, or deleted, its dependents.
const (
	FinalizerOrphanDependents = "orphan"
	FinalizerDeleteDependents = "foregroundDeletion"
)

// The propagation policies of a delete (metav1.DeletionPropagation).
const (
	DeletePropagationOrphan     = "Orphan"
	DeletePropagationBackground = "Background"
	DeletePropagationForeground = "Foreground"
)

// Preconditions are DeleteOptions.preconditions.
type Preconditions struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// DeleteOptions are the options of delete.
type DeleteOptions struct {
	Preconditions      *Preconditions
	GracePeriodSeconds *int64
	// PropagationPolicy is "", Orphan, Background or Foreground.
	PropagationPolicy string
	// OrphanDependents is the deprecated form of the policy (true:
	// Orphan, false: Foreground); never set together with it.
	OrphanDependents *bool
	DryRun           bool
}

// DeleteOptionsRequest is a DeleteOptions as a client sends it: the JSON
// body of a delete, or its query parameters.
type DeleteOptionsRequest struct {
	Kind               string         `json:"kind"`
	APIVersion         string         `json:"apiVersion"`
	GracePeriodSeconds *int64         `json:"gracePeriodSeconds"`
	Preconditions      *Preconditions `json:"preconditions"`
	PropagationPolicy  *string        `json:"propagationPolicy"`
	OrphanDependents   *bool          `json:"orphanDependents"`
	DryRun             []string       `json:"dryRun"`
}

// DecodeDeleteOptions reads the JSON body of a delete (whitespace only:
// none, the default options) as kube-apiserver does.
func DecodeDeleteOptions(body []byte) (DeleteOptions, error) {
	var rq DeleteOptionsRequest
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &rq); err != nil {
			return DeleteOptions{}, NewUnrecognizedBody("DeleteOptions", err, body)
		}
	}
	return rq.Options()
}

// Options checks what the client sent (a propagationPolicy kube knows;
// dryRun "All" is a dry run) and returns the options of the delete.
func (rq DeleteOptionsRequest) Options() (DeleteOptions, error) {
	var do DeleteOptions
	if rq.OrphanDependents != nil && rq.PropagationPolicy != nil {
		return do, NewInvalid("meta.k8s.io", "DeleteOptions", "", []FieldError{{
			Type: CauseFieldValueInvalid, Field: "propagationPolicy", Value: *rq.PropagationPolicy,
			Detail: "orphanDependents and deletionPropagation cannot be both set"}})
	}
	do.OrphanDependents = rq.OrphanDependents
	if p := rq.PropagationPolicy; p != nil {
		switch *p {
		case "Foreground", "Background", "Orphan":
			do.PropagationPolicy = *p
		default:
			return do, NewInvalid("meta.k8s.io", "DeleteOptions", "", []FieldError{{
				Type: CauseFieldValueNotSupported, Field: "propagationPolicy", Value: *p,
				Detail: `supported values: "Foreground", "Background", "Orphan", "nil"`}})
		}
	}
	do.Preconditions = rq.Preconditions
	do.GracePeriodSeconds = rq.GracePeriodSeconds
	for _, v := range rq.DryRun {
		if v == "All" {
			do.DryRun = true
		}
	}
	return do, nil
}

// Delete removes an object. The answer is the deleted object (types that
// return it, or an object kept by finalizers) or a success *Status.
//
// What happens to the object's dependents is the garbage collector's
// business, which the delete hands over through finalizers, as
// kube-apiserver's generic store does: Orphan adds "orphan" and Foreground
// "foregroundDeletion" (so the object stays, with a deletionTimestamp,
// until the garbage collector removes the finalizer), Background deletes
// at once and leaves the collector to find the dependents whose owner is
// gone. Without a policy, a finalizer the object already has decides, else
// Background, every served type's default.
func (reg *Registry) Delete(ctx context.Context, r *Resource, ns, name string, o DeleteOptions) (any, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	if err := admitNamespaceDelete(r, name); err != nil {
		return nil, err
	}
	if r == definitions {
		return reg.deleteDefinition(ctx, name, o)
	}
	if isNamespaces(r) {
		return reg.deleteNamespace(ctx, r, name, o)
	}
	return reg.deleteObject(ctx, r, ns, name, o)
}

// current reads the object at key as it is now: NotFound when it is not.
func (reg *Registry) current(ctx context.Context, r *Resource, key, name string) (*mvcc.KeyValue, Object, error) {
	kv, _, err := reg.get(ctx, key, 0)
	if err != nil {
		return nil, nil, err
	}
	if kv == nil {
		return nil, nil, NewNotFound(r.Group, r.Resource, name)
	}
	cur, err := r.decodeStored(kv)
	return kv, cur, err
}

// deleteObject is the generic store's Delete.
func (reg *Registry) deleteObject(ctx context.Context, r *Resource, ns, name string, o DeleteOptions) (any, error) {
	key := r.Key(ns, name)
	for {
		kv, cur, err := reg.current(ctx, r, key, name)
		if err != nil {
			return nil, err
		}
		if err := checkDeletePreconditions(r, cur, name, o.Preconditions); err != nil {
			return nil, err
		}
		changed, _ := gcFinalizers(cur, o)
		if len(finalizers(cur)) > 0 || changed {
			// graceful: mark for deletion, the last finalizer removal deletes
			w, err := reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, false, nil, func(c Object) (Object, error) {
				if ResourceVersion(c) != ResourceVersion(cur) {
					return nil, errRetryDelete
				}
				c = copyObject(c)
				if changed, fs := gcFinalizers(c, o); changed {
					setFinalizers(c, fs)
				}
				if len(finalizers(c)) == 0 {
					return nil, errDeleteNow
				}
				reg.markAsDeleting(c)
				return c, nil
			})
			if err == errRetryDelete {
				continue
			}
			if err != errDeleteNow {
				if err != nil {
					return nil, err
				}
				return w.Object, nil
			}
		}
		if o.DryRun {
			return reg.deleteAnswer(r, cur), nil
		}
		resp, err := reg.kv.Txn(ctx, &mvcc.TxnRequest{
			Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Result: mvcc.CompareEqual, Key: []byte(key), ModRevision: kv.ModRevision}},
			Success: []mvcc.RequestOp{{DeleteRange: &mvcc.DeleteRangeRequest{Key: []byte(key)}}},
		})
		if err != nil {
			return nil, err
		}
		if !resp.Succeeded {
			continue
		}
		meta(cur)["resourceVersion"] = formatRV(resp.Header.Revision)
		reg.wrote(r, resp.Header.Revision)
		return reg.deleteAnswer(r, cur), nil
	}
}

var (
	errRetryDelete = errors.New("retry delete")
	errDeleteNow   = errors.New("delete now")
)

// checkDeletePreconditions is rest.BeforeDelete's check, which names the
// Kind, not the resource.
func checkDeletePreconditions(r *Resource, cur Object, name string, p *Preconditions) error {
	if p == nil {
		return nil
	}
	if p.UID != nil && *p.UID != UID(cur) {
		return NewConflict(r.Group, r.Kind, name, fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, UID(cur)))
	}
	if p.ResourceVersion != nil && *p.ResourceVersion != ResourceVersion(cur) {
		return NewConflict(r.Group, r.Kind, name, fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, ResourceVersion(cur)))
	}
	return nil
}

// gcFinalizers is deletionFinalizersForGarbageCollection: the object's
// finalizers with "orphan" and "foregroundDeletion" as the options (or,
// without a policy, the object's own finalizers) say, and whether that
// changes them.
func gcFinalizers(o Object, opts DeleteOptions) (bool, []any) {
	orphan, foreground := false, false
	switch {
	case opts.OrphanDependents != nil:
		orphan, foreground = *opts.OrphanDependents, false
	case opts.PropagationPolicy != "":
		orphan = opts.PropagationPolicy == DeletePropagationOrphan
		foreground = opts.PropagationPolicy == DeletePropagationForeground
	default:
		for _, f := range finalizers(o) {
			switch f {
			case FinalizerOrphanDependents:
				orphan = true
			case FinalizerDeleteDependents:
				foreground = true
			}
			if orphan || foreground {
				break
			}
		}
	}
	old := finalizers(o)
	out := make([]any, 0, len(old)+1)
	for _, f := range old {
		if f != FinalizerOrphanDependents && f != FinalizerDeleteDependents {
			out = append(out, f)
		}
	}
	if orphan {
		out = append(out, FinalizerOrphanDependents)
	}
	if foreground {
		out = append(out, FinalizerDeleteDependents)
	}
	if sameStringSet(old, out) {
		return false, old
	}
	return true, out
}

func sameStringSet(a, b []any) bool {
	in := func(l []any, s any) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, x := range a {
		if !in(b, x) {
			return false
		}
	}
	for _, x := range b {
		if !in(a, x) {
			return false
		}
	}
	return true
}

func setFinalizers(o Object, fs []any) {
	if len(fs) == 0 {
		delete(meta(o), "finalizers")
		return
	}
	meta(o)["finalizers"] = fs
}

// markAsDeleting is the generic store's: deletionTimestamp now (unless an
// earlier one is set), no grace period, and a new generation the first
// time.
func (reg *Registry) markAsDeleting(o Object) {
	m := meta(o)
	if str(m, "deletionTimestamp") == "" {
		if g, ok := numberInt(m["generation"]); ok && g > 0 {
			m["generation"] = jsonInt(g + 1)
		}
		m["deletionTimestamp"] = reg.timestamp()
	}
	m["deletionGracePeriodSeconds"] = jsonInt(0)
}

func (reg *Registry) deleteAnswer(r *Resource, cur Object) any {
	if r.ReturnDeletedObject {
		return cur
	}
	return SuccessStatus(r.Group, r.Resource, Name(cur), UID(cur))
}

// DeleteCollection deletes every object the list options select and
// answers with the list of deleted objects.
func (reg *Registry) DeleteCollection(ctx context.Context, r *Resource, ns string, lo ListOptions, o DeleteOptions) (*List, error) {
	l, err := reg.List(ctx, r, ns, lo)
	if err != nil {
		return nil, err
	}
	out := &List{Kind: l.Kind, APIVersion: l.APIVersion, Resource: r, Items: []Object{}}
	for _, it := range l.Objects() {
		d, err := reg.Delete(ctx, r, Namespace(it), Name(it), DeleteOptions{DryRun: o.DryRun, GracePeriodSeconds: o.GracePeriodSeconds,
			PropagationPolicy: o.PropagationPolicy, OrphanDependents: o.OrphanDependents})
		if err != nil {
			var se *StatusError
			if errors.As(err, &se) && se.Status.Reason == ReasonNotFound {
				continue
			}
			return nil, err
		}
		if obj, ok := d.(Object); ok {
			out.Items = append(out.Items, obj)
		} else {
			out.Items = append(out.Items, it)
		}
	}
	out.Metadata.ResourceVersion = formatRV(reg.kv.Rev())
	return out, nil
}
