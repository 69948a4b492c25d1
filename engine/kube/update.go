package kube

import (
	"bytes"
	"context"
	"fmt"

	"github.com/rvplay/rvplay/engine/kube/schema"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// WriteOptions are the options of create, update and patch.
type WriteOptions struct {
	// FieldManager names the writer in managedFields (kubeapi fills it
	// from ?fieldManager or the User-Agent).
	FieldManager string
	// DryRun validates without storing.
	DryRun bool

	// keepManagedFields: the object's managedFields were computed by
	// server-side apply.
	keepManagedFields bool
}

// Written is what a create, update or patch answers.
type Written struct {
	// Object is the object as stored (as it would be, on a dry run).
	Object Object
	// JSON is the answer's JSON when the stored bytes make it (the bytes
	// with their resourceVersion spliced in), which saves encoding the
	// object again; nil when it must be encoded (EncodeObject).
	JSON []byte
	// Created reports that an apply created the object.
	Created bool
}

// stored is the answer of a write of r that stored data at rev.
func stored(r *Resource, obj Object, data []byte, rev int64) Written {
	w := Written{Object: obj}
	if r.conv != nil {
		return w // data is the stored version's
	}
	if b, ok := spliceRV(data, formatRV(rev), false); ok {
		w.JSON = b
	}
	return w
}

// guaranteedUpdate is etcd3's GuaranteedUpdate: read, transform, write
// with a mod_revision compare, and retry on a concurrent write. A
// transform result identical to what is stored is a no-op (no write, same
// resourceVersion). An object left with a deletionTimestamp and no
// finalizers is deleted.
//
// A put above etcd's request limit fails as etcd fails it; with shed (a
// non-apply patch) it is tried once more without managedFields, as
// kube-apiserver does.
func (reg *Registry) guaranteedUpdate(ctx context.Context, r *Resource, ns, name string, dryRun, shed bool,
	notFound func() (Written, error), transform func(cur Object) (Object, error)) (Written, error) {
	key := r.Key(ns, name)
	for {
		kv, _, err := reg.get(ctx, key, 0)
		if err != nil {
			return Written{}, err
		}
		if kv == nil {
			if notFound != nil {
				w, err := notFound()
				w.Created = err == nil
				return w, err
			}
			return Written{}, NewNotFound(r.Group, r.Resource, name)
		}
		cur, err := r.decodeStored(kv)
		if err != nil {
			return Written{}, err
		}
		// transform must not modify cur (it is the answer of a no-op)
		nobj, err := transform(cur)
		if err != nil {
			return Written{}, err
		}
		data := storageBytes(r, nobj)
		if bytes.Equal(data, kv.Value) {
			return stored(r, cur, kv.Value, kv.ModRevision), nil
		}
		if dryRun {
			return Written{Object: nobj}, nil
		}
		finalized := str(meta(nobj), "deletionTimestamp") != "" && len(finalizers(nobj)) == 0 &&
			(!isNamespaces(r) || len(namespaceSpecFinalizers(nobj)) == 0)
		if !finalized {
			if err := checkEtcdRequest(key, data); err != nil {
				m := meta(nobj)
				if _, had := m["managedFields"]; !had || !shed {
					return Written{}, err
				}
				delete(m, "managedFields")
				if data = storageBytes(r, nobj); checkEtcdRequest(key, data) != nil {
					return Written{}, err
				}
			}
		}
		var op mvcc.RequestOp
		if finalized {
			op = mvcc.RequestOp{DeleteRange: &mvcc.DeleteRangeRequest{Key: []byte(key)}}
		} else {
			lease, err := reg.lease(ctx, r)
			if err != nil {
				return Written{}, quotaExceeded(r, name, err)
			}
			op = mvcc.RequestOp{Put: &mvcc.PutRequest{Key: []byte(key), Value: data, Lease: lease}}
		}
		resp, err := reg.kv.Txn(ctx, &mvcc.TxnRequest{
			Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Result: mvcc.CompareEqual, Key: []byte(key), ModRevision: kv.ModRevision}},
			Success: []mvcc.RequestOp{op},
		})
		if err != nil {
			return Written{}, quotaExceeded(r, name, err)
		}
		if !resp.Succeeded {
			continue
		}
		meta(nobj)["resourceVersion"] = formatRV(resp.Header.Revision)
		reg.wrote(r, resp.Header.Revision)
		if finalized {
			return Written{Object: nobj}, nil
		}
		return stored(r, nobj, data, resp.Header.Revision), nil
	}
}

// Update replaces an object (PUT), on the main endpoint (sub "") or the
// status subresource (sub "status").
func (reg *Registry) Update(ctx context.Context, r *Resource, ns, name, sub string, obj Object, o WriteOptions) (Written, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return Written{}, err
	}
	// obj is the caller's: it is only read here, and each attempt of the
	// transform below works on its own copy.
	m, _ := obj["metadata"].(map[string]any)
	if n := str(m, "name"); n != name {
		return Written{}, NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
	}
	if r.Namespaced {
		if bns := str(m, "namespace"); bns != "" && bns != ns {
			return Written{}, NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
	}
	clientRV, err := parseRV(str(m, "resourceVersion"))
	if err != nil {
		return Written{}, err
	}
	bodyUID := str(m, "uid")
	w, err := reg.guaranteedUpdate(ctx, r, ns, name, o.DryRun, false, nil, func(cur Object) (Object, error) {
		if err := reg.checkUpdatePreconditions(r, cur, name, bodyUID, clientRV); err != nil {
			return nil, err
		}
		nobj := copyObject(obj)
		nm := meta(nobj)
		if r.Namespaced {
			nm["namespace"] = ns
		} else {
			delete(nm, "namespace")
		}
		nobj["kind"], nobj["apiVersion"] = r.Kind, r.GroupVersion()
		if r.Default != nil && sub == "" {
			r.Default(nobj)
		}
		return reg.prepareUpdate(ctx, r, cur, nobj, sub, o.FieldManager, byUpdate)
	})
	return reg.written(ctx, r, w, o.DryRun, err)
}

