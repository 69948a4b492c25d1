package clientgo

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
)

// TestDiscoveryClientUsesAggregatedDiscovery: client-go's discovery
// client learns every group, version and resource from the two
// aggregated documents (/api and /apis, answered as
// apidiscovery.k8s.io/v2) without fetching any group-version's list, as
// from kube-apiserver; a custom resource's group is among them while its
// definition exists, and gone after.
func TestDiscoveryClientUsesAggregatedDiscovery(t *testing.T) {
	base := startServer(t)
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimSuffix(u.Path, "/")
	var mu sync.Mutex
	var seen []string
	cfg := restConfig(base)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(r)
			if err == nil {
				mu.Lock()
				seen = append(seen, r.URL.Path+" "+resp.Header.Get("Content-Type"))
				mu.Unlock()
			}
			return resp, err
		})
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	resources := func() map[string][]string {
		t.Helper()
		mu.Lock()
		seen = nil
		mu.Unlock()
		_, lists, err := dc.ServerGroupsAndResources()
		if err != nil {
			t.Fatalf("ServerGroupsAndResources: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
		want := []string{prefix + "/api " + aggregated, prefix + "/apis " + aggregated}
		if !slices.Equal(seen, want) {
			t.Errorf("discovery requests %q, want only %q", seen, want)
		}
		out := map[string][]string{}
		for _, l := range lists {
			for _, r := range l.APIResources {
				out[l.GroupVersion] = append(out[l.GroupVersion], r.Name)
			}
		}
		return out
	}
	got := resources()
	for gv, want := range map[string][]string{
		"v1":                      {"configmaps", "events", "namespaces", "namespaces/status", "pods", "pods/status", "secrets"},
		"apps/v1":                 {"deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale", "replicasets/status"},
		"apiextensions.k8s.io/v1": {"customresourcedefinitions", "customresourcedefinitions/status"},
	} {
		if !slices.Equal(got[gv], want) {
			t.Errorf("%s: resources %v, want %v", gv, got[gv], want)
		}
	}

	dyn, err := dynamic.NewForConfig(restConfig(base))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "gadgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Cluster",
			"names": map[string]any{"plural": "gadgets", "kind": "Gadget"},
			"versions": []any{
				map[string]any{"name": "v1beta1", "served": true, "storage": false,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}},
				map[string]any{"name": "v1", "served": true, "storage": true,
					"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object"}}},
			}}}}
	if _, err := dyn.Resource(definitionsGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = resources()
	for _, gv := range []string{"example.com/v1", "example.com/v1beta1"} {
		if !slices.Equal(got[gv], []string{"gadgets"}) {
			t.Errorf("with the definition, %s: %v, want [gadgets]", gv, got[gv])
		}
	}
	groups, err := dc.ServerGroups()
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range groups.Groups {
		if g.Name == "example.com" && g.PreferredVersion.Version != "v1" {
			t.Errorf("example.com's preferred version %s, want v1 (kube's version order)", g.PreferredVersion.Version)
		}
	}
	if err := dyn.Resource(definitionsGVR).Delete(ctx, "gadgets.example.com", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	got = resources()
	for gv := range got {
		if schema.FromAPIVersionAndKind(gv, "").Group == "example.com" {
			t.Errorf("after the definition's delete, %s is still discovered: %v", gv, got[gv])
		}
	}
}
