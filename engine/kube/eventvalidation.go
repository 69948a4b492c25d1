package kube

// Limits of kube's Event validation (pkg/apis/core/validation/events.go).
const (
	eventFieldLimit = 128
	eventNoteLimit  = 1024
)

func isZeroTime(v any) bool { s, _ := v.(string); return s == "" }

// validateCoreEvent is ValidateEventCreate and ValidateEventUpdate for an
// Event written through core/v1: the legacy rules alone, kube's
// backwards compatibility (no check of type, series or immutable fields,
// which events.k8s.io/v1's writes meet), naming the reporting controller
// by core/v1's field.
func validateCoreEvent(e Object) []FieldError { return validateLegacyEvent(e, "reportingComponent") }

// Every build validates core/v1 Events as kube does, and names them as
// path segments only (kube's events strategy leaves names to the generic
// ValidatePathSegmentName): the browser's too, for these rules' cost of
// its budget (wasm/BENCHMARKS.md).
func init() {
	events := Lookup("", "v1", "events")
	events.Validate = validateCoreEvent
	events.NameIsPathSegment = true
}

// validateLegacyEvent is kube's legacyValidateEvent, which every Event
// passes, whichever version writes it (controller: the name of the
// reporting controller's field in the request's version). An old-style
// Event (no eventTime) must be in its involved object's namespace (or, for
// one without, in default); a new-style one says who reported it, what
// and why, and may be about an object of another namespace, or about one
// without a namespace from default or kube-system.
func validateLegacyEvent(e Object, controller string) []FieldError {
	var errs []FieldError
	// one append for every error: each FieldError literal is some
	// hundred bytes of the browser's build
	invalid := func(typ, field string, value any, detail string) {
		errs = append(errs, FieldError{Type: typ, Field: field, Value: value, Detail: detail})
	}
	ns := Namespace(e)
	invNS := pathString("involvedObject", "namespace")(e)
	newStyle := !isZeroTime(e["eventTime"])
	if newStyle && invNS == "" && ns != "default" && ns != "kube-system" ||
		!newStyle && (invNS == "" && ns != "" && ns != "default" || invNS != "" && ns != invNS) {
		invalid(CauseFieldValueInvalid, "involvedObject.namespace", invNS, "does not match event.namespace")
	}
	if newStyle {
		rc := str(e, "reportingComponent")
		if rc == "" {
			invalid(CauseFieldValueRequired, controller, nil, "")
		}
		for _, msg := range IsQualifiedName(rc) {
			invalid(CauseFieldValueInvalid, controller, rc, msg)
		}
		for _, f := range []string{"reportingInstance", "action", "reason"} {
			v := str(e, f)
			if v == "" {
				invalid(CauseFieldValueRequired, f, nil, "")
			}
			if len(v) > eventFieldLimit {
				invalid(CauseFieldValueInvalid, f, "", "can have at most 128 characters")
			}
		}
		if len(str(e, "message")) > eventNoteLimit {
			invalid(CauseFieldValueInvalid, "message", "", "can have at most 1024 characters")
		}
	}
	for _, msg := range IsDNS1123Subdomain(ns) {
		invalid(CauseFieldValueInvalid, "namespace", ns, msg)
	}
	return errs
}
