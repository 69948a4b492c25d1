package patch

// kubectl patch --local applies a strategic merge patch with kube's own
// implementation (k8s.io/apimachinery strategicpatch over the compiled-in
// Go types), without a server: an oracle for StrategicMerge.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

func oracleKubectl(t *testing.T) string {
	if testing.Short() || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("runs kubectl; skipped with -short")
	}
	for _, p := range []string{"/usr/lib/google-cloud-sdk/bin/kubectl.1.33", "/usr/bin/kubectl"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("kubectl not installed")
	return ""
}

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","labels":{"a":"1","b":"2"},"finalizers":["x","y"]},
 "spec":{"containers":[
   {"name":"app","image":"app:1","args":["--a"],"ports":[{"containerPort":80,"protocol":"TCP"},{"containerPort":53,"protocol":"UDP"}],
    "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
    "volumeMounts":[{"name":"cfg","mountPath":"/etc/cfg"}]},
   {"name":"log","image":"log:1"}],
  "volumes":[{"name":"cfg","configMap":{"name":"cfg"}},{"name":"data","emptyDir":{}}],
  "tolerations":[{"key":"k","operator":"Exists"}],
  "imagePullSecrets":[{"name":"s1"}]}}`

var oracleCases = []struct{ name, patch string }{
	{"merge container by name", `{"spec":{"containers":[{"name":"log","image":"log:2"}]}}`},
	{"new container", `{"spec":{"containers":[{"name":"new","image":"n"}]}}`},
	{"patch order wins", `{"spec":{"containers":[{"name":"log","image":"l"},{"name":"app","image":"a"}]}}`},
	{"env by name", `{"spec":{"containers":[{"name":"app","env":[{"name":"C","value":"3"},{"name":"A","value":"9"}]}]}}`},
	{"env valueFrom replaced by value", `{"spec":{"containers":[{"name":"app","env":[{"name":"B","value":"v","valueFrom":null}]}]}}`},
	{"ports by containerPort", `{"spec":{"containers":[{"name":"app","ports":[{"containerPort":53,"name":"dns"}]}]}}`},
	{"delete container", `{"spec":{"containers":[{"name":"app","$patch":"delete"}]}}`},
	{"replace containers", `{"spec":{"containers":[{"$patch":"replace"},{"name":"only","image":"o"}]}}`},
	{"atomic args replaced", `{"spec":{"containers":[{"name":"app","args":["--b","--c"]}]}}`},
	{"tolerations replaced", `{"spec":{"tolerations":[{"key":"z","operator":"Exists"}]}}`},
	{"labels merge and delete", `{"metadata":{"labels":{"a":null,"c":"3"}}}`},
	{"labels replace", `{"metadata":{"labels":{"$patch":"replace","z":"9"}}}`},
	{"finalizers union", `{"metadata":{"finalizers":["z","x"]}}`},
	{"finalizers delete", `{"metadata":{"$deleteFromPrimitiveList/finalizers":["x"]}}`},
	{"set element order", `{"spec":{"$setElementOrder/containers":[{"name":"log"},{"name":"app"}],"containers":[{"name":"app","image":"a2"}]}}`},
	{"set element order with new", `{"spec":{"$setElementOrder/containers":[{"name":"app"},{"name":"new"},{"name":"log"}],"containers":[{"name":"new","image":"n"}]}}`},
	{"volume retainKeys", `{"spec":{"volumes":[{"$retainKeys":["name","secret"],"name":"cfg","secret":{"secretName":"s"}}]}}`},
	{"volume mount by mountPath", `{"spec":{"containers":[{"name":"app","volumeMounts":[{"mountPath":"/data","name":"data"}]}]}}`},
	{"image pull secrets merge", `{"spec":{"imagePullSecrets":[{"name":"s2"}]}}`},
	{"nested null deletes", `{"spec":{"containers":[{"name":"app","args":null}]}}`},
	{"map delete directive", `{"spec":{"containers":[{"name":"app","env":[{"name":"B","$patch":"delete"}]}]}}`},
	{"scalar replaced", `{"spec":{"restartPolicy":"Never","containers":[{"name":"log","imagePullPolicy":"Always"}]}}`},
}

var oracleDeploymentCases = []struct{ name, patch string }{
	{"strategy to Recreate", `{"spec":{"strategy":{"$retainKeys":["type"],"type":"Recreate"}}}`},
	{"finalizers order", `{"metadata":{"$setElementOrder/finalizers":["b","z","a"],"finalizers":["z"]}}`},
	{"template env order", `{"spec":{"template":{"spec":{"containers":[{"name":"app","$setElementOrder/env":[{"name":"B"},{"name":"A"}],"env":[{"name":"A","value":"0"}]}]}}}}`},
	{"replicas and paused", `{"spec":{"replicas":4,"paused":true}}`},
}

func TestStrategicMergeAgreesWithKubectlPatchLocal(t *testing.T) {
	bin := oracleKubectl(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "pod.json")
	os.WriteFile(file, []byte(podJSON), 0o600)
	os.WriteFile(filepath.Join(dir, "none"), []byte("apiVersion: v1\nkind: Config\n"), 0o600)
	dfile := filepath.Join(dir, "deploy.json")
	os.WriteFile(dfile, []byte(deploy), 0o600)
	for _, c := range oracleDeploymentCases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, "--kubeconfig", filepath.Join(dir, "none"), "patch", "--local", "-f", dfile, "--type", "strategic", "-p", c.patch, "-o", "json")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("kubectl: %v %s", err, errb.String())
			}
			got, err := StrategicMerge(deployment, []byte(deploy), []byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			if canon(t, got) != canon(t, out.Bytes()) {
				t.Errorf("\n ours    %s\n kubectl %s", canon(t, got), canon(t, out.Bytes()))
			}
		})
	}
	t.Run("missing merge key message", func(t *testing.T) {
		p := `{"spec":{"containers":[{"image":"x"}]}}`
		cmd := exec.Command(bin, "--kubeconfig", filepath.Join(dir, "none"), "patch", "--local", "-f", file, "--type", "strategic", "-p", p, "-o", "json")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Run()
		_, err := StrategicMerge(schema.ForGVK("v1", "Pod"), []byte(podJSON), []byte(p))
		if err == nil || !bytes.Contains(out.Bytes(), []byte(err.Error())) {
			t.Errorf("ours %v\nkubectl %s", err, out.String())
		}
	})
	pod := schema.ForGVK("v1", "Pod")
	for _, c := range oracleCases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, "--kubeconfig", filepath.Join(dir, "none"), "patch", "--local", "-f", file, "--type", "strategic", "-p", c.patch, "-o", "json")
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				t.Fatalf("kubectl: %v %s", err, errb.String())
			}
			got, err := StrategicMerge(pod, []byte(podJSON), []byte(c.patch))
			if err != nil {
				t.Fatal(err)
			}
			if canon(t, got) != canon(t, out.Bytes()) {
				t.Errorf("\n ours    %s\n kubectl %s", canon(t, got), canon(t, out.Bytes()))
			}
		})
	}
}

var oracleJSONPatchCases = []string{
	`[{"op":"replace","path":"/metadata/labels/zz","value":"new"}]`,
	`[{"op":"add","path":"/spec/containers/-","value":{"name":"x","image":"x"}}]`,
	`[{"op":"move","from":"/metadata/labels/a","path":"/metadata/labels/m"}]`,
	`[{"op":"copy","from":"/spec/containers/0/image","path":"/spec/containers/1/image"}]`,
	`[{"op":"remove","path":"/spec/containers/0/args/0"}]`,
	`[{"op":"test","path":"/metadata/name","value":"p"},{"op":"replace","path":"/spec/containers/1/image","value":"log:9"}]`,
	`[{"op":"replace","path":"/spec/containers/0/ports/1/protocol","value":"TCP"}]`,
}

var oracleJSONPatchFailures = []string{
	`[{"op":"test","path":"/metadata/name","value":"q"}]`,
	`[{"op":"remove","path":"/metadata/labels/nope"}]`,
	`[{"op":"replace","path":"/spec/containers/7/image","value":"x"}]`,
	`[{"op":"add","path":"/nope/deeper","value":1}]`,
}

func TestJSONPatchAgreesWithKubectlPatchLocal(t *testing.T) {
	bin := oracleKubectl(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "pod.json")
	os.WriteFile(file, []byte(podJSON), 0o600)
	os.WriteFile(filepath.Join(dir, "none"), []byte("apiVersion: v1\nkind: Config\n"), 0o600)
	run := func(p string) ([]byte, error) {
		cmd := exec.Command(bin, "--kubeconfig", filepath.Join(dir, "none"), "patch", "--local", "-f", file, "--type", "json", "-p", p, "-o", "json")
		var out bytes.Buffer
		cmd.Stdout = &out
		err := cmd.Run()
		return out.Bytes(), err
	}
	for _, p := range oracleJSONPatchCases {
		want, err := run(p)
		if err != nil {
			t.Errorf("%s: kubectl failed: %v", p, err)
			continue
		}
		got, err := JSONPatch([]byte(podJSON), []byte(p))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if canon(t, got) != canon(t, want) {
			t.Errorf("%s:\n ours    %s\n kubectl %s", p, canon(t, got), canon(t, want))
		}
	}
	for _, p := range oracleJSONPatchFailures {
		if _, err := run(p); err == nil {
			t.Errorf("%s: kubectl accepted it", p)
		}
		if _, err := JSONPatch([]byte(podJSON), []byte(p)); err == nil {
			t.Errorf("%s: accepted", p)
		}
	}
}
