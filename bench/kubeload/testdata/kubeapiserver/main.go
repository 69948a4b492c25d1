// Command kubeapiserver is a real kube-apiserver (k8s.io/kubernetes's
// cmd/kube-apiserver/app, the code the release binary runs), built from
// the Go module proxy for rvplay's benchmarks: kube-apiserver cannot be `go
// install`ed (k8s.io/kubernetes replaces its staging modules with local
// paths), so this module requires it and replaces those modules with their
// published versions instead. Unstamped, its /version says v0.0.0-master;
// nothing here reads it.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register" // --logging-format=json, as the release binary has it
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
