// Package crdrules evaluates the CEL rules of CustomResourceDefinitions
// (x-kubernetes-validations) with kube-apiserver's own code: the
// validator of k8s.io/apiextensions-apiserver's schema/cel package, its
// definition validation (compilation, cost limits, messages, reasons,
// field paths) and k8s.io/apiserver's CEL environment and libraries on
// google/cel-go. It is kube.ValidationRules for the server's build:
// those packages bring net/http, which the engine may not import, and
// about 29 MB of binary, which the browser's build could never carry
// (it serves definitions and warns that their rules are not evaluated:
// kube.RulesNotEvaluated). Use registers it.
package crdrules

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/warning"

	"github.com/rvplay/rvplay/engine/kube"
)

// Use makes every session evaluate definitions' CEL rules (for a
// program's initialization).
func Use() { kube.UseValidationRules(Rules{}) }

// scheme converts apiextensions.k8s.io/v1 to the internal types kube's
// validation reads, with v1's defaults; made on the first definition, not
// held by a server that never sees one.
var scheme = sync.OnceValue(func() *runtime.Scheme {
	s := runtime.NewScheme()
	apiextensionsinstall.Install(s)
	return s
})

// Rules is kube.ValidationRules with kube-apiserver's code.
type Rules struct{}

// Definition is the share of ValidateCustomResourceDefinition (or, with
// old, ValidateCustomResourceDefinitionUpdate, under which unchanged
// rules compile in the environment of stored expressions) that is about
// x-kubernetes-validations: the engine checks the rest of a definition
// itself (engine/kube/definition.go).
func (Rules) Definition(crd, old kube.Object) []kube.FieldError {
	in, err := internalDefinition(crd)
	if err != nil {
		return nil // the engine's own validation says what is wrong with it
	}
	var errs field.ErrorList
	if old == nil {
		errs = validation.ValidateCustomResourceDefinition(context.Background(), in)
	} else if prev, err := internalDefinition(old); err == nil {
		errs = validation.ValidateCustomResourceDefinitionUpdate(context.Background(), in, prev)
	}
	var out []kube.FieldError
	for _, e := range errs {
		if strings.Contains(e.Field, ".x-kubernetes-validations") || strings.Contains(e.Detail, "estimated rule cost total") {
			out = append(out, fieldError(e))
		}
	}
	return out
}

func internalDefinition(crd kube.Object) (*apiextensions.CustomResourceDefinition, error) {
	b, err := json.Marshal(crd)
	if err != nil {
		return nil, err
	}
	v1 := &apiextensionsv1.CustomResourceDefinition{}
	if err := json.Unmarshal(b, v1); err != nil {
		return nil, err
	}
	scheme().Default(v1)
	in := &apiextensions.CustomResourceDefinition{}
	if err := scheme().Convert(v1, in, nil); err != nil {
		return nil, err
	}
	return in, nil
}

// Compile is what the definition's handler builds for one served
// version: the structural schema (defaults pruned, as kube keeps it) and
// its CEL validator, each rule compiled once.
func (Rules) Compile(openAPIV3Schema map[string]any) kube.RuleValidator {
	b, err := json.Marshal(openAPIV3Schema)
	if err != nil {
		return nil
	}
	v1 := &apiextensionsv1.JSONSchemaProps{}
	if err := json.Unmarshal(b, v1); err != nil {
		return nil
	}
	in := &apiextensions.JSONSchemaProps{}
	if err := scheme().Convert(v1, in, nil); err != nil {
		return nil
	}
	s, err := structuralschema.NewStructural(in)
	if err != nil {
		return nil
	}
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return nil
	}
	v := cel.NewValidator(s, true, celconfig.PerCallLimit)
	if v == nil {
		return nil
	}
	return &validator{schema: s, cel: v}
}

type validator struct {
	schema *structuralschema.Structural
	cel    *cel.Validator
}

// Validate is the rules' step of customResourceStrategy's Validate and
// ValidateUpdate: the whole object within kube's runtime cost budget,
// with ratcheting on an update (a rule that fails on a value the update
// left as it was is no error, CRDValidationRatcheting being GA, but a
// warning, which kube's validator gives its context's recorder and
// which reaches ctx's).
func (v *validator) Validate(ctx context.Context, o, old kube.Object) []kube.FieldError {
	obj := unstructured(o)
	ctx = warning.WithWarningRecorder(ctx, recorder{ctx})
	var errs field.ErrorList
	if old == nil {
		errs, _ = v.cel.Validate(ctx, nil, v.schema, obj, nil, celconfig.RuntimeCELCostBudget)
	} else {
		prev := unstructured(old)
		correlated := common.NewCorrelatedObject(obj, prev, &model.Structural{Structural: v.schema})
		errs, _ = v.cel.Validate(ctx, nil, v.schema, obj, prev, celconfig.RuntimeCELCostBudget, cel.WithRatcheting(correlated))
	}
	out := make([]kube.FieldError, len(errs))
	for i, e := range errs {
		out[i] = fieldError(e)
	}
	return out
}

// recorder is kube's warning.Recorder over the engine's: the warnings
// kube's code records go to the request's (agent "-", kube's default).
type recorder struct{ ctx context.Context }

func (r recorder) AddWarning(_, text string) { kube.AddWarning(r.ctx, text) }

// unstructured is the object as kube's JSON decoding gives it to the
// validator: integers as int64, other numbers as float64.
func unstructured(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = unstructured(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = unstructured(e)
		}
		return l
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return n
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// fieldError is e as the engine words it: its value given so that the
// engine renders it as e's ErrorBody does (JSON beyond scalars).
func fieldError(e *field.Error) kube.FieldError {
	fe := kube.FieldError{Type: string(e.Type), Field: e.Field, Detail: e.Detail, Value: e.BadValue}
	switch e.BadValue.(type) {
	case field.OmitValueType:
		fe.Value = kube.OmittedValue
	case nil, string, bool, int32, int64, float64:
	default:
		if b, err := json.Marshal(e.BadValue); err == nil {
			fe.Value = json.RawMessage(b)
		}
	}
	return fe
}
