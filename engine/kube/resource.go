package kube

import (
	"sync"

	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Generation says when metadata.generation moves.
type Generation int

const (
	// NoGeneration: the type has no metadata.generation (configmaps).
	NoGeneration Generation = iota
	// SpecGeneration: 1 on create, +1 when spec changes (pods).
	SpecGeneration
	// SpecAnnotationsGeneration: as SpecGeneration, and annotations count
	// as spec (deployments).
	SpecAnnotationsGeneration
	// ContentGeneration: 1 on create, +1 when anything but metadata (and
	// status, with a status subresource) changes (custom resources).
	ContentGeneration
)

// Resource describes one served resource: its names, its discovery entry
// and its strategy (what kube-apiserver's registry does for the type).
// Adding a resource is one entry in Resources.
type Resource struct {
	Group, Version     string
	Kind, ListKind     string
	Resource, Singular string
	Namespaced         bool
	ShortNames         []string
	Categories         []string
	Verbs              []string
	StorageVersionHash string
	// Storage is the etcd key segment after /registry/ (default: the
	// plural; a custom resource's is <group>/<plural>).
	Storage string
	// TTL, when set, is how long in seconds an object lives after each
	// write: it is put with an etcd lease (lease.go), as kube-apiserver
	// does for Events (--event-ttl).
	TTL int64
	// Status and Scale name the subresources the type has.
	Status, Scale bool
	// AllowUnconditionalUpdate lets a PUT without resourceVersion through.
	AllowUnconditionalUpdate bool
	Generation               Generation
	// ReturnDeletedObject answers a delete with the object instead of a
	// success Status.
	ReturnDeletedObject bool
	// NameIsLabel validates names as DNS-1123 labels (else subdomains).
	NameIsLabel bool
	// NameIsPathSegment validates names only as a path segment (kube's
	// generic ValidatePathSegmentName: core/v1 Events, whose own rules
	// leave names to it).
	NameIsPathSegment bool
	// FieldSelectors are the field selector labels beyond metadata.name and
	// metadata.namespace, with how to read them from an object.
	FieldSelectors map[string]func(Object) string
	// Default fills defaults, as decoding does in kube-apiserver.
	Default func(o Object)
	// PrepareForCreate resets what a client may not set on create (status)
	// and adds what the strategy adds; it runs after the create's
	// managedFields are recorded, so what it adds is owned by no manager.
	PrepareForCreate func(o Object)
	// PrepareForUpdate keeps what the strategy keeps from the stored
	// object cur on an update of the main resource (beyond status).
	PrepareForUpdate func(cur, o Object)
	// Validate checks the type's own rules (beyond object metadata).
	Validate func(o Object) []FieldError
	// StatusKeepsMetadata, when set, is the type's status strategy for
	// metadata: a write through /status takes the new object's metadata
	// (the system fields aside), and the function puts back what the
	// strategy keeps from the stored object. Nil: the status subresource
	// writes only status (metav1.ResetObjectMetaForStatus).
	StatusKeepsMetadata func(cur, next map[string]any)
	// ValidateStatus, when set, replaces Validate for writes through the
	// status subresource.
	ValidateStatus func(o Object) []FieldError
	// ValidateRules, when set, runs after Validate (or ValidateStatus)
	// with the stored object on an update (nil on a create) and the
	// errors so far: a definition's CEL rules (customrules.go), which may
	// also add warnings to ctx (AddWarning).
	ValidateRules func(ctx context.Context, o, old Object, errs []FieldError) []FieldError
	// Columns are what kubectl get prints (server-side Tables); none
	// means Name and Age.
	Columns []Column

	schemaOnce sync.Once
	schemaType *schema.Type
	// custom is the definition a custom resource is served from.
	custom *customResource
	// conv, when set, is how the objects are stored in another version's
	// form (convert.go).
	conv *conversion
}

// Schema is the type's description in package schema (field order,
// emitted zero values, unknown fields, apply semantics), or nil.
//
// (not inlined: its callers are many, and its once-function would be
// copied into each)
//
//go:noinline
func (r *Resource) Schema() *schema.Type {
	r.schemaOnce.Do(func() {
		if r.Custom() {
			r.schemaType = r.custom.typ
		} else {
			r.schemaType = schema.ForGVK(r.GroupVersion(), r.Kind)
		}
	})
	return r.schemaType
}

// watchable reports whether the resource serves watch (and so has a watch
// cache).
func (r *Resource) watchable() bool {
	for _, v := range r.Verbs {
		if v == "watch" {
			return true
		}
	}
	return false
}

// GroupVersion is "v1" or "apps/v1".
func (r *Resource) GroupVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// QualifiedResource is "configmaps" or "deployments.apps".
func (r *Resource) QualifiedResource() string { return qualifiedResource(r.Group, r.Resource) }

// Prefix is the etcd key prefix of the resource in namespace ns ("" = all).
func (r *Resource) Prefix(ns string) string {
	if r.Namespaced && ns != "" {
		return "/registry/" + r.storage() + "/" + ns + "/"
	}
	return "/registry/" + r.storage() + "/"
}

// Key is the etcd key of one object.
func (r *Resource) Key(ns, name string) string {
	if r.Namespaced {
		return "/registry/" + r.storage() + "/" + ns + "/" + name
	}
	return "/registry/" + r.storage() + "/" + name
}

func (r *Resource) storage() string {
	if r.Storage != "" {
		return r.Storage
	}
	return r.Resource
}

func (r *Resource) validateName(name string) []string {
	if r.NameIsPathSegment {
		return IsValidPathSegmentName(name)
	}
	if r.NameIsLabel {
		return IsDNS1123Label(name)
	}
	return IsDNS1123Subdomain(name)
}

var standardVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// Resources is the table of served resources.
var Resources = []*Resource{
	{
		Version: "v1", Kind: "ConfigMap", Columns: configMapColumns, ListKind: "ConfigMapList", Resource: "configmaps", Singular: "configmap",
		Namespaced: true, ShortNames: []string{"cm"}, Verbs: standardVerbs, StorageVersionHash: "qFsyl6wFWjQ=",
		AllowUnconditionalUpdate: true,
		Validate:                 validateConfigMap,
	},
	{
		Version: "v1", Kind: "Event", Columns: eventColumns, ListKind: "EventList", Resource: "events", Singular: "event",
		Namespaced: true, ShortNames: []string{"ev"}, Verbs: standardVerbs, StorageVersionHash: "r2yiGXH7wu8=",
		AllowUnconditionalUpdate: true, TTL: EventTTL,
		FieldSelectors: map[string]func(Object) string{
			"involvedObject.kind":            pathString("involvedObject", "kind"),
			"involvedObject.namespace":       pathString("involvedObject", "namespace"),
			"involvedObject.name":            pathString("involvedObject", "name"),
			"involvedObject.uid":             pathString("involvedObject", "uid"),
			"involvedObject.apiVersion":      pathString("involvedObject", "apiVersion"),
			"involvedObject.resourceVersion": pathString("involvedObject", "resourceVersion"),
			"involvedObject.fieldPath":       pathString("involvedObject", "fieldPath"),
			"reason":                         pathString("reason"),
			"reportingComponent":             pathString("reportingComponent"),
			"source":                         pathString("source", "component"),
			"type":                           pathString("type"),
		},
	},
	{
		Version: "v1", Kind: "Namespace", Columns: namespaceColumns, ListKind: "NamespaceList", Resource: "namespaces", Singular: "namespace",
		ShortNames: []string{"ns"}, Verbs: []string{"create", "delete", "get", "list", "patch", "update", "watch"},
		StorageVersionHash: "Q3oi5N2YM8M=", Status: true, AllowUnconditionalUpdate: true, NameIsLabel: true,
		FieldSelectors:   map[string]func(Object) string{"status.phase": pathString("status", "phase")},
		Default:          defaultNamespace,
		PrepareForCreate: prepareNamespace,
		PrepareForUpdate: keepNamespaceFinalizers,
	},
	{
		Version: "v1", Kind: "Pod", Columns: podColumns, ListKind: "PodList", Resource: "pods", Singular: "pod",
		Namespaced: true, ShortNames: []string{"po"}, Categories: []string{"all"}, Verbs: standardVerbs,
		StorageVersionHash: "xPOwRZ+Yhw8=", Status: true, AllowUnconditionalUpdate: true,
		Generation: SpecGeneration, ReturnDeletedObject: true,
		FieldSelectors: map[string]func(Object) string{
			"spec.nodeName":           pathString("spec", "nodeName"),
			"spec.restartPolicy":      pathString("spec", "restartPolicy"),
			"spec.schedulerName":      pathString("spec", "schedulerName"),
			"spec.serviceAccountName": pathString("spec", "serviceAccountName"),
			"spec.hostNetwork": func(o Object) string {
				if b, _ := pathValue(o, "spec", "hostNetwork").(bool); b {
					return "true"
				}
				return "false"
			},
			"status.phase":             pathString("status", "phase"),
			"status.podIP":             pathString("status", "podIP"),
			"status.nominatedNodeName": pathString("status", "nominatedNodeName"),
		},
		Default: func(o Object) {
			if spec, ok := o["spec"].(map[string]any); ok {
				defaultPodSpec(spec)
			}
		},
		PrepareForCreate: func(o Object) {
			o["status"] = map[string]any{"phase": "Pending", "qosClass": "BestEffort"}
		},
		Validate: validatePod,
	},
	{
		Version: "v1", Kind: "Secret", Columns: secretColumns, ListKind: "SecretList", Resource: "secrets", Singular: "secret",
		Namespaced: true, Verbs: standardVerbs, StorageVersionHash: "S6u1pOWzb84=",
		AllowUnconditionalUpdate: true,
		FieldSelectors:           map[string]func(Object) string{"type": pathString("type")},
		Default:                  defaultSecret,
		Validate:                 validateSecret,
	},
	{
		Group: "apps", Version: "v1", Kind: "Deployment", Columns: deploymentColumns, ListKind: "DeploymentList", Resource: "deployments",
		Singular: "deployment", Namespaced: true, ShortNames: []string{"deploy"}, Categories: []string{"all"},
		Verbs: standardVerbs, StorageVersionHash: "8aSe+NMegvE=", Status: true, Scale: true,
		AllowUnconditionalUpdate: true, Generation: SpecAnnotationsGeneration,
		Default:          defaultDeployment,
		PrepareForCreate: func(o Object) { o["status"] = map[string]any{} },
		Validate:         validateDeployment,
		StatusKeepsMetadata: func(cur, next map[string]any) {
			// deploymentStatusStrategy: the controller writes the revision
			// annotation with the status; labels stay the main endpoint's.
			keepMetaField(cur, next, "labels")
		},
	},
	{
		Group: "apps", Version: "v1", Kind: "ReplicaSet", Columns: replicaSetColumns, ListKind: "ReplicaSetList", Resource: "replicasets",
		Singular: "replicaset", Namespaced: true, ShortNames: []string{"rs"}, Categories: []string{"all"},
		Verbs: standardVerbs, StorageVersionHash: "P1RzHs8/mWQ=", Status: true, Scale: true,
		AllowUnconditionalUpdate: true, Generation: SpecGeneration,
		FieldSelectors:      map[string]func(Object) string{"status.replicas": func(o Object) string { return strconv.FormatInt(intAt(o, "status", "replicas"), 10) }},
		Default:             defaultReplicaSet,
		PrepareForCreate:    func(o Object) { o["status"] = map[string]any{"replicas": jsonInt(0)} },
		Validate:            validateReplicaSet,
		StatusKeepsMetadata: func(cur, next map[string]any) {},
	},
}

// Lookup finds a resource by group, version and plural name.
func Lookup(group, version, resource string) *Resource {
	for _, r := range Resources {
		if r.Group == group && r.Version == version && r.Resource == resource {
			return r
		}
	}
	return nil
}

//go:noinline
func pathValue(o Object, path ...string) any {
	var v any = o
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

// (not inlined: each of its 33 callers would get a copy of the closure)
//
//go:noinline
func pathString(path ...string) func(Object) string {
	return func(o Object) string {
		s, _ := pathValue(o, path...).(string)
		return s
	}
}

//go:noinline
func setDefault(m map[string]any, k string, v any) {
	if _, ok := m[k]; !ok {
		m[k] = v
	}
}

// (not inlined: a map iteration copied into each caller)
//
//go:noinline
func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// --- strategies ---------------------------------------------------------

const maxConfigMapSize = 1024 * 1024

func validateConfigMap(o Object) []FieldError {
	var errs []FieldError
	size := 0
	for _, f := range []string{"data", "binaryData"} {
		m, _ := o[f].(map[string]any)
		for _, k := range sortedKeys(m) {
			for _, msg := range isConfigMapKey(k) {
				errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: f, Value: k, Detail: msg})
			}
			s, _ := m[k].(string)
			size += len(k) + len(s)
		}
	}
	if size > maxConfigMapSize {
		errs = append(errs, FieldError{Type: CauseFieldValueTooLong, Field: "[]", Detail: fmt.Sprintf("may not be more than %d bytes", maxConfigMapSize)})
	}
	return errs
}

