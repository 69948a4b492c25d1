// Package kubeapiservertest runs a real kube-apiserver (v1.36.3, built from
// the module proxy by the wrapper module testdata/kubeapiserver into the
// reference programs' cache) on a store given by its etcd
// address: rvplay's etcd gRPC API or a real etcd. Anonymous requests may do
// anything (an ABAC policy: AlwaysAllow would turn them away). It is test
// and benchmark tooling: product code must not import it.
package kubeapiservertest

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/proctest"
	"github.com/rvplay/rvplay/internal/refbuild"
)

// Binary builds kube-apiserver once per wrapper module and Go version, its
// version stamped as the release's, and returns its path and how long the
// build took (0: cached).
func Binary() (string, time.Duration, error) {
	return refbuild.InRepo("internal/kubeapiservertest/testdata/kubeapiserver", "kubeapiserver", "-ldflags", versionLDFlags)
}

// Require returns the kube-apiserver binary or ends the test: in CI
// (CI=true) a build that fails is a failure, elsewhere (no module proxy,
// say) a skip with the reason. `task test` builds it beforehand
// (scripts/build-reference.sh), so that the minutes of a cold build fall
// outside any go test timeout.
func Require(tb testing.TB) string {
	tb.Helper()
	bin, built, err := Binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("kube-apiserver must build in CI: %v", err)
		}
		tb.Skipf("cannot build kube-apiserver here (set CI=true to make this a failure): %v", err)
	}
	if built > 0 {
		tb.Logf("built kube-apiserver in %v", built.Round(time.Second))
	}
	return bin
}

// versionLDFlags stamps the version the wrapper module requires.
const versionLDFlags = "-X k8s.io/component-base/version.gitVersion=v1.36.3 -X k8s.io/component-base/version.gitMajor=1 " +
	"-X k8s.io/component-base/version.gitMinor=36 -X k8s.io/component-base/version.gitTreeState=clean"

// grace is how long Stop waits after SIGTERM: kube-apiserver drains its
// requests, which may take longer than proctest.Grace.
const grace = 15 * time.Second

// abacPolicy lets anyone do anything: the benchmark measures storage, not
// authorization (AlwaysAllow would turn anonymous requests away).
const abacPolicy = `{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:unauthenticated", "namespace": "*", "resource": "*", "apiGroup": "*", "nonResourcePath": "*"}}
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "system:authenticated", "namespace": "*", "resource": "*", "apiGroup": "*", "nonResourcePath": "*"}}
`

// writeKeys writes the service-account key pair and the policy file.
func writeKeys(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	files := map[string][]byte{
		"sa.key":     pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		"sa.pub":     pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}),
		"abac.jsonl": []byte(abacPolicy),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Server is a running kube-apiserver.
type Server struct {
	URL string // https://127.0.0.1:PORT, a self-signed certificate
	// Log is the file its output goes to.
	Log string
	p   *proctest.Process
}

// Pid is its process ID.
func (s *Server) Pid() int { return s.p.Pid() }

// Stop ends it (SIGTERM, then SIGKILL after 15 s).
func (s *Server) Stop() { _ = s.p.Stop("kube-apiserver", grace) }

// Client is an HTTPS client that accepts the server's self-signed
// certificate.
var Client = &http.Client{
	Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, MaxIdleConnsPerHost: 64},
	Timeout:   30 * time.Second,
}

// Start starts bin with its storage at etcdAddr (host:port), its files in
// dir and flags added to its command line, and waits until /readyz
// answers ok.
func Start(bin, dir, etcdAddr string, flags ...string) (*Server, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := writeKeys(dir); err != nil {
		return nil, err
	}
	ports, err := proctest.FreePorts(1)
	if err != nil {
		return nil, err
	}
	port := ports[0]
	args := []string{"--etcd-servers=http://" + etcdAddr,
		"--bind-address=127.0.0.1", "--secure-port=" + strconv.Itoa(port), "--advertise-address=127.0.0.1",
		"--endpoint-reconciler-type=none", "--cert-dir=" + filepath.Join(dir, "certs"),
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + filepath.Join(dir, "sa.pub"),
		"--service-account-signing-key-file=" + filepath.Join(dir, "sa.key"),
		"--service-cluster-ip-range=10.96.0.0/16", "--enable-priority-and-fairness=false",
		"--authorization-mode=ABAC", "--authorization-policy-file=" + filepath.Join(dir, "abac.jsonl"),
		"--anonymous-auth=true"}
	args = append(args, flags...)
	logPath := filepath.Join(dir, "kube-apiserver.log")
	p, err := proctest.Start(exec.Command(bin, args...), logPath)
	if err != nil {
		return nil, err
	}
	k := &Server{URL: fmt.Sprintf("https://127.0.0.1:%d", port), Log: logPath, p: p}
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := Client.Get(k.URL + "/readyz"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 && string(body) == "ok" {
				return k, nil
			}
		}
		select {
		case <-p.Exited:
			return nil, fmt.Errorf("kube-apiserver exited at start:\n%s", p.LogTail(4000))
		case <-time.After(100 * time.Millisecond):
		}
	}
	_ = p.Stop("kube-apiserver", grace)
	return nil, fmt.Errorf("kube-apiserver not ready within 90s:\n%s", p.LogTail(4000))
}
