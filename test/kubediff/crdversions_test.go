package kubediff

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// widgetsCRD serves example.com Widgets in v1 (stored) and v2.
const widgetsCRD = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
"metadata":{"name":"widgets.example.com"},
"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","singular":"widget","kind":"Widget"},
 "versions":[
  {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}},
  {"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}`

// TestCustomResourceVersionsAsKubeAPIServer writes Widgets through both
// served versions of their definition on a real kube-apiserver (watch
// cache on, its default, and off) and on rvplay, and compares what each
// version reads back: a get of each object through each version, and a
// watch-list of each version (its initial events and the bookmark that
// ends them): every object and bookmark in the version asked for, whichever
// version wrote it, as kube's crdHandler gives each version its own
// storage and watch cache.
func TestCustomResourceVersionsAsKubeAPIServer(t *testing.T) {
	eachWatchCacheMode(t, func(t *testing.T, on bool) {
		c := newClient()
		kube := startKubeAPIServer(t, c)
		ours := rvplaytest.Start(t, "kd", fmt.Sprintf("--watch-cache=%t", on), "--compaction-interval=0").SessionURL
		answers := map[string][]string{}
		for _, side := range []struct{ name, base string }{{"kube-apiserver", kube}, {"rvplay", ours}} {
			var got []string
			do := func(method, path, body string) map[string]any {
				t.Helper()
				req, _ := http.NewRequest(method, side.base+path, strings.NewReader(body))
				if body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				resp, err := c.Do(req)
				if err != nil {
					t.Fatalf("%s: %s %s: %v", side.name, method, path, err)
				}
				defer resp.Body.Close()
				var m map[string]any
				_ = json.NewDecoder(resp.Body).Decode(&m)
				if resp.StatusCode >= 300 {
					t.Fatalf("%s: %s %s: %d %v", side.name, method, path, resp.StatusCode, m)
				}
				return m
			}
			do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", widgetsCRD)
			waitEstablished("widgets.example.com")(t, c, side.base)
			waitGone404("/apis/example.com/v2/namespaces/default/widgets", false)(t, c, side.base)
			for _, v := range []string{"v1", "v2"} {
				name := "by-" + v
				do("POST", "/apis/example.com/"+v+"/namespaces/default/widgets",
					`{"apiVersion":"example.com/`+v+`","kind":"Widget","metadata":{"name":"`+name+`"},"spec":{"size":1}}`)
			}
			for _, v := range []string{"v1", "v2"} {
				for _, name := range []string{"by-v1", "by-v2"} {
					m := do("GET", "/apis/example.com/"+v+"/namespaces/default/widgets/"+name, "")
					got = append(got, fmt.Sprintf("get %s %s: %v", v, name, m["apiVersion"]))
				}
				got = append(got, watchList(t, c, side.base+"/apis/example.com/"+v+"/namespaces/default/widgets", v)...)
			}
			answers[side.name] = got
		}
		want, have := strings.Join(answers["kube-apiserver"], "\n"), strings.Join(answers["rvplay"], "\n")
		t.Logf("kube-apiserver:\n%s", want)
		if want != have {
			t.Errorf("rvplay:\n%s", have)
		}
	})
}

// watchList reads a watch-list's initial events and the bookmark that ends
// them, as "watch v: TYPE name apiVersion kind" lines.
func watchList(t *testing.T, c *http.Client, coll, v string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", coll+"?watch=1&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out []string
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Type   string `json:"type"`
			Object struct {
				APIVersion string `json:"apiVersion"`
				Kind       string `json:"kind"`
				Metadata   struct {
					Name        string            `json:"name"`
					Annotations map[string]string `json:"annotations"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", sc.Bytes(), err)
		}
		out = append(out, fmt.Sprintf("watch %s: %s %s %s %s", v, e.Type, e.Object.Metadata.Name, e.Object.APIVersion, e.Object.Kind))
		if e.Type == "BOOKMARK" && e.Object.Metadata.Annotations["k8s.io/initial-events-end"] == "true" || e.Type == "ERROR" {
			return out
		}
	}
	return append(out, fmt.Sprintf("watch %s: ended (%v)", v, sc.Err()))
}
