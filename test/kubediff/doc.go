// Package kubediff is a differential test of rvplay's Kubernetes REST API
// against a real generic API server: k8s.io/sample-apiserver (the same
// k8s.io/apiserver registry, etcd3 storage, Status errors, pagination,
// watch-list and server-side apply code as kube-apiserver) over a real
// etcd 3.6, both built from the Go module proxy on first use.
//
// The same seeded request sequences run against the reference's flunders
// (wardle.example.com/v1alpha1) and rvplay's configmaps; the answers are
// normalised (resource names swapped, resourceVersions made relative to
// each side's starting revision, UIDs replaced by their order of
// appearance) and compared request by request. It runs in both of
// kube-apiserver's read paths: the watch cache off (the reference with
// --watch-cache=false, rvplay's server with --watch-cache=false) and on
// (both with it, each side's default). Written scenarios (scenarios_test.go,
// edges_test.go) pin the edges a seed reaches only by chance: compacted and
// future resourceVersions.
//
// It is a module of its own so that the product module never depends on
// k8s.io/apiserver or etcd's server; the reference programs are nested
// modules under cmd/ because sample-apiserver v0.37.2 requires
// go.etcd.io/etcd/server/v3 v3.7.0, which would otherwise replace the
// etcd 3.6 this test needs. The test itself uses only the standard
// library and talks plain HTTP to all three processes.
package kubediff
