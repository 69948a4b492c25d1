package kubectl

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/internal/rvplaytest"
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
	pki := filepath.Join(t.TempDir(), "pki")
	s := rvplaytest.Start(t, "", "--cert-dir", pki)
	// The server made its CA before it listened.
	ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return s.URL, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}
