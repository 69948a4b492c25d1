package kubeapi

import (
	"encoding/json"
	"sort"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/kube/schema"
)

// Aggregated discovery: /api and /apis answer every group's versions and
// resources in one document, an APIGroupDiscoveryList, to a client whose
// Accept header asks for it (client-go from 1.26 on, so kubectl). It is
// apidiscovery.k8s.io/v2 only: kube-apiserver removed v2beta1 in 1.33
// (the AggregatedDiscoveryRemoveBetaType gate, locked on in 1.35), and
// client-go 1.27-1.29, which ask for v2beta1 first, fall back to the
// legacy documents their Accept header also names, as against a real
// 1.36 cluster.

// aggregatedAs is the conversion a client names in its Accept header.
const aggregatedGroup, aggregatedAs, aggregatedVersion = "apidiscovery.k8s.io", "APIGroupDiscoveryList", "v2"

type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type subresourceDiscovery struct {
	Subresource  string            `json:"subresource"`
	ResponseKind *groupVersionKind `json:"responseKind,omitempty"`
	Verbs        []string          `json:"verbs"`
}

type resourceDiscovery struct {
	Resource         string                 `json:"resource"`
	ResponseKind     *groupVersionKind      `json:"responseKind,omitempty"`
	Scope            string                 `json:"scope"`
	SingularResource string                 `json:"singularResource"`
	Verbs            []string               `json:"verbs"`
	ShortNames       []string               `json:"shortNames,omitempty"`
	Categories       []string               `json:"categories,omitempty"`
	Subresources     []subresourceDiscovery `json:"subresources,omitempty"`
}

type versionDiscovery struct {
	Version   string              `json:"version"`
	Resources []resourceDiscovery `json:"resources,omitempty"`
	Freshness string              `json:"freshness,omitempty"`
}

type groupDiscovery struct {
	Metadata struct {
		Name string `json:"name,omitempty"`
	} `json:"metadata"`
	Versions []versionDiscovery `json:"versions,omitempty"`
}

type groupDiscoveryList struct {
	Kind       string           `json:"kind,omitempty"`
	APIVersion string           `json:"apiVersion,omitempty"`
	Metadata   struct{}         `json:"metadata"`
	Items      []groupDiscovery `json:"items"`
}

// aggregatedDiscovery answers /api (core, the legacy group) or /apis (the
// named groups, in the order of the legacy APIGroupList: kube's group
// priorities, then custom resources' groups by name) as an
// APIGroupDiscoveryList, with kube's ETag of its content: a request whose
// If-None-Match carries it gets 304.
func aggregatedDiscovery(req *api.Request, served []*kube.Resource, core bool) *api.Response {
	l := groupDiscoveryList{Items: []groupDiscovery{}}
	if core {
		l.Items = append(l.Items, groupDiscovery{Versions: []versionDiscovery{versionResources(served, "", "v1")}})
	} else {
		for _, g := range groups(served) {
			var gd groupDiscovery
			gd.Metadata.Name = g.Name
			for _, v := range g.Versions {
				gd.Versions = append(gd.Versions, versionResources(served, g.Name, v.Version))
			}
			l.Items = append(l.Items, gd)
		}
	}
	// kube hashes the document without its kind and apiVersion, so that
	// every encoding of it has the same ETag (Vary: Accept tells them apart)
	etag := `"` + schema.ContentHash(marshal(l)) + `"`
	h := api.Header{"Etag": {etag}, "Vary": {"Accept"}, "Cache-Control": {"public"}}
	if req.Header.Get("If-None-Match") == etag {
		return &api.Response{Status: 304, Header: h}
	}
	l.Kind, l.APIVersion = aggregatedAs, aggregatedGroup+"/"+aggregatedVersion
	h.Set("Content-Type", "application/json;g="+aggregatedGroup+";v="+aggregatedVersion+";as="+aggregatedAs)
	b, _ := json.Marshal(l)
	return &api.Response{Status: 200, Header: h, Body: b}
}

// versionResources is one group-version's resources, by name, each with
// its subresources: a built-in resource's by name and its response kinds
// without group and version when they are its own (kube's registry
// leaves them empty), a custom resource's status before scale and every
// kind in full (apiextensions-apiserver's discovery controller).
func versionResources(served []*kube.Resource, group, version string) versionDiscovery {
	v := versionDiscovery{Version: version, Freshness: "Current"}
	sub := []string{"get", "patch", "update"}
	for _, r := range served {
		if r.Group != group || r.Version != version {
			continue
		}
		own := &groupVersionKind{Kind: r.Kind}
		if r.Custom() {
			own.Group, own.Version = r.Group, r.Version
		}
		rd := resourceDiscovery{Resource: r.Resource, ResponseKind: own, Scope: "Cluster", SingularResource: r.Singular,
			Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories}
		if r.Namespaced {
			rd.Scope = "Namespaced"
		}
		if r.Status {
			rd.Subresources = append(rd.Subresources, subresourceDiscovery{Subresource: "status", ResponseKind: own, Verbs: sub})
		}
		if r.Scale {
			scale := subresourceDiscovery{Subresource: "scale", ResponseKind: &groupVersionKind{"autoscaling", "v1", "Scale"}, Verbs: sub}
			if r.Custom() {
				rd.Subresources = append(rd.Subresources, scale)
			} else {
				rd.Subresources = append([]subresourceDiscovery{scale}, rd.Subresources...)
			}
		}
		v.Resources = append(v.Resources, rd)
	}
	sort.Slice(v.Resources, func(i, j int) bool { return v.Resources[i].Resource < v.Resources[j].Resource })
	return v
}
