package kubediff

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/proctest"
	"github.com/rvplay/rvplay/internal/refbuild"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

func TestMain(m *testing.M) { os.Exit(rvplaytest.RunTests(m)) }

// refBinary builds (once per inputs, into refbuild's cache) the program in
// testdata/<name>, a nested module, and returns the binary's absolute path.
func refBinary(name string) (string, time.Duration, error) {
	return refbuild.Binary(filepath.Join("testdata", name), name)
}

var (
	refOnce            sync.Once
	etcdBin, sampleBin string
	refErr             error
)

// buildAll builds the two reference programs (rvplaytest builds the rvplay
// server). In CI a failure to build the reference fails the test;
// elsewhere (no module proxy, say) it skips with the reason.
func buildAll(t *testing.T) {
	t.Helper()
	refOnce.Do(func() {
		var d1, d2 time.Duration
		if etcdBin, d1, refErr = refBinary("etcd36"); refErr != nil {
			return
		}
		if sampleBin, d2, refErr = refBinary("sampleapiserver"); refErr != nil {
			return
		}
		if d1+d2 > 0 {
			fmt.Fprintf(os.Stderr, "kubediff: built reference binaries (etcd36 %v, sampleapiserver %v)\n", d1.Round(time.Millisecond), d2.Round(time.Millisecond))
		}
	})
	if refErr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("kubediff: %v", refErr)
		}
		t.Skipf("kubediff: cannot build the reference API server here (set CI=true to make this a failure): %v", refErr)
	}
}

// outputShown is how much of a process's output a failure shows: its end.
const outputShown = 8000

// proc runs a process for the test's lifetime, its output in a log in the
// test's temporary directory, and shows that output when the test fails.
// The process is killed at the end, not stopped: what it would do on
// SIGTERM is no part of a comparison, and waiting for it is time.
func proc(t *testing.T, label, bin string, args ...string) *proctest.Process {
	t.Helper()
	p, err := proctest.Start(exec.Command(bin, args...), filepath.Join(t.TempDir(), label+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = p.Cmd.Process.Kill()
		<-p.Exited
		if t.Failed() {
			t.Logf("%s output:\n%s", label, p.LogTail(outputShown))
		}
	})
	return p
}

// waitReady polls url until it answers 200 (the processes give no other
// readiness signal) or the process exits.
func waitReady(t *testing.T, label string, c *http.Client, method, url, body string, p *proctest.Process) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last string
	for {
		req, _ := http.NewRequest(method, url, strings.NewReader(body))
		resp, err := c.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
			last = fmt.Sprintf("%d %s", resp.StatusCode, b)
		} else {
			last = err.Error()
		}
		select {
		case <-p.Exited:
			t.Fatalf("%s exited before it was ready: %v\n%s", label, p.Err, p.LogTail(outputShown))
		case <-time.After(30 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within 30s (%s: %s)\n%s", label, url, last, p.LogTail(outputShown))
		}
	}
}

// newClient talks to all three servers: the sample-apiserver's certificate
// is self-signed, so verification is off (loopback only).
func newClient() *http.Client {
	return &http.Client{Transport: &http.Transport{
		TLSClientConfig:     &tls.Config{InsecureSkipVerify: true},
		MaxIdleConnsPerHost: 8,
	}}
}

type reference struct {
	etcdURL   string // etcd's client URL (v3 JSON gateway at /v3/…)
	serverURL string // https://127.0.0.1:PORT
}

// startEtcd runs a fresh etcd 3.6, its data under dir, for a reference
// API server and returns its client URL.
func startEtcd(t *testing.T, c *http.Client, dir string) string {
	t.Helper()
	ports, err := proctest.FreePorts(2)
	if err != nil {
		t.Fatal(err)
	}
	curl := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	purl := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	p := proc(t, "etcd", etcdBin,
		"--name", "kubediff", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", curl, "--advertise-client-urls", curl,
		"--listen-peer-urls", purl, "--initial-advertise-peer-urls", purl,
		"--initial-cluster", "kubediff="+purl,
		"--watch-progress-notify-interval=5s", "--log-level=error")
	waitReady(t, "etcd", c, "POST", curl+"/v3/kv/range", `{"key":"AA=="}`, p)
	return curl
}

// startReference runs a fresh etcd 3.6 and a sample-apiserver on it.
func startReference(t *testing.T, c *http.Client) reference {
	t.Helper()
	dir := t.TempDir()
	curl := startEtcd(t, c, dir)

	sport := proctest.FreePort(t)
	surl := fmt.Sprintf("https://127.0.0.1:%d", sport)
	// The server starts shared informers against a "core" API server; it
	// is given itself, which is enough for it to run.
	kubeconfig := filepath.Join(dir, "self.kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: self
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: kubediff
  user:
    token: kubediff
contexts:
- name: self
  context:
    cluster: self
    user: kubediff
current-context: self
`, surl)
	if err := os.WriteFile(kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	p := proc(t, "sample-apiserver", sampleBin,
		"--etcd-servers="+curl, fmt.Sprintf("--secure-port=%d", sport), "--bind-address=127.0.0.1",
		"--cert-dir="+filepath.Join(dir, "certs"), "--kubeconfig="+kubeconfig,
		"--enable-priority-and-fairness=false", "--etcd-compaction-interval="+compactionInterval.String(), fmt.Sprintf("--watch-cache=%t", watchCache),
		"--disable-admission-plugins=NamespaceLifecycle,BanFlunder,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy")
	waitReady(t, "sample-apiserver", c, "GET", surl+"/readyz", "", p)
	return reference{etcdURL: curl, serverURL: surl}
}

// startRvplay runs a fresh rvplay server process on its own SQLite file
// with one session and returns the session's base URL. Its automatic
// compaction is off, as the reference's --etcd-compaction-interval=0: a
// tick's compact_rev_key write on one side only would shift every
// revision after it.
func startRvplay(t *testing.T) string {
	t.Helper()
	return rvplaytest.Start(t, "kd", fmt.Sprintf("--watch-cache=%t", watchCache), "--compaction-interval="+compactionInterval.String()).SessionURL
}

// watchCache runs both sides with their watch cache (sample-apiserver's
// --watch-cache, rvplay's session setting): kube-apiserver's default read
// path, each side's default. Off, both answer from etcd.
var watchCache bool

// compactionInterval is both sides' automatic compaction (the reference's
// --etcd-compaction-interval, rvplay's --compaction-interval): 0, off,
// unless a scenario is about what kube's compactor does.
var compactionInterval time.Duration

func ctxTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}