func isConfigMapKey(k string) []string {
	var errs []string
	if len(k) > 253 {
		errs = append(errs, maxLenError(253))
	}
	ok := k != ""
	for _, c := range k {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			ok = false
		}
	}
	if !ok {
		errs = append(errs, regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", "[-._a-zA-Z0-9]+", "key.name", "KEY_NAME", "key-name"))
	}
	if k == "." || k == ".." || strings.HasPrefix(k, "..") {
		errs = append(errs, "must not be '.' or '..' or start with '..'")
	}
	return errs
}

func defaultSecret(o Object) {
	// stringData is a write-only convenience: it is merged into data.
	if sd, ok := o["stringData"].(map[string]any); ok {
		data, _ := o["data"].(map[string]any)
		if data == nil {
			data = map[string]any{}
		}
		for k, v := range sd {
			if s, ok := v.(string); ok {
				data[k] = base64Std(s)
			}
		}
		o["data"] = data
		delete(o, "stringData")
	}
	setDefault(o, "type", "Opaque")
}

func validateSecret(o Object) []FieldError {
	var errs []FieldError
	m, _ := o["data"].(map[string]any)
	for _, k := range sortedKeys(m) {
		for _, msg := range isConfigMapKey(k) {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "data[" + k + "]", Value: k, Detail: msg})
		}
	}
	return errs
}

