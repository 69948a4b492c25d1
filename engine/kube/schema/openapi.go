package schema

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"sort"
	"strings"
	"sync"
)

// OpenAPI documents for kubectl: /openapi/v2 (JSON and the protobuf form
// kubectl 1.27–1.29 insist on) and /openapi/v3 (index plus one document per
// group-version). They describe the served resources with the paths kubectl
// inspects (a PATCH operation per kind carrying x-kubernetes-group-version-kind
// and a fieldValidation parameter, so kubectl's --validate=strict sends
// fieldValidation=Strict and lets the server validate) and the definitions
// with kube's names and extensions (x-kubernetes-patch-strategy, -list-type,
// -group-version-kind, ...) that client-side apply, edit and explain read.

// Version is the Kubernetes version the documents claim.
const Version = "v1.36.3"

// Resource is one served resource, as the OpenAPI paths describe it.
type Resource struct {
	Group, Version string // "" for core
	Plural         string
	Kind           string
	Namespaced     bool
	Subresources   []string // "status", "scale"
	// Custom is a custom resource's published schema; nil for the
	// built-in types, which types.txt describes.
	Custom *CustomSchema
}

// customDefinitions are the definitions of a custom resource and its
// list (openapi_custom.go); nil where none are served.
var customDefinitions func(r Resource, v3 bool) (object, list map[string]any)

// CustomSchema is what the OpenAPI documents publish of a custom
// resource: its definition name (com.example.stable.v1.CronTab) and the
// version's openAPIV3Schema as written (nil: none).
type CustomSchema struct {
	Name   string
	Schema map[string]any
}

// Resources are the resources rvplay serves (the REST layer's table should
// agree; discovery is the REST layer's).
var Resources = []Resource{
	{"", "v1", "configmaps", "ConfigMap", true, nil, nil},
	{"", "v1", "events", "Event", true, nil, nil},
	{"", "v1", "namespaces", "Namespace", false, []string{"status"}, nil},
	{"", "v1", "pods", "Pod", true, []string{"status"}, nil},
	{"", "v1", "secrets", "Secret", true, nil, nil},
	{"apps", "v1", "deployments", "Deployment", true, []string{"scale", "status"}, nil},
	{"apps", "v1", "replicasets", "ReplicaSet", true, []string{"scale", "status"}, nil},
}

func (r Resource) gv() string {
	if r.Group == "" {
		return "api/" + r.Version
	}
	return "apis/" + r.Group + "/" + r.Version
}

// ---- operation model shared by v2 and v3 ----

type param struct {
	name, in, typ, desc string
	required, unique    bool
}

type operation struct {
	method, id, action, desc string
	gvk                      *GVK
	params                   []param
	body                     string // definition name of the request body
	resp                     string // definition name of the 200 response
	created                  bool   // also answers 201
	consumes                 []string
}

type pathItem struct {
	path   string
	params []param
	ops    []operation
}

