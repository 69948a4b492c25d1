package kube

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// definitions is apiextensions.k8s.io/v1 CustomResourceDefinitions, with
// apiextensions-apiserver's strategy: names defaulted, status written by
// the server (definitionControllers), an update must carry a
// resourceVersion, and a delete that first marks the definition and
// removes its custom resources (deleteDefinition).
var definitions = &Resource{
	Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition", ListKind: "CustomResourceDefinitionList",
	Resource: "customresourcedefinitions", Singular: "customresourcedefinition",
	ShortNames: []string{"crd", "crds"}, Categories: []string{"api-extensions"}, Verbs: standardVerbs,
	StorageVersionHash: "jfWCUB31mvA=", Status: true, Generation: SpecGeneration,
	Storage: "apiextensions.k8s.io/customresourcedefinitions",
	Columns: []Column{{Name: "Name", Type: "string", Format: "name", Description: nameDoc, Cell: nameColumn.Cell}, {Name: "Created At", Type: "date", Description: createdDoc,
		Cell: func(o Object, _ time.Time) any { return str(meta(o), "creationTimestamp") }}},
	Default: defaultDefinition,
	PrepareForCreate: func(o Object) {
		st := map[string]any{"acceptedNames": map[string]any{"plural": "", "kind": ""}}
		if v := storageVersion(o); v != "" {
			st["storedVersions"] = []any{v}
		}
		o["status"] = st
	},
	Validate:      validateDefinition,
	ValidateRules: validateDefinitionRules,
}

// Definitions are served with the built-in resources, on every build.
func init() { Resources = append(Resources, definitions) }

// The finalizer a definition's deletion waits on, and the manager its
// controllers write status as.
const (
	cleanupFinalizer  = "customresourcecleanup.apiextensions.k8s.io"
	definitionManager = "kube-apiserver"
)

func defaultDefinition(o Object) {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		return
	}
	if names, ok := spec["names"].(map[string]any); ok {
		if kind := str(names, "kind"); kind != "" {
			setDefault(names, "singular", strings.ToLower(kind))
			setDefault(names, "listKind", kind+"List")
		}
	}
	setDefault(spec, "conversion", map[string]any{"strategy": "None"})
}

// storageVersion is the name of the version marked storage (the first).
func storageVersion(crd Object) string {
	for _, v := range listOf(pathValue(crd, "spec", "versions")) {
		if vm, _ := v.(map[string]any); vm["storage"] == true {
			return str(vm, "name")
		}
	}
	return ""
}

// validateDefinition is the part of ValidateCustomResourceDefinition
// learners meet: the name, the group, the scope, the versions (one
// storage version, a schema each), the names, the schemas' structural
// rules and the stored versions.
func validateDefinition(o Object) []FieldError {
	spec, _ := o["spec"].(map[string]any)
	names, _ := spec["names"].(map[string]any)
	group, plural := str(spec, "group"), str(names, "plural")
	var errs []FieldError
	if name := Name(o); name != plural+"."+group {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "metadata.name", Value: name, Detail: `must be spec.names.plural+"."+spec.group`})
	}
	versions := listOf(spec["versions"])
	for i, v := range versions {
		vm, _ := v.(map[string]any)
		if pathValue(vm, "schema", "openAPIV3Schema") == nil {
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: fmt.Sprintf("spec.versions[%d].schema.openAPIV3Schema", i)})
		}
	}
	switch {
	case group == "":
		errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: "spec.group"})
	case !strings.Contains(group, "."):
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "spec.group", Value: group, Detail: "should be a domain with at least one dot"})
	default:
		for _, msg := range IsDNS1123Subdomain(group) {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "spec.group", Value: group, Detail: msg})
		}
	}
	switch scope := str(spec, "scope"); scope {
	case "":
		errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: "spec.scope"})
	case "Cluster", "Namespaced":
	default:
		errs = append(errs, FieldError{Type: CauseFieldValueNotSupported, Field: "spec.scope", Value: scope, Detail: `supported values: "Cluster", "Namespaced"`})
	}
	storages := 0
	seen := map[string]bool{}
	for i, v := range versions {
		vm, _ := v.(map[string]any)
		if vm["storage"] == true {
			storages++
		}
		f := fmt.Sprintf("spec.versions[%d]", i)
		name := str(vm, "name")
		switch {
		case name == "":
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: f + ".name"})
		case seen[name]:
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "spec.versions", Value: name, Detail: "must appear only once"})
		default:
			for _, msg := range IsDNS1035Label(name) {
				errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: f + ".name", Value: name, Detail: msg})
			}
		}
		seen[name] = true
		errs = append(errs, validateColumns(f, vm)...)
	}
	if storages != 1 {
		var shown any = spec["versions"]
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "spec.versions", Value: shown, Detail: "must have exactly one version marked as storage version"})
	}
	errs = append(errs, validateNames(names)...)
	errs = append(errs, validateSchemas(versions)...)
	errs = append(errs, validateConversion(spec)...)
	stored := stringList(pathValue(o, "status", "storedVersions"))
	if len(stored) == 0 {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "status.storedVersions", Value: nil, Detail: "must have at least one stored version"})
	} else if sv := storageVersion(o); storages == 1 && !slices.Contains(stored, sv) {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "status.storedVersions", Value: pathValue(o, "status", "storedVersions"),
			Detail: "must have the storage version " + sv})
	}
	return errs
}

