package session

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	ctrl "github.com/rvplay/rvplay/engine/controllers"
	"github.com/rvplay/rvplay/engine/mvcc"
)

const deployPath = "/apis/apps/v1/namespaces/default/deployments"

func deploymentJSON(name string, replicas int, image string) string {
	return fmt.Sprintf(`{"metadata":{"name":%q},"spec":{"replicas":%d,"selector":{"matchLabels":{"app":%q}},
		"template":{"metadata":{"labels":{"app":%q}},"spec":{"containers":[{"name":"web","image":%q}]}}}}`, name, replicas, name, name, image)
}

// cluster is a session with its controllers in a synctest bubble: time
// is fake and passes only when every goroutine of the session waits, so a
// test that lets time pass (settle) sees everything the controllers do
// by then, deterministically and at once.
type cluster struct {
	t *testing.T
	s *Session
}

// inCluster runs test against a new session in a bubble.
func inCluster(t *testing.T, test func(t *testing.T, c *cluster)) {
	synctest.Test(t, func(t *testing.T) {
		s, err := New("t", mvcc.NewMemoryBackend(), Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		test(t, &cluster{t: t, s: s})
	})
}

// settle lets d pass (the controllers, the kubelet and the watches act on
// their own meanwhile) and waits until they are all idle.
func (c *cluster) settle(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

func (c *cluster) do(method, path, body string) *api.Response {
	c.t.Helper()
	req := &api.Request{Method: method, Path: path, Body: []byte(body), Header: api.Header{}}
	if method == "PATCH" {
		req.Header.Set("Content-Type", "application/merge-patch+json")
	}
	return c.s.Serve(context.Background(), req)
}

// get reads an object (nil when it does not exist).
func (c *cluster) get(path string) map[string]any {
	r := c.s.Kube.Serve(context.Background(), &api.Request{Method: "GET", Path: path})
	if r.Status == 404 {
		return nil
	}
	var o map[string]any
	json.Unmarshal(r.Body, &o)
	return o
}

func (c *cluster) list(path string) []map[string]any {
	var l struct{ Items []map[string]any }
	json.Unmarshal(c.s.Kube.Serve(context.Background(), &api.Request{Method: "GET", Path: path}).Body, &l)
	return l.Items
}

func (c *cluster) record(since uint64) string {
	all, _ := c.s.Record.Since(since, Filter{}, 0)
	var b strings.Builder
	for _, e := range all {
		fmt.Fprintf(&b, "%s %s %s %s %d\n", e.Principal.ID, e.Method, e.Path, e.Query, e.Status)
	}
	return b.String()
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func field(o map[string]any, path ...string) any {
	var v any = o
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

func rolledOut(d map[string]any) bool {
	st, _ := d["status"].(map[string]any)
	r := num(field(d, "spec", "replicas"))
	return d != nil && num(st["observedGeneration"]) == num(field(d, "metadata", "generation")) &&
		num(st["updatedReplicas"]) == r && num(st["replicas"]) == r && num(st["availableReplicas"]) == r
}

// A Deployment goes through a ReplicaSet named after its pod template's
// hash to pods that the kubelet runs and makes ready PodReadyDelay later,
// and its status says so with kube's counts and conditions; the requests
// are recorded as kube-controller-manager's and the kubelet's.
func TestADeploymentRollsOutThroughAReplicaSetAndPods(t *testing.T) {
	inCluster(t, func(t *testing.T, c *cluster) {
		if r := c.do("POST", deployPath, deploymentJSON("web", 3, "nginx:1.27")); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.settle(time.Second / 2)
		d := c.get(deployPath + "/web")
		if rolledOut(d) || num(field(d, "status", "updatedReplicas")) != 3 || num(field(d, "status", "availableReplicas")) != 0 {
			t.Fatalf("before the pods are ready: %v", d["status"])
		}
		c.settle(time.Second)
		d = c.get(deployPath + "/web")
		if !rolledOut(d) {
			t.Fatalf("a second later: %v\n%s", d["status"], c.record(0))
		}
		hash := ctrl.PodTemplateHash(field(d, "spec", "template").(map[string]any), nil)
		rs := c.get("/apis/apps/v1/namespaces/default/replicasets/web-" + hash)
		if rs == nil {
			t.Fatalf("no ReplicaSet web-%s: %v", hash, c.list("/apis/apps/v1/replicasets"))
		}
		if field(rs, "metadata", "annotations", "deployment.kubernetes.io/revision") != "1" ||
			field(d, "metadata", "annotations", "deployment.kubernetes.io/revision") != "1" ||
			field(rs, "spec", "template", "metadata", "labels", "pod-template-hash") != hash {
			t.Fatalf("revision annotations and hash label: %v %v", d["metadata"], rs["metadata"])
		}
		pods := c.list("/api/v1/namespaces/default/pods")
		if len(pods) != 3 {
			t.Fatalf("%d pods", len(pods))
		}
		for _, p := range pods {
			if field(p, "status", "phase") != "Running" || !strings.HasPrefix(field(p, "metadata", "name").(string), "web-"+hash+"-") {
				t.Fatalf("pod %v", p)
			}
		}
		conds, _ := field(d, "status", "conditions").([]any)
		if len(conds) != 2 || field(conds[0].(map[string]any), "reason") != "MinimumReplicasAvailable" ||
			field(conds[1].(map[string]any), "message") != `ReplicaSet "web-`+hash+`" has successfully progressed.` {
			t.Fatalf("conditions %v", conds)
		}
		byWho := map[string]int{}
		all, _ := c.s.Record.Since(0, Filter{}, 0)
		for _, e := range all {
			byWho[e.Principal.ID]++
		}
		if byWho[ControllerManager.ID] == 0 || byWho[Kubelet.ID] == 0 {
			t.Fatalf("requests by principal: %v", byWho)
		}
	})
}

// With the setting paused, nothing runs beside the API server: a lesson
// (or a test) plays the controller by hand. Running again, they catch up.
func TestTheControllersSettingPausesAndResumesThem(t *testing.T) {
	inCluster(t, func(t *testing.T, c *cluster) {
		if r := c.do("PATCH", "/rvplay/v1/settings", `{"controllers":"paused"}`); r.Status != 200 ||
			!strings.Contains(string(r.Body), `"controllers":"paused"`) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.do("POST", deployPath, deploymentJSON("web", 1, "nginx"))
		if all, _ := c.s.Record.Since(0, Filter{Principal: ControllerManager.ID}, 0); len(all) != 0 {
			t.Fatalf("%d controller requests while they are paused", len(all))
		}
		c.settle(time.Minute)
		if d := c.get(deployPath + "/web"); field(d, "status", "observedGeneration") != nil {
			t.Fatalf("paused controllers wrote the status: %v", d["status"])
		}
		c.do("PATCH", "/rvplay/v1/settings", `{"controllers":"running"}`)
		c.settle(2 * time.Second)
		if d := c.get(deployPath + "/web"); !rolledOut(d) {
			t.Fatalf("no rollout: %v", d["status"])
		}
	})
}

func (c *cluster) replicaSets() map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, rs := range c.list("/apis/apps/v1/namespaces/default/replicasets") {
		out[field(rs, "metadata", "name").(string)] = rs
	}
	return out
}

// watchPods follows the pods' events and checks, at every one, that the
// ready pods never drop below min nor the pods exceed max.
func (c *cluster) watchPods(ctx context.Context, minReady, maxPods int, seen *[]string) {
	resp := c.s.Kube.Serve(ctx, &api.Request{Method: "GET", Path: "/api/v1/namespaces/default/pods",
		Query: map[string][]string{"watch": {"true"}, "resourceVersion": {"0"}}})
	pods := map[string]bool{} // name -> ready
	go func() {
		defer resp.Stream.Close()
		for {
			frame, err := resp.Stream.Next(ctx)
			if err != nil {
				return
			}
			var ev struct {
				Type   string
				Object map[string]any
			}
			json.Unmarshal(frame, &ev)
			name, _ := field(ev.Object, "metadata", "name").(string)
			ready := false
			for _, cond := range listOf(field(ev.Object, "status", "conditions")) {
				m := cond.(map[string]any)
				ready = ready || m["type"] == "Ready" && m["status"] == "True"
			}
			if ev.Type == "DELETED" {
				delete(pods, name)
			} else {
				pods[name] = ready
			}
			n := 0
			for _, r := range pods {
				if r {
					n++
				}
			}
			*seen = append(*seen, fmt.Sprintf("%s %s: %d pods, %d ready", ev.Type, name, len(pods), n))
			if len(pods) > maxPods {
				c.t.Errorf("%d pods, more than %d: %v", len(pods), maxPods, *seen)
			}
			if ev.Type != "ADDED" && n < minReady {
				c.t.Errorf("%d ready pods, fewer than %d: %v", n, minReady, *seen)
			}
		}
	}()
}

func listOf(v any) []any {
	l, _ := v.([]any)
	return l
}

// A new image rolls out as a rolling update within maxSurge and
// maxUnavailable, revision 2; kubectl's rollout undo (the old template put
// back) makes the old ReplicaSet the new one again, revision 3, with 1 in
// its revision history; revisionHistoryLimit bounds the old ones kept.
func TestARollingUpdateAndItsUndo(t *testing.T) {
	inCluster(t, func(t *testing.T, c *cluster) {
		body := strings.Replace(deploymentJSON("web", 4, "nginx:1.26"), `"replicas":4,`,
			`"replicas":4,"revisionHistoryLimit":1,"strategy":{"rollingUpdate":{"maxSurge":1,"maxUnavailable":0}},`, 1)
		c.do("POST", deployPath, body)
		c.settle(5 * time.Second)
		first := c.get(deployPath + "/web")
		if !rolledOut(first) {
			t.Fatalf("%v", first["status"])
		}
		ctx, cancel := context.WithCancel(context.Background())
		var events []string
		c.watchPods(ctx, 4, 5, &events)
		synctest.Wait()
		if r := c.do("PATCH", deployPath+"/web", `{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}}`); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.settle(time.Minute)
		cancel()
		d := c.get(deployPath + "/web")
		if !rolledOut(d) || field(d, "metadata", "annotations", "deployment.kubernetes.io/revision") != "2" {
			t.Fatalf("after set image: %v %v", d["metadata"], d["status"])
		}
		rss := c.replicaSets()
		if len(rss) != 2 {
			t.Fatalf("%d replica sets", len(rss))
		}
		var old, cur map[string]any
		for _, rs := range rss {
			if field(rs, "metadata", "annotations", "deployment.kubernetes.io/revision") == "2" {
				cur = rs
			} else {
				old = rs
			}
		}
		if num(field(old, "spec", "replicas")) != 0 || num(field(cur, "spec", "replicas")) != 4 {
			t.Fatalf("old %v, new %v", old["spec"], cur["spec"])
		}
		// kubectl rollout undo: the old ReplicaSet's template, without its
		// hash label, and its annotations, in a JSON patch
		tmpl := field(old, "spec", "template").(map[string]any)
		delete(tmpl["metadata"].(map[string]any)["labels"].(map[string]any), "pod-template-hash")
		patch, _ := json.Marshal([]any{map[string]any{"op": "replace", "path": "/spec/template", "value": tmpl},
			map[string]any{"op": "replace", "path": "/metadata/annotations", "value": map[string]any{"deployment.kubernetes.io/revision": "2"}}})
		req := &api.Request{Method: "PATCH", Path: deployPath + "/web", Body: patch, Header: api.Header{"Content-Type": {"application/json-patch+json"}}}
		if r := c.s.Serve(context.Background(), req); r.Status != 200 {
			t.Fatalf("undo: %d %s", r.Status, r.Body)
		}
		c.settle(time.Minute)
		d = c.get(deployPath + "/web")
		back := c.get("/apis/apps/v1/namespaces/default/replicasets/" + field(old, "metadata", "name").(string))
		if !rolledOut(d) || field(d, "metadata", "annotations", "deployment.kubernetes.io/revision") != "3" ||
			field(back, "metadata", "annotations", "deployment.kubernetes.io/revision") != "3" ||
			field(back, "metadata", "annotations", "deployment.kubernetes.io/revision-history") != "1" || num(field(back, "spec", "replicas")) != 4 {
			t.Fatalf("after undo: %v %v", d["metadata"], back["metadata"])
		}
		if len(events) == 0 {
			t.Fatal("no pod events seen")
		}
	})
}

// Deleting a Deployment hands its dependents to the garbage collector:
// Background deletes it at once and then its ReplicaSet and pods; Orphan
// leaves them, without the owner reference; Foreground keeps the
// Deployment (with a deletionTimestamp) until they are gone.
func TestDeletingADeploymentWithEachPropagationPolicy(t *testing.T) {
	for _, policy := range []string{"Background", "Orphan", "Foreground"} {
		t.Run(policy, func(t *testing.T) {
			inCluster(t, func(t *testing.T, c *cluster) {
				c.do("POST", deployPath, deploymentJSON("web", 2, "nginx"))
				c.settle(5 * time.Second)
				r := c.do("DELETE", deployPath+"/web", `{"propagationPolicy":"`+policy+`"}`)
				if r.Status != 200 {
					t.Fatalf("%d %s", r.Status, r.Body)
				}
				if policy == "Foreground" && !strings.Contains(string(r.Body), `"finalizers":["foregroundDeletion"]`) {
					t.Fatalf("a foreground delete answered %s", r.Body)
				}
				c.settle(time.Minute)
				rss, pods := c.replicaSets(), c.list("/api/v1/namespaces/default/pods")
				if c.get(deployPath+"/web") != nil {
					t.Fatalf("the deployment is still there")
				}
				switch policy {
				case "Orphan":
					if len(rss) != 1 || len(pods) != 2 {
						t.Fatalf("%d replica sets, %d pods", len(rss), len(pods))
					}
					for _, rs := range rss {
						if field(rs, "metadata", "ownerReferences") != nil {
							t.Fatalf("orphaned replica set still owned: %v", rs["metadata"])
						}
					}
				default:
					if len(rss) != 0 || len(pods) != 0 {
						t.Fatalf("%d replica sets, %d pods left\n%s", len(rss), len(pods), c.record(0))
					}
				}
			})
		})
	}
}

// Deleting a namespace makes it Terminating; the namespace controller
// deletes what it holds, then finalizes it, and it is gone.
func TestDeletingANamespaceEmptiesItThenDeletesIt(t *testing.T) {
	inCluster(t, func(t *testing.T, c *cluster) {
		c.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)
		c.do("POST", "/api/v1/namespaces/team/configmaps", `{"metadata":{"name":"a"}}`)
		c.do("POST", "/apis/apps/v1/namespaces/team/deployments", deploymentJSON("web", 2, "nginx"))
		c.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"a"}}`)
		c.settle(5 * time.Second)
		if r := c.do("DELETE", "/api/v1/namespaces/team", ""); r.Status != 200 || !strings.Contains(string(r.Body), `"phase":"Terminating"`) {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.settle(time.Minute)
		if ns := c.get("/api/v1/namespaces/team"); ns != nil {
			t.Fatalf("namespace still there: %v\n%s", ns, c.record(0))
		}
		for _, p := range []string{"/api/v1/namespaces/team/configmaps", "/api/v1/namespaces/team/pods", "/apis/apps/v1/namespaces/team/replicasets"} {
			if l := c.list(p); len(l) != 0 {
				t.Fatalf("%s: %d left", p, len(l))
			}
		}
		if c.get("/api/v1/namespaces/default/configmaps/a") == nil {
			t.Fatal("another namespace's object went too")
		}
	})
}

// The namespace controller empties a namespace of custom resources too
// (discovery lists them once their definition is established), each
// resource once whatever its served versions, and only that namespace's.
func TestDeletingANamespaceDeletesItsCustomResources(t *testing.T) {
	inCluster(t, func(t *testing.T, c *cluster) {
		if r := c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", `{"metadata":{"name":"widgets.example.com"},
			"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
			"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}},
			            {"name":"v2","served":true,"storage":false,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.do("POST", "/api/v1/namespaces", `{"metadata":{"name":"team"}}`)
		c.settle(time.Second)
		c.do("POST", "/apis/example.com/v1/namespaces/team/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"}}`)
		c.do("POST", "/apis/example.com/v1/namespaces/default/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"kept"}}`)
		c.do("DELETE", "/api/v1/namespaces/team", "")
		c.settle(time.Minute)
		if ns := c.get("/api/v1/namespaces/team"); ns != nil {
			t.Fatalf("namespace still there: %v\n%s", ns, c.record(0))
		}
		if l := c.list("/apis/example.com/v1/widgets"); len(l) != 1 || field(l[0], "metadata", "name") != "kept" {
			t.Fatalf("left: %v", l)
		}
	})
}

