package kubediff

import (
	"flag"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

var recordCEL = flag.String("record-cel", "", "record the exchanges about CEL validation rules from a real kube-apiserver into this JSONL file")

// scalersCRD is the definition whose rules the recorded exchanges break
// (server/crdrules' tests read it too).
const scalersCRD = "../../server/crdrules/testdata/scalers-crd.json"

const (
	scalersPath = "/apis/example.com/v1/namespaces/default/scalers"
	widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"
)

func scalerBody(name, spec string) string {
	return `{"apiVersion":"example.com/v1","kind":"Scaler","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

// widgetsWithRules is a definition of example.com/v1 Widgets whose spec
// has the given x-kubernetes-validations and a list of strings, bounded
// or not.
func widgetsWithRules(rules string, bounded bool) string {
	tags := `{"type":"array","items":{"type":"string"}}`
	if bounded {
		tags = `{"type":"array","maxItems":10,"items":{"type":"string","maxLength":10}}`
	}
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},` +
		`"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},` +
		`"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","properties":{` +
		`"spec":{"type":"object","x-kubernetes-validations":` + rules + `,"properties":{"size":{"type":"integer"},"tags":` + tags + `}}}}}}]}}`
}

// celSteps are the exchanges about x-kubernetes-validations: each kind
// of rule passing and failing on a custom resource, and the definitions
// kube refuses for their rules.
func celSteps(t *testing.T) []crdStep {
	crd, err := os.ReadFile(scalersCRD)
	if err != nil {
		t.Fatal(err)
	}
	const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
	return []crdStep{
		{note: "create a CRD with CEL rules", method: "POST", path: crds, body: string(crd), wait: waitEstablished("scalers.example.com")},
		{note: "a custom resource that keeps every rule", method: "POST", path: scalersPath, body: scalerBody("s1", `{"replicas":4,"zone":"eu-1","owner":"ann"}`)},
		{note: "a rule on an object with a fieldPath: no value shown", method: "POST", path: scalersPath, body: scalerBody("s2", `{"replicas":12}`)},
		{note: "a rule on a scalar: its value shown", method: "POST", path: scalersPath, body: scalerBody("s3", `{"replicas":3}`)},
		{note: "a messageExpression", method: "POST", path: scalersPath, body: scalerBody("s4", `{"replicas":2,"minReplicas":4,"zone":"eu-1"}`)},
		{note: "a messageExpression that fails: the rule stands in", method: "POST", path: scalersPath, body: scalerBody("s5", `{"replicas":2,"minReplicas":4}`)},
		{note: "a rule with reason FieldValueForbidden", method: "POST", path: scalersPath, body: scalerBody("s6", `{"replicas":2,"paused":true}`)},
		{note: "a rule without a message", method: "POST", path: scalersPath, body: scalerBody("s7", `{"replicas":2,"zone":"Europe"}`)},
		{note: "a rule at the root", method: "POST", path: scalersPath, body: scalerBody("t1", `{"replicas":2}`)},
		{note: "several rules broken at once", method: "POST", path: scalersPath, body: scalerBody("s8", `{"replicas":13,"zone":"Europe","paused":true}`)},
		{note: "a blocking schema error: the rules are not run", method: "POST", path: scalersPath, body: scalerBody("s9", `{"replicas":3,"zone":"a-very-long-zone-name-indeed"}`)},
		{note: "a transition rule on an update", method: "PUT", path: scalersPath + "/s1", body: "@s1:spec.owner=bob"},
		{note: "an update that keeps the transition rule", method: "PUT", path: scalersPath + "/s1", body: "@s1:spec.replicas=6"},
		{note: "a rule on the status subresource", method: "PUT", path: scalersPath + "/s1/status", body: "@s1:status.ready=-1"},
		{note: "a merge patch that breaks a rule", method: "PATCH", path: scalersPath + "/s1", contentType: "application/merge-patch+json", body: `{"spec":{"replicas":7}}`},
		{note: "a CRD whose rule does not compile", method: "POST", path: crds, body: widgetsWithRules(`[{"rule":"self.size <"}]`, false)},
		{note: "a CRD whose rule has no bound on its cost", method: "POST", path: crds, body: widgetsWithRules(`[{"rule":"self.tags.all(a, self.tags.all(b, a.matches(b)))"}]`, false)},
		{note: "a CRD whose rule's messageExpression is not a string", method: "POST", path: crds, body: widgetsWithRules(`[{"rule":"self.size > 1","messageExpression":"self.size"}]`, true)},
		{note: "a CRD whose rule's reason and fieldPath are not kube's", method: "POST", path: crds, body: widgetsWithRules(`[{"rule":"self.size > 1","reason":"Sometimes","fieldPath":".nothere"}]`, true)},
		{note: "a CRD whose rules compile, their cost bounded", method: "POST", path: crds, body: widgetsWithRules(`[{"rule":"self.tags.all(a, self.tags.all(b, a.matches(b)))"},{"rule":"!has(oldSelf.size) || self.size >= oldSelf.size","message":"may not shrink"}]`, true), wait: waitEstablished("widgets.example.com")},
		{note: "the second CRD's transition rule: not run on a create", method: "POST", path: widgetsPath, body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"size":3,"tags":["a"]}}`},
		{note: "the second CRD's transition rule on an update", method: "PATCH", path: widgetsPath + "/w1", contentType: "application/merge-patch+json", body: `{"spec":{"size":2}}`},
		{note: "a rule added to a served CRD that w1 breaks", method: "PATCH", path: crds + "/widgets.example.com", contentType: "application/json-patch+json",
			body: `[{"op":"add","path":"/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/x-kubernetes-validations","value":[{"rule":"self > 5","message":"must be more than 5"}]}]`,
			wait: waitRefused(widgetsPath+"?dryRun=All", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"probe"},"spec":{"size":1}}`)},
		{note: "an update that leaves the broken value as it was: ratcheted", method: "PATCH", path: widgetsPath + "/w1", contentType: "application/merge-patch+json", body: `{"spec":{"tags":["b"]}}`},
		{note: "an update that changes it to another broken value", method: "PATCH", path: widgetsPath + "/w1", contentType: "application/merge-patch+json", body: `{"spec":{"size":4}}`},
		{note: "a new object breaking the added rule", method: "POST", path: widgetsPath, body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w2"},"spec":{"size":1}}`},
	}
}

// TestRecordCELGolden records celSteps from a real kube-apiserver into the
// file -record-cel names (server/crdrules/testdata/cel_exchanges.jsonl is
// such a recording, which server/crdrules replays); without the flag it
// is skipped.
func TestRecordCELGolden(t *testing.T) {
	recordGolden(t, *recordCEL, "-record-cel", func() []crdStep { return celSteps(t) })
}

// waitRefused polls (unrecorded) until a POST of body to path answers
// 422: a rule added to a definition is in force.
func waitRefused(path, body string) func(t *testing.T, c *http.Client, base string) {
	return func(t *testing.T, c *http.Client, base string) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			resp, err := c.Post(base+path, "application/json", strings.NewReader(body))
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode == 422 {
					return
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Fatalf("%s: the rule is not in force", path)
	}
}
