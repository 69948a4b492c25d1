// Package kubectl runs the kubectl binaries installed on the machine
// (1.27–1.33, and whatever `kubectl` is on PATH; without one, kubectl 1.33
// built from the module proxy by internal/refbuild) against a real rvplay
// server process, with a temporary kubeconfig and no extra flags, through
// the commands a lesson uses: get (-o yaml/json, -w with
// --output-watch-events), create, apply (client-side and server-side with
// a conflict), replace with a stale file, edit through KUBE_EDITOR, patch,
// scale, describe, events (events.k8s.io/v1 and `kubectl events`) and
// delete.
//
// It is a module of its own, like test/clientgo: it builds the server and
// executes external binaries, so it stays out of the product module's
// `go test ./...` and runs from `task test`. It needs only the standard
// library and the main module's test tooling: internal/rvplaytest, which
// starts the server, internal/refbuild and internal/kubeapiservertest (a
// real kube-apiserver on rvplay, for every kubectl under test).
package kubectl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/proctest"
	"github.com/rvplay/rvplay/internal/refbuild"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

func TestMain(m *testing.M) { os.Exit(rvplaytest.RunTests(m)) }

// kubectlBinaries finds the kubectl binaries to test: $RVPLAY_KUBECTL
// (a list separated by the OS path separator) if set, else every
// kubectl.1.NN beside the kubectl on PATH (that is how the Google Cloud SDK
// installs them) plus that kubectl itself. With no kubectl on PATH (or
// $RVPLAY_BUILD_KUBECTL set) it is kubectl built from the module proxy
// (refbuild.Kubectl).
func kubectlBinaries(t *testing.T) map[string]string {
	out := map[string]string{}
	if env := os.Getenv("RVPLAY_KUBECTL"); env != "" {
		for _, p := range filepath.SplitList(env) {
			out[filepath.Base(p)] = p
		}
		return out
	}
	bin, built, err := refbuild.Kubectl()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("no kubectl on PATH, and building one failed: %v", err)
		}
		t.Skipf("no kubectl on PATH, and building one failed (set CI=true to make this a failure): %v", err)
	}
	if built > 0 {
		t.Logf("built %s from %s in %v", bin, refbuild.KubectlModule, built.Round(time.Second))
	}
	out["kubectl"] = bin
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		matches, _ := filepath.Glob(filepath.Join(filepath.Dir(real), "kubectl.1.*"))
		for _, m := range matches {
			out[filepath.Base(m)] = m
		}
	}
	return out
}

// startServer runs a fresh server with one session "t" and returns the
// session's base URL.
func startServer(t *testing.T) string {
	t.Helper()
	return rvplaytest.Start(t, "t").SessionURL
}

// kubectl runs one kubectl binary with its own HOME (so its discovery
// cache is fresh) and a kubeconfig for the session.
type kubectl struct {
	t   *testing.T
	bin string
	dir string
	env []string
}

