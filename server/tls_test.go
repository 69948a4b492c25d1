package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/server/classroom"
)

// Tokens never cross a network in clear unless the operator says so: plain
// HTTP off loopback is refused at start.
func TestPlainHTTPOffLoopbackIsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	bin := buildServer(t)
	out, err := exec.Command(bin, "--addr", "0.0.0.0:0", "--db", tempDB(t)).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing plain HTTP on ") || !strings.Contains(string(out), "--allow-insecure-http") {
		t.Fatalf("plain HTTP on every address: %v\n%s", err, out)
	}
}

// With --cert-dir the server serves HTTPS with the certificate it made,
// the browser's cookie is Secure, and a kubeconfig carries the CA.
func TestASelfSignedServerHandsOutItsCA(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	bin := buildServer(t)
	pki := filepath.Join(t.TempDir(), "pki")
	p := startProcess(t, bin, tempDB(t), "", "--cert-dir", pki)
	if !strings.HasPrefix(p.URL, "https://") {
		t.Fatalf("listening on %s", p.URL)
	}
	ca, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Post(p.URL+"/sessions", "application/json", strings.NewReader(`{"name":"class"}`))
	if err != nil {
		t.Fatal(err)
	}
	var c classroom.Created
	json.NewDecoder(resp.Body).Decode(&c)
	resp.Body.Close()
	if resp.StatusCode != 201 || !strings.Contains(resp.Header.Get("Set-Cookie"), "; Secure") {
		t.Fatalf("create over HTTPS: %d %v", resp.StatusCode, resp.Header)
	}
	req, _ := http.NewRequest("GET", p.URL+"/s/class/kubeconfig", nil)
	req.Header.Set("Authorization", "Bearer "+c.TeacherToken)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `server: "`+p.URL+`/s/class"`) || !strings.Contains(string(body), "certificate-authority-data: ") {
		t.Fatalf("kubeconfig:\n%s", body)
	}
}
