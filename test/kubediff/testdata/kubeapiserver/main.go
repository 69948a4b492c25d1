// Command kubeapiserver is a real kube-apiserver (k8s.io/kubernetes
// v1.36.3, built from the module proxy), the reference for what depends on
// a resource's own strategy: custom resources and their definitions,
// discovery, OpenAPI. See ../../../../../shared/spec/reference-apiserver.md
// (in the workspace) for the flags it needs to run without a cluster.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