var (
	pName      = param{name: "name", in: "path", typ: "string", required: true, unique: true}
	pNamespace = param{name: "namespace", in: "path", typ: "string", required: true, desc: "object name and auth scope, such as for teams and projects", unique: true}
	pPretty    = param{name: "pretty", in: "query", typ: "string", desc: "If 'true', then the output is pretty printed.", unique: true}
	pDryRun    = param{name: "dryRun", in: "query", typ: "string", desc: "When present, indicates that modifications should not be persisted. The only valid value is All.", unique: true}
	pManager   = param{name: "fieldManager", in: "query", typ: "string", desc: "Name of the actor making the change; recorded in managedFields. Required for apply patches.", unique: true}
	pValid     = param{name: "fieldValidation", in: "query", typ: "string", desc: "How to treat unknown or duplicate fields in the request body: Ignore, Warn (the default: warnings in the response) or Strict (400 BadRequest).", unique: true}
	pForce     = param{name: "force", in: "query", typ: "boolean", desc: "Force an apply: take ownership of fields other managers own instead of answering 409 Conflict. Only valid for apply patches.", unique: true}
	listParams = []param{
		{name: "allowWatchBookmarks", in: "query", typ: "boolean", desc: "Ask for BOOKMARK events on watches.", unique: true},
		{name: "continue", in: "query", typ: "string", desc: "Token from the previous page of a paginated list.", unique: true},
		{name: "fieldSelector", in: "query", typ: "string", desc: "Filter by fields: metadata.name, metadata.namespace.", unique: true},
		{name: "labelSelector", in: "query", typ: "string", desc: "Filter by labels.", unique: true},
		{name: "limit", in: "query", typ: "integer", desc: "Maximum number of items in a page; a continue token follows when more remain.", unique: true},
		{name: "resourceVersion", in: "query", typ: "string", desc: "Which revision to read: unset (most recent), 0 (any) or a revision, interpreted by resourceVersionMatch.", unique: true},
		{name: "resourceVersionMatch", in: "query", typ: "string", desc: "Exact or NotOlderThan.", unique: true},
		{name: "sendInitialEvents", in: "query", typ: "boolean", desc: "Start a watch with synthetic ADDED events for the current state and an initial-events-end bookmark.", unique: true},
		{name: "timeoutSeconds", in: "query", typ: "integer", desc: "Time limit of a list or watch call.", unique: true},
		{name: "watch", in: "query", typ: "boolean", desc: "Watch for changes instead of listing.", unique: true},
	}
	deleteParams = []param{
		pDryRun,
		{name: "gracePeriodSeconds", in: "query", typ: "integer", desc: "Seconds before the object is deleted.", unique: true},
		{name: "orphanDependents", in: "query", typ: "boolean", desc: "Deprecated: use propagationPolicy.", unique: true},
		{name: "propagationPolicy", in: "query", typ: "string", desc: "Orphan, Background or Foreground garbage collection.", unique: true},
	}
	patchTypes       = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"}
	customPatchTypes = []string{"application/json-patch+json", "application/merge-patch+json", "application/apply-patch+yaml"}
)

const (
	defStatus  = "io.k8s.apimachinery.pkg.apis.meta.v1.Status"
	defPatch   = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"
	defDelete  = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions"
	defScale   = "io.k8s.api.autoscaling.v1.Scale"
	coreGroupT = "Core"
)

func opPrefix(r Resource) string {
	g := coreGroupT
	if r.Group != "" {
		g = upperFirst(groupName(r.Group))
	}
	return g + upperFirst(r.Version)
}

func upperFirst(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// groupName is how operation IDs and tags name a group: without
// .k8s.io, in camel case (stable.example.com: stableExampleCom).
func groupName(group string) string {
	parts := strings.Split(strings.TrimSuffix(group, ".k8s.io"), ".")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = upperFirst(parts[i])
		}
	}
	return strings.Join(parts, "")
}

