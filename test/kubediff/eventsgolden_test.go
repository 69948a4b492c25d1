package kubediff

import (
	"flag"
	"strings"
	"testing"
)

var recordEvents = flag.String("record-events", "", "record the events.k8s.io exchanges from a real kube-apiserver into this JSONL file")

const (
	coreEvents = "/api/v1/namespaces/default/events"
	newEvents  = "/apis/events.k8s.io/v1/namespaces/default/events"
)

// scaledUp is an events.k8s.io/v1 Event as a controller writes one.
const scaledUp = `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"web.1"},
"eventTime":"2026-11-22T01:45:06.123456Z","reportingController":"example.com/scaler","reportingInstance":"scaler-1",
"action":"Scale","reason":"ScaledUp","regarding":{"kind":"Deployment","namespace":"default","name":"web","apiVersion":"apps/v1"},
"related":{"kind":"ReplicaSet","namespace":"default","name":"web-1"},"note":"scaled up to 3","type":"Normal"}`

// pulled is a core/v1 Event as the kubelet writes one.
const pulled = `{"apiVersion":"v1","kind":"Event","metadata":{"name":"pod.1"},
"involvedObject":{"kind":"Pod","namespace":"default","name":"pod","fieldPath":"spec.containers{app}"},
"reason":"Pulled","message":"Successfully pulled image","source":{"component":"kubelet","host":"node-1"},
"firstTimestamp":"2026-11-22T01:45:06Z","lastTimestamp":"2026-11-22T01:45:07Z","count":2,"type":"Normal",
"reportingComponent":"kubelet","reportingInstance":"node-1"}`

// eventsSteps are the recorded exchanges about events.k8s.io/v1 Events:
// the same objects as core/v1 Events in one storage, each read through
// both versions, lists, tables, selectors, writes, validation and
// discovery.
var eventsSteps = []crdStep{
	{note: "discovery: the group", method: "GET", path: "/apis/events.k8s.io"},
	{note: "discovery: the group-version's resources", method: "GET", path: "/apis/events.k8s.io/v1"},
	{note: "create an events.k8s.io/v1 Event", method: "POST", path: newEvents, body: scaledUp},
	{note: "the same Event read as a core/v1 Event", method: "GET", path: coreEvents + "/web.1"},
	{note: "read back as an events.k8s.io/v1 Event", method: "GET", path: newEvents + "/web.1"},
	{note: "create a core/v1 Event", method: "POST", path: coreEvents, body: pulled},
	{note: "the core/v1 Event read as an events.k8s.io/v1 Event", method: "GET", path: newEvents + "/pod.1"},
	{note: "list events.k8s.io/v1 Events", method: "GET", path: newEvents},
	{note: "list core/v1 Events", method: "GET", path: coreEvents},
	{note: "list events.k8s.io/v1 Events in every namespace", method: "GET", path: "/apis/events.k8s.io/v1/events"},
	{note: "events.k8s.io/v1 Events as kubectl get prints them", method: "GET", path: newEvents, accept: "application/json;as=Table;v=v1;g=meta.k8s.io"},
	{note: "list by reason", method: "GET", path: newEvents + "?fieldSelector=reason%3DScaledUp"},
	{note: "list by the regarding object's name", method: "GET", path: newEvents + "?fieldSelector=regarding.name%3Dweb"},
	{note: "list by the involved object's name (core/v1's label)", method: "GET", path: newEvents + "?fieldSelector=involvedObject.name%3Dweb"},
	{note: "list by type", method: "GET", path: newEvents + "?fieldSelector=type%3DNormal"},
	{note: "list by reportingController", method: "GET", path: newEvents + "?fieldSelector=reportingController%3Dexample.com%2Fscaler"},
	{note: "invalid: an empty events.k8s.io/v1 Event", method: "POST", path: newEvents, body: `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"empty"}}`},
	{note: "invalid: deprecated fields set on create", method: "POST", path: newEvents, body: strings.Replace(scaledUp, `"name":"web.1"`, `"name":"web.2"`, 1)[:len(scaledUp)-1] + `,"deprecatedCount":3,"deprecatedSource":{"component":"x"},"deprecatedFirstTimestamp":"2026-11-22T01:45:06Z"}`},
	{note: "invalid: a type that is neither Normal nor Warning", method: "POST", path: newEvents, body: strings.Replace(strings.Replace(scaledUp, `"name":"web.1"`, `"name":"web.3"`, 1), `"type":"Normal"`, `"type":"Odd"`, 1)},
	{note: "update through events.k8s.io/v1: a series", method: "PUT", path: newEvents + "/web.1", body: "@web.1:series.count=2;series.lastObservedTime=2026-11-22T01:46:06.000000Z"},
	{note: "the series as core/v1 shows it", method: "GET", path: coreEvents + "/web.1"},
	{note: "update through events.k8s.io/v1 without resourceVersion", method: "PUT", path: newEvents + "/pod.1", body: `{"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":"pod.1"},"eventTime":null,"reason":"Pulled","regarding":{"kind":"Pod","namespace":"default","name":"pod"},"note":"pulled again","type":"Normal","deprecatedCount":3}`},
	{note: "merge patch through events.k8s.io/v1", method: "PATCH", path: newEvents + "/web.1", contentType: "application/merge-patch+json", body: `{"note":"scaled up to 4"}`},
	{note: "strategic merge patch through events.k8s.io/v1", method: "PATCH", path: newEvents + "/web.1", contentType: "application/strategic-merge-patch+json", body: `{"metadata":{"labels":{"app":"web"}}}`},
	{note: "the patched Event through core/v1", method: "GET", path: coreEvents + "/web.1"},
	{note: "delete through events.k8s.io/v1", method: "DELETE", path: newEvents + "/web.1"},
	{note: "gone through core/v1 too", method: "GET", path: coreEvents + "/web.1"},
	{note: "not found through events.k8s.io/v1", method: "GET", path: newEvents + "/web.1"},
}