// The garbage collector watches the resources a definition serves from
// the moment it is established, not only those served when it started:
// a custom resource whose owner is deleted is collected.
func TestTheGarbageCollectorCollectsCustomResourcesDefinedLater(t *testing.T) {
	inCluster(t, func(t *testing.T, c *cluster) {
		owner := c.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"owner"}}`)
		c.settle(time.Second) // the controllers run, with the resources served so far
		var cm struct{ Metadata struct{ UID string } }
		json.Unmarshal(owner.Body, &cm)
		if r := c.do("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", `{"metadata":{"name":"widgets.example.com"},
			"spec":{"group":"example.com","scope":"Namespaced","names":{"plural":"widgets","kind":"Widget"},
			"versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}`); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.settle(time.Second)
		if r := c.do("POST", "/apis/example.com/v1/namespaces/default/widgets", `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w",
			"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"`+cm.Metadata.UID+`"}]}}`); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.settle(time.Second)
		c.do("DELETE", "/api/v1/namespaces/default/configmaps/owner", "")
		c.settle(time.Minute)
		if w := c.get("/apis/example.com/v1/namespaces/default/widgets/w"); w != nil {
			t.Fatalf("the widget outlived its owner: %v\n%s", w, c.record(0))
		}
	})
}

// The garbage collector leaves Events alone, in both their APIs, as
// kube-controller-manager's (its default ignored resources): an Event
// whose owner is deleted stays until its lease expires. Monitoring
// events.k8s.io/v1 would see every core/v1 Event too (one storage).
func TestTheGarbageCollectorIgnoresEvents(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("the browser build serves no events.k8s.io")
	}
	inCluster(t, func(t *testing.T, c *cluster) {
		owner := c.do("POST", "/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"owner"}}`)
		var cm struct{ Metadata struct{ UID string } }
		json.Unmarshal(owner.Body, &cm)
		ref := `"ownerReferences":[{"apiVersion":"v1","kind":"ConfigMap","name":"owner","uid":"` + cm.Metadata.UID + `"}]`
		if r := c.do("POST", "/apis/events.k8s.io/v1/namespaces/default/events", `{"apiVersion":"events.k8s.io/v1","kind":"Event",
			"metadata":{"name":"new",`+ref+`},"eventTime":"2026-01-02T03:04:05.000000Z","reportingController":"example.com/c",
			"reportingInstance":"c-1","action":"Act","reason":"Acted","type":"Normal","regarding":{"kind":"ConfigMap","namespace":"default","name":"owner"}}`); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := c.do("POST", "/api/v1/namespaces/default/events", `{"metadata":{"name":"old",`+ref+`},
			"involvedObject":{"kind":"ConfigMap","namespace":"default","name":"owner"},"reason":"Seen","type":"Normal"}`); r.Status != 201 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.settle(time.Second)
		c.do("DELETE", "/api/v1/namespaces/default/configmaps/owner", "")
		c.settle(time.Minute)
		for _, p := range []string{"/apis/events.k8s.io/v1/namespaces/default/events/new", "/api/v1/namespaces/default/events/old"} {
			if c.get(p) == nil {
				t.Errorf("%s was collected\n%s", p, c.record(0))
			}
		}
	})
}