func pathsFor(r Resource) []pathItem {
	var t, lt *Type
	if r.Custom != nil {
		t = &Type{Name: r.Custom.Name, Short: r.Kind, GVKs: []GVK{{r.Group, r.Version, r.Kind}}}
		lt = &Type{Name: r.Custom.Name + "List"}
	} else {
		t, lt = ForGVK(gvString(r), r.Kind), ForGVK(gvString(r), r.Kind+"List")
	}
	if t == nil {
		panic("schema: no type for resource " + r.Plural)
	}
	gvk := t.GVKs[0]
	patches := patchTypes
	if r.Custom != nil {
		// no strategic merge patch: kubectl's client-side apply reads this
		// to choose a merge patch for custom resources
		patches = customPatchTypes
	}
	base := "/" + r.gv()
	ns, scope := "", ""
	var scopeParams []param
	if r.Namespaced {
		ns = "/namespaces/{namespace}"
		scope = "Namespaced"
		scopeParams = []param{pNamespace}
	}
	pre := opPrefix(r)
	collection := base + ns + "/" + r.Plural
	item := collection + "/{name}"
	write := []param{pDryRun, pManager, pValid}
	var out []pathItem
	out = append(out, pathItem{
		path:   collection,
		params: append(append([]param{}, scopeParams...), pPretty),
		ops: []operation{
			{method: "get", id: "list" + pre + scope + r.Kind, action: "list", desc: "list or watch objects of kind " + r.Kind, gvk: &gvk, params: listParams, resp: lt.Name},
			{method: "post", id: "create" + pre + scope + r.Kind, action: "post", desc: "create " + article(r.Kind), gvk: &gvk, params: write, body: t.Name, resp: t.Name, created: true},
			{method: "delete", id: "delete" + pre + "Collection" + scope + r.Kind, action: "deletecollection", desc: "delete collection of " + r.Kind, gvk: &gvk, params: append(append([]param{}, deleteParams...), listParams...), body: defDelete, resp: defStatus},
		},
	})
	nameP := pName
	nameP.desc = "name of the " + r.Kind
	out = append(out, pathItem{
		path:   item,
		params: append(append([]param{nameP}, scopeParams...), pPretty),
		ops: []operation{
			{method: "get", id: "read" + pre + scope + r.Kind, action: "get", desc: "read the specified " + r.Kind, gvk: &gvk, resp: t.Name},
			{method: "put", id: "replace" + pre + scope + r.Kind, action: "put", desc: "replace the specified " + r.Kind, gvk: &gvk, params: write, body: t.Name, resp: t.Name, created: true},
			{method: "delete", id: "delete" + pre + scope + r.Kind, action: "delete", desc: "delete " + article(r.Kind), gvk: &gvk, params: deleteParams, body: defDelete, resp: defStatus},
			{method: "patch", id: "patch" + pre + scope + r.Kind, action: "patch", desc: "partially update the specified " + r.Kind, gvk: &gvk, params: append(append([]param{}, write...), pForce), body: defPatch, resp: t.Name, created: true, consumes: patches},
		},
	})
	for _, sub := range r.Subresources {
		st, sgvk := t, gvk
		if sub == "scale" {
			st = ByName(defScale)
			sgvk = st.GVKs[0]
		}
		title := strings.ToUpper(sub[:1]) + sub[1:]
		subP := pName
		subP.desc = "name of the " + st.Short
		out = append(out, pathItem{
			path:   item + "/" + sub,
			params: append(append([]param{subP}, scopeParams...), pPretty),
			ops: []operation{
				{method: "get", id: "read" + pre + scope + r.Kind + title, action: "get", desc: "read " + sub + " of the specified " + r.Kind, gvk: &sgvk, resp: st.Name},
				{method: "put", id: "replace" + pre + scope + r.Kind + title, action: "put", desc: "replace " + sub + " of the specified " + r.Kind, gvk: &sgvk, params: write, body: st.Name, resp: st.Name, created: true},
				{method: "patch", id: "patch" + pre + scope + r.Kind + title, action: "patch", desc: "partially update " + sub + " of the specified " + r.Kind, gvk: &sgvk, params: append(append([]param{}, write...), pForce), body: defPatch, resp: st.Name, created: true, consumes: patches},
			},
		})
	}
	if r.Namespaced {
		out = append(out, pathItem{
			path:   base + "/" + r.Plural,
			params: append(append([]param{}, listParams...), pPretty),
			ops: []operation{
				{method: "get", id: "list" + pre + r.Kind + "ForAllNamespaces", action: "list", desc: "list or watch objects of kind " + r.Kind, gvk: &gvk, resp: lt.Name},
			},
		})
	}
	return out
}

func gvString(r Resource) string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

func article(kind string) string {
	if strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an " + kind
	}
	return "a " + kind
}

func tagOf(p pathItem) string {
	seg := strings.Split(strings.TrimPrefix(p.path, "/"), "/")
	if seg[0] == "api" {
		return "core_" + seg[1]
	}
	return groupName(seg[1]) + "_" + seg[2]
}

// ---- schemas ----

// schemaJSON renders t as an OpenAPI schema object; refPrefix is
// "#/definitions/" (v2) or "#/components/schemas/" (v3).
func schemaJSON(t *Type, v3 bool) map[string]any {
	s := map[string]any{}
	if t.Description != "" {
		s["description"] = t.Description
	}
	switch t.Scalar {
	case "string":
		s["type"] = "string"
		if t.Format != "" {
			s["format"] = t.Format
		}
		return s
	case "intorstring":
		if v3 {
			s["x-kubernetes-int-or-string"] = true
		}
		s["type"], s["format"] = "string", "int-or-string"
		return s
	case "quantity":
		s["type"] = "string"
		return s
	}
	s["type"] = "object"
	if t.Untyped {
		return s
	}
	props := map[string]any{}
	var req []string
	for _, f := range t.Fields {
		props[f.Name] = fieldJSON(f, v3)
		if f.Required {
			req = append(req, f.Name)
		}
	}
	s["properties"] = props
	if len(req) > 0 {
		sort.Strings(req)
		s["required"] = req
	}
	if t.Atomic {
		s["x-kubernetes-map-type"] = "atomic"
	}
	if len(t.GVKs) > 0 {
		var g []any
		for _, k := range t.GVKs {
			g = append(g, map[string]any{"group": k.Group, "kind": k.Kind, "version": k.Version})
		}
		s["x-kubernetes-group-version-kind"] = g
	}
	return s
}