func defaultNamespace(o Object) {
	m := meta(o)
	if name := str(m, "name"); name != "" {
		l, _ := m["labels"].(map[string]any)
		if l == nil {
			l = map[string]any{}
			m["labels"] = l
		}
		l["kubernetes.io/metadata.name"] = name
	}
}

// prepareNamespace is the namespace strategy's PrepareForCreate: a new
// Namespace is Active and carries the namespace controller's finalizer,
// added to those it was given (not a default: it may be removed later).
func prepareNamespace(o Object) {
	o["status"] = map[string]any{"phase": "Active"}
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		o["spec"] = spec
	}
	fs, _ := spec["finalizers"].([]any)
	if !slices.Contains(fs, any(NamespaceFinalizerKubernetes)) {
		spec["finalizers"] = append(fs, NamespaceFinalizerKubernetes)
	}
}

// keepNamespaceFinalizers is the namespace strategy's PrepareForUpdate:
// spec.finalizers are the finalize subresource's to change.
func keepNamespaceFinalizers(cur, o Object) {
	spec, _ := o["spec"].(map[string]any)
	fs, ok := pathValue(cur, "spec", "finalizers").([]any)
	switch {
	case ok && spec == nil:
		o["spec"] = map[string]any{"finalizers": fs}
	case ok:
		spec["finalizers"] = fs
	case spec != nil:
		delete(spec, "finalizers")
	}
}

