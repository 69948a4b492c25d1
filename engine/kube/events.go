//go:build !js

package kube

import "time"

// events.k8s.io/v1 Events are core/v1 Events in another form, as
// kube-apiserver serves them: one storage (/registry/events/<ns>/<name>,
// the core/v1 form), converted both ways (pkg/apis/events/v1's
// conversion: regarding is involvedObject, note is message,
// reportingController is reportingComponent, the deprecated* fields are
// core/v1's source, firstTimestamp, lastTimestamp and count), with its own
// discovery entry, OpenAPI definitions, watch cache and field selectors,
// and the same hour's TTL. Writes through it are validated as kube
// validates an Event written through a version newer than core/v1 (the
// rules of ValidateEventCreate and ValidateEventUpdate, on the core/v1
// form, so their messages name core/v1's fields). The browser build
// serves no events.k8s.io: it has no room for it (wasm/BENCHMARKS.md).

// eventsRenames pairs core/v1's field names with events.k8s.io/v1's.
var eventsRenames = [][2]string{
	{"involvedObject", "regarding"},
	{"message", "note"},
	{"source", "deprecatedSource"},
	{"firstTimestamp", "deprecatedFirstTimestamp"},
	{"lastTimestamp", "deprecatedLastTimestamp"},
	{"count", "deprecatedCount"},
	{"reportingComponent", "reportingController"},
}

func renameFields(o Object, from, to int, apiVersion string) {
	for _, p := range eventsRenames {
		if v, ok := o[p[from]]; ok {
			delete(o, p[from])
			o[p[to]] = v
		} else {
			delete(o, p[to])
		}
	}
	o["apiVersion"] = apiVersion
}

// coreEventOf is the core/v1 form of an events.k8s.io/v1 Event (a copy).
func coreEventOf(o Object) Object {
	c := copyObject(o)
	renameFields(c, 1, 0, "v1")
	return c
}

var eventsV1 = &Resource{
	Group: "events.k8s.io", Version: "v1", Kind: "Event", ListKind: "EventList", Resource: "events", Singular: "event",
	Namespaced: true, ShortNames: []string{"ev"}, Verbs: standardVerbs,
	// the hash of the storage version's (core/v1 Event), as kube's
	StorageVersionHash:       "r2yiGXH7wu8=",
	AllowUnconditionalUpdate: true, TTL: EventTTL,
	// kube's events.k8s.io/v1 field label conversion: core/v1's labels
	// under events.k8s.io/v1's names (involvedObject.name is refused)
	FieldSelectors: map[string]func(Object) string{
		"regarding.kind":            pathString("regarding", "kind"),
		"regarding.namespace":       pathString("regarding", "namespace"),
		"regarding.name":            pathString("regarding", "name"),
		"regarding.uid":             pathString("regarding", "uid"),
		"regarding.apiVersion":      pathString("regarding", "apiVersion"),
		"regarding.resourceVersion": pathString("regarding", "resourceVersion"),
		"regarding.fieldPath":       pathString("regarding", "fieldPath"),
		"reason":                    pathString("reason"),
		"reportingController":       pathString("reportingController"),
		"type":                      pathString("type"),
	},
	Validate: func(o Object) []FieldError { return validateNewEvent(coreEventOf(o)) },
}

func init() {
	core := Lookup("", "v1", "events")
	eventsV1.conv = &conversion{
		storage: core,
		// kube's conversion makes a Go struct of events.k8s.io/v1, whose
		// JSON drops what core/v1 always writes and it omits when empty
		// (reportingController, reportingInstance of an old-style Event)
		fromStorage: func(o Object) { renameFields(o, 0, 1, "events.k8s.io/v1"); eventsV1.normalize(o) },
		toStorage:   func(o Object) { renameFields(o, 1, 0, "v1") },
		validateUpdate: func(cur, next Object) []FieldError {
			return validateNewEventUpdate(coreEventOf(cur), coreEventOf(next))
		},
	}
	// the same table as core/v1's (kube prints the internal Event)
	for _, c := range core.Columns {
		cell := c.Cell
		c.Cell = func(o Object, now time.Time) any { return cell(coreEventOf(o), now) }
		eventsV1.Columns = append(eventsV1.Columns, c)
	}
	// discovery lists events.k8s.io after apps and before
	// apiextensions.k8s.io, as kube-apiserver's group priorities do
	i := 0
	for i < len(Resources) && (Resources[i].Group == "" || Resources[i].Group == "apps") {
		i++
	}
	Resources = append(Resources[:i], append([]*Resource{eventsV1}, Resources[i:]...)...)
}

