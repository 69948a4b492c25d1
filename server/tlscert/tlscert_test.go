package tlscert

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var now = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

func verify(t *testing.T, s *Serving, host string) error {
	t.Helper()
	leaf, err := x509.ParseCertificate(s.Certificate.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(s.CA) {
		t.Fatalf("CA %q is not PEM", s.CA)
	}
	_, err = leaf.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: now})
	return err
}

// A generated certificate is signed by its CA for the hosts asked for, and
// generated once: a restart serves the same one, so the kubeconfigs the
// class already downloaded keep working.
func TestASelfSignedCertificateIsMadeOnceForItsHosts(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "pki")
	s, err := SelfSigned(dir, []string{"localhost", "127.0.0.1", "teacher.lan", "10.0.0.7"}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []string{"localhost", "127.0.0.1", "teacher.lan", "10.0.0.7"} {
		if err := verify(t, s, h); err != nil {
			t.Errorf("%s: %v", h, err)
		}
	}
	if verify(t, s, "elsewhere.example") == nil {
		t.Error("valid for a host it was not made for")
	}
	again, err := SelfSigned(dir, []string{"other"}, now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if string(again.CA) != string(s.CA) || string(again.Certificate.Certificate[0]) != string(s.Certificate.Certificate[0]) {
		t.Fatal("a second start made a new certificate")
	}
	if fi, err := os.Stat(filepath.Join(dir, KeyFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
}

// The operator's files: a self-signed root at the end of the chain is what
// clients must trust; a chain without its root relies on the system's.
func TestLoadFindsTheRootClientsMustTrust(t *testing.T) {
	dir := t.TempDir()
	s, err := SelfSigned(filepath.Join(dir, "pki"), []string{"localhost"}, now)
	if err != nil {
		t.Fatal(err)
	}
	leafOnly, err := Load(filepath.Join(dir, "pki", CertFile), filepath.Join(dir, "pki", KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if leafOnly.CA != nil {
		t.Fatalf("a chain below another CA reports a CA: %s", leafOnly.CA)
	}
	chain := filepath.Join(dir, "chain.crt")
	leafPEM, _ := os.ReadFile(filepath.Join(dir, "pki", CertFile))
	if err := os.WriteFile(chain, append(leafPEM, s.CA...), 0o644); err != nil {
		t.Fatal(err)
	}
	withRoot, err := Load(chain, filepath.Join(dir, "pki", KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := pem.Decode(withRoot.CA); b == nil || string(withRoot.CA) != string(s.CA) {
		t.Fatalf("root %q, want the CA", withRoot.CA)
	}
	if _, err := Load(chain, chain); err == nil {
		t.Fatal("a certificate as its own key was accepted")
	}
}