func defaultPodSpec(spec map[string]any) {
	setDefault(spec, "restartPolicy", "Always")
	setDefault(spec, "terminationGracePeriodSeconds", json.Number("30"))
	setDefault(spec, "dnsPolicy", "ClusterFirst")
	setDefault(spec, "securityContext", map[string]any{})
	setDefault(spec, "schedulerName", "default-scheduler")
	for _, list := range []string{"containers", "initContainers"} {
		cs, _ := spec[list].([]any)
		for _, c := range cs {
			cm, ok := c.(map[string]any)
			if !ok {
				continue
			}
			setDefault(cm, "resources", map[string]any{})
			setDefault(cm, "terminationMessagePath", "/dev/termination-log")
			setDefault(cm, "terminationMessagePolicy", "File")
			if _, ok := cm["imagePullPolicy"]; !ok {
				img, _ := cm["image"].(string)
				if imageTagIsLatest(img) {
					cm["imagePullPolicy"] = "Always"
				} else {
					cm["imagePullPolicy"] = "IfNotPresent"
				}
			}
			if ports, ok := cm["ports"].([]any); ok {
				for _, p := range ports {
					if pm, ok := p.(map[string]any); ok {
						setDefault(pm, "protocol", "TCP")
					}
				}
			}
		}
	}
}