func validateEventSeries(e Object) []FieldError {
	s, ok := e["series"].(map[string]any)
	if !ok {
		return nil
	}
	var errs []FieldError
	if n, _ := numberInt(s["count"]); n < 2 {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "series.count", Value: "", Detail: "should be at least 2"})
	}
	if isZeroTime(s["lastObservedTime"]) {
		errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: "series.lastObservedTime"})
	}
	return errs
}

// validateNewEvent is ValidateEventCreate for events.k8s.io/v1, on the
// core/v1 form.
func validateNewEvent(e Object) []FieldError {
	errs := append(validateLegacyEvent(e, "reportingController"), validateEventSeries(e)...)
	if isZeroTime(e["eventTime"]) {
		errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: "eventTime"})
	}
	if t := str(e, "type"); t != "Normal" && t != "Warning" {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "type", Value: "", Detail: "has invalid value: " + t})
	}
	unset := func(f string) {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: f, Value: "", Detail: "needs to be unset"})
	}
	for _, f := range []string{"firstTimestamp", "lastTimestamp"} {
		if !isZeroTime(e[f]) {
			unset(f)
		}
	}
	if n, _ := numberInt(e["count"]); n != 0 {
		unset("count")
	}
	if pathString("source", "component")(e) != "" || pathString("source", "host")(e) != "" {
		unset("source")
	}
	return errs
}

// objectReference and eventSource are how kube renders these values in
// its messages: its internal Go structs, which have no JSON names.
type objectReference struct{ Kind, Namespace, Name, UID, APIVersion, ResourceVersion, FieldPath string }

type eventSource struct{ Component, Host string }

func referenceValue(v any) objectReference {
	m, _ := v.(map[string]any)
	return objectReference{str(m, "kind"), str(m, "namespace"), str(m, "name"), str(m, "uid"), str(m, "apiVersion"), str(m, "resourceVersion"), str(m, "fieldPath")}
}

// eventFieldValue is a core/v1 Event's field as kube's immutability
// errors render it.
func eventFieldValue(e Object, f string) any {
	v := e[f]
	switch f {
	case "involvedObject":
		return referenceValue(v)
	case "related":
		if v == nil {
			return (*objectReference)(nil)
		}
		r := referenceValue(v)
		return &r
	case "source":
		m, _ := v.(map[string]any)
		return eventSource{str(m, "component"), str(m, "host")}
	case "firstTimestamp", "lastTimestamp", "eventTime":
		if isZeroTime(v) {
			return nil
		}
		return v
	case "count":
		n, _ := numberInt(v)
		return n
	}
	s, _ := v.(string)
	return s
}

// validateNewEventUpdate is ValidateEventUpdate for events.k8s.io/v1:
// only metadata and the series may change.
func validateNewEventUpdate(cur, next Object) []FieldError {
	errs := validateLegacyEvent(next, "reportingController")
	if renderValue(next["series"]) != renderValue(cur["series"]) {
		errs = append(errs, validateEventSeries(next)...)
	}
	for _, f := range []string{"involvedObject", "reason", "message", "source", "firstTimestamp", "lastTimestamp", "count",
		"action", "type", "eventTime", "related", "reportingComponent", "reportingInstance"} {
		nv := eventFieldValue(next, f)
		if renderValue(nv) == renderValue(eventFieldValue(cur, f)) {
			continue
		}
		path := f
		if f == "reportingComponent" {
			path = "reportingController"
		}
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: path, Value: nv, Detail: "field is immutable"})
	}
	return errs
}
