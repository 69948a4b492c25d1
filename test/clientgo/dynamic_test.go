package clientgo

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

var (
	configMapsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
)

func TestDynamicClientVerbs(t *testing.T) {
	base := startServer(t)
	ensureNamespace(t, clientset(t, base), "dyn")
	dc, err := dynamic.NewForConfig(restConfig(base))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	deps := dc.Resource(deploymentsGVR).Namespace("dyn")
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "api"},
		"spec": map[string]any{
			"replicas": int64(1),
			"selector": map[string]any{"matchLabels": map[string]any{"app": "api"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "api"}},
				"spec":     map[string]any{"containers": []any{map[string]any{"name": "api", "image": "busybox"}}},
			},
		},
	}}
	created, err := deps.Create(ctx, obj, metav1.CreateOptions{FieldManager: "dyn-test"})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	list, err := deps.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.GetResourceVersion() == "" {
		t.Fatalf("list: %v %v", err, list)
	}

	patched, err := deps.Patch(ctx, "api", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	if n, _, _ := unstructured.NestedInt64(patched.Object, "spec", "replicas"); n != 4 || patched.GetGeneration() != 2 {
		t.Fatalf("merge patch: replicas %d generation %d", n, patched.GetGeneration())
	}
	// A resourceVersion in a patch is a precondition.
	stale := []byte(`{"metadata":{"resourceVersion":"` + created.GetResourceVersion() + `"},"spec":{"replicas":5}}`)
	if _, err := deps.Patch(ctx, "api", types.MergePatchType, stale, metav1.PatchOptions{}); !apierrors.IsConflict(err) {
		t.Fatalf("patch with stale RV: want Conflict, got %v", err)
	}
	if _, err := deps.Patch(ctx, "api", types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/replicas","value":6}]`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("json patch: %v", err)
	}

	// Server-side apply by two managers: the second conflicts on
	// spec.replicas unless it forces.
	apply := func(manager string, replicas int64, force bool) (*unstructured.Unstructured, error) {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": map[string]any{"name": "api"},
			"spec":     map[string]any{"replicas": replicas},
		}}
		return deps.Apply(ctx, "api", u, metav1.ApplyOptions{FieldManager: manager, Force: force})
	}
	if _, err := apply("alice", 2, true); err != nil {
		t.Fatalf("apply alice: %v", err)
	}
	if _, err := apply("bob", 3, false); !apierrors.IsConflict(err) {
		t.Fatalf("apply bob without force: want Conflict, got %v", err)
	}
	applied, err := apply("bob", 3, true)
	if err != nil {
		t.Fatalf("apply bob with force: %v", err)
	}
	if n, _, _ := unstructured.NestedInt64(applied.Object, "spec", "replicas"); n != 3 {
		t.Fatalf("after forced apply replicas = %d", n)
	}

	if err := deps.Delete(ctx, "api", metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: ptr(created.GetResourceVersion())}}); !apierrors.IsConflict(err) {
		t.Fatalf("delete with stale RV precondition: want Conflict, got %v", err)
	}
	if err := deps.Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := deps.Get(ctx, "api", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("get after delete: %v", err)
	}

	// Configmaps through the same client.
	cms := dc.Resource(configMapsGVR).Namespace("dyn")
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "c"}, "data": map[string]any{"a": "b"}}}
	if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create configmap: %v", err)
	}
	got, err := cms.Get(ctx, "c", metav1.GetOptions{})
	if err != nil || got.GetKind() != "ConfigMap" {
		t.Fatalf("get configmap: %v %v", err, got)
	}
}

func ptr[T any](v T) *T { return &v }