func imageTagIsLatest(img string) bool {
	if strings.Contains(img, "@") {
		return false
	}
	i := strings.LastIndex(img, ":")
	if i < 0 || strings.Contains(img[i:], "/") {
		return true
	}
	return img[i+1:] == "latest"
}

func defaultDeployment(o Object) {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		o["spec"] = spec
	}
	setDefault(spec, "replicas", json.Number("1"))
	st, _ := spec["strategy"].(map[string]any)
	if st == nil {
		st = map[string]any{}
		spec["strategy"] = st
	}
	setDefault(st, "type", "RollingUpdate")
	if st["type"] == "RollingUpdate" {
		ru, _ := st["rollingUpdate"].(map[string]any)
		if ru == nil {
			ru = map[string]any{}
			st["rollingUpdate"] = ru
		}
		setDefault(ru, "maxUnavailable", "25%")
		setDefault(ru, "maxSurge", "25%")
	}
	setDefault(spec, "revisionHistoryLimit", json.Number("10"))
	setDefault(spec, "progressDeadlineSeconds", json.Number("600"))
	if t, ok := spec["template"].(map[string]any); ok {
		if ps, ok := t["spec"].(map[string]any); ok {
			defaultPodSpec(ps)
		}
	}
}

func defaultReplicaSet(o Object) {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		o["spec"] = spec
	}
	setDefault(spec, "replicas", json.Number("1"))
	if t, ok := spec["template"].(map[string]any); ok {
		if ps, ok := t["spec"].(map[string]any); ok {
			defaultPodSpec(ps)
		}
	}
}

func validatePodSpec(spec map[string]any, path string) []FieldError {
	var errs []FieldError
	cs, _ := spec["containers"].([]any)
	if len(cs) == 0 {
		errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: path + ".containers"})
	}
	seen := map[string]bool{}
	for i, c := range cs {
		cm, _ := c.(map[string]any)
		name, _ := cm["name"].(string)
		p := fmt.Sprintf("%s.containers[%d]", path, i)
		if name == "" {
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: p + ".name"})
		} else {
			for _, msg := range IsDNS1123Label(name) {
				errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: p + ".name", Value: name, Detail: msg})
			}
			if seen[name] {
				errs = append(errs, FieldError{Type: CauseFieldValueDuplicate, Field: p + ".name", Value: name})
			}
			seen[name] = true
		}
		if img, _ := cm["image"].(string); strings.TrimSpace(img) == "" {
			errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: p + ".image"})
		}
	}
	return errs
}

