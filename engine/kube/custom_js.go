//go:build js

package kube

import (
	"context"
	"errors"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// The browser build serves no CustomResourceDefinitions: serving them
// (their validation, controllers, schemas and OpenAPI) costs 121,659 B
// gzip of WebAssembly, more than the budget has left (wasm/BENCHMARKS.md).
// Nor does it evaluate CEL rules (x-kubernetes-validations,
// customrules.go): with no definitions there is nothing to evaluate
// them on, and kube's evaluator (server/crdrules) is some 20 MB on its
// own. A definition sent to the browser's session answers 404 NotFound,
// as any resource kube-apiserver does not serve.

// customServed: no resource is a custom one.
const customServed = false

// CustomResourcesServed reports that this build serves
// CustomResourceDefinitions (the browser build does not).
const CustomResourcesServed = customServed

// definitions is not served: no resource is it.
var definitions *Resource

// customResource is what the registry's shared code reads of one.
type customResource struct {
	typ   *schema.Type
	scale *customScale
}

// customResources: the browser build keeps none.
type customResources struct{}

func (customResources) served() []*Resource { return nil }

func (customResources) versionsOf(*Resource) []*Resource { return nil }

// CustomResources: there are none.
func (reg *Registry) CustomResources(context.Context) ([]*Resource, string, error) {
	return reg.custom.served(), "", nil
}

func (reg *Registry) written(_ context.Context, _ *Resource, w Written, _ bool, err error) (Written, error) {
	return w, err
}

func (reg *Registry) deleteDefinition(context.Context, string, DeleteOptions) (any, error) {
	return nil, errors.New("CustomResourceDefinitions are not served in the browser build")
}

// OpenAPI: no resource is a custom one.
func (r *Resource) OpenAPI() (schema.Resource, bool) { return schema.Resource{}, false }
