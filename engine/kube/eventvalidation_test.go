package kube

import (
	"strings"
	"testing"
)

// coreEventIn is a core/v1 Event in ns about a Pod whose reference names
// involvedNS ("": none), with fields besides.
func coreEventIn(name, ns, involvedNS string, fields map[string]any) Object {
	ref := map[string]any{"kind": "Pod", "name": "web-1"}
	if involvedNS != "" {
		ref["namespace"] = involvedNS
	}
	e := Object{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": name, "namespace": ns}, "involvedObject": ref}
	for k, v := range fields {
		e[k] = v
	}
	return e
}

// newStyle are the fields a core/v1 Event with an eventTime must have.
func newStyle() map[string]any {
	return map[string]any{"eventTime": "2026-11-22T01:45:06.123456Z", "reportingComponent": "example.com/scaler",
		"reportingInstance": "scaler-1", "action": "Scale", "reason": "ScaledUp", "type": "Normal"}
}

func with(fields map[string]any, k string, v any) map[string]any {
	fields[k] = v
	return fields
}

// TestCoreEventsMeetKubesLegacyRules: an Event written through core/v1
// meets kube's legacyValidateEvent alone. Without an eventTime (an
// old-style Event) it must be in its involved object's namespace, or in
// default for an object without one; with one (new-style) it says who
// reported it (reportingComponent, a qualified name, and
// reportingInstance), what (action) and why (reason), within kube's
// lengths, and may be about an object of another namespace, or about one
// without a namespace from default or kube-system. Its type, its series
// and its name (a path segment) are left alone.
func TestCoreEventsMeetKubesLegacyRules(t *testing.T) {
	f := newFixture(t)
	events := Lookup("", "v1", "events")
	f.create(t, Lookup("", "v1", "namespaces"), "", Object{"metadata": map[string]any{"name": "other"}})
	long := strings.Repeat("x", 129)
	for _, c := range []struct {
		rule  string
		event Object
		want  string // the 422's message, "" when accepted
	}{
		{"old-style: in its involved object's namespace", coreEventIn("a.1", "other", "other", nil), ""},
		{"old-style: not in its involved object's namespace", coreEventIn("a.2", "default", "other", nil),
			`Event "a.2" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace`},
		{"old-style: about an object without a namespace, from default", coreEventIn("a.3", "default", "", nil), ""},
		{"old-style: about an object without a namespace, from elsewhere", coreEventIn("a.4", "other", "", nil),
			`Event "a.4" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace`},
		{"new-style: about an object of another namespace", coreEventIn("b.1", "default", "other", newStyle()), ""},
		{"new-style: about an object without a namespace, from kube-system", coreEventIn("b.2", "kube-system", "", newStyle()), ""},
		{"new-style: about an object without a namespace, from elsewhere", coreEventIn("b.3", "other", "", newStyle()),
			`Event "b.3" is invalid: involvedObject.namespace: Invalid value: "": does not match event.namespace`},
		{"new-style: who reported it, what and why are required", coreEventIn("b.4", "default", "default", map[string]any{"eventTime": "2026-11-22T01:45:06.123456Z"}),
			`Event "b.4" is invalid: [reportingComponent: Required value, reportingComponent: Invalid value: "": name part must be non-empty, ` +
				`reportingComponent: Invalid value: "": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character ` +
				`(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), ` +
				`reportingInstance: Required value, action: Required value, reason: Required value]`},
		{"new-style: the reporting component is a qualified name", coreEventIn("b.5", "default", "default", with(newStyle(), "reportingComponent", "example.com/a/b")),
			`Event "b.5" is invalid: reportingComponent: Invalid value: "example.com/a/b": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character ` +
				`(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`},
		{"new-style: lengths", coreEventIn("b.6", "default", "default", with(with(with(newStyle(), "reportingInstance", long), "reason", long), "message", strings.Repeat("m", 1025))),
			`Event "b.6" is invalid: [reportingInstance: Invalid value: "": can have at most 128 characters, reason: Invalid value: "": can have at most 128 characters, message: Invalid value: "": can have at most 1024 characters]`},
		{"any type, any series, core/v1's own fields beside an eventTime", coreEventIn("b.7", "default", "default",
			with(with(with(newStyle(), "type", "Odd"), "series", map[string]any{"count": jsonInt(1)}), "count", jsonInt(3))), ""},
		{"a name is only a path segment", coreEventIn("Web_1.Pulled", "default", "default", nil), ""},
		{"a name is a path segment", coreEventIn("a%2Fb", "default", "default", nil),
			`Event "a%2Fb" is invalid: metadata.name: Invalid value: "a%2Fb": may not contain '%'`},
	} {
		_, err := f.s.Create(f.ctx, events, Namespace(c.event), c.event, WriteOptions{})
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: refused: %v", c.rule, err)
			}
			continue
		}
		t.Run(c.rule, func(t *testing.T) { wantStatus(t, err, 422, ReasonInvalid, c.want) })
	}
}

// TestCoreEventUpdatesMeetTheSameRules: an update through core/v1 meets
// the legacy rules on the new Event and nothing else (events.k8s.io/v1's
// immutable fields may change); an old-style Event given an eventTime
// becomes new-style and must then say who reported it.
func TestCoreEventUpdatesMeetTheSameRules(t *testing.T) {
	f := newFixture(t)
	events := Lookup("", "v1", "events")
	e := f.create(t, events, "default", coreEventIn("b.1", "default", "default", newStyle()))
	e["reason"], e["message"] = "ScaledDown", "scaled down"
	e["involvedObject"].(map[string]any)["namespace"] = "other"
	e, err := object(f.s.Update(f.ctx, events, "default", "b.1", "", e, WriteOptions{}))
	if err != nil {
		t.Fatalf("a new-style Event's reason, message and involved object changed: %v", err)
	}
	delete(e, "action")
	_, err = f.s.Update(f.ctx, events, "default", "b.1", "", e, WriteOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `Event "b.1" is invalid: action: Required value`)
	f.create(t, events, "default", coreEventIn("a.1", "default", "default", nil))
	_, err = f.s.Patch(f.ctx, events, "default", "a.1", "", MergePatch, []byte(`{"eventTime":"2026-11-22T01:46:06.000000Z","reportingComponent":"kubelet","reportingInstance":"node-1","reason":"Pulled"}`), PatchOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `Event "a.1" is invalid: action: Required value`)
}