func newKubectl(t *testing.T, bin, base string) *kubectl {
	dir := t.TempDir()
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: rvplay
  cluster:
    server: %s
contexts:
- name: rvplay
  context:
    cluster: rvplay
    user: rvplay
    namespace: default
current-context: rvplay
users:
- name: rvplay
  user: {}
`, base)
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"KUBECONFIG=" + kc, "HOME=" + dir, "PATH=" + os.Getenv("PATH"), "LANG=C"}
	return &kubectl{t: t, bin: bin, dir: dir, env: env}
}

func (k *kubectl) write(name, content string) string {
	p := filepath.Join(k.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		k.t.Fatal(err)
	}
	return p
}

// run executes kubectl and returns stdout, stderr and the error.
func (k *kubectl) run(extraEnv []string, args ...string) (string, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, k.bin, args...)
	cmd.Env = append(append([]string(nil), k.env...), extraEnv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// ok runs kubectl, requires success and returns stdout.
func (k *kubectl) ok(args ...string) string {
	k.t.Helper()
	out, errOut, err := k.run(nil, args...)
	if err != nil {
		k.t.Fatalf("kubectl %s: %v\nstdout: %s\nstderr: %s", strings.Join(args, " "), err, out, errOut)
	}
	return out
}

// fails runs kubectl, requires failure and returns stderr.
func (k *kubectl) fails(args ...string) string {
	k.t.Helper()
	out, errOut, err := k.run(nil, args...)
	if err == nil {
		k.t.Fatalf("kubectl %s succeeded, want an error\nstdout: %s\nstderr: %s", strings.Join(args, " "), out, errOut)
	}
	return errOut
}

func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Fatalf("%s: want %q in:\n%s", what, w, got)
		}
	}
}

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
data:
  color: blue
`

func deploymentYAML(name string, replicas int) string {
	return fmt.Sprintf(`apiVersion: apps/v1
kind: Deployment
metadata:
  name: %s
  labels:
    app: %s
spec:
  replicas: %d
  selector:
    matchLabels:
      app: %s
  template:
    metadata:
      labels:
        app: %s
    spec:
      containers:
      - name: web
        image: nginx:1.27
`, name, name, replicas, name, name)
}

func TestKubectl(t *testing.T) {
	bins := kubectlBinaries(t)
	names := make([]string, 0, len(bins))
	for n := range bins {
		names = append(names, n)
	}
	sort.Strings(names)
	// Each kubectl on a server of its own, scenariosAtOnce side by side: a
	// scenario spends most of its time waiting (a watch's
	// --request-timeout, controllers rolling out), not on the CPU (about a
	// third of a core each, server and kubectl together), so more of them
	// run at once than go test's -parallel (the number of cores) would let.
	slots := make(chan struct{}, scenariosAtOnce)
	var wg sync.WaitGroup
	for _, name := range names {
		bin := bins[name]
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			t.Run(name, func(t *testing.T) { kubectlScenario(t, bin) })
		})
	}
	wg.Wait()
}

// scenariosAtOnce is how many kubectl scenarios run side by side: four
// take about one and a half of two cores.
const scenariosAtOnce = 4

// TestKubectlReportsItsVersion: every kubectl under test says which
// Kubernetes release it is, as a released kubectl does; a kubectl built
// from the module proxy without the release's version flags would say
// v0.0.0-master.
func TestKubectlReportsItsVersion(t *testing.T) {
	release := regexp.MustCompile(`^v1\.[0-9]+\.[0-9]+`)
	for name, bin := range kubectlBinaries(t) {
		out, err := exec.Command(bin, "version", "--client", "-o", "json").Output()
		if err != nil {
			t.Errorf("%s version --client: %v", name, err)
			continue
		}
		var v struct {
			ClientVersion struct {
				GitVersion string `json:"gitVersion"`
			} `json:"clientVersion"`
		}
		if err := json.Unmarshal(out, &v); err != nil || !release.MatchString(v.ClientVersion.GitVersion) {
			t.Errorf("%s version --client -o json: want a release's gitVersion (v1.N.P), got %s (%v)", name, out, err)
			continue
		}
		t.Logf("%s: %s", name, v.ClientVersion.GitVersion)
	}
}

