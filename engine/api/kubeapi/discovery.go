package kubeapi

import (
	"encoding/json"
	"net/url"
	"path"
	"runtime"
	"sort"
	"strings"

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

// resourceList is the APIResourceList of a group-version.
func resourceList(group, version string) (*apiResourceList, bool) {
	gv := version
	if group != "" {
		gv = group + "/" + version
	}
	l := &apiResourceList{Kind: "APIResourceList", GroupVersion: gv, Resources: []apiResource{}}
	if group != "" {
		l.APIVersion = "v1"
	}
	found := false
	for _, r := range kube.Resources {
		if r.Group != group || r.Version != version {
			continue
		}
		found = true
		l.Resources = append(l.Resources, apiResource{Name: r.Resource, SingularName: r.Singular,
			Namespaced: r.Namespaced, Kind: r.Kind, Verbs: r.Verbs, ShortNames: r.ShortNames,
			Categories: r.Categories, StorageVersionHash: r.StorageVersionHash})
		sub := []string{"get", "patch", "update"}
		if r.Status {
			l.Resources = append(l.Resources, apiResource{Name: r.Resource + "/status", Namespaced: r.Namespaced, Kind: r.Kind, Verbs: sub})
		}
		if r.Scale {
			l.Resources = append(l.Resources, apiResource{Name: r.Resource + "/scale", Namespaced: r.Namespaced,
				Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: sub})
		}
	}
	sort.Slice(l.Resources, func(i, j int) bool { return l.Resources[i].Name < l.Resources[j].Name })
	return l, found
}

func groups() []apiGroup {
	seen := map[string]bool{}
	var out []apiGroup
	for _, r := range kube.Resources {
		if r.Group == "" || seen[r.Group] {
			continue
		}
		seen[r.Group] = true
		gv := groupVersion{GroupVersion: r.GroupVersion(), Version: r.Version}
		out = append(out, apiGroup{Name: r.Group, Versions: []groupVersion{gv}, PreferredVersion: gv})
	}
	return out
}

func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// serveDiscovery answers /version, /api, /apis, the group-version
// resource lists and the OpenAPI documents.
func (h *Handler) serveDiscovery(req *api.Request, p string) (*api.Response, bool) {
	if req.Method != "GET" && req.Method != "HEAD" {
		switch p {
		case "/version", "/api", "/apis", "/openapi/v2", "/openapi/v3":
			return statusResponse(kube.NewMethodNotSupported("", "", req.Method)), true
		}
		return nil, false
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
		return jsonResponse(200, marshal(map[string]any{"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []map[string]string{{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}}})), true
	case p == "/apis":
		return jsonResponse(200, marshal(struct {
			Kind       string     `json:"kind"`
			APIVersion string     `json:"apiVersion"`
			Groups     []apiGroup `json:"groups"`
		}{"APIGroupList", "v1", groups()})), true
	case p == "/api/v1":
		l, _ := resourceList("", "v1")
		return jsonResponse(200, marshal(l)), true
	case p == "/openapi/v2":
		if strings.Contains(req.Header.Get("Accept"), "protobuf") {
			return &api.Response{Status: 200, Header: api.Header{
				"Content-Type": {"application/com.github.proto-openapi.spec.v2.v1.0+protobuf"}}, Body: schema.OpenAPIV2Protobuf()}, true
		}
		return jsonResponse(200, schema.OpenAPIV2()), true
	case p == "/openapi/v3":
		return jsonResponse(200, schema.OpenAPIV3Index()), true
	case strings.HasPrefix(p, "/openapi/v3/"):
		gv := strings.TrimPrefix(p, "/openapi/v3/")
		doc, ok := schema.OpenAPIV3(gv)
		if !ok {
			return notFoundPage(), true
		}
		if hash := req.Query.Get("hash"); hash != "" && hash != schema.OpenAPIV3Hash(gv) {
			return openAPIV3Redirect(gv), true
		}
		resp := jsonResponse(200, doc)
		if req.Query.Get("hash") != "" {
			resp.Header.Set("Cache-Control", "public, immutable")
		}
		return resp, true
	}
	parts := strings.Split(strings.TrimPrefix(p, "/"), "/")
	if parts[0] != "apis" {
		return nil, false
	}
	switch len(parts) {
	case 2:
		for _, g := range groups() {
			if g.Name == parts[1] {
				g.Kind, g.APIVersion = "APIGroup", "v1"
				return jsonResponse(200, marshal(g)), true
			}
		}
		return notFoundPage(), true
	case 3:
		if l, ok := resourceList(parts[1], parts[2]); ok {
			return jsonResponse(200, marshal(l)), true
		}
		return notFoundPage(), true
	}
	return nil, false
}

// openAPIV3Redirect is kube's answer to /openapi/v3/<gv>?hash=<stale>: 301
// to the document at its current hash. kube sends the server-absolute path
// /openapi/v3/<gv>?hash=…; the handler sees paths relative to the session
// (the server serves it under /s/<session>/), so the Location is relative
// to the request's own path: its last segment with the new query, which a
// client resolves to the same document under any base path (and to kube's
// Location when there is none).
func openAPIV3Redirect(gv string) *api.Response {
	q := url.Values{"hash": {schema.OpenAPIV3Hash(gv)}}
	return &api.Response{Status: 301, Header: api.Header{
		"Content-Type": {"application/json"},
		"Vary":         {"Accept"},
		"Location":     {path.Base("/"+gv) + "?" + q.Encode()}}}
}
