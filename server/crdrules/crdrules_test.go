package crdrules

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

func init() { Use() }

func newSession(t *testing.T) *session.Session {
	t.Helper()
	s, err := session.New("t", mvcc.NewMemoryBackend(), session.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func do(t *testing.T, s *session.Session, method, path, body string) (int, map[string]any) {
	t.Helper()
	req := &api.Request{Method: method, Path: path, Header: api.Header{}}
	if body != "" {
		req.Body = []byte(body)
		req.Header.Set("Content-Type", "application/json")
	}
	resp := s.Serve(context.Background(), req)
	var m map[string]any
	_ = json.Unmarshal(resp.Body, &m)
	return resp.Status, m
}

// scalerCRD (testdata/scalers-crd.json) defines example.com/v1 Scalers,
// whose schema carries the rules the tests below break: a rule on an
// object with a fieldPath, a rule on a scalar, a messageExpression, a
// reason, a transition rule, a rule without a message and one at the
// root. test/kubediff records a real kube-apiserver's answers about it
// (cel_exchanges.jsonl).
const scalerCRD = "testdata/scalers-crd.json"

const scalers = "/apis/example.com/v1/namespaces/default/scalers"

func scaler(name, spec string) string {
	return `{"apiVersion":"example.com/v1","kind":"Scaler","metadata":{"name":"` + name + `"},"spec":` + spec + `}`
}

func withRules(t *testing.T) *session.Session {
	t.Helper()
	s := newSession(t)
	crd, err := os.ReadFile(scalerCRD)
	if err != nil {
		t.Fatal(err)
	}
	if code, m := do(t, s, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", string(crd)); code != 201 {
		t.Fatalf("CRD: %d %v", code, m)
	}
	return s
}

// wantInvalid checks a 422 Invalid answer: its message and its causes'
// (reason, field, message).
func wantInvalid(t *testing.T, code int, m map[string]any, message string, causes ...[3]string) {
	t.Helper()
	if code != 422 || m["reason"] != "Invalid" || m["message"] != message {
		t.Fatalf("got %d %v %q\nwant 422 Invalid %q", code, m["reason"], m["message"], message)
	}
	got, _ := m["details"].(map[string]any)["causes"].([]any)
	if len(got) != len(causes) {
		t.Fatalf("causes %v, want %v", got, causes)
	}
	for i, c := range got {
		cm := c.(map[string]any)
		if w := causes[i]; cm["reason"] != w[0] || cm["field"] != w[1] || cm["message"] != w[2] {
			t.Errorf("cause %d: %v, want %v", i, cm, w)
		}
	}
}

func TestAResourceThatKeepsItsRulesIsCreated(t *testing.T) {
	s := withRules(t)
	code, m := do(t, s, "POST", scalers, scaler("s1", `{"replicas":4,"zone":"eu-1","owner":"ann"}`))
	if code != 201 {
		t.Fatalf("%d %v", code, m)
	}
}

func TestAFailingRuleIsAnInvalidAnswerAtItsFieldPath(t *testing.T) {
	s := withRules(t)
	code, m := do(t, s, "POST", scalers, scaler("s1", `{"replicas":12}`))
	// spec's rule names .replicas: an object's rule shows no value
	wantInvalid(t, code, m, `Scaler.example.com "s1" is invalid: spec.replicas: Invalid value: must be <= maxReplicas`,
		[3]string{"FieldValueInvalid", "spec.replicas", "Invalid value: must be <= maxReplicas"})
}

func TestARuleOnAScalarShowsItsValue(t *testing.T) {
	s := withRules(t)
	code, m := do(t, s, "POST", scalers, scaler("s1", `{"replicas":3}`))
	wantInvalid(t, code, m, `Scaler.example.com "s1" is invalid: spec.replicas: Invalid value: 3: must be even`,
		[3]string{"FieldValueInvalid", "spec.replicas", "Invalid value: 3: must be even"})
}

func TestAMessageExpressionIsEvaluated(t *testing.T) {
	s := withRules(t)
	code, m := do(t, s, "POST", scalers, scaler("s1", `{"replicas":2,"minReplicas":4,"zone":"eu-1"}`))
	wantInvalid(t, code, m, `Scaler.example.com "s1" is invalid: spec: Invalid value: replicas below the minimum of zone eu-1`,
		[3]string{"FieldValueInvalid", "spec", "Invalid value: replicas below the minimum of zone eu-1"})
	// without a zone the expression fails: the rule's own words stand in
	code, m = do(t, s, "POST", scalers, scaler("s2", `{"replicas":2,"minReplicas":4}`))
	wantInvalid(t, code, m, `Scaler.example.com "s2" is invalid: spec: Invalid value: failed rule: self.minReplicas <= self.replicas`,
		[3]string{"FieldValueInvalid", "spec", "Invalid value: failed rule: self.minReplicas <= self.replicas"})
}

func TestAReasonChoosesTheCause(t *testing.T) {
	s := withRules(t)
	code, m := do(t, s, "POST", scalers, scaler("s1", `{"replicas":2,"paused":true}`))
	wantInvalid(t, code, m, `Scaler.example.com "s1" is invalid: spec.paused: Forbidden: a paused scaler runs nothing`,
		[3]string{"FieldValueForbidden", "spec.paused", "Forbidden: a paused scaler runs nothing"})
}

func TestARuleWithoutAMessageQuotesItself(t *testing.T) {
	s := withRules(t)
	code, m := do(t, s, "POST", scalers, scaler("s1", `{"replicas":2,"zone":"Europe"}`))
	wantInvalid(t, code, m, `Scaler.example.com "s1" is invalid: spec.zone: Invalid value: "Europe": failed rule: self.matches('^[a-z]+-[0-9]$')`,
		[3]string{"FieldValueInvalid", "spec.zone", `Invalid value: "Europe": failed rule: self.matches('^[a-z]+-[0-9]$')`})
}

func TestARuleAtTheRootHasNoFieldPath(t *testing.T) {
	s := withRules(t)
	code, m := do(t, s, "POST", scalers, scaler("t1", `{"replicas":2}`))
	wantInvalid(t, code, m, `Scaler.example.com "t1" is invalid: <nil>: Invalid value: the name must start with s`,
		[3]string{"FieldValueInvalid", "<nil>", "Invalid value: the name must start with s"})
}

func TestRulesWaitForTheSchemasBlockingErrors(t *testing.T) {
	s := withRules(t)
	code, m := do(t, s, "POST", scalers, scaler("s1", `{"replicas":3,"zone":"a-very-long-zone-name-indeed"}`))
	wantInvalid(t, code, m, `Scaler.example.com "s1" is invalid: [spec.zone: Too long: may not be more than 20 bytes, <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`,
		[3]string{"FieldValueTooLong", "spec.zone", "Too long: may not be more than 20 bytes"},
		[3]string{"FieldValueInvalid", "<nil>", "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"})
}

func TestATransitionRuleRunsOnlyOnAnUpdate(t *testing.T) {
	s := withRules(t)
	code, created := do(t, s, "POST", scalers, scaler("s1", `{"replicas":2,"owner":"ann"}`))
	if code != 201 {
		t.Fatalf("create: %d %v", code, created)
	}
	created["spec"].(map[string]any)["owner"] = "bob"
	b, _ := json.Marshal(created)
	code, m := do(t, s, "PUT", scalers+"/s1", string(b))
	wantInvalid(t, code, m, `Scaler.example.com "s1" is invalid: spec.owner: Invalid value: "bob": is immutable`,
		[3]string{"FieldValueInvalid", "spec.owner", `Invalid value: "bob": is immutable`})
	created["spec"].(map[string]any)["owner"] = "ann"
	created["spec"].(map[string]any)["replicas"] = 4
	b, _ = json.Marshal(created)
	if code, m := do(t, s, "PUT", scalers+"/s1", string(b)); code != 200 {
		t.Fatalf("an update that keeps the owner: %d %v", code, m)
	}
}

func TestTheStatusSubresourceRunsTheRules(t *testing.T) {
	s := withRules(t)
	code, created := do(t, s, "POST", scalers, scaler("s1", `{"replicas":2}`))
	if code != 201 {
		t.Fatalf("create: %d %v", code, created)
	}
	created["status"] = map[string]any{"ready": -1}
	b, _ := json.Marshal(created)
	code, m := do(t, s, "PUT", scalers+"/s1/status", string(b))
	wantInvalid(t, code, m, `Scaler.example.com "s1" is invalid: status: Invalid value: cannot be negative`,
		[3]string{"FieldValueInvalid", "status", "Invalid value: cannot be negative"})
}

// crdWithRules is a definition of example.com/v1 Widgets whose spec has
// the given x-kubernetes-validations (JSON) and a list of strings with
// no bounds.
func crdWithRules(rules string) string {
	return `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
 "metadata":{"name":"widgets.example.com"},
 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
  "versions":[{"name":"v1","served":true,"storage":true,
   "schema":{"openAPIV3Schema":{"type":"object","properties":{
    "spec":{"type":"object","x-kubernetes-validations":` + rules + `,
     "properties":{"size":{"type":"integer"},"tags":{"type":"array","items":{"type":"string"}}}}}}}}]}}`
}

const crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

func TestARuleThatDoesNotCompileRefusesTheDefinition(t *testing.T) {
	s := newSession(t)
	code, m := do(t, s, "POST", crds, crdWithRules(`[{"rule":"self.size <"}]`))
	// kube renders the internal ValidationRule as JSON
	detail := `Invalid value: {"Rule":"self.size \u003c","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: <input>:1:12: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}
 | self.size <
 | ...........^`
	f := "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
	wantInvalid(t, code, m, `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: `+f+": "+detail,
		[3]string{"FieldValueInvalid", f, detail})
}

func TestARuleOfUnboundedCostRefusesTheDefinition(t *testing.T) {
	s := newSession(t)
	code, m := do(t, s, "POST", crds, crdWithRules(`[{"rule":"self.tags.all(a, self.tags.all(b, a.matches(b)))"}]`))
	f := "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
	const hint = " (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
	wantInvalid(t, code, m, `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: [`+
		f+": Forbidden: estimated rule cost exceeds budget by factor of more than 100x"+hint+", "+
		f+": Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema, "+
		"spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x"+hint+"]",
		[3]string{"FieldValueForbidden", f, "Forbidden: estimated rule cost exceeds budget by factor of more than 100x" + hint},
		[3]string{"FieldValueForbidden", f, "Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"},
		[3]string{"FieldValueForbidden", "spec.validation.openAPIV3Schema", "Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x" + hint})
	// bounded, the same rule is accepted
	bounded := strings.Replace(crdWithRules(`[{"rule":"self.tags.all(a, self.tags.all(b, a.matches(b)))"}]`),
		`"items":{"type":"string"}`, `"maxItems":10,"items":{"type":"string","maxLength":10}`, 1)
	if code, m := do(t, s, "POST", crds, bounded); code != 201 {
		t.Fatalf("bounded: %d %v", code, m)
	}
}

func TestARulesReasonAndFieldPathAreChecked(t *testing.T) {
	s := newSession(t)
	code, m := do(t, s, "POST", crds, crdWithRules(`[{"rule":"self.size > 1","reason":"Sometimes","fieldPath":".nothere"}]`))
	f := "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"
	wantInvalid(t, code, m, `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: [`+
		f+`.reason: Unsupported value: "Sometimes": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired", `+
		f+`.fieldPath: Invalid value: ".nothere": must be a valid path]`,
		[3]string{"FieldValueNotSupported", f + ".reason", `Unsupported value: "Sometimes": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"`},
		[3]string{"FieldValueInvalid", f + ".fieldPath", `Invalid value: ".nothere": must be a valid path`})
}

func TestAnUpdateThatBreaksARuleIsRefused(t *testing.T) {
	s := newSession(t)
	code, crd := do(t, s, "POST", crds, crdWithRules(`[{"rule":"self.size > 1"}]`))
	if code != 201 {
		t.Fatalf("create: %d %v", code, crd)
	}
	_, crd = do(t, s, "GET", crds+"/widgets.example.com", "")
	spec := crd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)
	spec["x-kubernetes-validations"] = []any{map[string]any{"rule": "self.size > 1", "messageExpression": "self.size"}}
	b, _ := json.Marshal(crd)
	code, m := do(t, s, "PUT", crds+"/widgets.example.com", string(b))
	f := "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].messageExpression"
	detail := `Invalid value: {"Rule":"self.size \u003e 1","Message":"","MessageExpression":"self.size","Reason":null,"FieldPath":"","OptionalOldSelf":null}: messageExpression must evaluate to a string`
	wantInvalid(t, code, m, `CustomResourceDefinition.apiextensions.k8s.io "widgets.example.com" is invalid: `+f+": "+detail,
		[3]string{"FieldValueInvalid", f, detail})
}

// BenchmarkScalerRules is what the rules add to a write of a Scaler: the
// object's conversion and every rule of its schema, on an update (the
// transition rule and ratcheting see the stored object).
func BenchmarkScalerRules(b *testing.B) {
	raw, err := os.ReadFile(scalerCRD)
	if err != nil {
		b.Fatal(err)
	}
	var crd map[string]any
	if err := json.Unmarshal(raw, &crd); err != nil {
		b.Fatal(err)
	}
	v := Rules{}.Compile(crd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any))
	obj := func(replicas string) map[string]any {
		return map[string]any{"apiVersion": "example.com/v1", "kind": "Scaler", "metadata": map[string]any{"name": "s1", "namespace": "default"},
			"spec": map[string]any{"replicas": json.Number(replicas), "minReplicas": json.Number("0"), "maxReplicas": json.Number("10"), "zone": "eu-1", "owner": "ann"}}
	}
	old, cur := obj("2"), obj("4")
	b.ReportAllocs()
	for b.Loop() {
		if errs := v.Validate(context.Background(), cur, old); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}
