package main

import (
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/kube/schema"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/web"
	"github.com/rvplay/rvplay/web/lessons"
)

const firstUseChildEnv = "RVPLAY_TEST_FIRST_USE_CHILD"

// Kube's description of its types and the lessons are some 300 KB of live
// heap each, the lab page's languages and lesson index some 40 KB: a
// server builds them when a request first needs them, not at start, so a
// server whose sessions only serve etcd's API never holds them. The check
// runs in a process of its own, where nothing else has asked for them yet.
func TestAServerReadsKubesTypesItsLessonsAndItsPagesOnlyOnFirstUse(t *testing.T) {
	if os.Getenv(firstUseChildEnv) != "" {
		firstUseChild(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+t.Name()+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), firstUseChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func firstUseChild(t *testing.T) {
	catalog, err := lesson.Open(lessons.Definitions())
	if err != nil {
		t.Fatal(err)
	}
	opts := classroom.Options{}
	opts.Session.Lessons = catalog
	opts.Session.Kube = kubeapi.ForSessions(kubeapi.Options{})
	srv, _ := startServerWith(t, "", opts, web.Handler(), "demo")
	resp, err := http.Post(srv.URL+"/s/demo/v3/kv/put", "application/json", strings.NewReader(`{"key":"Zm9v","value":"YmFy"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("a gateway put: %s", resp.Status)
	}
	http.DefaultClient.CloseIdleConnections()
	srv.CloseClientConnections()

	const atLeast = 100 << 10 // each is about 300 KB
	before := liveHeap()
	if schema.ForGVK("v1", "ConfigMap") == nil {
		t.Fatal("no ConfigMap type")
	}
	types := liveHeap()
	t.Logf("kube's types: %d bytes", types-before)
	if grew := types - before; grew < atLeast {
		t.Errorf("the first use of kube's types grew the live heap by %d bytes: they were read before", grew)
	}
	if catalog.Lesson("etcd-revisions") == nil {
		t.Fatal("no lesson etcd-revisions")
	}
	read := liveHeap()
	t.Logf("the lessons: %d bytes", read-types)
	if grew := read - types; grew < atLeast {
		t.Errorf("the first use of the lessons grew the live heap by %d bytes: they were read before", grew)
	}
	// The lab page's languages (its UI strings) and its lesson index are
	// read for the first page; the index keeps each lesson's titles, not
	// the texts they were cut from (66 KB then).
	if len(web.Languages()) == 0 {
		t.Fatal("no languages")
	}
	languages := liveHeap()
	t.Logf("the pages' languages: %d bytes", languages-read)
	if grew := languages - read; grew < 10<<10 {
		t.Errorf("the first use of the pages' languages grew the live heap by %d bytes: they were read before", grew)
	}
	if len(web.LessonIndex()) == 0 {
		t.Fatal("no lessons in the pages' index")
	}
	index := liveHeap()
	t.Logf("the pages' lesson index: %d bytes", index-languages)
	if grew := index - languages; grew <= 0 || grew > 32<<10 {
		t.Errorf("the first use of the pages' lesson index grew the live heap by %d bytes: more than 0 and at most 32 KB expected", grew)
	}
}

// liveHeap is what a full collection finds live (after two: the first
// keeps what sync.Pools hold).
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}
