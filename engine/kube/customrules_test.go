package kube

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// sizeRules stands in for kube's evaluator (server/crdrules): a size
// above 5 (or above limit, when set) breaks the rule, and a changed size
// breaks the transition rule (it sees the stored object on an update);
// an update that leaves a size breaking the rule as it was is ratcheted:
// a warning, not an error.
type sizeRules struct{ compiled, limit int }

func (*sizeRules) Definition(crd, old Object) []FieldError { return nil }

func (r *sizeRules) Compile(map[string]any) RuleValidator { r.compiled++; return r }

func (r *sizeRules) Validate(ctx context.Context, o, old Object) []FieldError {
	n, _ := numberInt(pathValue(o, "spec", "size"))
	limit := int64(5)
	if r.limit != 0 {
		limit = int64(r.limit)
	}
	unchanged := old != nil && jsonEqual(pathValue(old, "spec", "size"), pathValue(o, "spec", "size"))
	switch {
	case n > limit && unchanged:
		AddWarning(ctx, fmt.Sprintf("spec.size: Invalid value: %d: at most %d", n, limit))
	case n > limit:
		return []FieldError{{Type: CauseFieldValueInvalid, Field: "spec.size", Value: n, Detail: fmt.Sprintf("at most %d", limit)}}
	case old != nil && !unchanged:
		return []FieldError{{Type: CauseFieldValueInvalid, Field: "spec.size", Value: n, Detail: "is immutable"}}
	}
	return nil
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// ruledDefinition is widgetDefinition with a rule on spec (the fake
// evaluator decides what it says).
func ruledDefinition() Object {
	crd := widgetDefinition("widgets", "Widget")
	spec := pathValue(crd, "spec", "versions").([]any)[0].(map[string]any)["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)["spec"].(map[string]any)
	spec["x-kubernetes-validations"] = []any{map[string]any{"rule": "self.size <= 5"}}
	return crd
}

func useRules(t *testing.T, r ValidationRules) {
	prev := validationRules
	UseValidationRules(r)
	t.Cleanup(func() { UseValidationRules(prev) })
}

// Without an evaluator (the browser's build) the rules are accepted and
// not run, and every write they would have checked says so.
func TestWithoutAnEvaluatorRulesAreKeptButNotRunAndWritesSaySo(t *testing.T) {
	useRules(t, nil)
	f := newFixture(t)
	ctx, warnings := WithWarnings(f.ctx)
	if _, err := f.s.Create(ctx, definitions, "", ruledDefinition(), WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := warnings.List(); !reflect.DeepEqual(got, []string{RulesNotEvaluated}) {
		t.Fatalf("the definition's create warned %q, want %q", got, RulesNotEvaluated)
	}
	r := f.served(t, "example.com", "v1", "widgets")
	ctx, warnings = WithWarnings(f.ctx)
	if _, err := f.s.Create(ctx, r, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"size": json.Number("9")}}, WriteOptions{}); err != nil {
		t.Fatalf("a widget the rule would refuse: %v", err)
	}
	if got := warnings.List(); !reflect.DeepEqual(got, []string{RulesNotEvaluated}) {
		t.Fatalf("the widget's create warned %q, want %q", got, RulesNotEvaluated)
	}

	f.create(t, definitions, "", widgetDefinition("gadgets", "Gadget"))
	g := f.served(t, "example.com", "v1", "gadgets")
	ctx, warnings = WithWarnings(f.ctx)
	if _, err := f.s.Create(ctx, g, "default", Object{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"}}, WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := warnings.List(); len(got) != 0 {
		t.Fatalf("a resource without rules warned %q", got)
	}
}

func TestRulesRunOnCreateAndUpdateWithTheStoredObject(t *testing.T) {
	rules := &sizeRules{}
	useRules(t, rules)
	f := newFixture(t)
	f.create(t, definitions, "", ruledDefinition())
	r := f.served(t, "example.com", "v1", "widgets")
	if rules.compiled == 0 {
		t.Fatal("the version's rules were not compiled")
	}
	widget := func(size string) Object {
		return Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
			"spec": map[string]any{"size": json.Number(size)}}
	}
	_, err := f.s.Create(f.ctx, r, "default", widget("9"), WriteOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `Widget.example.com "w" is invalid: spec.size: Invalid value: 9: at most 5`)
	w := f.create(t, r, "default", widget("2"))
	w["spec"] = map[string]any{"size": json.Number("3")}
	_, err = f.s.Update(f.ctx, r, "default", "w", "", w, WriteOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `Widget.example.com "w" is invalid: spec.size: Invalid value: 3: is immutable`)
	_, err = f.s.Update(f.ctx, r, "default", "w", "status", w, WriteOptions{})
	if err != nil {
		t.Fatalf("a status write leaves the spec as it was: %v", err)
	}
}

// TestARatchetedRuleIsAWarningOfTheWrite: a rule the stored object
// breaks (added to the definition after it was written) does not refuse
// an update that leaves the value as it was; the evaluator's warning
// reaches the writer's context, once however often the write is tried.
func TestARatchetedRuleIsAWarningOfTheWrite(t *testing.T) {
	rules := &sizeRules{}
	useRules(t, rules)
	f := newFixture(t)
	f.create(t, definitions, "", ruledDefinition())
	r := f.served(t, "example.com", "v1", "widgets")
	w := f.create(t, r, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"size": json.Number("4")}})
	rules.limit = 3
	ctx, warnings := WithWarnings(f.ctx)
	meta(w)["labels"] = map[string]any{"a": "b"}
	if _, err := f.s.Update(ctx, r, "default", "w", "", w, WriteOptions{}); err != nil {
		t.Fatalf("an update leaving the broken size as it was: %v", err)
	}
	if got, want := warnings.List(), []string{"spec.size: Invalid value: 4: at most 3"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("warnings %q, want %q", got, want)
	}
	ctx, warnings = WithWarnings(f.ctx)
	_, err := f.s.Patch(ctx, r, "default", "w", "", MergePatch, []byte(`{"spec":{"size":5}}`), PatchOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `Widget.example.com "w" is invalid: spec.size: Invalid value: 5: at most 3`)
	if len(warnings.List()) != 0 {
		t.Fatalf("a refused change warned of %q", warnings.List())
	}
}

func TestAWarningIsRecordedOnce(t *testing.T) {
	ctx, w := WithWarnings(context.Background())
	AddWarning(ctx, "a")
	AddWarning(ctx, "b")
	AddWarning(ctx, "a")
	AddWarning(context.Background(), "nobody records this")
	if got := w.List(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("warnings %q, want a then b", got)
	}
}

func TestRulesWaitForTheSchemasBlockingErrors(t *testing.T) {
	useRules(t, &sizeRules{})
	f := newFixture(t)
	f.create(t, definitions, "", ruledDefinition())
	r := f.served(t, "example.com", "v1", "widgets")
	_, err := f.s.Create(f.ctx, r, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{"size": "nine"}}, WriteOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `Widget.example.com "w" is invalid: [spec.size: Invalid value: "string": spec.size in body must be of type integer: "string", <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation]`)
}
