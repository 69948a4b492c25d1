// Package tlscert gives the server its TLS certificate: the operator's own
// files (--tls-cert-file and --tls-private-key-file, kube-apiserver's flag
// names) or, for a quick start, a self-signed CA and a serving certificate
// it signs, generated once into a directory (--cert-dir, as kube-apiserver
// does when it has no certificate) and reused at every start.
//
// kubectl sends a kubeconfig's token only over TLS (client-go reads a
// user's credentials only when the transport is TLS), so a guarded session
// is usable from kubectl only over HTTPS; the kubeconfig the classroom
// hands out then carries the CA this package reports.
package tlscert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Serving is the server's certificate and what its clients must trust.
type Serving struct {
	Certificate tls.Certificate
	// CA is the PEM certificate clients must trust when it is not in their
	// system roots: the generated CA, or the self-signed root the
	// operator's chain ends with. Nil for a chain ending below a public CA.
	CA []byte
}

// Load reads the operator's certificate chain and key.
func Load(certFile, keyFile string) (*Serving, error) {
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	s := &Serving{Certificate: cert}
	last, err := x509.ParseCertificate(cert.Certificate[len(cert.Certificate)-1])
	if err != nil {
		return nil, fmt.Errorf("tls: %s: %w", certFile, err)
	}
	if last.CheckSignatureFrom(last) == nil {
		s.CA = pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: last.Raw})
	}
	return s, nil
}

// File names in the directory of a generated certificate.
const (
	CAFile   = "ca.crt"
	CertFile = "apiserver.crt"
	KeyFile  = "apiserver.key"
)

// SelfSigned returns the certificate generated in dir, generating it first
// if dir has none: a CA valid for ten years and a serving certificate it
// signs for hosts (names and IP addresses) valid for one year. Like
// kube-apiserver's, it is for a quick start; a class on a real network
// deserves a certificate its browsers already trust.
func SelfSigned(dir string, hosts []string, now time.Time) (*Serving, error) {
	caPath, certPath, keyPath := filepath.Join(dir, CAFile), filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile)
	if _, err := os.Stat(certPath); err == nil {
		s, err := Load(certPath, keyPath)
		if err != nil {
			return nil, err
		}
		if s.CA, err = os.ReadFile(caPath); err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
		return s, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("tls: %w", err)
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "rvplay-ca@" + fmt.Sprint(now.Unix())},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "rvplay"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else if h != "" {
			leaf.DNSNames = append(leaf.DNSNames, h)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("tls: %w", err)
	}
	// The key first and the certificate last: a directory with a
	// certificate has its key (the check above looks for the certificate).
	for _, f := range []struct {
		path string
		data []byte
		mode os.FileMode
	}{{keyPath, keyPEM, 0o600}, {caPath, caPEM, 0o644}, {certPath, certPEM, 0o644}} {
		if err := os.WriteFile(f.path, f.data, f.mode); err != nil {
			return nil, fmt.Errorf("tls: %w", err)
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &Serving{Certificate: cert, CA: caPEM}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	return n
}

// LocalHosts are the names and addresses a class may reach this machine
// by: localhost, the host name, and every interface's addresses.
func LocalHosts() []string {
	hosts := []string{"localhost", "127.0.0.1", "::1"}
	if h, err := os.Hostname(); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			hosts = append(hosts, n.IP.String())
		}
	}
	return hosts
}
