package kube

import (
	"context"
	"errors"
	mrand "math/rand/v2"
	"strconv"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

const generateNameChars = "bcdfghjklmnpqrstvwxz2456789"

func generateName(base string) string {
	if len(base) > 58 {
		base = base[:58]
	}
	b := make([]byte, 5)
	for i := range b {
		b[i] = generateNameChars[mrand.IntN(len(generateNameChars))]
	}
	return base + string(b)
}

// Create stores a new object (POST on a collection).
func (reg *Registry) Create(ctx context.Context, r *Resource, ns string, obj Object, o WriteOptions) (Written, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return Written{}, err
	}
	w, err := reg.create(ctx, r, ns, obj, o)
	return reg.written(ctx, r, w, o.DryRun, err)
}

func (reg *Registry) create(ctx context.Context, r *Resource, ns string, obj Object, o WriteOptions) (Written, error) {
	obj = copyObject(obj)
	m := meta(obj)
	if r.Namespaced {
		if bns := str(m, "namespace"); bns != "" && bns != ns {
			return Written{}, NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")
		}
		m["namespace"] = ns
		if ok, terminating, err := reg.namespaceState(ctx, ns); err != nil {
			return Written{}, err
		} else if !ok {
			return Written{}, NewNotFound("", "namespaces", ns)
		} else if terminating {
			return Written{}, forbidTerminatingNamespace(r, obj, ns)
		}
	} else {
		delete(m, "namespace")
	}
	obj["kind"], obj["apiVersion"] = r.Kind, r.GroupVersion()
	generated := str(m, "name") == "" && str(m, "generateName") != ""
	for attempt := 0; ; attempt++ {
		if generated {
			m["name"] = generateName(str(m, "generateName"))
		}
		out, err := reg.createOnce(ctx, r, obj, o)
		var se *StatusError
		if generated && attempt < 7 && errors.As(err, &se) && se.Status.Reason == ReasonAlreadyExists {
			continue
		}
		return out, err
	}
}

func (reg *Registry) createOnce(ctx context.Context, r *Resource, obj Object, o WriteOptions) (Written, error) {
	obj = copyObject(obj)
	m := meta(obj)
	name := str(m, "name")
	ns := str(m, "namespace")
	if r.Default != nil {
		r.Default(obj)
	}
	r.normalize(obj)
	// kube's create handler records managedFields from the decoded,
	// defaulted object, before rest.BeforeCreate: what a strategy's
	// PrepareForCreate adds (a Namespace's "kubernetes" finalizer) is
	// owned by no manager.
	now := reg.now()
	if !o.keepManagedFields {
		if err := reg.updateManagedFields(r, nil, obj, o.FieldManager, "", byCreate, now); err != nil {
			return Written{}, err
		}
	}
	// rest.BeforeCreate: system fields are the server's.
	m["uid"] = reg.newUID()
	m["creationTimestamp"] = now.Format(time.RFC3339)
	for _, k := range []string{"deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		delete(m, k)
	}
	if r.Generation != NoGeneration {
		m["generation"] = jsonInt(1)
	} else {
		delete(m, "generation")
	}
	if r.PrepareForCreate != nil {
		r.PrepareForCreate(obj)
		r.normalize(obj) // what it set, in the stored form
	}
	errs := validateObjectMeta(obj, r.validateName)
	if r.Validate != nil {
		errs = append(errs, r.Validate(obj)...)
	}
	if r.ValidateRules != nil {
		errs = r.ValidateRules(ctx, obj, nil, errs)
	}
	if len(errs) > 0 {
		return Written{}, invalidObject(r, name, errs)
	}
	// etcd3 store.Create: a numeric non-zero resourceVersion is refused
	// with a plain (500) error; "0" and unparsable values pass.
	if rv := str(m, "resourceVersion"); rv != "" {
		if v, err := strconv.ParseUint(rv, 10, 64); err == nil && v != 0 {
			return Written{}, errors.New("resourceVersion should not be set on objects to be created")
		}
	}
	delete(m, "resourceVersion")
	key := r.Key(ns, name)
	if o.DryRun {
		kv, _, err := reg.get(ctx, key, 0)
		if err != nil {
			return Written{}, err
		}
		if kv != nil {
			return Written{}, NewAlreadyExists(r.Group, r.Resource, name)
		}
		return Written{Object: obj}, nil
	}
	data := storageBytes(r, obj)
	if err := checkEtcdRequest(key, data); err != nil {
		// kube-apiserver's create tries once more without managedFields;
		// an apply's create does not.
		if _, had := m["managedFields"]; !had || o.keepManagedFields {
			return Written{}, err
		}
		delete(m, "managedFields")
		if data = storageBytes(r, obj); checkEtcdRequest(key, data) != nil {
			return Written{}, err
		}
	}
	lease, err := reg.lease(ctx, r)
	if err != nil {
		return Written{}, quotaExceeded(r, name, err)
	}
	resp, err := reg.kv.Txn(ctx, &mvcc.TxnRequest{
		Compare: []mvcc.Compare{{Target: mvcc.CompareCreate, Result: mvcc.CompareEqual, Key: []byte(key), CreateRevision: 0}},
		Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: []byte(key), Value: data, Lease: lease}}},
	})
	if err != nil {
		return Written{}, quotaExceeded(r, name, err)
	}
	if !resp.Succeeded {
		return Written{}, NewAlreadyExists(r.Group, r.Resource, name)
	}
	m["resourceVersion"] = formatRV(resp.Header.Revision)
	reg.wrote(r, resp.Header.Revision)
	return stored(r, obj, data, resp.Header.Revision), nil
}

//go:noinline
func jsonInt(i int64) any { return jsonNumber(strconv.FormatInt(i, 10)) }
