package kubediff

import (
	"flag"
	"testing"
)

var recordWebhook = flag.String("record-webhook", "", "record the exchanges about a definition with a conversion webhook from a real kube-apiserver into this JSONL file")

// webhookCRD is a definition of two served versions converted by a
// webhook that nothing serves (a port no one listens on).
const webhookCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},` +
	`"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},` +
	`"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"https://127.0.0.1:1/convert"}}},` +
	`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}},` +
	`{"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","properties":{"spec":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}}}]}}`

// webhookSteps are the exchanges about a definition whose conversion is
// a webhook that does not answer: what needs no conversion works, what
// does fails with kube's error.
func webhookSteps() []crdStep {
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	const v1, v2 = "/apis/example.com/v1/namespaces/default/widgets", "/apis/example.com/v2/namespaces/default/widgets"
	widget := func(v, name string) string {
		return `{"apiVersion":"example.com/` + v + `","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"size":1}}`
	}
	return []crdStep{
		{note: "a definition converted by a webhook", method: "POST", path: crds, body: webhookCRD, wait: waitEstablished("widgets.example.com")},
		{note: "a definition with a webhook over http", method: "POST", path: crds, body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","kind":"Gadget"},"conversion":{"strategy":"Webhook","webhook":{"conversionReviewVersions":["v1"],"clientConfig":{"url":"http://127.0.0.1:1/convert"}}},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`},
		{note: "a definition with a webhook and no clientConfig", method: "POST", path: crds, body: `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"gadgets.example.com"},"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"gadgets","kind":"Gadget"},"conversion":{"strategy":"Webhook"},"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`},
		{note: "create in the storage version: no conversion", method: "POST", path: v1, body: widget("v1", "w1")},
		{note: "read in the storage version", method: "GET", path: v1 + "/w1"},
		{note: "list in the storage version", method: "GET", path: v1},
		{note: "read in the other version: the webhook is called", method: "GET", path: v2 + "/w1"},
		{note: "list in the other version", method: "GET", path: v2},
		{note: "create in the other version", method: "POST", path: v2, body: widget("v2", "w2")},
		{note: "merge patch in the other version", method: "PATCH", path: v2 + "/w1", contentType: "application/merge-patch+json", body: `{"spec":{"size":2}}`},
		{note: "delete in the other version", method: "DELETE", path: v2 + "/w1"},
		{note: "delete in the storage version", method: "DELETE", path: v1 + "/w1"},
	}
}

// TestRecordWebhookGolden records webhookSteps from a real kube-apiserver
// into the file -record-webhook names; without the flag it is skipped.
// testdata/webhook_exchanges.jsonl is such a recording: what kube answers
// while a conversion webhook fails (a 500 for every read or write that
// needs a conversion). rvplay calls no webhooks and refuses such a
// definition (engine/kube/definitionconversion.go), so nothing replays it
// yet: it is what a server option calling them would have to match.
func TestRecordWebhookGolden(t *testing.T) {
	recordGolden(t, *recordWebhook, "-record-webhook", webhookSteps)
}
