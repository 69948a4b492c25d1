package classnames

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// A name is replaced where it is a whole word, never inside another word.
func TestWordsReplacesWholeWords(t *testing.T) {
	own := map[string]string{"k1": "k1-ada-x", "nginx": "nginx-ada-x", "default": "ada-x", "6": "4312"}
	for in, want := range map[string]string{
		"etcdctl put k1 v1":                                                 "etcdctl put k1-ada-x v1",
		"etcdctl get k1 --rev=6 -w json":                                    "etcdctl get k1-ada-x --rev=4312 -w json",
		"etcdctl put k10 v1":                                                "etcdctl put k10 v1",
		"kubectl rollout status deployment/nginx":                           "kubectl rollout status deployment/nginx-ada-x",
		"etcdctl get /registry/deployments/default/nginx -w json":           "etcdctl get /registry/deployments/ada-x/nginx-ada-x -w json",
		"kubectl get deployment nginx-deployment":                           "kubectl get deployment nginx-deployment",
		"kubectl get deployment nginx -o jsonpath='{.metadata.generation}'": "kubectl get deployment nginx-ada-x -o jsonpath='{.metadata.generation}'",
		// a --raw URI is the API's path: its namespace and name are the student's
		"kubectl replace --raw /apis/apps/v1/namespaces/default/deployments/nginx -f -": "kubectl replace --raw /apis/apps/v1/namespaces/ada-x/deployments/nginx-ada-x -f -",
	} {
		if got := Words(in, own); got != want {
			t.Errorf("Words(%q) = %q, want %q", in, got, want)
		}
	}
}

// In a manifest only the object's own name and namespace change: labels,
// selectors, containers and images keep the article's word.
func TestAManifestKeepsItsLabelsAndImages(t *testing.T) {
	r := &rewriter{own: map[string]string{"nginx": "nginx-ada-x", "default": "ada-x"}}
	in := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx\n  namespace: default\n  labels:\n    app: nginx\nspec:\n  template:\n    metadata:\n      name: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n"
	want := "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nginx-ada-x\n  namespace: ada-x\n  labels:\n    app: nginx\nspec:\n  template:\n    metadata:\n      name: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:1.14.2\n"
	if got := r.manifest(in); got != want {
		t.Errorf("manifest:\n%s\nwant\n%s", got, want)
	}
}

