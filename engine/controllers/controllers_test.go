package controllers

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/client"
)

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The lessons' nginx template, as kube-apiserver stores it after
// defaulting, hashes to what kube-controller-manager names its
// ReplicaSet after (the values are kube's own, from test/schemadiff,
// which checks the hash against kube's code for many more templates).
func TestPodTemplateHashNamesTheReplicaSetAsKubeDoes(t *testing.T) {
	nginx := decode(t, `{"metadata":{"creationTimestamp":null,"labels":{"app":"nginx"}},"spec":{"containers":[{"name":"nginx","image":"nginx:1.14.2",
"ports":[{"containerPort":80,"protocol":"TCP"}],"resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File",
"imagePullPolicy":"IfNotPresent"}],"restartPolicy":"Always","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},
"schedulerName":"default-scheduler"}}`)
	one := int64(1)
	for _, c := range []struct {
		template  map[string]any
		collision *int64
		want      string
	}{
		{nginx, nil, "6c5f67b5f7"},
		{nginx, &one, "6f4479b5f6"},
		{map[string]any{}, nil, "85748b7f68"},
	} {
		if got := PodTemplateHash(c.template, c.collision); got != c.want {
			t.Errorf("hash %s, kube's %s", got, c.want)
		}
	}
	labelled := decode(t, `{"metadata":{"labels":{"app":"nginx","pod-template-hash":"6c5f67b5f7"}}}`)
	if !EqualIgnoreHash(labelled, decode(t, `{"metadata":{"labels":{"app":"nginx"}}}`)) {
		t.Error("the hash label made two templates differ")
	}
}

// maxSurge rounds up and maxUnavailable down (25% each by default); both
// 0 would never progress, so maxUnavailable becomes 1; Recreate has
// neither.
func TestRollingUpdateFenceposts(t *testing.T) {
	for _, c := range []struct {
		spec               string
		surge, unavailable int64
	}{
		{`{"replicas":4,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}`, 1, 1},
		{`{"replicas":2,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":"25%"}}}`, 1, 0},
		{`{"replicas":3,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":0}}}`, 0, 1},
		{`{"replicas":3,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":2,"maxUnavailable":"50%"}}}`, 2, 1},
		{`{"replicas":1,"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":0,"maxUnavailable":5}}}`, 0, 1},
		{`{"replicas":3,"strategy":{"type":"Recreate"}}`, 0, 0},
	} {
		d := client.Object(decode(t, `{"spec":`+c.spec+`}`))
		if s, u := maxSurge(d), maxUnavailable(d); s != c.surge || u != c.unavailable {
			t.Errorf("%s: surge %d unavailable %d, want %d %d", c.spec, s, u, c.surge, c.unavailable)
		}
	}
}

// A selector is LabelSelectorAsSelector's: matchLabels and every
// expression hold; no selector selects nothing, an empty one everything,
// an unknown operator nothing.
func TestLabelSelectors(t *testing.T) {
	pod := map[string]string{"app": "web", "tier": "front"}
	for _, c := range []struct {
		selector string
		want     bool
	}{
		{`{"matchLabels":{"app":"web"}}`, true},
		{`{"matchLabels":{"app":"db"}}`, false},
		{`{"matchExpressions":[{"key":"tier","operator":"In","values":["front","back"]}]}`, true},
		{`{"matchExpressions":[{"key":"tier","operator":"NotIn","values":["front"]}]}`, false},
		{`{"matchExpressions":[{"key":"canary","operator":"DoesNotExist"}]}`, true},
		{`{"matchExpressions":[{"key":"canary","operator":"Exists"}]}`, false},
		{`{"matchExpressions":[{"key":"app","operator":"Gt","values":["1"]}]}`, false},
		{`{}`, true},
	} {
		if got := selectorOf(decode(t, c.selector)).matches(pod); got != c.want {
			t.Errorf("%s: %v", c.selector, got)
		}
	}
	if selectorOf(nil).matches(pod) {
		t.Error("no selector selected a pod")
	}
}

// A controller's delete handler runs for a watched delete (the object) and
// for one its informer inferred from a relist (the last known state inside
// client.DeletedFinalStateUnknown), as kube's controllers unwrap it.
func TestDeleteHandlersUnwrapDeletedFinalStateUnknown(t *testing.T) {
	var seen []string
	h := onDeleted(func(o client.Object) { seen = append(seen, o.Key()+"@"+o.ResourceVersion()) })
	pod := func(rv string) client.Object {
		return client.Object{"metadata": map[string]any{"namespace": "default", "name": "p", "resourceVersion": rv}}
	}
	h(pod("12"))
	h(client.DeletedFinalStateUnknown{Key: "default/p", Obj: pod("9")})
	h(client.DeletedFinalStateUnknown{Key: "default/q"}) // no last state: nothing to handle
	if got := strings.Join(seen, " "); got != "default/p@12 default/p@9" {
		t.Fatalf("handled %q", got)
	}
}
