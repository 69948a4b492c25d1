package consolediff

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/internal/refbuild"
	"github.com/rvplay/rvplay/server/httpapi"
)

// kubectlSteps run in order: the real kubectl against one session served
// over HTTP, the console against its twin. Both sessions read one fake
// clock and number their UIDs alike, so objects, ages and resource
// versions are the same on both sides.
var kubectlSteps = []step{
	{line: "kubectl get configmaps"},
	{line: "kubectl get namespaces"},
	{line: "kubectl create configmap demo --from-literal=color=blue --from-literal=size=3"},
	{line: "kubectl create configmap demo --from-literal=color=red"},
	{line: "kubectl get cm"},
	{line: "kubectl get cm demo -o json"},
	{line: "kubectl get cm demo -o yaml"},
	{line: "kubectl get cm -o yaml"},
	{line: "kubectl get cm -o name"},
	{line: "kubectl get cm demo -o jsonpath='{.metadata.resourceVersion}'"},
	{line: `kubectl get cm -o jsonpath='{range .items[*]}{.metadata.name} {.data.color}{"\n"}{end}'`},
	{line: "kubectl get cm -o custom-columns=NAME:.metadata.name,RV:.metadata.resourceVersion,COLOR:.data.color,MISSING:.data.nope"},
	{line: "kubectl get cm -o wide"},
	{line: "kubectl get cm -A"},
	{line: "kubectl get cm --show-labels"},
	{line: "kubectl get cm nope"},
	{line: "kubectl get cm demo nope"},
	{line: "kubectl get cm nope --ignore-not-found"},
	{line: "kubectl get cm nope 2>&1 | grep -c NotFound"},
	{line: "kubectl get cm nope 2>/dev/null"},
	{line: "kubectl get nosuchtype"},
	{line: "kubectl get cm demo -A"},
	{line: "kubectl get cm -o yamll"},
	{line: "kubectl get cm --resource-version=3"},
	{line: "kubectl get"},
	{line: "kubectl get cm -n kube-system"},
	{line: "kubectl get cm demo -o json --show-managed-fields | jq -c '.metadata.managedFields[].manager'"},
	{line: "kubectl get --raw /api/v1/namespaces/default/configmaps/demo"},
	{line: "kubectl get --raw '/api/v1/namespaces/default/configmaps?resourceVersion=0' | jq -c '[.items[].metadata.name]'"},
	{line: "kubectl get cm demo -o yaml | grep resourceVersion"},
	{line: "kubectl get cm -ojson | grep \"resourceVersion\""},
	// create -f, apply, replace with heredocs and files
	{line: "cat > web.yaml <<'EOF'\n" + deploymentManifest("web", 2) + "EOF"},
	{line: "kubectl apply -f web.yaml"},
	{line: "kubectl apply -f web.yaml"},
	{line: "sed -i 's/replicas: 2/replicas: 3/' web.yaml", real: "sed -i 's/replicas: 2/replicas: 3/' web.yaml", console: "cat > web.yaml <<'EOF'\n" + deploymentManifest("web", 3) + "EOF"},
	{line: "kubectl apply -f web.yaml"},
	{line: "kubectl get deploy"},
	{line: "kubectl get deployments.apps web -o wide"},
	{line: "kubectl get deploy web -o jsonpath='{.spec.replicas} {.metadata.generation}'"},
	{line: "kubectl get deploy web -o yaml"},
	{line: "kubectl describe deploy web"},
	{line: "kubectl create cm one --from-literal=only=1"},
	// kubectl 1.32 prints a ConfigMap's data in map order: one key keeps it stable.
	{line: "kubectl describe cm one"},
	{line: "kubectl describe ns default"},
	{line: "kubectl create -f - <<'EOF'\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fromstdin\ndata:\n  k: v\nEOF"},
	{line: "kubectl create -f - <<'EOF'\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fromstdin\nEOF"},
	{line: "kubectl get cm fromstdin -o yaml > stale.yaml"},
	{line: "kubectl patch cm fromstdin -p '{\"data\":{\"k\":\"v2\"}}'"},
	{line: "kubectl patch cm fromstdin -p '{\"data\":{\"k\":\"v2\"}}'"},
	{line: "kubectl patch cm fromstdin --type=merge -p '{\"data\":{\"m\":\"1\"}}'"},
	{line: "kubectl patch cm fromstdin --type=json -p '[{\"op\":\"add\",\"path\":\"/data/j\",\"value\":\"2\"}]'"},
	{line: "kubectl replace -f stale.yaml"},
	{line: "kubectl get cm fromstdin -o yaml | kubectl replace -f -"},
	// replace of a file without a resourceVersion reads the live one first;
	// --raw PUTs the file as it is, and prints the answer
	{line: "kubectl replace -f - <<'EOF'\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fromstdin\ndata:\n  k: v3\nEOF"},
	{line: "kubectl replace --raw /api/v1/namespaces/default/configmaps/fromstdin -f - <<'EOF'\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"fromstdin\"},\"data\":{\"k\":\"v4\"}}\nEOF"},
	{line: "kubectl replace --raw /api/v1/namespaces/default/configmaps/fromstdin -f - <<'EOF'\n{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"fromstdin\",\"resourceVersion\":\"5\"}}\nEOF"},
	{line: "kubectl replace --raw /api/v1/namespaces/default/configmaps/fromstdin -f a.json -f b.json"},
	{line: "kubectl create -f - <<'EOF'\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: badkey\ndata:\n  a b: \"1\"\nEOF"},
	{line: "kubectl patch deployment web --type=json -p '[{\"op\":\"replace\",\"path\":\"/spec/replicas\",\"value\":5}]'"},
	{line: "kubectl patch deployment web --type=strategic -p '{\"metadata\":{\"resourceVersion\":\"5\"},\"spec\":{\"replicas\":4}}'"},
	{line: "kubectl scale deployment web --replicas=4"},
	{line: "kubectl scale deploy/web --replicas=6 --current-replicas=3"},
	{line: "kubectl scale deploy web --replicas=6 --resource-version=5"},
	{line: "kubectl scale deploy web --replicas=2 --resource-version=$RV", rv: "deployments/default/web"},
	{line: "kubectl scale deploy web", normalize: klogError},
	// server-side apply and its conflicts
	{line: "cat > ssa.yaml <<'EOF'\n" + deploymentManifest("ssa", 2) + "EOF"},
	{line: "kubectl apply --server-side --field-manager=alice -f ssa.yaml"},
	{line: "cat > ssa.yaml <<'EOF'\n" + deploymentManifest("ssa", 5) + "EOF"},
	{line: "kubectl apply --server-side --field-manager=bob -f ssa.yaml"},
	{line: "kubectl apply --server-side --field-manager=bob --force-conflicts -f ssa.yaml"},
	{line: "kubectl get deploy ssa -o jsonpath='{.metadata.managedFields[*].manager}'"},
	// create deployment, rollout status (no controller: it waits)
	{line: "kubectl create deployment nginx --image=nginx:1.27 --replicas=3"},
	{line: "kubectl get deploy nginx -o yaml"},
	{line: "kubectl rollout status deployment/nginx --timeout=1s", normalize: dropTimeoutErrors},
	{line: "kubectl rollout status deployment nginx --watch=false"},
	// delete
	{line: "kubectl delete cm demo"},
	{line: "kubectl delete cm demo"},
	{line: "kubectl delete cm demo --ignore-not-found"},
	{line: "kubectl delete -f web.yaml"},
	{line: "kubectl delete cm"},
	{line: "kubectl get cm"},
	// edit through the editor
	{line: "kubectl edit cm fromstdin"},
	{line: "kubectl get cm fromstdin -o jsonpath='{.data}'"},
	// selectors, sorting, secrets
	{line: "kubectl label cm fromstdin tier=web"},
	{line: "kubectl get cm -l tier=web"},
	{line: "kubectl get cm -l tier=db"},
	{line: "kubectl get cm -o custom-columns=N:.metadata.name,RV:.metadata.resourceVersion"},
	{line: "kubectl get cm --sort-by=.metadata.resourceVersion -o name"},
	{line: "kubectl create secret generic pw --from-literal=password=s3cret"},
	{line: "kubectl describe secret pw"},
	{line: "kubectl get secrets"},
	{line: "kubectl get deploy -ojson | grep \"resourceVersion\""},
	// a status written by hand lets rollout status finish
	{line: "kubectl patch deploy nginx --subresource=status --type=merge -p '{\"status\":{\"observedGeneration\":1,\"replicas\":3,\"updatedReplicas\":3,\"availableReplicas\":3,\"readyReplicas\":3}}'"},
	{line: "kubectl rollout status deployment/nginx"},
	{line: "kubectl get deploy nginx"},
	// the article's conflict: apply a file exported before someone else's write
	{line: "kubectl apply -f ssa.yaml --server-side --field-manager=bob"},
	{line: "cat > app.yaml <<'EOF'\n" + deploymentManifest("app", 2) + "EOF"},
	{line: "kubectl apply -f app.yaml"},
	{line: "kubectl get deploy app -o yaml > app.yaml"},
	{line: "kubectl scale deploy app --replicas=3"},
	{line: "kubectl apply -f app.yaml"},
	{line: "kubectl patch cm fromstdin -p '{bad json'"},
	{line: "kubectl patch cm fromstdin --type=sideways -p '{}'"},
	{line: "kubectl frobnicate"},
	// watches
	{line: "kubectl get cm -w", watch: "0s\n"},
	{line: "kubectl get cm --watch-only --output-watch-events", watch: "watched", after: []string{"kubectl create cm watched --from-literal=a=1"}},
	{line: "kubectl get cm -w --output-watch-events", watch: "MODIFIED", after: []string{"kubectl patch cm watched -p '{\"data\":{\"a\":\"2\"}}'"}},
	{line: "kubectl get cm watched -w", watch: "watched   2", after: []string{"kubectl patch cm watched -p '{\"data\":{\"b\":\"2\"}}'"}},
	{line: "kubectl get cm -w -o json", watch: "\"name\": \"watched\""},
	{line: "kubectl get cm watched -w -o name --output-watch-events", watch: "configmap/watched\nconfigmap/watched\n", after: []string{"kubectl delete cm watched"}},
}

