package refbuild

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// KubectlModule is the wrapper module of kubectl, relative to the
// repository's root: k8s.io/kubectl's own command at the version its
// go.mod requires.
const KubectlModule = "test/kubectl/testdata/kubectl"

// ForceKubectlBuild, set to any value in the environment, makes Kubectl
// build kubectl even when one is on PATH: the way to test the build a
// machine without kubectl depends on.
const ForceKubectlBuild = "RVPLAY_BUILD_KUBECTL"

var kubectlOnce struct {
	sync.Once
	path  string
	built time.Duration
	err   error
}

// Kubectl returns the kubectl on PATH or, when there is none (or
// $RVPLAY_BUILD_KUBECTL is set), kubectl built from KubectlModule through
// the Go module proxy and cached as the reference programs are; built
// says how long a build took (0 when none was needed). A process builds
// it at most once, however many tests ask.
func Kubectl() (path string, built time.Duration, err error) {
	k := &kubectlOnce
	k.Do(func() { k.path, k.built, k.err = findOrBuildKubectl() })
	return k.path, k.built, k.err
}

func findOrBuildKubectl() (string, time.Duration, error) {
	if os.Getenv(ForceKubectlBuild) == "" {
		if p, err := exec.LookPath("kubectl"); err == nil {
			return p, 0, nil
		}
	}
	root, err := rvplaytest.ModuleRoot()
	if err != nil {
		return "", 0, err
	}
	dir := filepath.Join(root, KubectlModule)
	version, err := requiredVersion(filepath.Join(dir, "go.mod"), "k8s.io/kubectl")
	if err != nil {
		return "", 0, err
	}
	// k8s.io/kubectl v0.M.P is Kubernetes v1.M.P; the release stamps its
	// version into both version packages (kubectl version reads
	// component-base's, the User-Agent client-go's).
	gitVersion := "v1" + strings.TrimPrefix(version, "v0")
	parts := strings.SplitN(gitVersion[1:], ".", 3)
	if len(parts) != 3 {
		return "", 0, fmt.Errorf("refbuild: cannot make a Kubernetes version of k8s.io/kubectl %s", version)
	}
	var ldflags []string
	for _, pkg := range []string{"k8s.io/component-base/version", "k8s.io/client-go/pkg/version"} {
		ldflags = append(ldflags,
			"-X", pkg+".gitVersion="+gitVersion,
			"-X", pkg+".gitMajor="+parts[0],
			"-X", pkg+".gitMinor="+parts[1],
			"-X", pkg+".gitTreeState=clean")
	}
	return Binary(dir, "kubectl", "-ldflags", strings.Join(ldflags, " "))
}

// requiredVersion reads the version of module path from a go.mod's
// require directives.
func requiredVersion(gomod, path string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(fields) >= 2 && fields[0] == path {
			return fields[1], nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("refbuild: %s requires no %s", gomod, path)
}