// TestRecordEventsGolden records eventsSteps from a real kube-apiserver
// into the file -record-events names
// (engine/api/kubeapi/testdata/events_exchanges.jsonl is such a
// recording); without the flag it is skipped.
func TestRecordEventsGolden(t *testing.T) {
	recordGolden(t, *recordEvents, "-record-events", func() []crdStep { return eventsSteps })
}

var recordCoreEvents = flag.String("record-core-events", "", "record the exchanges about core/v1 Events' validation from a real kube-apiserver into this JSONL file")

// coreEvent is a core/v1 Event named name in the namespace ns's path,
// about a Pod whose reference has involvedNS as its namespace ("": none),
// with extra fields (a JSON object's members) besides.
func coreEvent(name, involvedNS, extra string) string {
	ref := `{"kind":"Pod","name":"web-1","apiVersion":"v1"`
	if involvedNS != "" {
		ref += `,"namespace":"` + involvedNS + `"`
	}
	ref += "}"
	b := `{"apiVersion":"v1","kind":"Event","metadata":{"name":"` + name + `"},"involvedObject":` + ref
	if extra != "" {
		b += "," + extra
	}
	return b + "}"
}

// reported are the fields a new-style core/v1 Event (one with an
// eventTime) must have.
const reported = `"eventTime":"2026-11-22T01:45:06.123456Z","reportingComponent":"example.com/scaler","reportingInstance":"scaler-1","action":"Scale","reason":"ScaledUp","message":"scaled up","type":"Normal"`

