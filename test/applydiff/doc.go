// Package applydiff is a test module of its own (so the product module does
// not depend on k8s.io/apimachinery): it runs the same seeded sequences of
// applies and updates through package apply and through kube's own field
// manager (k8s.io/apimachinery/pkg/util/managedfields, the code
// kube-apiserver runs), both over rvplay's OpenAPI definitions, and
// compares objects, managedFields and conflict errors step by step.
package applydiff
