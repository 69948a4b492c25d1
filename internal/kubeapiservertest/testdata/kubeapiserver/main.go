// Command kubeapiserver is a real kube-apiserver (k8s.io/kubernetes's
// cmd/kube-apiserver/app, the code the release binary runs), built from
// the Go module proxy for rvplay's tests and benchmarks: kube-apiserver
// cannot be `go install`ed (k8s.io/kubernetes replaces its staging modules
// with local paths), so this module requires it and replaces those modules
// with their published versions instead. kubeapiservertest.Binary stamps
// the release's version into it, so that /version answers as the release
// does.
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
