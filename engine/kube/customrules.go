package kube

import (
	"context"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// ValidationRules evaluates the CEL rules of a CustomResourceDefinition's
// schemas (x-kubernetes-validations: rule, message, messageExpression,
// fieldPath, reason; transition rules on oldSelf) as kube-apiserver
// does. The engine does not evaluate them itself: kube's evaluator
// (k8s.io/apiextensions-apiserver on google/cel-go) brings net/http and
// some 20 MB with it, so the server links it (server/crdrules) and hands
// it to the engine with UseValidationRules. A build without one, the
// browser's among them, accepts the rules and does not evaluate them,
// and says so: a Warning on every write of a definition that has rules
// and of a custom resource whose version has them (RulesNotEvaluated).
// It does not pretend to be a kube-apiserver without CEL: kube's own
// evaluator is always there.
type ValidationRules interface {
	// Definition checks the rules of a definition being created (old
	// nil) or updated: they compile, within kube's cost limits, and
	// their messages, reasons and field paths are well formed. The
	// errors are kube's, at kube's field paths.
	Definition(crd, old Object) []FieldError
	// Compile returns what evaluates the rules of one version's
	// openAPIV3Schema, or nil when it has none.
	Compile(openAPIV3Schema map[string]any) RuleValidator
}

// RuleValidator evaluates one version's rules on a custom resource: old
// is the stored object on an update (transition rules and ratcheting
// see it), nil on a create. A rule an update ratchets (it fails on a
// value the update left as it was) is no error but a warning, which
// Validate adds to ctx (AddWarning) in kube's words.
type RuleValidator interface {
	Validate(ctx context.Context, o, old Object) []FieldError
}

// validationRules is the evaluator the build was given; nil: rules are
// not evaluated.
var validationRules ValidationRules

// UseValidationRules makes every session's custom resources evaluate
// their definitions' CEL rules with r. It is meant for a program's
// initialization, before any session serves a request.
func UseValidationRules(r ValidationRules) { validationRules = r }

// validateRules is the last step of customResourceStrategy's Validate
// and ValidateUpdate: the CEL rules run on an object that passed the
// schema's blocking checks; when it did not, one error says they were
// not run.
func (cr *customResource) validateRules(ctx context.Context, o, old Object, errs []FieldError) []FieldError {
	if cr.rules == nil {
		return errs
	}
	for _, e := range errs {
		switch e.Type {
		case CauseFieldValueNotSupported, CauseFieldValueRequired, CauseFieldValueTooLong, CauseFieldValueTooMany, CauseFieldValueTypeInvalid:
			// kube's field.Invalid(nil, nil, …): no path, a null value
			return append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "<nil>", Value: nil,
				Detail: "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"})
		}
	}
	return append(errs, cr.rules.Validate(ctx, o, old)...)
}

// RulesNotEvaluated is the Warning of a build without a CEL evaluator
// (the browser's) on a write whose definition has
// x-kubernetes-validations: the rules were accepted and not run, so an
// object they would refuse is stored.
const RulesNotEvaluated = "x-kubernetes-validations rules are not evaluated by this server (rvplay's browser engine has no CEL evaluator; a server session evaluates them)"

// compileRules is the version's evaluator, when the schema has rules:
// the build's, or one that warns that they are not evaluated.
func compileRules(raw map[string]any) RuleValidator {
	if !hasRules(raw) {
		return nil
	}
	if validationRules == nil {
		return rulesNotEvaluated{}
	}
	return validationRules.Compile(raw)
}

// rulesNotEvaluated is a version's rules in a build without an
// evaluator.
type rulesNotEvaluated struct{}

func (rulesNotEvaluated) Validate(ctx context.Context, _, _ Object) []FieldError {
	AddWarning(ctx, RulesNotEvaluated)
	return nil
}

// validateDefinitionRules is the definitions' share of the rules: their
// compilation, on a create and on an update that changes the spec, when
// the definition has rules (without an evaluator, a warning on every
// write of such a definition).
func validateDefinitionRules(ctx context.Context, crd, old Object, errs []FieldError) []FieldError {
	if !hasRules(crd["spec"]) {
		return errs
	}
	if validationRules == nil {
		AddWarning(ctx, RulesNotEvaluated)
		return errs
	}
	if old != nil && schema.JSONEqual(crd["spec"], old["spec"]) {
		return errs
	}
	return append(errs, validationRules.Definition(crd, old)...)
}

// hasRules reports whether a schema (decoded JSON) declares
// x-kubernetes-validations anywhere.
func hasRules(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		if _, ok := x["x-kubernetes-validations"]; ok {
			return true
		}
		for _, e := range x {
			if hasRules(e) {
				return true
			}
		}
	case []any:
		for _, e := range x {
			if hasRules(e) {
				return true
			}
		}
	}
	return false
}

// OmittedValue is the Value of a FieldError that shows none, as kube's
// field.OmitValueType (a rule on an object or a list reports no value).
var OmittedValue any = noValueT{}
