package kube

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/duration"
	"github.com/rvplay/rvplay/engine/kube/schema"
)

// customResource is what a custom resource's Resource knows of its
// definition: the version's schema (pruning, defaulting, validation) and
// what its subresources read.
type customResource struct {
	schema *schema.Structural
	typ    *schema.Type
	// rawSchema is the version's openAPIV3Schema as written, published in
	// the OpenAPI documents.
	rawSchema map[string]any
	scale     *customScale
	// rules evaluates the schema's CEL rules (nil: none, or a build
	// that does not evaluate them).
	rules RuleValidator
}

// customResourceVerbs are the verbs discovery lists for a custom resource,
// in apiextensions' order.
var customResourceVerbs = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}

// newCustomResource is the Resource that serves one version of a
// definition, under the names its status accepted, with the strategy of
// apiextensions' customResourceStrategy: generation moves when anything
// but metadata (and status, with the status subresource) changes, an
// update must carry a resourceVersion, status is written only through
// its subresource when there is one.
func newCustomResource(crd Object, version map[string]any) *Resource {
	spec, _ := crd["spec"].(map[string]any)
	group := str(spec, "group")
	names, _ := pathValue(crd, "status", "acceptedNames").(map[string]any)
	v := str(version, "name")
	r := &Resource{
		Group: group, Version: v,
		Kind: str(names, "kind"), ListKind: str(names, "listKind"),
		Resource: str(names, "plural"), Singular: str(names, "singular"),
		Namespaced: str(spec, "scope") == "Namespaced",
		ShortNames: stringList(names["shortNames"]), Categories: stringList(names["categories"]),
		Verbs:   customResourceVerbs,
		Storage: group + "/" + str(names, "plural"),
	}
	if r.ListKind == "" {
		r.ListKind = r.Kind + "List"
	}
	for _, ver := range listOf(spec["versions"]) {
		if vm, _ := ver.(map[string]any); vm["storage"] == true {
			r.StorageVersionHash = storageVersionHash(group, str(vm, "name"), str(pathValue(crd, "spec", "names").(map[string]any), "kind"))
			if len(listOf(spec["versions"])) > 1 {
				// also for the storage version itself: what was stored
				// before the storage version moved is in another
				r.conv = noneConversion(r.GroupVersion(), group+"/"+str(vm, "name"))
			}
		}
	}
	cr := &customResource{}
	r.custom = cr
	cr.rawSchema, _ = pathValue(version, "schema", "openAPIV3Schema").(map[string]any)
	if cr.rawSchema != nil {
		cr.schema = schema.ParseStructural(cr.rawSchema)
	}
	gvk := schema.GVK{Group: group, Version: v, Kind: r.Kind}
	cr.typ = cr.schema.ResourceType(definitionName(group, v, r.Kind), gvk)
	if _, ok := pathValue(version, "subresources", "status").(map[string]any); ok {
		r.Status = true
	}
	if sc, ok := pathValue(version, "subresources", "scale").(map[string]any); ok {
		r.Scale = true
		cr.scale = &customScale{specReplicas: str(sc, "specReplicasPath"), statusReplicas: str(sc, "statusReplicasPath"), labelSelector: str(sc, "labelSelectorPath")}
	}
	r.Generation = ContentGeneration
	r.Default = func(o Object) { cr.schema.ApplyDefaults(o) }
	r.PrepareForCreate = func(o Object) {
		if r.Status {
			delete(o, "status")
		}
	}
	r.Validate = cr.validate
	if cr.rules = compileRules(cr.rawSchema); cr.rules != nil {
		r.ValidateRules = cr.validateRules
	}
	if r.Status {
		r.ValidateStatus = func(o Object) []FieldError { return cr.validateStatus(o) }
	}
	r.Columns = customColumns(listOf(version["additionalPrinterColumns"]))
	r.FieldSelectors = selectableFields(listOf(version["selectableFields"]))
	return r
}

// noneConversion is a definition's conversion strategy None (the only one
// served here): an object of another version is the same object with its
// apiVersion changed, stored in the storage version's.
func noneConversion(served, storage string) *conversion {
	return &conversion{
		fromStorage: func(o Object) { o["apiVersion"] = served },
		toStorage:   func(o Object) { o["apiVersion"] = storage },
	}
}

// definitionName is the OpenAPI definition name kube gives a custom
// resource's kind: the group reversed, then version and kind
// (stable.example.com/v1 CronTab: com.example.stable.v1.CronTab).
func definitionName(group, version, kind string) string {
	parts := strings.Split(group, ".")
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, ".") + "." + version + "." + kind
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