func deploymentManifest(name string, replicas int) string {
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
        ports:
        - containerPort: 80
`, name, name, replicas, name, name)
}

// klogError turns kubectl's klog line for a missing required flag into
// the error line the console prints (the klog line carries a time and a
// process id).
func klogError(s string) string {
	return regexp.MustCompile(`(?m)^E\d{4} [0-9:.]+ +\d+ run\.go:\d+\] "command failed" err="(.*)"$`).ReplaceAllStringFunc(s, func(m string) string {
		inner := regexp.MustCompile(`err="(.*)"$`).FindStringSubmatch(m)[1]
		return "error: " + strings.ReplaceAll(inner, `\"`, `"`)
	})
}

// dropTimeoutErrors keeps what rollout status printed before it gave up:
// the real kubectl's timeout error reads its own clock.
func dropTimeoutErrors(s string) string {
	return regexp.MustCompile(`(?m)^error: timed out waiting for the condition\n`).ReplaceAllString(s, "")
}

// twinSession is a session whose Kubernetes API reads the shared clock
// and numbers UIDs from 1. It runs no deployment controller: the steps
// write a Deployment's status themselves, so both twins see the same one.
func twinSession(t *testing.T, name string, clock clock.Clock) *session.Session {
	n := 0
	s, err := session.New(name, mvcc.NewMemoryBackend(), session.Options{Kube: func(_ string, st mvcc.KV) api.Handler {
		return kubeapi.New(kubeapi.Options{Store: st, Kube: kube.Options{Clock: clock, NewUID: func() string {
			n++
			return fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		}}})
	}, NoControllers: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// dispatchedKubectl returns the kubectl that gcloud's kubectl dispatches
// to, when bin is that dispatcher (its version ends in "-dispatcher"): it
// runs the kubectl.1.NN of its own version beside it, but answers an
// unknown command or flag itself, worded as cobra's default ("Error:")
// rather than as kubectl ("error:"). Any other kubectl is itself.
func dispatchedKubectl(t *testing.T, bin string) string {
	out, err := exec.Command(bin, "version", "--client").Output()
	if err != nil {
		return bin
	}
	m := regexp.MustCompile(`Client Version: v1\.([0-9]+)\.[0-9]+-dispatcher`).FindSubmatch(out)
	if m == nil {
		return bin
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return bin
	}
	dispatched := filepath.Join(filepath.Dir(real), "kubectl.1."+string(m[1]))
	if _, err := os.Stat(dispatched); err != nil {
		return bin
	}
	t.Logf("%s is gcloud's dispatcher: comparing with %s", bin, dispatched)
	return dispatched
}

func TestKubectlMatchesTheRealKubectl(t *testing.T) {
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
	bin = dispatchedKubectl(t, bin)
	clock := clock.NewFake(time.Date(2026, 11, 22, 1, 45, 6, 0, time.UTC))
	real := twinSession(t, "kubectl", clock)
	twin := twinSession(t, "console", clock)
	srv := httptest.NewServer(httpapi.Handler(real, httpapi.Options{}))
	t.Cleanup(srv.Close)

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	cfg := fmt.Sprintf("apiVersion: v1\nkind: Config\nclusters:\n- name: rvplay\n  cluster:\n    server: %s\ncontexts:\n- name: rvplay\n  context:\n    cluster: rvplay\n    user: rvplay\n    namespace: default\ncurrent-context: rvplay\nusers:\n- name: rvplay\n  user: {}\n", srv.URL)
	if err := os.WriteFile(kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	// kubectl edit runs $KUBE_EDITOR on a file; the console's editor edits
	// the text the same way.
	editor := filepath.Join(dir, "editor.sh")
	if err := os.WriteFile(editor, []byte("#!/bin/sh\nsed -i 's/k: v2/k: edited/' \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The shell runs "kubectl": a directory of its own, first on PATH,
	// holds that name for the binary under test (a built one is cached
	// under another name).
	binDir := filepath.Join(dir, "bin")
	if err := os.Mkdir(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(binDir, "kubectl")); err != nil {
		t.Fatal(err)
	}
	shell := realShell{env: []string{"PATH=" + binDir + ":" + os.Getenv("PATH"), "HOME=" + dir, "KUBECONFIG=" + kubeconfig, "LANG=C", "KUBE_EDITOR=" + editor}}
	con := startConsole(t, twin, clock.Now())
	con.edit = func(s string) (string, bool) { return strings.Replace(s, "k: v2", "k: edited", 1), true }
	for _, s := range kubectlSteps {
		realLine, conLine := s.line, s.line
		if s.real != "" {
			realLine = s.real
		}
		if s.console != "" {
			conLine = s.console
		}
		if s.rv != "" {
			// The live resourceVersion, read from the twin (both sides are equal).
			rv := liveRV(t, twin, s.rv)
			realLine = strings.ReplaceAll(realLine, "$RV", rv)
			conLine = strings.ReplaceAll(conLine, "$RV", rv)
		}
		var want, got result
		if s.watch != "" {
			after := func(run func(string) result) func() {
				return func() {
					for _, a := range s.after {
						run(a)
					}
				}
			}
			want = shell.watchUntilIn(t, work, realLine, s.watch, after(func(l string) result { return shell.runIn(t, work, l) }))
			got = consoleWatchUntil(t, con, conLine, s.watch, after(func(l string) result { return runConsole(t, con, l) }))
			want.code, got.code = 0, 0
		} else {
			want = shell.runIn(t, work, realLine)
			got = runConsole(t, con, conLine)
		}
		if s.normalize != nil {
			want = result{s.normalize(want.stdout), s.normalize(want.stderr), want.code}
			got = result{s.normalize(got.stdout), s.normalize(got.stderr), got.code}
		}
		if os.Getenv("CONSOLEDIFF_LOG") != "" {
			t.Logf("%s\n%s", s.line, got)
		}
		compare(t, s.line, want, got)
	}
}

// liveRV reads an object's resourceVersion from a session's etcd keys.
func liveRV(t *testing.T, s *session.Session, key string) string {
	resp, err := s.Store.Range(context.Background(), &mvcc.RangeRequest{Key: []byte("/registry/" + key)})
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("no key /registry/%s: %v", key, err)
	}
	return fmt.Sprint(resp.Kvs[0].ModRevision)
}