// A JSON manifest (a kubectl replace --raw body, which the server reads
// as JSON) gets the same rewriting as a YAML one: its top-level
// metadata's name and namespace only.
func TestAJSONManifestKeepsItsLabelsAndImages(t *testing.T) {
	r := &rewriter{own: map[string]string{"nginx": "nginx-ada-x", "default": "ada-x"}}
	in := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nginx","namespace":"default","labels":{"app":"nginx"}},` +
		`"spec":{"replicas":4,"template":{"metadata":{"name":"nginx"},"spec":{"containers":[{"name":"nginx","image":"nginx:1.14.2"}]}}}}` + "\n"
	want := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"labels":{"app":"nginx"},"name":"nginx-ada-x","namespace":"ada-x"},` +
		`"spec":{"replicas":4,"template":{"metadata":{"name":"nginx"},"spec":{"containers":[{"image":"nginx:1.14.2","name":"nginx"}]}}}}` + "\n"
	if got := r.manifest(in); got != want {
		t.Errorf("manifest:\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{`{"metadata":`, `{"kind":"X"} {}`, `{"kind":"X"}`} {
		if got := r.manifest(bad); got != bad {
			t.Errorf("manifest(%q) = %q, want it as it is", bad, got)
		}
	}
}

// A lesson must decide, once: shared names (and why) or names to own.
func TestAClassObjectSaysOneThing(t *testing.T) {
	for class, ok := range map[string]bool{
		``:                         false,
		`{}`:                       false,
		`{"shared":"people race"}`: true,
		`{"names":["k1"]}`:         true,
		`{"namespace":true}`:       true,
		`{"shared":"people race","names":["k1"]}`:                               false,
		`{"names":["k1 k2"]}`:                                                   false,
		`{"names":["k1"],"revisions":{"6":"k2"}}`:                               false,
		`{"names":["k1"],"revisions":{"x":"k1"}}`:                               false,
		`{"namespace":true,"revisions":{"6":"/registry/configmaps/default/a"}}`: true,
		`{"names":["k1"],"own":{"k1":"k1-a"}}`:                                  false,
		`{"names":["k1"],"typo":true}`:                                          false,
	} {
		l := &lesson.Lesson{Dir: "01-x", Slug: "x"}
		if class != "" {
			l.Class = []byte(class)
		}
		if _, err := Of(l); (err == nil) != ok {
			t.Errorf("class %s: error %v, want ok=%v", class, err, ok)
		}
	}
}

// The teacher, an open session's learners (no principal: the teacher)
// and a shared lesson keep the article's names.
func TestOnlyStudentsGetTheirOwnNames(t *testing.T) {
	own, err := lesson.Parse("01-keys", []byte(`{"slug":"keys","class":{"names":["k1"]},
	  "steps":[{"id":"put","actions":[{"id":"put","run":"etcdctl put k1 v1"}],"solution":["put"],"verify":{"key":{"key":"k1"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	shared, err := lesson.Parse("02-race", []byte(`{"slug":"race","class":{"shared":"people race"},
	  "steps":[{"id":"put","actions":[{"id":"put","run":"etcdctl put k1 v1"}],"solution":["put"],"verify":{"key":{"key":"k1"}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	store, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := New(store)
	student := api.Principal{ID: "ada-x7k2q", Name: "Ada", Role: api.RoleStudent}
	if got := o.For(own, student).Steps[0].Actions[0].Run; got != "etcdctl put k1-ada-x7k2q v1" {
		t.Errorf("the student runs %q", got)
	}
	if first := o.For(own, student); o.For(own, student) != first {
		t.Error("the rewritten lesson is not cached")
	}
	for _, p := range []api.Principal{{ID: "teacher", Role: api.RoleTeacher}, {}, {ID: "Not A Label", Role: api.RoleStudent}} {
		if o.For(own, p) != own {
			t.Errorf("%+v gets other names", p)
		}
	}
	if o.For(shared, student) != shared {
		t.Error("a shared lesson's names changed")
	}
}

// A revision "too new to serve" stays ahead of a busy class's store: N to
// 2N past its revision, the same for N revisions; a client action's
// resourceVersion is mapped as a command's is.
func TestATooNewRevisionStaysAhead(t *testing.T) {
	l, err := lesson.Parse("01-future", []byte(`{"slug":"future","class":{"namespace":true,"revisions":{"1000":"+100"}},
	  "steps":[{"id":"get","actions":[{"id":"get","client":"B","do":"get","resource":"configmaps","name":"a","resourceVersion":"1000"},
	    {"id":"list","client":"B","do":"list","resource":"configmaps","resourceVersion":"list"}],"solution":["get"],
	    "verify":{"exchange":{"client":"B","verb":"get","status":504}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	store, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 250; i++ {
		if _, err := store.Put(t.Context(), &mvcc.PutRequest{Key: []byte("k"), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	own := New(store).For(l, api.Principal{ID: "ada-x7k2q", Role: api.RoleStudent})
	get, list := own.Steps[0].Actions[0], own.Steps[0].Actions[1]
	if get.ResourceVersion != "400" || get.Namespace != "ada-x7k2q" {
		t.Errorf("at revision %d the too new get is %+v, want resourceVersion 400 in the student's namespace", store.Rev(), get)
	}
	if list.ResourceVersion != "list" {
		t.Errorf("a list from the client's last list became %q", list.ResourceVersion)
	}
}

// The article's "--rev=6" is the student's k1 as first created: after the
// lesson deletes k1 (and while it is gone) and creates it again, the
// student's command still reads that first creation, until compaction
// takes it away.
func TestAQuotedRevisionIsTheKeysFirstCreation(t *testing.T) {
	l, err := lesson.Parse("01-revisions", []byte(`{"slug":"revisions","class":{"names":["k1"],"revisions":{"6":"k1"}},
	  "steps":[{"id":"past","actions":[{"id":"get","run":"etcdctl get k1 --rev=6 -w json"}],"solution":["get"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	store, put := storeWithPut(t)
	o := New(store)
	ada := api.Principal{ID: "ada-x7k2q", Role: api.RoleStudent}
	read := func() string { return o.For(l, ada).Steps[0].Actions[0].Run }
	put("elsewhere")
	first := put("k1-ada-x7k2q")
	want := fmt.Sprintf("etcdctl get k1-ada-x7k2q --rev=%d -w json", first)
	if got := read(); got != want {
		t.Fatalf("after the put: %q, want %q", got, want)
	}
	if _, err := store.DeleteRange(t.Context(), &mvcc.DeleteRangeRequest{Key: []byte("k1-ada-x7k2q")}); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != want {
		t.Errorf("with k1 deleted: %q, want %q", got, want)
	}
	put("k1-ada-x7k2q")
	if got := read(); got != want {
		t.Errorf("with k1 created again: %q, want %q", got, want)
	}
	if _, err := store.Compact(t.Context(), &mvcc.CompactionRequest{Revision: store.Rev()}); err != nil {
		t.Fatal(err)
	}
	if got := read(); got == want {
		t.Errorf("after a compaction past it, the first creation is still quoted: %q", got)
	}
}

// A revision the article quotes as a set-up object's (lesson 5's items,
// a 6, b 7 and c 8) is, for a student, their own copy's first
// resourceVersion: the create_revision of its etcd key, written as the
// article does and read in the student's namespace and names.
func TestAQuotedRevisionMayBeAnObjectsKeyInTheStudentsNamespace(t *testing.T) {
	l, err := lesson.Parse("01-items", []byte(`{"slug":"items","class":{"names":["nginx"],"namespace":true,"revisions":{"6":"/registry/configmaps/default/a","7":"/registry/deployments/default/nginx"}},
	  "steps":[{"id":"list","actions":[{"id":"list","client":"R","do":"list","resource":"configmaps"}],"solution":["list"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	store, put := storeWithPut(t)
	put("/registry/configmaps/default/a") // the article's, the teacher's
	a := put("/registry/configmaps/ada-x7k2q/a")
	nginx := put("/registry/deployments/ada-x7k2q/nginx-ada-x7k2q")
	put("/registry/configmaps/ada-x7k2q/a") // changed since: still its first creation
	var class Class
	if err := json.Unmarshal(New(store).For(l, api.Principal{ID: "ada-x7k2q", Role: api.RoleStudent}).Class, &class); err != nil {
		t.Fatal(err)
	}
	if class.Own["6"] != fmt.Sprint(a) || class.Own["7"] != fmt.Sprint(nginx) {
		t.Fatalf("own: %v, want 6 -> %d, 7 -> %d", class.Own, a, nginx)
	}
}

// storeWithPut is a new store and a put of a key into it that answers
// the revision it made.
func storeWithPut(t *testing.T) (*mvcc.Store, func(key string) int64) {
	store, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return store, func(k string) int64 {
		t.Helper()
		r, err := store.Put(t.Context(), &mvcc.PutRequest{Key: []byte(k), Value: []byte("v")})
		if err != nil {
			t.Fatal(err)
		}
		return r.Header.Revision
	}
}
