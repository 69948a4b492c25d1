package kubeapi

import (
	"context"
	"encoding/json"
	"net/url"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Version is the Kubernetes version rvplay answers as.
var Version = map[string]string{
	"major": "1", "minor": "36", "emulationMajor": "1", "emulationMinor": "36",
	"minCompatibilityMajor": "1", "minCompatibilityMinor": "35",
	"gitVersion": "v1.36.3", "gitCommit": "rvplay", "gitTreeState": "clean",
	"buildDate": "2026-11-22T00:00:00Z", "goVersion": runtime.Version(), "compiler": "gc",
	"platform": runtime.GOOS + "/" + runtime.GOARCH,
}

var versionOrder = []string{"major", "minor", "emulationMajor", "emulationMinor", "minCompatibilityMajor",
	"minCompatibilityMinor", "gitVersion", "gitCommit", "gitTreeState", "buildDate", "goVersion", "compiler", "platform"}

type apiResource struct {
	Name               string   `json:"name"`
	SingularName       string   `json:"singularName"`
	Namespaced         bool     `json:"namespaced"`
	Group              string   `json:"group,omitempty"`
	Version            string   `json:"version,omitempty"`
	Kind               string   `json:"kind"`
	Verbs              []string `json:"verbs"`
	ShortNames         []string `json:"shortNames,omitempty"`
	Categories         []string `json:"categories,omitempty"`
	StorageVersionHash string   `json:"storageVersionHash,omitempty"`
}

type apiResourceList struct {
	Kind         string        `json:"kind"`
	APIVersion   string        `json:"apiVersion,omitempty"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

type groupVersion struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Kind             string         `json:"kind,omitempty"`
	APIVersion       string         `json:"apiVersion,omitempty"`
	Name             string         `json:"name"`
	Versions         []groupVersion `json:"versions"`
	PreferredVersion groupVersion   `json:"preferredVersion"`
}

// resourceList is the APIResourceList of a group-version among the served
// resources.
func resourceList(served []*kube.Resource, group, version string) (*apiResourceList, bool) {
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	l := &apiResourceList{Kind: "APIResourceList", GroupVersion: gv, Resources: []apiResource{}}
	if group != "" {
		l.APIVersion = "v1"
	}
	found, custom := false, false
	for _, r := range served {
		if r.Group != group || r.Version != version {
			continue
		}
		found, custom = true, custom || r.Custom()
		l.Resources = append(l.Resources, apiResource{Name: r.Resource, SingularName: r.Singular,
			Namespaced: r.Namespaced, Kind: r.Kind, Verbs: r.Verbs, ShortNames: r.ShortNames,
			Categories: r.Categories, StorageVersionHash: r.StorageVersionHash})
		sub := []string{"get", "patch", "update"}
		if r.Status {
			l.Resources = append(l.Resources, apiResource{Name: r.Resource + "/status", Namespaced: r.Namespaced, Kind: r.Kind, Verbs: sub})
		}
		if r.Group == "" && r.Resource == "namespaces" {
			l.Resources = append(l.Resources, apiResource{Name: "namespaces/finalize", Kind: r.Kind, Verbs: []string{"update"}})
		}
		if r.Scale {
			l.Resources = append(l.Resources, apiResource{Name: r.Resource + "/scale", Namespaced: r.Namespaced,
				Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: sub})
		}

	}
	if !custom {
		// apiextensions-apiserver lists a custom resource's subresources
		// in its own order (status, then scale)
		sort.Slice(l.Resources, func(i, j int) bool { return l.Resources[i].Name < l.Resources[j].Name })
	}
	return l, found
}

// groups are the API groups of the served resources: the built-in ones,
// then those of custom resources by name (sortCustomGroups).
func groups(served []*kube.Resource) []apiGroup {
	var out []apiGroup
	for _, r := range served {
		if r.Group == "" {
			continue
		}
		gv := groupVersion{GroupVersion: r.GroupVersion(), Version: r.Version}
		i := 0
		for i < len(out) && out[i].Name != r.Group {
			i++
		}
		if i == len(out) {
			out = append(out, apiGroup{Name: r.Group, PreferredVersion: gv})
		}
		known := false
		for _, v := range out[i].Versions {
			known = known || v == gv
		}
		if !known {
			out[i].Versions = append(out[i].Versions, gv)
		}
	}
	sortCustomGroups(out)
	return out
}

// sortCustomGroups puts the groups of custom resources (after the built-in
// ones) in name order, and each group's versions from the preferred one
// down, in kube's version order.
func sortCustomGroups(out []apiGroup) {
	custom := out[min(len(groupsOf(kube.Resources)), len(out)):]
	sort.SliceStable(custom, func(i, j int) bool { return custom[i].Name < custom[j].Name })
	for i := range custom {
		vs := custom[i].Versions
		sort.SliceStable(vs, func(a, b int) bool { return kube.CompareVersions(vs[a].Version, vs[b].Version) > 0 })
		custom[i].PreferredVersion = vs[0]
	}
}

// groupsOf are the distinct named groups of rs.
func groupsOf(rs []*kube.Resource) map[string]bool {
	out := map[string]bool{}
	for _, r := range rs {
		if r.Group != "" {
			out[r.Group] = true
		}
	}
	return out
}

// served is every resource the session serves: the built-in ones and
// those of its custom resource definitions.
func (h *Handler) served(ctx context.Context) ([]*kube.Resource, error) {
	custom, _, err := h.reg.CustomResources(ctx)
	if err != nil || len(custom) == 0 {
		return kube.Resources, err
	}
	return append(slices.Clip(kube.Resources), custom...), nil
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// serveDiscovery answers /version, /api, /apis, the group-version
// resource lists and the OpenAPI documents.
func (h *Handler) serveDiscovery(ctx context.Context, req *api.Request, p string) (*api.Response, bool) {
	if req.Method != "GET" && req.Method != "HEAD" {
		switch p {
		case "/version", "/api", "/apis", "/openapi/v2", "/openapi/v3":
			return statusResponse(kube.NewMethodNotSupported("", "", req.Method)), true
		}
		return nil, false
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	var served []*kube.Resource
	if p == "/api" || p == "/apis" {
		v, ok := conversion(req.Header.Get("Accept"), aggregatedGroup, aggregatedAs, aggregatedVersion)
		if !ok {
			return statusResponse(kube.NewNotAcceptable()), true
		}
		if v != "" {
			served, err := h.served(ctx)
			if err != nil {
				return statusResponse(err), true
			}
			return aggregatedDiscovery(req, served, p == "/api"), true
		}
	}
	if p == "/apis" || p == "/api/v1" || parts[0] == "apis" && (len(parts) == 2 || len(parts) == 3) {
		var err error
		if served, err = h.served(ctx); err != nil {
			return statusResponse(err), true
		}
	}
	switch {
	case p == "/version":
		var b strings.Builder
		b.WriteString("{")
		for i, k := range versionOrder {
			if i > 0 {
				b.WriteString(",")
			}
			b.Write(marshal(k))
			b.WriteString(":")
			b.Write(marshal(Version[k]))
		}
		b.WriteString("}")
		return jsonResponse(200, []byte(b.String())), true
	case p == "/api":
		addr := req.Header.Get("Host")
		if addr == "" {
			addr = "127.0.0.1:6443"
		}
		type serverAddress struct {
			ClientCIDR    string `json:"clientCIDR"`
			ServerAddress string `json:"serverAddress"`
		}
		return jsonResponse(200, marshal(struct {
			Kind                       string          `json:"kind"`
			Versions                   []string        `json:"versions"`
			ServerAddressByClientCIDRs []serverAddress `json:"serverAddressByClientCIDRs"`
		}{"APIVersions", []string{"v1"}, []serverAddress{{"0.0.0.0/0", addr}}})), true
	case p == "/apis":
		return jsonResponse(200, marshal(struct {
			Kind       string     `json:"kind"`
			APIVersion string     `json:"apiVersion"`
			Groups     []apiGroup `json:"groups"`
		}{"APIGroupList", "v1", groups(served)})), true
	case p == "/api/v1":
		l, _ := resourceList(served, "", "v1")
		return jsonResponse(200, marshal(l)), true
	case p == "/openapi/v2" || p == "/openapi/v3" || strings.HasPrefix(p, "/openapi/v3/"):
		docs, err := h.openAPI(ctx)
		if err != nil {
			return statusResponse(err), true
		}
		return serveOpenAPI(req, p, docs), true
	}
	if parts[0] != "apis" {
		return nil, false
	}
	switch len(parts) {
	case 2:
		for _, g := range groups(served) {
			if g.Name == parts[1] {
				g.Kind, g.APIVersion = "APIGroup", "v1"
				return jsonResponse(200, marshal(g)), true
			}
		}
		return notFoundPage(), true
	case 3:
		if l, ok := resourceList(served, parts[1], parts[2]); ok {
			return jsonResponse(200, marshal(l)), true
		}
		return notFoundPage(), true
	}
	return nil, false
}

// openAPIDocs caches the OpenAPI documents of a session with custom
// resources, while they stay the same.
type openAPIDocs struct {
	mu    sync.Mutex
	stamp string
	docs  *schema.Documents
}

// openAPI returns the documents of what the session serves.
func (h *Handler) openAPI(ctx context.Context) (*schema.Documents, error) {
	custom, stamp, err := h.reg.CustomResources(ctx)
	if err != nil || len(custom) == 0 {
		return schema.Static(), err
	}
	h.docs.mu.Lock()
	defer h.docs.mu.Unlock()
	if h.docs.stamp != stamp || h.docs.docs == nil {
		var rs []schema.Resource
		for _, r := range custom {
			if or, ok := r.OpenAPI(); ok {
				rs = append(rs, or)
			}
		}
		d, err := schema.BuildDocuments(rs)
		if err != nil {
			return nil, kube.NewInternalError(err)
		}
		h.docs.stamp, h.docs.docs = stamp, d
	}
	return h.docs.docs, nil
}

// serveOpenAPI answers /openapi/v2 and /openapi/v3[/<gv>] from docs.
func serveOpenAPI(req *api.Request, p string, docs *schema.Documents) *api.Response {
	switch p {
	case "/openapi/v2":
		if strings.Contains(req.Header.Get("Accept"), "protobuf") {
			return &api.Response{Status: 200, Header: api.Header{
				"Content-Type": {"application/com.github.proto-openapi.spec.v2.v1.0+protobuf"}}, Body: docs.V2Protobuf()}
		}
		return jsonResponse(200, docs.V2())
	case "/openapi/v3":
		return jsonResponse(200, docs.V3Index())
	}
	{
		gv := strings.TrimPrefix(p, "/openapi/v3/")
		doc, ok := docs.V3(gv)
		if !ok {
			return notFoundPage()
		}
		if hash := req.Query.Get("hash"); hash != "" && hash != docs.V3Hash(gv) {
			return openAPIV3Redirect(gv, docs.V3Hash(gv))
		}
		resp := jsonResponse(200, doc)
		if req.Query.Get("hash") != "" {
			resp.Header.Set("Cache-Control", "public, immutable")
		}
		return resp
	}
}

// openAPIV3Redirect is kube's answer to /openapi/v3/<gv>?hash=<stale>: 301
// to the document at its current hash. kube sends the server-absolute path
// /openapi/v3/<gv>?hash=…; the handler sees paths relative to the session
// (the server serves it under /s/<session>/), so the Location is relative
// to the request's own path: its last segment with the new query, which a
// client resolves to the same document under any base path (and to kube's
// Location when there is none).
func openAPIV3Redirect(gv, hash string) *api.Response {
	q := url.Values{"hash": {hash}}
	return &api.Response{Status: 301, Header: api.Header{
		"Content-Type": {"application/json"},
		"Vary":         {"Accept"},
		"Location":     {path.Base("/"+gv) + "?" + q.Encode()}}}
}