// coreEventsSteps are the exchanges about core/v1 Events written through
// core/v1: kube's legacy rules (ValidateEventCreate and
// ValidateEventUpdate for the core/v1 request version), which old-style
// Events (no eventTime) and new-style ones meet differently, and what
// core/v1 does not check that events.k8s.io/v1 does.
func coreEventsSteps() []crdStep {
	const other = "/api/v1/namespaces/other/events"
	long := strings.Repeat("x", 129)
	return []crdStep{
		{note: "a namespace for the Events", method: "POST", path: "/api/v1/namespaces", body: `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"other"}}`},
		{note: "old-style: the involved object in another namespace", method: "POST", path: coreEvents, body: coreEvent("a.1", "other", `"reason":"Pulled","message":"pulled"`)},
		{note: "old-style: no involved object namespace, in default", method: "POST", path: coreEvents, body: coreEvent("a.2", "", `"reason":"Pulled","message":"pulled"`)},
		{note: "old-style: no involved object namespace, in another namespace", method: "POST", path: other, body: coreEvent("a.3", "", `"reason":"Pulled"`)},
		{note: "old-style: the involved object in the Event's namespace", method: "POST", path: other, body: coreEvent("a.4", "other", `"reason":"Pulled","count":1,"source":{"component":"kubelet"}`)},
		{note: "old-style: nothing but the involved object", method: "POST", path: coreEvents, body: coreEvent("a.5", "default", "")},
		{note: "new-style: an eventTime and nothing of who reported it", method: "POST", path: coreEvents, body: coreEvent("b.1", "default", `"eventTime":"2026-11-22T01:45:06.123456Z"`)},
		{note: "new-style: every reporting field", method: "POST", path: coreEvents, body: coreEvent("b.2", "default", reported)},
		{note: "new-style: no involved object namespace, in another namespace", method: "POST", path: other, body: coreEvent("b.3", "", reported)},
		{note: "new-style: no involved object namespace, in kube-system", method: "POST", path: "/api/v1/namespaces/kube-system/events", body: coreEvent("b.4", "", reported)},
		{note: "new-style: no involved object namespace, in default", method: "POST", path: coreEvents, body: coreEvent("b.5", "", reported)},
		{note: "new-style: the involved object in another namespace", method: "POST", path: coreEvents, body: coreEvent("b.6", "other", reported)},
		{note: "new-style: a reportingComponent that is not a qualified name", method: "POST", path: coreEvents, body: coreEvent("b.7", "default", strings.Replace(reported, "example.com/scaler", "Not a name!", 1))},
		{note: "new-style: over-long reportingInstance, action, reason and message", method: "POST", path: coreEvents, body: coreEvent("b.8", "default",
			`"eventTime":"2026-11-22T01:45:06.123456Z","reportingComponent":"example.com/scaler","reportingInstance":"`+long+`","action":"`+long+`","reason":"`+long+`","message":"`+strings.Repeat("m", 1025)+`"`)},
		{note: "new-style: a type neither Normal nor Warning", method: "POST", path: coreEvents, body: coreEvent("b.9", "default", strings.Replace(reported, `"type":"Normal"`, `"type":"Odd"`, 1))},
		{note: "new-style: core/v1's own fields set beside eventTime", method: "POST", path: coreEvents, body: coreEvent("b.10", "default", reported+`,"count":3,"firstTimestamp":"2026-11-22T01:45:06Z","lastTimestamp":"2026-11-22T01:45:07Z","source":{"component":"scaler","host":"node-1"},"series":{"count":1}`)},
		{note: "a name that is not a DNS subdomain", method: "POST", path: coreEvents, body: coreEvent("Web_1.Pulled", "default", `"reason":"Pulled"`)},
		{note: "an update that changes what events.k8s.io/v1 keeps immutable", method: "PUT", path: coreEvents + "/b.2", body: "@b.2:reason=ScaledDown;message=scaled down;involvedObject.name=web-2;reportingInstance=scaler-2"},
		{note: "an update that moves the involved object to another namespace", method: "PUT", path: coreEvents + "/b.2", body: "@b.2:involvedObject.namespace=other"},
		{note: "an update that drops a new-style Event's reporting fields", method: "PATCH", path: coreEvents + "/b.2", contentType: "application/merge-patch+json", body: `{"action":null,"reportingComponent":null}`},
		{note: "a merge patch that makes an old-style Event new-style", method: "PATCH", path: coreEvents + "/a.2", contentType: "application/merge-patch+json", body: `{"eventTime":"2026-11-22T01:46:06.000000Z"}`},
		{note: "the same Event read through events.k8s.io/v1", method: "GET", path: newEvents + "/a.5"},
		{note: "an old-style Event updated through events.k8s.io/v1", method: "PATCH", path: newEvents + "/a.5", contentType: "application/merge-patch+json", body: `{"note":"now with a note"}`},
	}
}

// TestRecordCoreEventsGolden records coreEventsSteps from a real
// kube-apiserver into the file -record-core-events names
// (engine/api/kubeapi/testdata/core_events_exchanges.jsonl is such a
// recording); without the flag it is skipped.
func TestRecordCoreEventsGolden(t *testing.T) {
	recordGolden(t, *recordCoreEvents, "-record-core-events", coreEventsSteps)
}
