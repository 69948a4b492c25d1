// Command sampleapiserver runs k8s.io/sample-apiserver, a real generic API
// server (the same registry, etcd3 storage, Status errors, pagination,
// watch-list and server-side apply code as kube-apiserver), without a
// cluster: delegated authentication is optional and authorization is off
// (always allow), so the differential test can talk to it anonymously.
package main

import (
	"context"
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/sample-apiserver/pkg/cmd/server"
)

func main() {
	options := server.NewWardleServerOptions(os.Stdout, os.Stderr)
	// No kube-apiserver to delegate to: allow every request, and let
	// authentication run without a remote authenticator (anonymous).
	options.RecommendedOptions.Authorization = nil
	options.RecommendedOptions.Authentication.RemoteKubeConfigFileOptional = true
	options.RecommendedOptions.Authentication.SkipInClusterLookup = true
	cmd := server.NewCommandStartWardleServer(context.Background(), options, false)
	os.Exit(cli.Run(cmd))
}