// validateNames is ValidateCustomResourceDefinitionNames.
func validateNames(names map[string]any) []FieldError {
	var errs []FieldError
	for _, k := range []string{"plural", "singular", "kind", "listKind"} {
		v := str(names, k)
		f := "spec.names." + k
		switch {
		case v == "":
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: f})
		case k == "plural" || k == "singular":
			for _, msg := range IsDNS1035Label(v) {
				errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: f, Value: v, Detail: msg})
			}
		}
	}
	if kind, lk := str(names, "kind"), str(names, "listKind"); kind != "" && kind == lk {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "spec.names.listKind", Value: lk, Detail: "kind and listKind may not be the same"})
	}
	for i, sn := range stringList(names["shortNames"]) {
		for _, msg := range IsDNS1035Label(sn) {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: fmt.Sprintf("spec.names.shortNames[%d]", i), Value: sn, Detail: msg})
		}
	}
	return errs
}

// validateColumns checks a version's printer columns: a name, a known
// type and a JSONPath the table can read.
func validateColumns(f string, version map[string]any) []FieldError {
	var errs []FieldError
	for i, c := range listOf(version["additionalPrinterColumns"]) {
		cm, _ := c.(map[string]any)
		cf := fmt.Sprintf("%s.additionalPrinterColumns[%d]", f, i)
		if str(cm, "name") == "" {
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: cf + ".name"})
		}
		switch t := str(cm, "type"); t {
		case "integer", "number", "string", "boolean", "date":
		case "":
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: cf + ".type"})
		default:
			errs = append(errs, FieldError{Type: CauseFieldValueNotSupported, Field: cf + ".type", Value: t,
				Detail: `supported values: "boolean", "date", "integer", "number", "string"`})
		}
		if p := str(cm, "jsonPath"); p == "" {
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: cf + ".jsonPath"})
		} else if _, err := parseJSONPath(p); err != nil {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: cf + ".jsonPath", Value: p, Detail: "must be a simple json path starting with ."})
		}
	}
	return errs
}

// validateSchemas checks each version's schema is structural. kube
// reports a schema that every version shares under the internal API's
// spec.validation, as it stores it.
func validateSchemas(versions []any) []FieldError {
	var schemas []any
	for _, v := range versions {
		vm, _ := v.(map[string]any)
		schemas = append(schemas, pathValue(vm, "schema", "openAPIV3Schema"))
	}
	shared := len(schemas) > 0
	for _, s := range schemas[min(1, len(schemas)):] {
		shared = shared && schema.JSONEqual(s, schemas[0])
	}
	var errs []FieldError
	for i, s := range schemas {
		if s == nil {
			continue
		}
		f := fmt.Sprintf("spec.versions[%d].schema.openAPIV3Schema", i)
		if shared {
			f = "spec.validation.openAPIV3Schema"
		}
		for _, v := range schema.StructuralErrors(f, s) {
			errs = append(errs, FieldError{Type: v.Type, Field: v.Field, Value: v.Value, Detail: v.Detail})
		}
		if shared {
			break
		}
	}
	return errs
}

