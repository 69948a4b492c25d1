package kube

import (
	"errors"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/kube/apply"
)

// FieldManager keeps metadata.managedFields for Update operations (every
// write that is not server-side apply).
type FieldManager interface {
	// Update records that manager changed live into obj (live is nil on
	// create); subresource is "", "status" or "scale". It sets obj's
	// metadata.managedFields.
	Update(r *Resource, live, obj Object, manager, subresource string, now time.Time) error
}

// Applier is server-side apply: it merges an apply configuration into live
// (nil when the object does not exist) for manager and returns the object
// to store with its managedFields, or a *StatusError (409 with the
// conflicting fields and managers unless force, 400 for a malformed
// configuration).
type Applier interface {
	Apply(r *Resource, live, config Object, manager string, force bool, now time.Time) (Object, error)
}

// Patcher applies a JSON patch ("json"), a JSON merge patch ("merge") or a
// strategic merge patch ("strategic") to the JSON of an object and returns
// the patched JSON, or a *StatusError.
type Patcher interface {
	Patch(r *Resource, patchType string, original, patch []byte) ([]byte, error)
}

// SchemaFieldManager is the FieldManager of package apply (kube's field
// manager over package schema's types).
type SchemaFieldManager struct{}

func (SchemaFieldManager) Update(r *Resource, live, obj Object, manager, sub string, now time.Time) error {
	t := r.Schema()
	if t == nil {
		return nil
	}
	// A failure to track fields must not fail the write (kube logs it).
	_ = apply.UpdateManagedFields(t, r.GroupVersion(), live, obj, apply.Write{Manager: manager, Subresource: sub, Now: now})
	return nil
}

// SchemaApplier is server-side apply of package apply.
type SchemaApplier struct{}

func (SchemaApplier) Apply(r *Resource, live, config Object, manager string, force bool, now time.Time) (Object, error) {
	t := r.Schema()
	if t == nil {
		return nil, NewUnsupportedMediaType()
	}
	out, err := apply.Apply(t, r.GroupVersion(), live, config, apply.Write{Manager: manager, Now: now}, force)
	if err == nil {
		return out, nil
	}
	var ce *apply.ConflictError
	if errors.As(err, &ce) {
		se := newStatusError(409, ReasonConflict, ce.Error(), &StatusDetails{})
		for _, c := range ce.Causes() {
			se.Status.Details.Causes = append(se.Status.Details.Causes, StatusCause{Type: c.Reason, Message: c.Message, Field: c.Field})
		}
		return nil, se
	}
	var be *apply.BadRequestError
	if errors.As(err, &be) {
		return nil, NewBadRequest(be.Message)
	}
	return nil, err
}

// ManagerFromUserAgent is kube's default field manager name: the
// User-Agent up to the first '/'.
func ManagerFromUserAgent(ua string) string {
	if i := strings.IndexByte(ua, '/'); i >= 0 {
		ua = ua[:i]
	}
	if len(ua) > 128 {
		ua = ua[:128]
	}
	return ua
}