// The lab fails a pod: its container exits with an error, the Deployment
// loses an available replica, and the kubelet restarts it a delay later.
func TestAFailedPodRestarts(t *testing.T) {
	inCluster(t, func(t *testing.T, c *cluster) {
		c.do("POST", deployPath, deploymentJSON("web", 2, "nginx"))
		c.settle(5 * time.Second)
		pod := field(c.list("/api/v1/namespaces/default/pods")[0], "metadata", "name").(string)
		if r := c.do("POST", "/rvplay/v1/pods/default/"+pod+"/fail", ""); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.settle(time.Second / 2)
		p := c.get("/api/v1/namespaces/default/pods/" + pod)
		cs := listOf(field(p, "status", "containerStatuses"))[0].(map[string]any)
		if field(cs, "state", "terminated", "reason") != "Error" || cs["ready"] != false {
			t.Fatalf("crashed: %v", cs)
		}
		if d := c.get(deployPath + "/web"); num(field(d, "status", "availableReplicas")) != 1 {
			t.Fatalf("deployment: %v", d["status"])
		}
		c.settle(time.Second)
		p = c.get("/api/v1/namespaces/default/pods/" + pod)
		cs = listOf(field(p, "status", "containerStatuses"))[0].(map[string]any)
		if num(cs["restartCount"]) != 1 || cs["ready"] != true || field(cs, "lastState", "terminated", "reason") != "Error" {
			t.Fatalf("restarted: %v", cs)
		}
		if d := c.get(deployPath + "/web"); num(field(d, "status", "availableReplicas")) != 2 {
			t.Fatalf("deployment: %v", d["status"])
		}
		if r := c.do("POST", "/rvplay/v1/pods/default/nope/fail", ""); r.Status != 404 {
			t.Fatalf("unknown pod: %d %s", r.Status, r.Body)
		}
	})
}

// podReadyDelay is how long the kubelet takes to make a pod ready; a bad
// value is refused with the setting's name.
func TestPodReadyDelayIsASetting(t *testing.T) {
	inCluster(t, func(t *testing.T, c *cluster) {
		if r := c.do("PATCH", "/rvplay/v1/settings", `{"podReadyDelay":"-1s"}`); r.Status != 422 || !strings.Contains(string(r.Body), "podReadyDelay: must not be negative") {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		if r := c.do("PATCH", "/rvplay/v1/settings", `{"podReadyDelay":"5s"}`); r.Status != 200 {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
		c.do("POST", deployPath, deploymentJSON("web", 1, "nginx"))
		c.settle(4 * time.Second)
		p := c.list("/api/v1/namespaces/default/pods")[0]
		if field(p, "status", "phase") != "Pending" ||
			field(listOf(field(p, "status", "containerStatuses"))[0].(map[string]any), "state", "waiting", "reason") != "ContainerCreating" {
			t.Fatalf("after 4s of 5: %v", p["status"])
		}
		c.settle(2 * time.Second)
		if p := c.list("/api/v1/namespaces/default/pods")[0]; field(p, "status", "phase") != "Running" {
			t.Fatalf("after 6s: %v", p["status"])
		}
	})
}
