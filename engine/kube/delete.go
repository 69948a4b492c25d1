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

// Preconditions are DeleteOptions.preconditions.
type Preconditions struct {
	UID             *string `json:"uid,omitempty"`
	ResourceVersion *string `json:"resourceVersion,omitempty"`
}

// DeleteOptions are the options of delete.
type DeleteOptions struct {
	Preconditions      *Preconditions
	GracePeriodSeconds *int64
	PropagationPolicy  string
	DryRun             bool
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
	key := r.Key(ns, name)
	for {
		kv, _, err := reg.get(ctx, key, 0)
		if err != nil {
			return nil, err
		}
		if kv == nil {
			return nil, NewNotFound(r.Group, r.Resource, name)
		}
		cur, err := decodeKV(kv)
		if err != nil {
			return nil, err
		}
		if p := o.Preconditions; p != nil {
			// rest.BeforeDelete names the Kind, not the resource.
			if p.UID != nil && *p.UID != UID(cur) {
				return nil, NewConflict(r.Group, r.Kind, name, fmt.Sprintf("the UID in the precondition (%s) does not match the UID in record (%s). The object might have been deleted and then recreated", *p.UID, UID(cur)))
			}
			if p.ResourceVersion != nil && *p.ResourceVersion != ResourceVersion(cur) {
				return nil, NewConflict(r.Group, r.Kind, name, fmt.Sprintf("the ResourceVersion in the precondition (%s) does not match the ResourceVersion in record (%s). The object might have been modified", *p.ResourceVersion, ResourceVersion(cur)))
			}
		}
		if len(finalizers(cur)) > 0 {
			// graceful: mark for deletion, the last finalizer removal deletes
			w, err := reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, false, nil, func(c Object) (Object, error) {
				if ResourceVersion(c) != ResourceVersion(cur) {
					return nil, errRetryDelete
				}
				c = copyObject(c)
				cm := meta(c)
				if str(cm, "deletionTimestamp") == "" {
					cm["deletionTimestamp"] = reg.timestamp()
					cm["deletionGracePeriodSeconds"] = jsonInt(0)
					if g, ok := numberInt(cm["generation"]); ok && g > 0 {
						cm["generation"] = jsonInt(g + 1)
					}
				}
				return c, nil
			})
			if err == errRetryDelete {
				continue
			}
			if err != nil {
				return nil, err
			}
			return w.Object, nil
		}
		if o.DryRun {
			return reg.deleteAnswer(r, cur), nil
		}
		var ops []mvcc.RequestOp
		ops = append(ops, mvcc.RequestOp{DeleteRange: &mvcc.DeleteRangeRequest{Key: []byte(key)}})
		if r.Resource == "namespaces" {
			// the namespace controller's work, done at once: everything in
			// the namespace goes with it, custom resources too.
			for _, rr := range Resources {
				if rr.Namespaced {
					p := rr.Prefix(name)
					ops = append(ops, mvcc.RequestOp{DeleteRange: &mvcc.DeleteRangeRequest{Key: []byte(p), RangeEnd: prefixEnd([]byte(p))}})
				}
			}
			if customServed {
				if ops, err = reg.customResourcesIn(ctx, name, ops); err != nil {
					return nil, err
				}
			}
		}
		resp, err := reg.kv.Txn(ctx, &mvcc.TxnRequest{
			Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Result: mvcc.CompareEqual, Key: []byte(key), ModRevision: kv.ModRevision}},
			Success: ops,
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

var errRetryDelete = errors.New("retry delete")

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
		d, err := reg.Delete(ctx, r, Namespace(it), Name(it), DeleteOptions{DryRun: o.DryRun, GracePeriodSeconds: o.GracePeriodSeconds})
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
