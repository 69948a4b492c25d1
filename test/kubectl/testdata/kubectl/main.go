// Command kubectl is kubectl itself (k8s.io/kubectl's command tree, run as
// kubernetes/cmd/kubectl runs it), built from the Go module proxy for the
// tests that drive kubectl on a machine that has none installed.
// internal/refbuild.Kubectl builds it with the version flags the Kubernetes
// release sets, so that `kubectl version` reports the module's version.
package main

import (
	"k8s.io/component-base/cli"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"

	// The client auth plugins (exec, OIDC), as in the released kubectl.
	_ "k8s.io/client-go/plugin/pkg/client/auth"
)

func main() {
	command := cmd.NewDefaultKubectlCommand()
	if err := cli.RunNoErrOutput(command); err != nil {
		util.CheckErr(err)
	}
}
