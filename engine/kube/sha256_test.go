package kube

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
	"testing/quick"
)

// FIPS 180-4's examples (csrc.nist.gov's SHA256.pdf and SHA2_Additional)
// and the padding's edges: 55 bytes fit one block, 56 need a second.
func TestSHA256MatchesTheStandardsVectors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
		{"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
			"cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
		{strings.Repeat("a", 1000000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
	} {
		if got := sha256Sum([]byte(c.in)); hex.EncodeToString(got[:]) != c.want {
			t.Errorf("SHA-256 of %.20q… = %x, want %s", c.in, got, c.want)
		}
	}
}

func TestSHA256AgreesWithCryptoSHA256(t *testing.T) {
	for n := 0; n <= 200; n++ {
		b := bytes.Repeat([]byte{byte(n)}, n)
		if sha256Sum(b) != sha256.Sum256(b) {
			t.Errorf("%d bytes: %x, crypto/sha256 %x", n, sha256Sum(b), sha256.Sum256(b))
		}
	}
	if err := quick.CheckEqual(sha256Sum, sha256.Sum256, nil); err != nil {
		t.Error(err)
	}
}

func FuzzSHA256(f *testing.F) {
	f.Add([]byte("apiextensions.k8s.io/v1/CustomResourceDefinition"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if sha256Sum(b) != sha256.Sum256(b) {
			t.Errorf("%x: %x, crypto/sha256 %x", b, sha256Sum(b), sha256.Sum256(b))
		}
	})
}

// kube-apiserver's discovery (recorded from it) gives its own types the
// hash of their storage version's group/version/kind, which is what the
// function gives: ConfigMaps, Deployments, and CustomResourceDefinitions,
// which kube still stores as apiextensions.k8s.io/v1beta1.
func TestStorageVersionHashIsKubes(t *testing.T) {
	for _, c := range []struct{ group, version, kind, want string }{
		{"", "v1", "ConfigMap", "qFsyl6wFWjQ="},
		{"apps", "v1", "Deployment", "8aSe+NMegvE="},
		{"apiextensions.k8s.io", "v1beta1", "CustomResourceDefinition", "jfWCUB31mvA="},
	} {
		if got := storageVersionHash(c.group, c.version, c.kind); got != c.want {
			t.Errorf("storageVersionHash(%s/%s/%s) = %q, kube-apiserver answers %q", c.group, c.version, c.kind, got, c.want)
		}
	}
}