// checkUpdatePreconditions is the storage UID precondition and the
// registry's resourceVersion rule.
func (reg *Registry) checkUpdatePreconditions(r *Resource, cur Object, name, bodyUID string, clientRV int64) error {
	if bodyUID != "" && bodyUID != UID(cur) {
		return NewConflict(r.Group, r.Resource, name, fmt.Sprintf(
			"StorageError: invalid object, Code: 4, Key: %s, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: %s, UID in object meta: %s",
			r.Key(Namespace(cur), name), bodyUID, UID(cur)))
	}
	if clientRV == 0 {
		if !r.AllowUnconditionalUpdate {
			return NewInvalid(r.Group, r.Resource, name, []FieldError{{Type: CauseFieldValueInvalid,
				Field: "metadata.resourceVersion", Value: jsonInt(0), Detail: "must be specified for an update"}})
		}
		return nil
	}
	if formatRV(clientRV) != ResourceVersion(cur) {
		return NewConflict(r.Group, r.Resource, name, OptimisticLockErrorMsg)
	}
	return nil
}

// prepareUpdate is rest.BeforeUpdate with the type's strategy: system
// fields come from the stored object, status (main endpoint) or everything
// but status (status endpoint) is kept, generation moves on spec changes,
// the result is validated and managedFields updated.
func (reg *Registry) prepareUpdate(ctx context.Context, r *Resource, cur, nobj Object, sub, manager string, by managedBy) (Object, error) {
	cm, nm := meta(cur), meta(nobj)
	if sub == "status" && r.StatusKeepsMetadata != nil {
		// the type's status strategy: the stored object with the new
		// status and the new metadata, less what the strategy keeps
		st, has := nobj["status"]
		md := nm
		nobj = copyObject(cur)
		if has {
			nobj["status"] = st
		} else {
			delete(nobj, "status")
		}
		nobj["metadata"] = md
		nm = md
		r.StatusKeepsMetadata(cm, nm)
		keepSystemFields(cm, nm)
	} else if sub == "status" {
		st, has := nobj["status"]
		managed, hasManaged := nm["managedFields"]
		nobj = copyObject(cur)
		if has {
			nobj["status"] = st
		} else {
			delete(nobj, "status")
		}
		nm = meta(nobj)
		if by == byApplier && hasManaged {
			nm["managedFields"] = managed // apply computed them
		}
	} else {
		keepSystemFields(cm, nm)
		if r.Status {
			if st, ok := cur["status"]; ok {
				nobj["status"] = st
			} else {
				delete(nobj, "status")
			}
		}
		if r.PrepareForUpdate != nil {
			r.PrepareForUpdate(cur, nobj)
		}
	}
	nm["resourceVersion"] = cm["resourceVersion"]
	r.normalize(nobj)
	if sub == "" && r.Generation != NoGeneration {
		g, _ := numberInt(cm["generation"])
		if r.Generation == ContentGeneration && r.Custom() && contentChanged(cur, nobj, r.Status) ||
			r.Generation != ContentGeneration && !schema.JSONEqual(cur["spec"], nobj["spec"]) ||
			r.Generation == SpecAnnotationsGeneration && !schema.JSONEqual(cm["annotations"], nm["annotations"]) {
			nm["generation"] = jsonInt(g + 1)
		}
	}
	errs := validateObjectMeta(nobj, r.validateName)
	if sub == "status" && r.ValidateStatus != nil {
		errs = append(errs, r.ValidateStatus(nobj)...)
	} else if r.conv != nil && r.conv.validateUpdate != nil {
		errs = append(errs, r.conv.validateUpdate(cur, nobj)...)
	} else if r.Validate != nil {
		errs = append(errs, r.Validate(nobj)...)
	}
	if r.ValidateRules != nil {
		errs = r.ValidateRules(ctx, nobj, cur, errs)
	}
	if len(errs) > 0 {
		return nil, invalidObject(r, Name(nobj), errs)
	}
	if by != byApplier {
		if err := reg.updateManagedFields(r, cur, nobj, manager, sub, by, reg.now()); err != nil {
			return nil, err
		}
	}
	return nobj, nil
}

// keepSystemFields is rest.BeforeUpdate's rule: an update never changes
// the server's fields (identity, creation, deletion, generation).
func keepSystemFields(cm, nm map[string]any) {
	for _, k := range []string{"uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation"} {
		keepMetaField(cm, nm, k)
	}
	delete(nm, "selfLink")
}

// keepMetaField puts the stored metadata's field k (or its absence) back
// into the new metadata.
func keepMetaField(cm, nm map[string]any, k string) {
	if v, ok := cm[k]; ok {
		nm[k] = v
	} else {
		delete(nm, k)
	}
}

// contentChanged reports whether anything but metadata (and status, when
// the status subresource writes it) differs: what moves a custom
// resource's generation.
func contentChanged(cur, nobj Object, status bool) bool {
	for k, v := range nobj {
		if k != "metadata" && !(status && k == "status") && !schema.JSONEqual(cur[k], v) {
			return true
		}
	}
	for k := range cur {
		if _, ok := nobj[k]; !ok && k != "metadata" && !(status && k == "status") {
			return true
		}
	}
	return false
}
