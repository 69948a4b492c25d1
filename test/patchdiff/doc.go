// Package patchdiff is a test module of its own (so the product module does
// not depend on k8s.io/apimachinery): it applies seeded random strategic
// merge patches with package patch and with kube's own implementation
// (k8s.io/apimachinery/pkg/util/strategicpatch), the latter driven by
// rvplay's OpenAPI documents as kubectl reads them (v3 JSON, and v2
// decoded from our protobuf encoding with gnostic), and compares results.
package patchdiff
