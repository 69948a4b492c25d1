// Package refbuild builds the reference programs that tests compare rvplay
// with or runs on it (a real etcd 3.6, k8s.io/sample-apiserver, a real
// kube-apiserver, kubectl): each is a wrapper module of the repository's own (a main of a few lines
// and its go.mod, under a test module's testdata), built from the Go module
// proxy into one cache, test/kubediff/.bin (gitignored). A binary's file
// name carries a hash of its module's go.mod, go.sum and main.go and of
// the Go version, so a changed wrapper or toolchain
// builds a new one and an unchanged one is not even relinked. It is test
// tooling: product code must not import it.
package refbuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// CacheDir is where the binaries are kept, relative to the repository's
// root.
const CacheDir = "test/kubediff/.bin"

// InRepo is Binary for a wrapper module at dir relative to the
// repository's root, whatever the working directory; a build that was not
// cached is logged on stderr, since it takes minutes.
func InRepo(dir, name string, buildFlags ...string) (string, time.Duration, error) {
	root, err := rvplaytest.ModuleRoot()
	if err != nil {
		return "", 0, err
	}
	bin, built, err := Binary(filepath.Join(root, dir), name, buildFlags...)
	if built > 0 {
		fmt.Fprintf(os.Stderr, "refbuild: built %s in %v\n", name, built.Round(time.Second))
	}
	return bin, built, err
}

// Binary builds (once per inputs) the program in the wrapper module at dir
// as name, passing buildFlags to go build (they are inputs too), and
// returns the binary's absolute path and how long the build took (0 when
// it was cached).
func Binary(dir, name string, buildFlags ...string) (string, time.Duration, error) {
	h := sha256.New()
	fmt.Fprintln(h, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	if len(buildFlags) > 0 { // without flags, the hashes binaries were cached under before
		fmt.Fprintf(h, "%q\n", buildFlags)
	}
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			return "", 0, err
		}
		fmt.Fprintf(h, "%s %d\n", f, len(b))
		h.Write(b)
	}
	root, err := rvplaytest.ModuleRoot()
	if err != nil {
		return "", 0, err
	}
	cache := filepath.Join(root, CacheDir)
	bin := filepath.Join(cache, name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(bin); err == nil {
		return bin, 0, nil
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return "", 0, err
	}
	start := time.Now()
	tmp := fmt.Sprintf("%s.tmp%d", bin, os.Getpid())
	cmd := exec.Command("go", append(append([]string{"build", "-o", tmp}, buildFlags...), ".")...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("go build ./%s: %v\n%s", dir, err, out)
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", 0, err
	}
	return bin, time.Since(start), nil
}