func validatePod(o Object) []FieldError {
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	return validatePodSpec(spec, "spec")
}

func validateDeployment(o Object) []FieldError { return validateReplicated(o) }

// validateReplicaSet is ValidateReplicaSetSpec: a Deployment's rules, and
// pods that always restart.
func validateReplicaSet(o Object) []FieldError {
	errs := validateReplicated(o)
	if rp := pathString("spec", "template", "spec", "restartPolicy")(o); rp != "" && rp != "Always" {
		errs = append(errs, FieldError{Type: CauseFieldValueNotSupported, Field: "spec.template.spec.restartPolicy", Value: rp, Detail: `supported values: "Always"`})
	}
	return errs
}

// validateReplicated checks what Deployments and ReplicaSets share: the
// replicas, a non-empty selector that matches the template's labels, and
// the template's pod spec.
func validateReplicated(o Object) []FieldError {
	var errs []FieldError
	spec, _ := o["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
	}
	if r, ok := numberInt(spec["replicas"]); ok && r < 0 {
		errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "spec.replicas", Value: r, Detail: "must be greater than or equal to 0"})
	}
	sel, _ := spec["selector"].(map[string]any)
	tmpl, _ := spec["template"].(map[string]any)
	tmeta, _ := tmpl["metadata"].(map[string]any)
	tlabels, _ := tmeta["labels"].(map[string]any)
	if sel == nil {
		errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: "spec.selector"})
	} else {
		ml, _ := sel["matchLabels"].(map[string]any)
		me, _ := sel["matchExpressions"].([]any)
		if len(ml) == 0 && len(me) == 0 {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "spec.selector", Value: sel, Detail: "empty selector is invalid for deployment"})
		} else if s, err := selectorFromLabelSelector(sel); err == nil && !s.Matches(stringMap(tlabels)) {
			errs = append(errs, FieldError{Type: CauseFieldValueInvalid, Field: "spec.template.metadata.labels", Value: tlabels, Detail: "`selector` does not match template `labels`"})
		}
	}
	if tmpl == nil {
		errs = append(errs, FieldError{Type: CauseFieldValueRequired, Field: "spec.template"})
	} else {
		ps, _ := tmpl["spec"].(map[string]any)
		if ps == nil {
			ps = map[string]any{}
		}
		errs = append(errs, validatePodSpec(ps, "spec.template.spec")...)
	}
	return errs
}

func stringMap(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// Encode renders an object as kube-apiserver does: kind and apiVersion
// first, then the fields in the order of kube's Go types.
func (r *Resource) Encode(o Object) []byte {
	if r.Custom() {
		// a custom resource is unstructured JSON: keys in sorted order
		b, _ := json.Marshal(o)
		return b
	}
	if t := r.Schema(); t != nil {
		if b, err := schema.Marshal(t, o); err == nil {
			return b
		}
	}
	return EncodeObject(o, nil)
}

// Zero is the object kube's Go types encode for an empty value.
func (r *Resource) Zero() Object {
	if t := r.Schema(); t != nil {
		return schema.Zero(t)
	}
	return Object{"metadata": map[string]any{}}
}

// normalize makes o what kube's typed round trip makes of it: unknown
// fields dropped, empty optional maps and lists and zero optional scalars
// omitted, always-written fields filled in.
func (r *Resource) normalize(o Object) {
	if r.Custom() {
		// a custom resource keeps what its schema declares as it was
		// given; only its metadata makes kube's typed round trip
		schema.PruneUnknownFields(r.custom.typ, o)
		if m, ok := o["metadata"].(map[string]any); ok {
			schema.Normalize(schema.ByName("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"), m)
		}
		return
	}
	if t := r.Schema(); t != nil {
		schema.Normalize(t, o)
	}
}

// PruneUnknown drops the fields the type does not declare (as decoding
// into kube's Go types does) and returns their paths.
func (r *Resource) PruneUnknown(o Object) []string {
	return schema.PruneUnknownFields(r.Schema(), o)
}
