package kubectl

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/rvplay/rvplay/internal/kubeapiservertest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// TestKubectlThroughAKubeAPIServerOnRvplay: every kubectl under test works
// through a real kube-apiserver whose storage is rvplay's etcd gRPC API
// (issue 15). `task test` builds kube-apiserver beforehand (minutes
// cold); a plain `go test` builds it here when it is not cached.
func TestKubectlThroughAKubeAPIServerOnRvplay(t *testing.T) {
	bin := kubeapiservertest.Require(t)
	r := rvplaytest.StartGRPC(t, "kube")
	// kubectl asks for a password on an HTTPS server without credentials:
	// it gets a token of its own, which the ABAC policy lets do anything.
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte("kubectl-token,kubectl,1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kas, err := kubeapiservertest.Start(bin, filepath.Join(dir, "kas"), r.GRPCAddr, "--token-auth-file="+tokens)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kas.Stop)
	bins := kubectlBinaries(t)
	names := make([]string, 0, len(bins))
	for n := range bins {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			k := newKubectl(t, bins[name], kas.URL)
			k.ok("config", "set-cluster", "rvplay", "--insecure-skip-tls-verify=true")
			k.ok("config", "set-credentials", "rvplay", "--token=kubectl-token")
			ns := "kubectl-" + string(rune('a'+i))
			mustContain(t, "create namespace", k.ok("create", "namespace", ns), "namespace/"+ns+" created")
			mustContain(t, "create configmap", k.ok("-n", ns, "create", "configmap", "demo", "--from-literal=color=blue"), "configmap/demo created")
			mustContain(t, "get configmap", k.ok("-n", ns, "get", "configmap", "demo", "-o", "jsonpath={.data.color}"), "blue")
			mustContain(t, "label", k.ok("-n", ns, "label", "configmap", "demo", "tier=web"), "configmap/demo labeled")
			f := k.write("cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  namespace: "+ns+"\ndata:\n  a: b\n")
			mustContain(t, "server-side apply", k.ok("apply", "--server-side", "--field-manager=alice", "-f", f), "configmap/applied serverside-applied")
			mustContain(t, "create deployment", k.ok("-n", ns, "create", "deployment", "web", "--image=nginx", "--replicas=1"), "deployment.apps/web created")
			mustContain(t, "scale", k.ok("-n", ns, "scale", "deployment", "web", "--replicas=3"), "deployment.apps/web scaled")
			mustContain(t, "get deployment", k.ok("-n", ns, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas} {.metadata.generation}"), "3 2")
			mustContain(t, "list", k.ok("-n", ns, "get", "configmaps", "-l", "tier=web", "-o", "name"), "configmap/demo")
			mustContain(t, "delete", k.ok("-n", ns, "delete", "configmap", "demo"), `configmap "demo" deleted`)
			mustContain(t, "gone", k.fails("-n", ns, "get", "configmap", "demo"), `configmaps "demo" not found`)
		})
	}
}
