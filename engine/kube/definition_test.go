package kube

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// widgetDefinition is a namespaced definition of example.com/v1 Widgets
// with a status subresource and a schema that defaults spec.size.
func widgetDefinition(plural, kind string) Object {
	var o Object
	if err := json.Unmarshal([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
	 "metadata":{"name":"`+plural+`.example.com"},
	 "spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"`+plural+`","kind":"`+kind+`"},
	  "versions":[{"name":"v1","served":true,"storage":true,"subresources":{"status":{}},
	   "schema":{"openAPIV3Schema":{"type":"object","properties":{
	    "spec":{"type":"object","properties":{"size":{"type":"integer","default":3}}},
	    "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}}}]}}`), &o); err != nil {
		panic(err)
	}
	return o
}

func (f *fixture) served(t *testing.T, group, version, plural string) *Resource {
	t.Helper()
	r, err := f.s.Lookup(f.ctx, group, version, plural)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestADefinitionIsNamedEstablishedAndServed(t *testing.T) {
	f := newFixture(t)
	created := f.create(t, definitions, "", widgetDefinition("widgets", "Widget"))
	if conditionOf(created, "Established") != nil {
		t.Fatalf("the create answers before the controllers run: %v", created["status"])
	}
	crd, err := f.s.Get(f.ctx, definitions, "", "widgets.example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if !isEstablished(crd) || str(conditionOf(crd, "NamesAccepted"), "reason") != "NoConflicts" {
		t.Fatalf("conditions: %v", crd["status"])
	}
	// two status writes, the naming and the establishing controller's
	if ResourceVersion(crd) == ResourceVersion(created) {
		t.Fatal("no status write")
	}
	r := f.served(t, "example.com", "v1", "widgets")
	if r == nil || r.Kind != "Widget" || r.Singular != "widget" || r.ListKind != "WidgetList" || !r.Status {
		t.Fatalf("served: %+v", r)
	}
	w := f.create(t, r, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"},
		"spec": map[string]any{}, "status": map[string]any{"ready": true}})
	if n, _ := numberInt(pathValue(w, "spec", "size")); n != 3 || w["status"] != nil {
		t.Fatalf("defaults and status on create: %v", w)
	}
}

func TestACustomResourceRefusesAnUnconditionalUpdate(t *testing.T) {
	f := newFixture(t)
	f.create(t, definitions, "", widgetDefinition("widgets", "Widget"))
	r := f.served(t, "example.com", "v1", "widgets")
	f.create(t, r, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}})
	_, err := f.s.Update(f.ctx, r, "default", "w", "", Object{"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w"}, "spec": map[string]any{"size": json.Number("4")}}, WriteOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`)
}

func TestAnotherDefinitionsNamesAreNotAccepted(t *testing.T) {
	f := newFixture(t)
	f.create(t, definitions, "", widgetDefinition("widgets", "Widget"))
	f.create(t, definitions, "", widgetDefinition("gadgets", "Widget"))
	crd, err := f.s.Get(f.ctx, definitions, "", "gadgets.example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	c := conditionOf(crd, "NamesAccepted")
	if str(c, "status") != "False" || str(c, "reason") != "ListKindConflict" || str(c, "message") != `"WidgetList" is already in use` {
		t.Fatalf("NamesAccepted: %v", c)
	}
	if isEstablished(crd) || f.served(t, "example.com", "v1", "gadgets") != nil {
		t.Fatal("a definition whose names are not accepted is served")
	}
	// once the other goes, the names are free
	if _, err := f.s.Delete(f.ctx, definitions, "", "widgets.example.com", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if f.served(t, "example.com", "v1", "gadgets") == nil {
		t.Fatal("gadgets not served after widgets went")
	}
}

func TestDeletingADefinitionDeletesItsResources(t *testing.T) {
	f := newFixture(t)
	f.create(t, definitions, "", widgetDefinition("widgets", "Widget"))
	r := f.served(t, "example.com", "v1", "widgets")
	for _, n := range []string{"a", "b"} {
		f.create(t, r, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": n}})
	}
	held := Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "held", "finalizers": []any{"example.com/hold"}}}
	f.create(t, r, "default", held)
	ans, err := f.s.Delete(f.ctx, definitions, "", "widgets.example.com", DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	marked := ans.(Object)
	if str(meta(marked), "deletionTimestamp") == "" || str(conditionOf(marked, "Terminating"), "reason") != "InstanceDeletionPending" {
		t.Fatalf("the delete answers with the marked definition: %v", marked)
	}
	// a finalizer holds one resource, and with it the definition
	crd, err := f.s.Get(f.ctx, definitions, "", "widgets.example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if str(conditionOf(crd, "Terminating"), "reason") != "InstanceDeletionCheck" {
		t.Fatalf("Terminating: %v", conditionOf(crd, "Terminating"))
	}
	l, err := f.s.List(f.ctx, r, "", ListOptions{})
	if err != nil || len(l.Objects()) != 1 || Name(l.Objects()[0]) != "held" {
		t.Fatalf("left: %v %v", l, err)
	}
}

func TestCompareVersionsIsKubeAware(t *testing.T) {
	order := []string{"v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1", "v12alpha1", "v11alpha2", "foo1", "foo10"}
	for i := range order {
		for j := range order {
			want := 0
			if i < j {
				want = 1
			} else if i > j {
				want = -1
			}
			if got := CompareVersions(order[i], order[j]); got != want {
				t.Errorf("CompareVersions(%s, %s) = %d, want %d", order[i], order[j], got, want)
			}
		}
	}
}

func TestJSONPathsOfColumns(t *testing.T) {
	o := Object{"spec": map[string]any{"a.b": "dotted", "ports": []any{map[string]any{"port": json.Number("80")}}},
		"status": map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}}}
	for path, want := range map[string]string{
		".spec.ports[0].port":                           "80",
		`.status.conditions[?(@.type=="Ready")].status`: "True",
		".spec['a.b']":                                  "dotted",
	} {
		p, err := parseJSONPath(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		v, ok := p.get(o)
		if !ok || scalarText(v) != want {
			t.Errorf("%s = %v %v, want %s", path, v, ok, want)
		}
	}
	if _, err := parseJSONPath("spec.x"); err == nil {
		t.Error("a path must start with . or [")
	}
}

func TestACustomResourceIsWatchedWithAndWithoutTheWatchCache(t *testing.T) {
	for _, cached := range []bool{false, true} {
		f := newFixture(t)
		f.s.SetWatchCache(cached)
		f.create(t, definitions, "", widgetDefinition("widgets", "Widget"))
		r := f.served(t, "example.com", "v1", "widgets")
		w, err := f.s.Watch(f.ctx, r, "default", ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		f.create(t, r, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}})
		ev, err := w.Next(f.ctx)
		w.Close()
		var e struct {
			Type   string `json:"type"`
			Object Object `json:"object"`
		}
		if err != nil || json.Unmarshal(ev, &e) != nil || e.Type != "ADDED" || Name(e.Object) != "w" || e.Object["kind"] != "Widget" {
			t.Fatalf("cache %v: %s %v", cached, ev, err)
		}
	}
}

// A definition deleted and created again is a new resource to the watch
// cache too, as kube-apiserver's crdHandler builds a new storage (and
// cacher) for it: its watches speak of the new definition's kind, not the
// first one's.
func TestADefinitionCreatedAgainGetsANewWatchCache(t *testing.T) {
	f := newFixture(t)
	f.create(t, definitions, "", widgetDefinition("widgets", "Widget"))
	first := f.served(t, "example.com", "v1", "widgets")
	f.create(t, first, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "w"}})
	w, err := f.s.Watch(f.ctx, first, "default", ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := f.s.Delete(f.ctx, definitions, "", "widgets.example.com", DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Get(f.ctx, definitions, "", "widgets.example.com", ""); err == nil {
		t.Fatal("the definition is still there")
	}
	f.create(t, definitions, "", widgetDefinition("widgets", "Gadget"))
	again := f.served(t, "example.com", "v1", "widgets")
	if again == nil || again.Kind != "Gadget" {
		t.Fatalf("served: %+v", again)
	}
	f.create(t, again, "default", Object{"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": map[string]any{"name": "g"}})
	w, err = f.s.Watch(f.ctx, again, "default", ListOptions{SendInitialEvents: bptr(true), ResourceVersionMatch: MatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if e := next(t, w); e.Type != Added || e.name() != "g" || e.Object["kind"] != "Gadget" {
		t.Fatalf("first event: %v", e)
	}
	if b := next(t, w); b.Type != Bookmark || b.Object["kind"] != "Gadget" {
		t.Fatalf("the bookmark ending the initial events: %v", b.Object)
	}
}

// twoVersionDefinition serves example.com Widgets in v1 (stored) and v2.
func twoVersionDefinition() Object {
	crd := widgetDefinition("widgets", "Widget")
	versions := pathValue(crd, "spec", "versions").([]any)
	v2 := map[string]any{}
	for k, v := range versions[0].(map[string]any) {
		v2[k] = v
	}
	v2["name"], v2["storage"] = "v2", false
	crd["spec"].(map[string]any)["versions"] = append(versions, v2)
	return crd
}

// kube-apiserver's crdHandler builds one storage, and so one watch cache,
// per served version, all when the definition is first served: a watch
// of v2 speaks of v2 objects and v2 bookmarks even when v1 was watched
// first, and its window is as old as v1's.
func TestEachServedVersionHasItsOwnWatchCache(t *testing.T) {
	f := newFixture(t)
	f.create(t, definitions, "", twoVersionDefinition())
	v1 := f.served(t, "example.com", "v1", "widgets")
	v2 := f.served(t, "example.com", "v2", "widgets")
	first := f.create(t, v1, "default", Object{"apiVersion": "example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": "a"}})
	w1, err := f.s.Watch(f.ctx, v1, "default", ListOptions{ResourceVersion: ResourceVersion(first)})
	if err != nil {
		t.Fatal(err)
	}
	defer w1.Close()
	f.create(t, v2, "default", Object{"apiVersion": "example.com/v2", "kind": "Widget", "metadata": map[string]any{"name": "b"}})
	// Stored in the storage version, read in each.
	resp, err := f.store.Range(f.ctx, &mvcc.RangeRequest{Key: []byte(v1.Key("default", "b"))})
	if err != nil || len(resp.Kvs) != 1 || !strings.Contains(string(resp.Kvs[0].Value), `"apiVersion":"example.com/v1"`) {
		t.Fatalf("stored: %v %v", resp, err)
	}
	for _, r := range []*Resource{v1, v2} {
		if o, err := f.s.Get(f.ctx, r, "default", "b", ""); err != nil || o["apiVersion"] != r.GroupVersion() {
			t.Fatalf("get %s: %v %v", r.GroupVersion(), o, err)
		}
	}
	if e := next(t, w1); e.Type != Added || e.name() != "b" || e.Object["apiVersion"] != "example.com/v1" {
		t.Fatalf("v1's watch: %v %v", e, e.Object)
	}
	// From before b: v2's cache started with v1's.
	w2, err := f.s.Watch(f.ctx, v2, "default", ListOptions{ResourceVersion: ResourceVersion(first), AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if e := next(t, w2); e.Type != Added || e.name() != "b" || e.Object["apiVersion"] != "example.com/v2" {
		t.Fatalf("v2's watch: %v", e)
	}
	w3, err := f.s.Watch(f.ctx, v2, "default", ListOptions{SendInitialEvents: bptr(true), ResourceVersionMatch: MatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w3.Close()
	for _, name := range []string{"a", "b"} {
		if e := next(t, w3); e.Type != Added || e.name() != name || e.Object["apiVersion"] != "example.com/v2" {
			t.Fatalf("v2's initial events: %v", e)
		}
	}
	if b := next(t, w3); b.Type != Bookmark || b.Object["apiVersion"] != "example.com/v2" || b.Object["kind"] != "Widget" {
		t.Fatalf("v2's bookmark: %v", b.Object)
	}
}