func refTo(name string, v3 bool) string {
	if v3 {
		return "#/components/schemas/" + name
	}
	return "#/definitions/" + name
}

func fieldJSON(f *Field, v3 bool) map[string]any {
	s := typeRefJSON(f.Type, v3)
	if ref, ok := s["$ref"]; ok && v3 {
		// kube wraps v3 references that carry siblings in allOf.
		s = map[string]any{"allOf": []any{map[string]any{"$ref": ref}}}
		if f.Required && f.Type.Named.IsObject() {
			s["default"] = map[string]any{}
		}
	}
	if f.Description != "" {
		s["description"] = f.Description
	}
	if f.PatchStrategy != "" {
		s["x-kubernetes-patch-strategy"] = f.PatchStrategy
	}
	if f.PatchMergeKey != "" {
		s["x-kubernetes-patch-merge-key"] = f.PatchMergeKey
	}
	if f.Type.Kind == KindList {
		lt := f.ListType
		if lt == "" {
			lt = "atomic"
		}
		s["x-kubernetes-list-type"] = lt
		if len(f.ListMapKeys) > 0 {
			s["x-kubernetes-list-map-keys"] = f.ListMapKeys
		}
	}
	if f.MapType != "" {
		s["x-kubernetes-map-type"] = f.MapType
	}
	if f.Default != nil {
		s["default"] = f.Default
	}
	return s
}

func typeRefJSON(r *TypeRef, v3 bool) map[string]any {
	switch r.Kind {
	case KindString:
		return map[string]any{"type": "string"}
	case KindBytes:
		return map[string]any{"type": "string", "format": "byte"}
	case KindInteger:
		return map[string]any{"type": "integer", "format": r.Format}
	case KindNumber:
		return map[string]any{"type": "number", "format": r.Format}
	case KindBoolean:
		return map[string]any{"type": "boolean"}
	case KindObject:
		return map[string]any{"$ref": refTo(r.Named.Name, v3)}
	case KindList:
		return map[string]any{"type": "array", "items": typeRefJSON(r.Elem, v3)}
	case KindMap:
		return map[string]any{"type": "object", "additionalProperties": typeRefJSON(r.Elem, v3)}
	}
	return map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}
}

// refsOf collects the definitions t references, transitively.
func refsOf(t *Type, seen map[string]bool) {
	if seen[t.Name] {
		return
	}
	seen[t.Name] = true
	var walk func(r *TypeRef)
	walk = func(r *TypeRef) {
		switch r.Kind {
		case KindObject:
			refsOf(r.Named, seen)
		case KindList, KindMap:
			walk(r.Elem)
		}
	}
	for _, f := range t.Fields {
		walk(f.Type)
	}
}

// ---- v2 ----

func paramV2(p param) map[string]any {
	m := map[string]any{"name": p.name, "in": p.in, "type": p.typ, "uniqueItems": p.unique}
	if p.desc != "" {
		m["description"] = p.desc
	}
	if p.required {
		m["required"] = true
	}
	return m
}

