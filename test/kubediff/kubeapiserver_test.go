package kubediff

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rvplay/rvplay/internal/kubeapiservertest"
	"github.com/rvplay/rvplay/internal/proctest"
)

var (
	kubeOnce sync.Once
	kubeBin  string
	kubeErr  error
)

// buildKubeAPIServer builds the real kube-apiserver (kubeapiservertest's
// wrapper module: k8s.io/kubernetes v1.36.3 from the module proxy, about 4
// minutes cold on two cores) and etcd 3.6, as buildAll does for the sample-apiserver.
func buildKubeAPIServer(t *testing.T) {
	t.Helper()
	kubeOnce.Do(func() {
		if etcdBin, _, kubeErr = refBinary("etcd36"); kubeErr != nil {
			return
		}
		kubeBin, _, kubeErr = kubeapiservertest.Binary()
	})
	if kubeErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubediff: %v", kubeErr)
		}
		t.Skipf("kubediff: cannot build kube-apiserver here (set CI=true to make this a failure): %v", kubeErr)
	}
}

// startKubeAPIServer runs a fresh etcd 3.6 and a real kube-apiserver on it
// with anonymous access allowed (ABAC, every request of every user), the
// watch cache as watchCache says (off, the default: etcd-level answers,
// as the golden recordings), and no endpoint reconciler; it returns the
// server's https URL.
func startKubeAPIServer(t *testing.T, c *http.Client) string {
	t.Helper()
	buildKubeAPIServer(t)
	dir := t.TempDir()
	curl := startEtcd(t, c, dir)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"sa.key": pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"abac.jsonl": []byte(`{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"system:unauthenticated","namespace":"*","resource":"*","apiGroup":"*","nonResourcePath":"*"}}
{"apiVersion":"abac.authorization.kubernetes.io/v1beta1","kind":"Policy","spec":{"group":"system:authenticated","namespace":"*","resource":"*","apiGroup":"*","nonResourcePath":"*"}}
`),
		"tokens.csv": []byte("kubediff,kubediff,1,system:masters\n"),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	port := proctest.FreePort(t)
	url := fmt.Sprintf("https://127.0.0.1:%d", port)
	p := proc(t, "kube-apiserver", kubeBin,
		"--etcd-servers="+curl, "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", port),
		"--advertise-address=127.0.0.1", "--endpoint-reconciler-type=none", "--cert-dir="+filepath.Join(dir, "certs"),
		"--authorization-mode=ABAC", "--authorization-policy-file="+filepath.Join(dir, "abac.jsonl"), "--anonymous-auth=true",
		"--token-auth-file="+filepath.Join(dir, "tokens.csv"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file="+filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file="+filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16", "--enable-priority-and-fairness=false",
		"--etcd-compaction-interval=0", fmt.Sprintf("--watch-cache=%t", watchCache))
	waitReady(t, "kube-apiserver", c, "GET", url+"/readyz", "", p)
	return url
}