// kubectlScenario runs every command as its own subtest on one server, so
// a report names exactly which commands work. Later steps use objects
// that earlier ones made; a failed step is logged and the rest still run.
func kubectlScenario(t *testing.T, bin string) {
	base := startServer(t)
	k := newKubectl(t, bin, base)
	if out, _, err := k.run(nil, "version", "--client"); err == nil {
		t.Logf("%s", strings.SplitN(out, "\n", 2)[0])
	}
	step := func(name string, f func(t *testing.T, k *kubectl)) {
		t.Run(name, func(t *testing.T) {
			kk := *k
			kk.t = t
			f(t, &kk)
		})
	}

	step("create", func(t *testing.T, k *kubectl) {
		f := k.write("cm.yaml", configMapYAML)
		out := k.ok("create", "-f", f)
		mustContain(t, "create", out, "configmap/demo created")
		errOut := k.fails("create", "-f", f)
		mustContain(t, "create again", errOut, `Error from server (AlreadyExists): error when creating "`+f+`": configmaps "demo" already exists`)
	})
	step("get", func(t *testing.T, k *kubectl) {
		mustContain(t, "get table", k.ok("get", "configmaps"), "NAME", "demo")
		mustContain(t, "get -o yaml", k.ok("get", "configmap", "demo", "-o", "yaml"),
			"kind: ConfigMap", "name: demo", "color: blue", "resourceVersion:")
		var obj struct {
			Kind     string            `json:"kind"`
			Data     map[string]string `json:"data"`
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
				UID             string `json:"uid"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal([]byte(k.ok("get", "cm", "demo", "-o", "json")), &obj); err != nil {
			t.Fatalf("get -o json: %v", err)
		}
		if obj.Kind != "ConfigMap" || obj.Data["color"] != "blue" || obj.Metadata.ResourceVersion == "" || obj.Metadata.UID == "" {
			t.Fatalf("get -o json: %+v", obj)
		}
		errOut := k.fails("get", "cm", "missing")
		mustContain(t, "get missing", errOut, `Error from server (NotFound): configmaps "missing" not found`)
	})
	step("get -w --output-watch-events", func(t *testing.T, k *kubectl) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, k.bin, "get", "cm", "demo", "-w", "--output-watch-events", "--request-timeout=5s")
		cmd.Env = k.env
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stderr proctest.Output
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := make(chan string, 100)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		await := func(word string) {
			t.Helper()
			for {
				select {
				case l, ok := <-lines:
					if !ok {
						t.Fatalf("watch output ended before %s; stderr: %s", word, stderr.String())
					}
					if strings.Contains(l, word) && strings.Contains(l, "demo") {
						return
					}
				case <-ctx.Done():
					t.Fatalf("no %s line; stderr: %s", word, stderr.String())
				}
			}
		}
		await("ADDED")
		k.ok("patch", "cm", "demo", "-p", `{"data":{"watched":"yes"}}`)
		await("MODIFIED")
		// --request-timeout bounds the watch: kubectl must end by itself.
		for range lines {
		}
		_ = cmd.Wait()
		if ctx.Err() != nil {
			t.Fatalf("kubectl get -w did not end after --request-timeout=5s")
		}
	})
	step("patch", func(t *testing.T, k *kubectl) {
		mustContain(t, "strategic", k.ok("patch", "cm", "demo", "-p", `{"data":{"a":"1"}}`), "configmap/demo patched")
		mustContain(t, "merge", k.ok("patch", "cm", "demo", "--type=merge", "-p", `{"data":{"b":"2"}}`), "configmap/demo patched")
		mustContain(t, "json", k.ok("patch", "cm", "demo", "--type=json", "-p", `[{"op":"add","path":"/data/c","value":"3"}]`), "configmap/demo patched")
		got := k.ok("get", "cm", "demo", "-o", "jsonpath={.data.a}{.data.b}{.data.c}")
		if got != "123" {
			t.Fatalf("after patches data a,b,c = %q", got)
		}
	})
	step("replace with a stale file", func(t *testing.T, k *kubectl) {
		stale := k.write("stale.yaml", k.ok("get", "cm", "demo", "-o", "yaml"))
		k.ok("patch", "cm", "demo", "-p", `{"data":{"moved":"on"}}`)
		errOut := k.fails("replace", "-f", stale)
		mustContain(t, "replace stale", errOut, `Operation cannot be fulfilled on configmaps "demo": the object has been modified; please apply your changes to the latest version and try again`)
		fresh := k.write("fresh.yaml", k.ok("get", "cm", "demo", "-o", "yaml"))
		mustContain(t, "replace fresh", k.ok("replace", "-f", fresh), "configmap/demo replaced")
	})
	step("edit", func(t *testing.T, k *kubectl) {
		editor := k.write("editor.sh", "#!/bin/sh\nsed -i 's/color: blue/color: green/' \"$1\"\n")
		if err := os.Chmod(editor, 0o755); err != nil {
			t.Fatal(err)
		}
		out, errOut, err := k.run([]string{"KUBE_EDITOR=" + editor, "EDITOR=" + editor}, "edit", "cm", "demo")
		if err != nil {
			t.Fatalf("edit: %v\n%s\n%s", err, out, errOut)
		}
		mustContain(t, "edit", out, "configmap/demo edited")
		if got := k.ok("get", "cm", "demo", "-o", "jsonpath={.data.color}"); got != "green" {
			t.Fatalf("after edit color = %q", got)
		}
	})
	step("apply client-side", func(t *testing.T, k *kubectl) {
		f := k.write("web.yaml", deploymentYAML("web", 2))
		mustContain(t, "apply create", k.ok("apply", "-f", f), "deployment.apps/web created")
		mustContain(t, "apply again", k.ok("apply", "-f", f), "deployment.apps/web unchanged")
		f = k.write("web.yaml", deploymentYAML("web", 3))
		mustContain(t, "apply change", k.ok("apply", "-f", f), "deployment.apps/web configured")
		if got := k.ok("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"); got != "3" {
			t.Fatalf("replicas after apply = %q", got)
		}
		anns := k.ok("get", "deploy", "web", "-o", "jsonpath={.metadata.annotations}")
		mustContain(t, "last-applied annotation", anns, "kubectl.kubernetes.io/last-applied-configuration")
	})
	step("apply server-side with a conflict", func(t *testing.T, k *kubectl) {
		f := k.write("ssa.yaml", deploymentYAML("ssa", 2))
		mustContain(t, "ssa alice", k.ok("apply", "--server-side", "--field-manager=alice", "-f", f), "deployment.apps/ssa serverside-applied")
		f = k.write("ssa.yaml", deploymentYAML("ssa", 5))
		errOut := k.fails("apply", "--server-side", "--field-manager=bob", "-f", f)
		mustContain(t, "ssa bob conflict", errOut, `Apply failed with 1 conflict: conflict with "alice": .spec.replicas`)
		mustContain(t, "ssa bob forced", k.ok("apply", "--server-side", "--field-manager=bob", "--force-conflicts", "-f", f), "deployment.apps/ssa serverside-applied")
		if got := k.ok("get", "deploy", "ssa", "-o", "jsonpath={.spec.replicas}"); got != "5" {
			t.Fatalf("replicas after forced apply = %q", got)
		}
		mf := k.ok("get", "deploy", "ssa", "-o", "jsonpath={.metadata.managedFields[*].manager}", "--show-managed-fields")
		mustContain(t, "managers", mf, "alice", "bob")
	})
	step("scale", func(t *testing.T, k *kubectl) {
		mustContain(t, "scale", k.ok("scale", "deployment", "web", "--replicas=4"), "deployment.apps/web scaled")
		if got := k.ok("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"); got != "4" {
			t.Fatalf("replicas after scale = %q", got)
		}
		// --resource-version makes the scale conditional. kubectl checks
		// it against the scale subresource it reads first, so a stale one
		// is refused before any write.
		stale := k.ok("get", "deploy", "web", "-o", "jsonpath={.metadata.resourceVersion}")
		k.ok("label", "deploy", "web", "touched=yes")
		errOut := k.fails("scale", "deployment", "web", "--replicas=6", "--resource-version="+stale)
		mustContain(t, "scale with stale RV", errOut, "Expected resource version to be "+stale+", was ")
		if got := k.ok("get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"); got != "4" {
			t.Fatalf("replicas after the refused scale = %q", got)
		}
	})
	step("rollout status", func(t *testing.T, k *kubectl) {
		// The session's deployment controller observes the scale to 4 and
		// makes the replicas available a second later; rollout status
		// watches until it has.
		mustContain(t, "rollout status", k.ok("rollout", "status", "deployment/web", "--timeout=60s"),
			`deployment "web" successfully rolled out`)
		got := k.ok("get", "deploy", "web", "-o",
			"jsonpath={.metadata.generation} {.status.observedGeneration} {.status.availableReplicas} {.status.conditions[*].reason}")
		// The conditions' order is the order they last changed in (an
		// Available that dipped during the scale comes last), as in kube.
		fields := strings.Fields(got)
		if len(fields) == 5 {
			sort.Strings(fields[3:])
		}
		if len(fields) != 5 || fields[0] != fields[1] || fields[2] != "4" ||
			fields[3] != "MinimumReplicasAvailable" || fields[4] != "NewReplicaSetAvailable" {
			t.Fatalf("status after rollout: %q", got)
		}
		// A new image: a new generation, observed, then rolled out again.
		k.ok("set", "image", "deployment/web", "web=nginx:1.28")
		mustContain(t, "rollout status after set image", k.ok("rollout", "status", "deployment/web", "--timeout=60s"),
			`deployment "web" successfully rolled out`)
	})
	step("replicasets", func(t *testing.T, k *kubectl) {
		rs := `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: cache
spec:
  replicas: 2
  selector:
    matchLabels:
      app: cache
  template:
    metadata:
      labels:
        app: cache
    spec:
      containers:
      - name: redis
        image: redis:7
`
		f := k.write("rs.yaml", rs)
		mustContain(t, "create rs", k.ok("create", "-f", f), "replicaset.apps/cache created")
		mustContain(t, "get rs -o wide", k.ok("get", "rs", "cache", "-o", "wide"),
			"NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR", "cache", "redis:7", "app=cache")
		mustContain(t, "scale rs", k.ok("scale", "rs", "cache", "--replicas=3"), "replicaset.apps/cache scaled")
		if got := k.ok("get", "replicaset", "cache", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"); got != "3 2" {
			t.Fatalf("after scale: %q", got)
		}
		// kube's validation: a ReplicaSet's pods always restart.
		bad := k.write("rs-bad.yaml", strings.Replace(strings.Replace(rs, "name: cache", "name: bad", 1), "      containers:", "      restartPolicy: Never\n      containers:", 1))
		mustContain(t, "create invalid rs", k.fails("create", "-f", bad),
			`spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"`)
		mustContain(t, "delete rs", k.ok("delete", "rs", "cache"), `replicaset.apps "cache" deleted`)
	})
	step("rollout history and undo", func(t *testing.T, k *kubectl) {
		// Each template was a ReplicaSet with a revision annotation;
		// history lists them, and --revision prints one's template.
		hist := k.ok("rollout", "history", "deployment/web")
		mustContain(t, "rollout history", hist, "deployment.apps/web", "REVISION", "1 ", "2 ")
		mustContain(t, "rollout history --revision=1", k.ok("rollout", "history", "deployment/web", "--revision=1"),
			"revision #1", "nginx:1.27")
		// undo puts revision 1's template back: its ReplicaSet becomes the
		// new one again, as revision 3.
		mustContain(t, "rollout undo", k.ok("rollout", "undo", "deployment/web"), "deployment.apps/web rolled back")
		mustContain(t, "rollout status after undo", k.ok("rollout", "status", "deployment/web", "--timeout=60s"),
			`deployment "web" successfully rolled out`)
		got := k.ok("get", "deploy", "web", "-o",
			`jsonpath={.spec.template.spec.containers[0].image} {.metadata.annotations.deployment\.kubernetes\.io/revision}`)
		if got != "nginx:1.27 3" {
			t.Fatalf("after undo: %q", got)
		}
		hist = k.ok("rollout", "history", "deployment/web")
		mustContain(t, "history after undo", hist, "2 ", "3 ")
		// two ReplicaSets, the old one scaled to 0, and the pods of the
		// new one, running.
		rs := k.ok("get", "rs", "-l", "app=web", "-o", "jsonpath={range .items[*]}{.spec.replicas} {end}")
		if f := strings.Fields(rs); len(f) != 2 || !(f[0] == "0" && f[1] == "4" || f[0] == "4" && f[1] == "0") {
			t.Fatalf("replica sets after undo: %q", rs)
		}
		mustContain(t, "get rs,pods", k.ok("get", "rs,pods", "-l", "app=web"),
			"replicaset.apps/web-", "pod/web-", "Running")
	})
	step("describe", func(t *testing.T, k *kubectl) {
		mustContain(t, "describe deployment", k.ok("describe", "deployment", "web"), "Name:", "web", "Replicas:")
		mustContain(t, "describe configmap", k.ok("describe", "configmap", "demo"), "Name:", "demo", "color")
	})
	step("custom resources", func(t *testing.T, k *kubectl) {
		crd := k.write("crd.yaml", cronTabCRDYAML)
		mustContain(t, "apply crd", k.ok("apply", "-f", crd), "customresourcedefinition.apiextensions.k8s.io/crontabs.stable.example.com created")
		mustContain(t, "crd established", k.ok("get", "crd", "crontabs.stable.example.com", "-o",
			`jsonpath={.status.conditions[?(@.type=="Established")].status}`), "True")
		ct := k.write("ct.yaml", cronTabYAML)
		mustContain(t, "apply cr", k.ok("apply", "-f", ct), "crontab.stable.example.com/daily created")
		mustContain(t, "get by short name", k.ok("get", "ct"), "NAME", "SPEC", "REPLICAS", "daily", "0 0 * * *")
		mustContain(t, "defaulted", k.ok("get", "crontab", "daily", "-o", "jsonpath={.spec.replicas}"), "1")
		mustContain(t, "explain", k.ok("explain", "crontabs.spec"), "cronSpec", "When to run, in cron syntax.", "image")
		// replace --raw sends the object as read from the file: no
		// resourceVersion, which a custom resource refuses (plain replace
		// would read the current one first)
		// (--raw paths are the server's own: the session's prefix too)
		u, err := url.Parse(base)
		if err != nil {
			t.Fatal(err)
		}
		errOut := k.fails("replace", "--raw", strings.TrimSuffix(u.Path, "/")+"/apis/stable.example.com/v1/namespaces/default/crontabs/daily",
			"-f", k.write("ct.json", `{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"daily"},"spec":{"cronSpec":"0 1 * * *","image":"busybox"}}`))
		// (kubectl words a 422 with the Status's details: its kind is
		// the resource, kube's long-standing quirk)
		mustContain(t, "replace without resourceVersion", errOut,
			`The crontabs "daily" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update`)
		errOut = k.fails("apply", "-f", k.write("bad.yaml", strings.Replace(cronTabYAML, `"0 0 * * *"`, `"every day"`, 1)))
		mustContain(t, "schema validation", errOut, `spec.cronSpec in body should match`)
		mustContain(t, "scale", k.ok("scale", "crontab", "daily", "--replicas=3"), "crontab.stable.example.com/daily scaled")
		mustContain(t, "delete crd", k.ok("delete", "-f", crd), `customresourcedefinition.apiextensions.k8s.io "crontabs.stable.example.com" deleted`)
		mustContain(t, "its resources are gone", k.fails("get", "crontabs.stable.example.com"), "the server doesn't have a resource type")
	})
	step("events", func(t *testing.T, k *kubectl) {
		// an events.k8s.io/v1 Event is a core/v1 Event in another form
		ev := k.write("event.yaml", `apiVersion: events.k8s.io/v1
kind: Event
metadata:
  name: web.scaled
eventTime: "2026-11-22T01:45:06.000000Z"
reportingController: example.com/scaler
reportingInstance: scaler-1
action: Scale
reason: ScaledUp
regarding:
  kind: Deployment
  name: web
  namespace: default
  apiVersion: apps/v1
note: scaled up to 3
type: Normal
`)
		mustContain(t, "create", k.ok("create", "-f", ev), "event.events.k8s.io/web.scaled created")
		mustContain(t, "get events.v1.events.k8s.io", k.ok("get", "events.v1.events.k8s.io"), "LAST SEEN", "ScaledUp", "deployment/web", "scaled up to 3")
		mustContain(t, "its note", k.ok("get", "events.v1.events.k8s.io", "web.scaled", "-o", "jsonpath={.note}"), "scaled up to 3")
		mustContain(t, "core/v1's message", k.ok("get", "event", "web.scaled", "-o", "jsonpath={.message}"), "scaled up to 3")
		mustContain(t, "kubectl events", k.ok("events"), "ScaledUp", "Deployment/web", "scaled up to 3")
		mustContain(t, "kubectl events --for", k.ok("events", "--for", "deployment/web"), "ScaledUp")
		mustContain(t, "delete", k.ok("delete", "events.v1.events.k8s.io", "web.scaled"), `event.events.k8s.io "web.scaled" deleted`)
		mustContain(t, "gone through core/v1", k.fails("get", "event", "web.scaled"), `events "web.scaled" not found`)
	})
	step("delete", func(t *testing.T, k *kubectl) {
		mustContain(t, "delete cm", k.ok("delete", "configmap", "demo"), `configmap "demo" deleted`)
		mustContain(t, "delete deploy", k.ok("delete", "-f", filepath.Join(k.dir, "web.yaml")), `deployment.apps "web" deleted`)
		errOut := k.fails("get", "cm", "demo")
		mustContain(t, "get deleted", errOut, `configmaps "demo" not found`)
	})
}

const cronTabCRDYAML = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: crontabs.stable.example.com
spec:
  group: stable.example.com
  scope: Namespaced
  names:
    plural: crontabs
    singular: crontab
    kind: CronTab
    shortNames: [ct]
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale:
        specReplicasPath: .spec.replicas
        statusReplicasPath: .status.replicas
    additionalPrinterColumns:
    - name: Spec
      type: string
      jsonPath: .spec.cronSpec
    - name: Replicas
      type: integer
      jsonPath: .spec.replicas
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [cronSpec, image]
            properties:
              cronSpec:
                type: string
                description: When to run, in cron syntax.
                pattern: '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'
              image:
                type: string
              replicas:
                type: integer
                minimum: 1
                default: 1
          status:
            type: object
            properties:
              replicas:
                type: integer
`

const cronTabYAML = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: daily
spec:
  cronSpec: "0 0 * * *"
  image: busybox
`