func buildV2(resources []Resource) map[string]any {
	paths := map[string]any{}
	for _, r := range resources {
		for _, p := range pathsFor(r) {
			item := map[string]any{}
			var ps []any
			for _, pp := range p.params {
				ps = append(ps, paramV2(pp))
			}
			item["parameters"] = ps
			for _, o := range p.ops {
				op := map[string]any{
					"description":         o.desc,
					"operationId":         o.id,
					"tags":                []any{tagOf(p)},
					"schemes":             []any{"https"},
					"produces":            []any{"application/json", "application/yaml"},
					"consumes":            []any{"*/*"},
					"x-kubernetes-action": o.action,
				}
				if o.consumes != nil {
					op["consumes"] = o.consumes
				}
				if o.gvk != nil {
					op["x-kubernetes-group-version-kind"] = map[string]any{"group": o.gvk.Group, "kind": o.gvk.Kind, "version": o.gvk.Version}
				}
				var params []any
				if o.body != "" {
					params = append(params, map[string]any{"name": "body", "in": "body", "required": o.method != "delete", "schema": map[string]any{"$ref": refTo(o.body, false)}})
				}
				for _, pp := range o.params {
					params = append(params, paramV2(pp))
				}
				if params != nil {
					op["parameters"] = params
				}
				resp := map[string]any{
					"200": map[string]any{"description": "OK", "schema": map[string]any{"$ref": refTo(o.resp, false)}},
					"401": map[string]any{"description": "Unauthorized"},
				}
				if o.created {
					resp["201"] = map[string]any{"description": "Created", "schema": map[string]any{"$ref": refTo(o.resp, false)}}
				}
				op["responses"] = resp
				item[o.method] = op
			}
			paths[p.path] = item
		}
	}
	defs := map[string]any{}
	for _, t := range Types() {
		defs[t.Name] = schemaJSON(t, false)
	}
	for _, r := range resources {
		if r.Custom != nil {
			defs[r.Custom.Name], defs[r.Custom.Name+"List"] = customDefinitions(r, false)
		}
	}
	return map[string]any{
		"swagger":     "2.0",
		"info":        map[string]any{"title": "Kubernetes", "version": Version},
		"paths":       paths,
		"definitions": defs,
	}
}

// ---- v3 ----

func paramV3(p param) map[string]any {
	m := map[string]any{"name": p.name, "in": p.in, "schema": map[string]any{"type": p.typ, "uniqueItems": p.unique}}
	if p.desc != "" {
		m["description"] = p.desc
	}
	if p.required {
		m["required"] = true
	}
	return m
}

func buildV3(resources []Resource, gv string) map[string]any {
	paths := map[string]any{}
	seen := map[string]bool{}
	custom := map[string]any{}
	refs := func(name string) {
		if _, ok := custom[name]; ok {
			return
		}
		refsOf(ByName(name), seen)
	}
	for _, r := range resources {
		if r.gv() != gv {
			continue
		}
		if r.Custom != nil {
			custom[r.Custom.Name], custom[r.Custom.Name+"List"] = customDefinitions(r, true)
			refs("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
			refs("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")
		}
		for _, p := range pathsFor(r) {
			item := map[string]any{}
			var ps []any
			for _, pp := range p.params {
				ps = append(ps, paramV3(pp))
			}
			item["parameters"] = ps
			for _, o := range p.ops {
				op := map[string]any{
					"description":         o.desc,
					"operationId":         o.id,
					"tags":                []any{tagOf(p)},
					"x-kubernetes-action": o.action,
				}
				if o.gvk != nil {
					op["x-kubernetes-group-version-kind"] = map[string]any{"group": o.gvk.Group, "kind": o.gvk.Kind, "version": o.gvk.Version}
				}
				var params []any
				for _, pp := range o.params {
					params = append(params, paramV3(pp))
				}
				if params != nil {
					op["parameters"] = params
				}
				if o.body != "" {
					refs(o.body)
					ct := o.consumes
					if ct == nil {
						ct = []string{"*/*"}
					}
					content := map[string]any{}
					for _, c := range ct {
						content[c] = map[string]any{"schema": map[string]any{"$ref": refTo(o.body, true)}}
					}
					op["requestBody"] = map[string]any{"content": content, "required": o.method != "delete"}
				}
				refs(o.resp)
				content := map[string]any{}
				for _, c := range []string{"application/json", "application/yaml"} {
					content[c] = map[string]any{"schema": map[string]any{"$ref": refTo(o.resp, true)}}
				}
				resp := map[string]any{
					"200": map[string]any{"description": "OK", "content": content},
					"401": map[string]any{"description": "Unauthorized"},
				}
				if o.created {
					resp["201"] = map[string]any{"description": "Created", "content": content}
				}
				op["responses"] = resp
				item[o.method] = op
			}
			paths[p.path] = item
		}
	}
	schemas := map[string]any{}
	for name := range seen {
		schemas[name] = schemaJSON(ByName(name), true)
	}
	for name, s := range custom {
		schemas[name] = s
	}
	return map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]any{"title": "Kubernetes", "version": Version},
		"paths":      paths,
		"components": map[string]any{"schemas": schemas},
	}
}

// ---- documents ----

