package kubediff

import (
	"flag"
	"os"
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
	if *recordEvents == "" {
		t.Skip("records only with -record-events FILE")
	}
	c := newClient()
	base := startKubeAPIServer(t, c)
	if err := os.WriteFile(*recordEvents, recordSteps(t, c, base, eventsSteps), 0o644); err != nil {
		t.Fatal(err)
	}
}
