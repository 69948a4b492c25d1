package kubectl

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A student of a guarded session downloads a kubeconfig from the session
// (GET /s/<id>/kubeconfig) and kubectl works with it as it is: the
// session's HTTPS URL and CA (kubectl sends a token only over TLS), the
// student's token, a context for the shared "default" namespace and one
// for their own. The refusals kubectl prints are kube-apiserver's:
// Forbidden for deleting "default", "You must be logged in" for a token
// the session does not know.
func TestKubectlWithADownloadedKubeconfig(t *testing.T) {
	bins := kubectlBinaries(t)
	bin := bins["kubectl"]
	root, client := startTLSServer(t)
	call := func(t *testing.T, method, url, token, body string, want int, out any) {
		t.Helper()
		callWith(t, client, method, url, token, body, want, out)
	}

	var class struct{ ID, JoinCode, TeacherToken string }
	call(t, "POST", root+"/sessions", "", `{"name":"class"}`, 201, &class)
	var student struct{ Token, ID, Namespace string }
	call(t, "POST", root+"/s/class/join", "", `{"code":"`+class.JoinCode+`","name":"Ada Lovelace"}`, 201, &student)
	var cfg string
	call(t, "GET", root+"/s/class/kubeconfig", student.Token, "", 200, &cfg)

	dir := t.TempDir()
	kc := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	k := &kubectl{t: t, bin: bin, dir: dir, env: []string{"KUBECONFIG=" + kc, "HOME=" + dir, "PATH=" + os.Getenv("PATH"), "LANG=C"}}

	mustContain(t, "config", k.ok("config", "get-contexts", "-o", "name"), "rvplay-class\n", "rvplay-class-"+student.Namespace+"\n")
	mustContain(t, "namespaces", k.ok("get", "namespaces"), "default", student.Namespace)
	mustContain(t, "create in default", k.ok("create", "configmap", "shared", "--from-literal=who=ada"), "configmap/shared created")
	mustContain(t, "create in her own namespace", k.ok("--context", "rvplay-class-"+student.Namespace, "create", "configmap", "mine"), "configmap/mine created")
	mustContain(t, "get in her own namespace", k.ok("get", "configmaps", "-n", student.Namespace), "mine")
	mustContain(t, "delete default", k.fails("delete", "namespace", "default"),
		`Error from server (Forbidden): namespaces "default" is forbidden: this namespace may not be deleted`)

	// The same file with a token the session does not know.
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte(strings.ReplaceAll(cfg, student.Token, "x"+student.Token)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := k.run([]string{"KUBECONFIG=" + bad}, "get", "configmaps")
	if err == nil {
		t.Fatalf("kubectl with an unknown token succeeded: %s", out)
	}
	mustContain(t, "unknown token", errOut, "You must be logged in to the server (Unauthorized)")
}

// callWith sends a request with an optional bearer token, checks the
// status and decodes the JSON answer into out (a *string takes the body as
// it is).
func callWith(t *testing.T, client *http.Client, method, url, token, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, b, want)
	}
	if s, ok := out.(*string); ok {
		*s = string(b)
		return
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s: %v in %s", method, url, err, b)
	}
}

// startTLSServer runs a fresh server over HTTPS with a certificate it
// generates (--cert-dir) and returns its root URL and a client that trusts
// the certificate's CA.
func startTLSServer(t *testing.T) (string, *http.Client) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	var out syncBuffer
	cmd := exec.Command(serverBin, "--addr", addr, "--db", filepath.Join(dir, "x.db"), "--cert-dir", filepath.Join(dir, "pki"))
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	})
	root := "https://" + addr
	deadline := time.Now().Add(15 * time.Second)
	for {
		// The CA exists once the server has generated it, before it listens.
		if ca, err := os.ReadFile(filepath.Join(dir, "pki", "ca.crt")); err == nil {
			pool := x509.NewCertPool()
			pool.AppendCertsFromPEM(ca)
			client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
			if resp, err := client.Get(root + "/healthz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return root, client
				}
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("server exited: %v\n%s", err, out.String())
		case <-time.After(25 * time.Millisecond): // no readiness signal but HTTPS itself
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer %s/healthz\n%s", root, out.String())
		}
	}
}
