package clientgo

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

var (
	definitionsGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	widgetsGVR     = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
)

// TestDynamicInformerOnACustomResource defines a custom resource, runs a
// dynamic informer on it, and sees its cache follow creates, an update
// (which must carry the resourceVersion the informer saw) and a delete.
func TestDynamicInformerOnACustomResource(t *testing.T) {
	base := startServer(t)
	ensureNamespace(t, clientset(t, base), "crd")
	dc, err := dynamic.NewForConfig(restConfig(base))
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "widgets.example.com"},
		"spec": map[string]any{
			"group": "example.com", "scope": "Namespaced",
			"names": map[string]any{"plural": "widgets", "kind": "Widget"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "properties": map[string]any{
					"spec": map[string]any{"type": "object", "properties": map[string]any{
						"size": map[string]any{"type": "integer", "default": int64(1)}}}}}}}},
		},
	}}
	if _, err := dc.Resource(definitionsGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the definition: %v", err)
	}
	widgets := dc.Resource(widgetsGVR).Namespace("crd")
	widget := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "example.com/v1", "kind": "Widget",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{}}}
	}
	if _, err := widgets.Create(ctx, widget("a"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a: %v", err)
	}

	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, "crd", nil)
	inf := factory.ForResource(widgetsGVR).Informer()
	changed := make(chan struct{}, 64)
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { signal() },
		UpdateFunc: func(any, any) { signal() },
		DeleteFunc: func(any) { signal() },
	}); err != nil {
		t.Fatal(err)
	}
	if !startInformers(t, ctx, factory, inf) {
		t.Fatal("the informer did not sync")
	}
	if _, err := widgets.Create(ctx, widget("b"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create b: %v", err)
	}
	// each event the informer delivers is a moment to look again
	waitFor := func(what string, ok func() bool) {
		t.Helper()
		for !ok() {
			select {
			case <-changed:
			case <-ctx.Done():
				t.Fatalf("the informer's cache never had %s: %v", what, inf.GetStore().ListKeys())
			}
		}
	}
	waitFor("a and b", func() bool { return len(inf.GetStore().ListKeys()) == 2 })

	// the cached copy, defaulted by the schema, is the base of an update
	obj, _, _ := inf.GetStore().GetByKey("crd/a")
	a := obj.(*unstructured.Unstructured).DeepCopy()
	if n, _, _ := unstructured.NestedInt64(a.Object, "spec", "size"); n != 1 {
		t.Fatalf("spec.size not defaulted: %v", a.Object["spec"])
	}
	unstructured.SetNestedField(a.Object, int64(5), "spec", "size")
	if _, err := widgets.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update with the cached resourceVersion: %v", err)
	}
	waitFor("a's update", func() bool {
		o, _, _ := inf.GetStore().GetByKey("crd/a")
		n, _, _ := unstructured.NestedInt64(o.(*unstructured.Unstructured).Object, "spec", "size")
		return n == 5
	})
	blind := widget("a")
	if _, err := widgets.Update(ctx, blind, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Fatalf("update without resourceVersion: want Invalid (must be specified), got %v", err)
	}
	if err := widgets.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete b: %v", err)
	}
	waitFor("b's delete", func() bool { return len(inf.GetStore().ListKeys()) == 1 })
}
