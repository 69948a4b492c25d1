package clientgo

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	clientfeatures "k8s.io/client-go/features"
)

// gateOverride flips one client-go feature and leaves the rest alone.
type gateOverride struct {
	base    clientfeatures.Gates
	feature clientfeatures.Feature
	value   bool
}

func (g gateOverride) Enabled(f clientfeatures.Feature) bool {
	if f == g.feature {
		return g.value
	}
	return g.base.Enabled(f)
}

// setWatchListClient sets client-go's WatchListClient gate for the test
// (default on since client-go 0.35). Reflectors read it when created.
func setWatchListClient(t *testing.T, on bool) {
	base := clientfeatures.FeatureGates()
	clientfeatures.ReplaceFeatureGates(gateOverride{base: base, feature: clientfeatures.WatchListClient, value: on})
	t.Cleanup(func() { clientfeatures.ReplaceFeatureGates(base) })
}

func TestInformerSyncsWithWatchList(t *testing.T) { informerScenario(t, true) }

func TestInformerSyncsWithListAndWatch(t *testing.T) { informerScenario(t, false) }

func informerScenario(t *testing.T, watchList bool) {
	informerScenarioOn(t, restConfig(startServer(t)), "inf", watchList)
}

// informerScenarioOn runs the scenario in namespace ns through cfg: an
// rvplay session, or a kube-apiserver storing in rvplay
// (kubeapiserver_test.go).
func informerScenarioOn(t *testing.T, cfg *rest.Config, ns string, watchList bool) {
	reqs := &requestLog{}
	cfg.WrapTransport = reqs.wrap
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := testContext(t)
	ensureNamespace(t, cs, ns)
	cms := cs.CoreV1().ConfigMaps(ns)
	for _, name := range []string{"a", "b"} {
		if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"v": "0"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	setWatchListClient(t, watchList)
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	events := make(chan string, 100)
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) { events <- "add " + o.(*corev1.ConfigMap).Name },
		UpdateFunc: func(old, o any) {
			if old.(*corev1.ConfigMap).ResourceVersion != o.(*corev1.ConfigMap).ResourceVersion {
				events <- "update " + o.(*corev1.ConfigMap).Name + " v=" + o.(*corev1.ConfigMap).Data["v"]
			}
		},
		DeleteFunc: func(o any) {
			if tomb, ok := o.(cache.DeletedFinalStateUnknown); ok {
				o = tomb.Obj
			}
			events <- "delete " + o.(*corev1.ConfigMap).Name
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	syncCtx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if !startInformers(t, syncCtx, factory, inf) {
		t.Fatalf("informer did not sync within 20s; requests: %q", reqs.all())
	}
	expect := func(want ...string) {
		t.Helper()
		got := map[string]bool{}
		for len(got) < len(want) {
			select {
			case e := <-events:
				got[e] = true
			case <-time.After(10 * time.Second):
				t.Fatalf("waiting for %q, got %v; requests: %q", want, got, reqs.all())
			}
		}
		for _, w := range want {
			if !got[w] {
				t.Fatalf("want events %q, got %v", want, got)
			}
		}
	}
	expect("add a", "add b")

	if _, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("add c")
	a, _ := cms.Get(ctx, "a", metav1.GetOptions{})
	a.Data["v"] = "1"
	if _, err := cms.Update(ctx, a, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("update a v=1")
	if err := cms.Delete(ctx, "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expect("delete b")

	lister := factory.Core().V1().ConfigMaps().Lister().ConfigMaps(ns)
	if got, err := lister.Get("a"); err != nil || got.Data["v"] != "1" {
		t.Fatalf("lister a: %v %v", got, err)
	}
	if _, err := lister.Get("b"); err == nil {
		t.Fatal("lister still has b")
	}

	// Which path did the reflector take?
	var sawWatchList, sawList bool
	for _, r := range reqs.all() {
		if !strings.Contains(r, "/namespaces/"+ns+"/configmaps?") {
			continue
		}
		switch {
		case strings.Contains(r, "watch=true") && strings.Contains(r, "sendInitialEvents=true"):
			sawWatchList = true
		case !strings.Contains(r, "watch=true"):
			sawList = true
		}
	}
	if watchList && (!sawWatchList || sawList) {
		t.Errorf("watch-list mode: want a sendInitialEvents watch and no LIST; requests %q", reqs.all())
	}
	if !watchList && (sawWatchList || !sawList) {
		t.Errorf("list+watch mode: want a LIST and no watch-list; requests %q", reqs.all())
	}
}