// conditionOf returns the definition's condition of type t, or nil.
func conditionOf(crd Object, t string) map[string]any {
	for _, c := range listOf(pathValue(crd, "status", "conditions")) {
		if cm, _ := c.(map[string]any); str(cm, "type") == t {
			return cm
		}
	}
	return nil
}

// setCondition is SetCRDCondition: the condition replaces the one of its
// type, keeping its lastTransitionTime when its status did not change.
func setCondition(crd Object, typ, status, reason, message, now string) {
	st, _ := crd["status"].(map[string]any)
	if st == nil {
		st = map[string]any{}
		crd["status"] = st
	}
	c := map[string]any{"type": typ, "status": status, "lastTransitionTime": now, "reason": reason, "message": message}
	conds := listOf(st["conditions"])
	for i, e := range conds {
		if em, _ := e.(map[string]any); str(em, "type") == typ {
			if str(em, "status") == status {
				c["lastTransitionTime"] = em["lastTransitionTime"]
			}
			conds[i] = c
			return
		}
	}
	st["conditions"] = append(conds, c)
}

func isEstablished(crd Object) bool {
	c := conditionOf(crd, "Established")
	return c != nil && str(c, "status") == "True"
}

// acceptedNames is what kube's naming controller decides: each name the
// spec asks for, unless another definition of the group holds it; the
// NamesAccepted condition says which conflict (the last one found) kept
// a name back.
func acceptedNames(crd Object, others []Object) (map[string]any, [3]string) {
	group := str(crd["spec"].(map[string]any), "group")
	resources, kinds := map[string]bool{}, map[string]bool{}
	for _, o := range others {
		if Name(o) == Name(crd) || str(pathValue(o, "spec").(map[string]any), "group") != group {
			continue
		}
		an, _ := pathValue(o, "status", "acceptedNames").(map[string]any)
		resources[str(an, "plural")], resources[str(an, "singular")] = true, true
		for _, s := range stringList(an["shortNames"]) {
			resources[s] = true
		}
		kinds[str(an, "kind")], kinds[str(an, "listKind")] = true, true
	}
	delete(resources, "")
	delete(kinds, "")
	want, _ := pathValue(crd, "spec", "names").(map[string]any)
	had, _ := pathValue(crd, "status", "acceptedNames").(map[string]any)
	out := map[string]any{}
	for k, v := range had {
		out[k] = v
	}
	cond := [3]string{"True", "NoConflicts", "no conflicts found"}
	check := func(k, reason string, used map[string]bool) {
		w := str(want, k)
		if w != str(had, k) && used[w] {
			cond = [3]string{"False", reason, strconv.Quote(w) + " is already in use"}
			return
		}
		if w == "" {
			delete(out, k)
		} else {
			out[k] = w
		}
	}
	check("plural", "PluralConflict", resources)
	check("singular", "SingularConflict", resources)
	if !schema.JSONEqual(want["shortNames"], had["shortNames"]) {
		var msgs []string
		mine := stringList(had["shortNames"])
		for _, s := range stringList(want["shortNames"]) {
			if !slices.Contains(mine, s) && resources[s] {
				msgs = append(msgs, strconv.Quote(s)+" is already in use")
			}
		}
		switch {
		case len(msgs) == 1:
			cond = [3]string{"False", "ShortNamesConflict", msgs[0]}
		case len(msgs) > 1:
			cond = [3]string{"False", "ShortNamesConflict", "[" + strings.Join(msgs, ", ") + "]"}
		case want["shortNames"] == nil:
			delete(out, "shortNames")
		default:
			out["shortNames"] = want["shortNames"]
		}
	}
	check("kind", "KindConflict", kinds)
	check("listKind", "ListKindConflict", kinds)
	if c, ok := want["categories"]; ok {
		out["categories"] = c
	} else {
		delete(out, "categories")
	}
	if _, ok := out["plural"]; !ok {
		out["plural"] = ""
	}
	if _, ok := out["kind"]; !ok {
		out["kind"] = ""
	}
	return out, cond
}