// Documents are the OpenAPI documents of a set of served resources.
type Documents struct {
	v2JSON, v2PB, v3Index []byte
	v3Docs                map[string][]byte
	v3Hashes              map[string]string
}

// BuildDocuments builds the documents of the built-in resources and the
// custom ones given (a session's custom resources change them).
func BuildDocuments(custom []Resource) (*Documents, error) {
	resources := append(Resources[:len(Resources):len(Resources)], custom...)
	d := &Documents{v3Docs: map[string][]byte{}, v3Hashes: map[string]string{}}
	var err error
	v2 := buildV2(resources)
	if d.v2JSON, err = json.Marshal(v2); err != nil {
		return nil, err
	}
	d.v2PB = encodeV2Proto(v2)
	index := map[string]any{}
	for _, r := range resources {
		gv := r.gv()
		if _, done := d.v3Docs[gv]; done {
			continue
		}
		b, err := json.Marshal(buildV3(resources, gv))
		if err != nil {
			return nil, err
		}
		d.v3Docs[gv] = b
		d.v3Hashes[gv] = ContentHash(b)
		index[gv] = map[string]any{"serverRelativeURL": "/openapi/v3/" + gv + "?hash=" + d.v3Hashes[gv]}
	}
	if d.v3Index, err = json.Marshal(map[string]any{"paths": index}); err != nil {
		return nil, err
	}
	return d, nil
}

var (
	docsOnce   sync.Once
	staticDocs *Documents
	docsError  error
)

// Static are the documents of the built-in resources.
func Static() *Documents {
	docsOnce.Do(func() { staticDocs, docsError = BuildDocuments(nil) })
	if docsError != nil {
		panic("schema: building OpenAPI documents: " + docsError.Error())
	}
	return staticDocs
}

// V2 is the /openapi/v2 swagger document as JSON (Content-Type
// application/json).
func (d *Documents) V2() []byte { return d.v2JSON }

// V2Protobuf is the same document in the gnostic protobuf encoding
// kubectl and client-go request with Accept:
// application/com.github.proto-openapi.spec.v2@v1.0+protobuf (answer with
// Content-Type application/com.github.proto-openapi.spec.v2.v1.0+protobuf).
// kubectl 1.27–1.29 fail validation without it.
func (d *Documents) V2Protobuf() []byte { return d.v2PB }

// V3Index is the /openapi/v3 discovery document:
// {"paths":{"api/v1":{"serverRelativeURL":"/openapi/v3/api/v1?hash=…"},…}}.
// The URLs are relative to the server root; client-go prefixes them with
// the base path of its server URL, so they work under /s/<session>.
func (d *Documents) V3Index() []byte { return d.v3Index }

// V3 returns the document of a group-version path ("api/v1",
// "apis/apps/v1"), as found in the index, or false.
func (d *Documents) V3(groupVersion string) ([]byte, bool) {
	b, ok := d.v3Docs[strings.Trim(groupVersion, "/")]
	return b, ok
}

// V3Hash is the hash the index puts in the URL of a group-version
// document; when a request carries another hash kube answers 301 to the
// current URL, and with the current one it allows long caching.
func (d *Documents) V3Hash(groupVersion string) string {
	return d.v3Hashes[strings.Trim(groupVersion, "/")]
}

// ContentHash names a served document's content, as kube's OpenAPI v3
// hashes and discovery ETags do. kube uses SHA-512; clients treat the hash
// as opaque, and FNV keeps crypto out of the WebAssembly build.
func ContentHash(b []byte) string {
	h := fnv.New128a()
	h.Write(b)
	return fmt.Sprintf("%X", h.Sum(nil))
}

// OpenAPIV2 is Static().V2().
func OpenAPIV2() []byte { return Static().V2() }

// OpenAPIV2Protobuf is Static().V2Protobuf().
func OpenAPIV2Protobuf() []byte { return Static().V2Protobuf() }

// OpenAPIV3Index is Static().V3Index().
func OpenAPIV3Index() []byte { return Static().V3Index() }

// OpenAPIV3 is Static().V3(groupVersion).
func OpenAPIV3(groupVersion string) ([]byte, bool) { return Static().V3(groupVersion) }

// OpenAPIV3Hash is Static().V3Hash(groupVersion).
func OpenAPIV3Hash(groupVersion string) string { return Static().V3Hash(groupVersion) }
