package client

import (
	"context"
	"sync"
)

// InformerFactory shares one informer per resource among the controllers
// of one process, as client-go's SharedInformerFactory does: each resource
// is listed and watched once, whoever reads it.
type InformerFactory struct {
	client *Client

	mu        sync.Mutex
	informers map[Resource]*Informer
	started   map[Resource]bool
	running   sync.WaitGroup
}

// controllerSteps bounds the step log of a controller's reflector: nobody
// reads it, the lab shows the requests.
const controllerSteps = 16

// NewInformerFactory returns a factory whose informers use c (and its
// clock).
func NewInformerFactory(c *Client) *InformerFactory {
	return &InformerFactory{client: c, informers: map[Resource]*Informer{}, started: map[Resource]bool{}}
}

// ForResource returns the informer of r across all namespaces, made on
// first use.
func (f *InformerFactory) ForResource(r Resource) *Informer {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i, ok := f.informers[r]; ok {
		return i
	}
	i := NewInformer(f.client.Resource(r))
	i.Reflector.Clock = f.client.Clock
	i.Reflector.MaxSteps = controllerSteps
	f.informers[r] = i
	return i
}

// Start runs the informers not yet running until ctx ends (none once it
// has: Wait may be returning).
func (f *InformerFactory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	for r, i := range f.informers {
		if f.started[r] {
			continue
		}
		f.started[r] = true
		f.running.Add(1)
		go func() {
			defer f.running.Done()
			i.Run(ctx)
		}()
	}
}

// WaitForCacheSync waits until every informer has its first complete
// state, or ctx ends (false).
func (f *InformerFactory) WaitForCacheSync(ctx context.Context) bool {
	f.mu.Lock()
	all := make([]*Informer, 0, len(f.informers))
	for _, i := range f.informers {
		all = append(all, i)
	}
	f.mu.Unlock()
	for _, i := range all {
		if !i.Store.WaitForSync(ctx) {
			return false
		}
	}
	return true
}

// Wait waits for the started informers to stop (their context ended).
func (f *InformerFactory) Wait() { f.running.Wait() }