func stringList(v any) []string {
	var out []string
	for _, e := range listOf(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// validate is customResourceStrategy.Validate after the metadata (kind
// and apiVersion are DecodeBody's): the schema, the map lists' keys, then
// the scale subresource's paths.
func (cr *customResource) validate(o Object) []FieldError {
	var errs []FieldError
	if cr.schema != nil {
		errs = append(errs, violations(cr.schema.Validate("", o))...)
	}
	if cr.scale != nil {
		errs = append(errs, cr.scale.validate(o, true)...)
	}
	if cr.schema != nil {
		errs = append(errs, violations(cr.schema.ListErrors(o))...)
	}
	return errs
}

// validateStatus is the status subresource's validation: the status
// against its own schema (messages name paths within it, fields are
// under "status"), and the scale's status paths.
func (cr *customResource) validateStatus(o Object) []FieldError {
	var errs []FieldError
	if st, ok := o["status"]; ok && cr.schema != nil {
		errs = append(errs, violations(cr.schema.Properties["status"].Validate("status", st))...)
	}
	if cr.scale != nil {
		errs = append(errs, cr.scale.validate(o, false)...)
	}
	return errs
}

func violations(vs []schema.Violation) []FieldError {
	out := make([]FieldError, len(vs))
	for i, v := range vs {
		out[i] = FieldError{Type: v.Type, Field: v.Field, Value: v.Value, Detail: v.Detail}
	}
	return out
}

// validate checks the replicas (and with spec, the desired replicas) are
// integers of int32's range and the selector a string, as
// ValidateScaleSpec and ValidateScaleStatus do.
func (sc *customScale) validate(o Object, spec bool) []FieldError {
	var errs []FieldError
	paths := []string{sc.statusReplicas}
	if spec {
		paths = []string{sc.specReplicas, sc.statusReplicas}
	}
	for _, p := range paths {
		v, found := nestedField(o, p)
		if !found {
			continue
		}
		n, ok := numberInt(v)
		switch {
		case !ok:
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: p, Value: jsonInt(0),
				Detail: fmt.Sprintf("%s accessor error: %v is of the type %s, expected int64", p, v, goTypeName(v))})
		case n < 0:
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: p, Value: jsonInt(n), Detail: "should be a non-negative integer"})
		case n > math.MaxInt32:
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: p, Value: jsonInt(n), Detail: fmt.Sprintf("should be less than or equal to %d", math.MaxInt32)})
		}
	}
	if sc.labelSelector != "" {
		if v, found := nestedField(o, sc.labelSelector); found {
			if _, ok := v.(string); !ok {
				errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: sc.labelSelector, Value: "",
					Detail: fmt.Sprintf("%s accessor error: %v is of the type %s, expected string", sc.labelSelector, v, goTypeName(v))})
			}
		}
	}
	return errs
}

func goTypeName(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "bool"
	case map[string]any:
		return "map[string]interface {}"
	case []any:
		return "[]interface {}"
	case json.Number:
		return "float64"
	}
	return fmt.Sprintf("%T", v)
}

// customColumns are the printer columns: the name, then each declared
// column (or Age when none is declared), as apiextensions' table
// convertor prints them.
func customColumns(defs []any) []Column {
	if len(defs) == 0 {
		defs = []any{map[string]any{"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}}
	}
	cols := []Column{{Name: "Name", Type: "string", Format: "name", Description: nameDoc, Cell: nameColumn.Cell}}
	for _, d := range defs {
		dm, _ := d.(map[string]any)
		path, err := parseJSONPath(str(dm, "jsonPath"))
		desc := str(dm, "description")
		if desc == "" {
			desc = "Custom resource definition column (in JSONPath format): " + str(dm, "jsonPath")
		}
		typ := str(dm, "type")
		prio, _ := numberInt(dm["priority"])
		cols = append(cols, Column{Name: str(dm, "name"), Type: typ, Format: str(dm, "format"), Description: desc, Priority: int(prio),
			Cell: func(o Object, now time.Time) any {
				if err != nil {
					return nil
				}
				v, ok := path.get(o)
				if !ok {
					return nil
				}
				return columnCell(typ, v, now)
			}})
	}
	return cols
}

// The descriptions apiextensions' table convertor gives the name column
// and a definition's Created At column: ObjectMeta's.
const (
	nameDoc    = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
	createdDoc = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)

// columnCell is cellForJSONValue: a value of the column's type, or nil.
func columnCell(typ string, v any, now time.Time) any {
	if v == nil {
		return nil
	}
	switch typ {
	case "string":
		return scalarText(v)
	case "integer":
		if n, ok := numberInt(v); ok {
			return jsonInt(n)
		}
		if f, ok := v.(json.Number); ok {
			if x, err := f.Float64(); err == nil {
				return jsonInt(int64(x))
			}
		}
	case "number":
		if f, ok := v.(json.Number); ok {
			return f
		}
	case "boolean":
		if b, ok := v.(bool); ok {
			return b
		}
	case "date":
		if s, ok := v.(string); ok {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				return "<invalid>"
			}
			return duration.HumanDuration(now.Sub(t))
		}
	}
	return nil
}

// selectableFields are a version's field selectors beyond metadata.name
// and metadata.namespace.
func selectableFields(defs []any) map[string]func(Object) string {
	if len(defs) == 0 {
		return nil
	}
	out := map[string]func(Object) string{}
	for _, d := range defs {
		p := str(d.(map[string]any), "jsonPath")
		path, err := parseJSONPath(p)
		if err != nil {
			continue
		}
		out[strings.TrimPrefix(p, ".")] = func(o Object) string {
			v, ok := path.get(o)
			if !ok {
				return ""
			}
			return scalarText(v)
		}
	}
	return out
}

// storageVersionHash is discovery's storageVersionHash of a custom
// resource: the first 8 bytes of the SHA-256 of group/version/kind, in
// base64, as kube-apiserver computes it for its own types.
func storageVersionHash(group, version, kind string) string {
	sum := sha256Sum([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// OpenAPI is how the OpenAPI documents describe a custom resource; false
// for the built-in ones (schema.Resources describes those).
func (r *Resource) OpenAPI() (schema.Resource, bool) {
	if r.custom == nil {
		return schema.Resource{}, false
	}
	var subs []string
	if r.Scale {
		subs = append(subs, "scale")
	}
	if r.Status {
		subs = append(subs, "status")
	}
	return schema.Resource{Group: r.Group, Version: r.Version, Plural: r.Resource, Kind: r.Kind, Namespaced: r.Namespaced,
		Subresources: subs, Custom: &schema.CustomSchema{Name: definitionName(r.Group, r.Version, r.Kind), Schema: r.custom.rawSchema}}, true
}
