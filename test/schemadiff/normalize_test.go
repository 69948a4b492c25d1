package schemadiff

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"

	"github.com/rvplay/rvplay/engine/kube/schema"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// typedRoundTrip is what kube stores: the body decoded into the Go type
// and encoded again.
func typedRoundTrip(t *testing.T, obj any, body []byte) []byte {
	if err := json.Unmarshal(body, obj); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func ours(t *testing.T, apiVersion, kind string, body []byte) []byte {
	typ := schema.ForGVK(apiVersion, kind)
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatal(err)
	}
	schema.Normalize(typ, m)
	b, err := schema.Marshal(typ, m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A generator of deployments with optional fields set to zero values,
// nulls and empty collections.
func randomDeployment(r *rand.Rand) []byte {
	pick := func(vs ...any) any { return vs[r.Intn(len(vs))] }
	container := map[string]any{"name": "app", "image": pick("", "img", nil),
		"args": pick([]any{}, nil, []any{"a"}), "env": pick([]any{}, []any{map[string]any{"name": "A", "value": pick("", "v", nil)}}),
		"ports": pick(nil, []any{map[string]any{"containerPort": pick(0, 80), "hostPort": pick(0, 8080), "protocol": pick("", "TCP")}}),
		"stdin": pick(false, true), "tty": pick(false, nil), "workingDir": pick("", "/w"),
		"securityContext": pick(nil, map[string]any{}, map[string]any{"privileged": pick(false, true), "runAsUser": pick(0, 1000), "procMount": pick("", "Default")}),
		"livenessProbe":   pick(nil, map[string]any{"initialDelaySeconds": pick(0, 5), "terminationGracePeriodSeconds": pick(0, 30), "httpGet": map[string]any{"port": pick(80, "http"), "path": pick("", "/")}}),
		"resources":       pick(nil, map[string]any{}, map[string]any{"limits": pick(map[string]any{}, map[string]any{"cpu": "1"})}),
	}
	spec := map[string]any{"replicas": pick(0, 3, nil), "paused": pick(false, true, nil), "minReadySeconds": pick(0, 5),
		"revisionHistoryLimit": pick(0, nil), "selector": map[string]any{"matchLabels": map[string]any{"app": "a"}},
		"strategy": pick(nil, map[string]any{}, map[string]any{"type": pick("", "Recreate")}),
		"template": map[string]any{"metadata": map[string]any{"labels": pick(map[string]any{}, map[string]any{"app": "a"}), "annotations": pick(nil, map[string]any{})},
			"spec": map[string]any{"containers": []any{container}, "hostNetwork": pick(false, true), "nodeSelector": pick(nil, map[string]any{}),
				"terminationGracePeriodSeconds": pick(0, 30, nil), "dnsPolicy": pick("", "ClusterFirst"), "automountServiceAccountToken": pick(false, nil),
				"volumes": pick([]any{}, []any{map[string]any{"name": "v", "configMap": map[string]any{"name": "c", "optional": pick(false, nil), "defaultMode": pick(0, 420)}}})}}}
	status := pick(nil, map[string]any{}, map[string]any{"replicas": pick(0, 2), "observedGeneration": pick(0, 1), "conditions": pick([]any{}, nil)})
	obj := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "d", "namespace": pick("", "ns"), "generation": pick(0, 1), "labels": pick(nil, map[string]any{}), "finalizers": pick([]any{}, nil)},
		"spec":     spec, "status": status}
	b, _ := json.Marshal(obj)
	return b
}

func TestNormalizeMatchesGoTypedRoundTripForDeployments(t *testing.T) {
	for seed := int64(1); seed <= 500; seed++ {
		body := randomDeployment(rand.New(rand.NewSource(seed)))
		want := typedRoundTrip(t, &appsv1.Deployment{}, body)
		got := ours(t, "apps/v1", "Deployment", body)
		if !bytes.Equal(want, got) {
			t.Fatalf("seed %d: %s\n go   %s\n ours %s", seed, body, want, got)
		}
	}
}

func TestNormalizeMatchesGoTypedRoundTripForConfigMapsAndPods(t *testing.T) {
	cases := []struct {
		kind string
		obj  any
		body string
	}{
		{"ConfigMap", &corev1.ConfigMap{}, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{},"annotations":null},"data":{},"binaryData":null,"immutable":false}`},
		{"ConfigMap", &corev1.ConfigMap{}, `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","generateName":"","resourceVersion":""},"data":{"a":""}}`},
		{"Pod", &corev1.Pod{}, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","ports":[{"containerPort":0}]}],"restartPolicy":"","priority":0},"status":{"phase":"","conditions":[{"type":"Ready","status":"True","lastProbeTime":null}]}}`},
		{"Pod", &corev1.Pod{}, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":null}}`},
	}
	for _, c := range cases {
		want := typedRoundTrip(t, c.obj, []byte(c.body))
		got := ours(t, "v1", c.kind, []byte(c.body))
		if !bytes.Equal(want, got) {
			t.Errorf("%s\n go   %s\n ours %s", c.body, want, got)
		}
	}
}
