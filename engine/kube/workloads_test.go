package kube

import (
	"testing"
	"time"
)

// The status subresource writes what the type's status strategy lets it:
// a Deployment's annotations (the controller's revision) but not its
// labels or spec, a ReplicaSet's metadata, and for other types only status.
func TestStatusStrategiesKeepWhatKubesKeep(t *testing.T) {
	f := newFixture(t)
	d := f.create(t, deployments, "default", obj(t, nginx))
	d = copyObject(d)
	meta(d)["annotations"] = map[string]any{"deployment.kubernetes.io/revision": "1"}
	meta(d)["labels"] = map[string]any{"app": "changed"}
	d["spec"].(map[string]any)["replicas"] = jsonInt(9)
	d["status"] = map[string]any{"observedGeneration": jsonInt(1)}
	w, err := f.s.Update(f.ctx, deployments, "default", "nginx", "status", d, WriteOptions{})
	out := w.Object
	if err != nil {
		t.Fatal(err)
	}
	if pathString("metadata", "annotations", "deployment.kubernetes.io/revision")(out) != "1" || pathString("metadata", "labels", "app")(out) != "nginx" ||
		intAt(out, "spec", "replicas") != 3 || intAt(out, "metadata", "generation") != 1 || intAt(out, "status", "observedGeneration") != 1 {
		t.Fatalf("deployment status write: %v", out)
	}

	p := f.create(t, pods, "default", obj(t, `{"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i"}]}}`))
	p = copyObject(p)
	meta(p)["labels"] = map[string]any{"x": "y"}
	p["status"] = map[string]any{"phase": "Running"}
	w, err = f.s.Update(f.ctx, pods, "default", "p", "status", p, WriteOptions{})
	out = w.Object
	if err != nil || pathString("status", "phase")(out) != "Running" || meta(out)["labels"] != nil {
		t.Fatalf("pod status write: %v %v", out, err)
	}
}

var replicasets = Lookup("apps", "v1", "replicasets")

const replicaSet = `{"metadata":{"name":"web-abc"},"spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}`

// ReplicaSets are served as kube-apiserver serves them: defaulted
// (replicas 1, the pod spec's defaults), status.replicas 0 from the
// start, validated as a Deployment with pods that always restart, and a
// generation that moves with the spec.
func TestReplicaSetsAreKubes(t *testing.T) {
	f := newFixture(t)
	rs := f.create(t, replicasets, "default", obj(t, replicaSet))
	if intAt(rs, "spec", "replicas") != 1 || pathString("spec", "template", "spec", "restartPolicy")(rs) != "Always" ||
		pathValue(rs, "status", "replicas") == nil || intAt(rs, "metadata", "generation") != 1 {
		t.Fatalf("%v", rs)
	}
	bad := obj(t, replicaSet)
	meta(bad)["name"] = "bad"
	bad["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["restartPolicy"] = "Never"
	_, err := f.s.Create(f.ctx, replicasets, "default", bad, WriteOptions{})
	wantStatus(t, err, 422, ReasonInvalid, `ReplicaSet.apps "bad" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`)
	rs = copyObject(rs)
	rs["spec"].(map[string]any)["replicas"] = jsonInt(2)
	out, err := f.s.Update(f.ctx, replicasets, "default", "web-abc", "", rs, WriteOptions{})
	if err != nil || intAt(out.Object, "metadata", "generation") != 2 {
		t.Fatalf("%v %v", out, err)
	}
}

// kubectl get pods prints kube's printPod columns, from the server's
// Table: the phase unless a container's state says more (waiting,
// terminated, init containers first), Terminating once deleted, and the
// restarts with how long ago the last one was.
func TestPodRowsAreKubesPrintPod(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	spec := `"spec":{"containers":[{"name":"a","image":"i"},{"name":"b","image":"i"}]}`
	for _, c := range []struct{ pod, ready, status, restarts string }{
		{`{"metadata":{"name":"p"},` + spec + `,"status":{"phase":"Pending"}}`, "0/2", "Pending", "0"},
		{`{"metadata":{"name":"p"},` + spec + `,"status":{"phase":"Pending","containerStatuses":[
			{"name":"a","ready":false,"restartCount":0,"state":{"waiting":{"reason":"ContainerCreating"}}},
			{"name":"b","ready":false,"restartCount":0,"state":{"waiting":{"reason":"ContainerCreating"}}}]}}`, "0/2", "ContainerCreating", "0"},
		{`{"metadata":{"name":"p"},` + spec + `,"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}],"containerStatuses":[
			{"name":"a","ready":true,"restartCount":0,"state":{"running":{}}},
			{"name":"b","ready":true,"restartCount":2,"state":{"running":{}},"lastState":{"terminated":{"exitCode":1,"reason":"Error","finishedAt":"2026-11-25T11:55:00Z"}}}]}}`,
			"2/2", "Running", "2 (5m ago)"},
		{`{"metadata":{"name":"p"},` + spec + `,"status":{"phase":"Running","containerStatuses":[
			{"name":"a","ready":true,"restartCount":0,"state":{"running":{}}},
			{"name":"b","ready":false,"restartCount":3,"state":{"waiting":{"reason":"CrashLoopBackOff"}},"lastState":{"terminated":{"exitCode":1,"reason":"Error","finishedAt":"2026-11-25T11:59:30Z"}}}]}}`,
			"1/2", "CrashLoopBackOff", "3 (30s ago)"},
		{`{"metadata":{"name":"p"},` + spec + `,"status":{"phase":"Running","containerStatuses":[
			{"name":"a","ready":false,"restartCount":0,"state":{"terminated":{"exitCode":137}}},
			{"name":"b","ready":false,"restartCount":0,"state":{"terminated":{"exitCode":0,"signal":9}}}]}}`, "0/2", "ExitCode:137", "0"},
		{`{"metadata":{"name":"p"},"spec":{"initContainers":[{"name":"i","image":"i"}],"containers":[{"name":"a","image":"i"}]},"status":{"phase":"Pending",
			"initContainerStatuses":[{"name":"i","ready":false,"restartCount":0,"state":{"running":{}}}]}}`, "0/1", "Init:0/1", "0"},
		{`{"metadata":{"name":"p","deletionTimestamp":"2026-11-25T11:00:00Z"},` + spec + `,"status":{"phase":"Running"}}`, "0/2", "Terminating", "0"},
	} {
		row := podRow(obj(t, c.pod), now)
		if row.ready != c.ready || row.status != c.status || row.restarts != c.restarts {
			t.Errorf("%s:\n got %q %q %q, want %q %q %q", c.pod, row.ready, row.status, row.restarts, c.ready, c.status, c.restarts)
		}
	}
}
