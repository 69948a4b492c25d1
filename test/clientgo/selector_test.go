package clientgo

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
)

// An informer filtered by a label selector sees an object that stops
// matching as deleted and one that starts matching as added.
func TestInformerWithLabelSelectorSeesObjectsLeaveAndEnter(t *testing.T) {
	base := startServer(t)
	cs := clientset(t, base)
	ctx := testContext(t)
	ensureNamespace(t, cs, "sel")
	cms := cs.CoreV1().ConfigMaps("sel")
	mk := func(name, tier string) {
		t.Helper()
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"tier": tier}}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	mk("front", "web")
	mk("back", "db")

	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace("sel"),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = "tier=web" }))
	inf := factory.Core().V1().ConfigMaps().Informer()
	events := make(chan string, 100)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o any) { events <- "add " + o.(*corev1.ConfigMap).Name },
		UpdateFunc: func(_, o any) { events <- "update " + o.(*corev1.ConfigMap).Name },
		DeleteFunc: func(o any) {
			if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = tomb.Obj
			}
			events <- "delete " + o.(*corev1.ConfigMap).Name
		},
	})
	if !startInformers(t, ctx, factory, inf) {
		t.Fatal("no sync")
	}
	next := func(want string) {
		t.Helper()
		select {
		case got := <-events:
			if got != want {
				t.Fatalf("event %q, want %q", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no event, want %q", want)
		}
	}
	next("add front")
	relabel := func(name, tier string) {
		t.Helper()
		o, err := cms.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o.Labels["tier"] = tier
		if _, err := cms.Update(ctx, o, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	relabel("front", "db")
	next("delete front")
	relabel("back", "web")
	next("add back")
	if keys := inf.GetStore().ListKeys(); len(keys) != 1 || keys[0] != "sel/back" {
		t.Fatalf("store keys %v", keys)
	}
}
