package client

import "context"

// Informer is a Reflector and the Store it fills: the local, eventually
// consistent copy of one resource that controllers read instead of the
// API.
type Informer struct {
	Store     *Store
	Reflector *Reflector
}

// NewInformer returns an informer for rc (list+watch mode; set
// Reflector.WatchList for watch-list).
func NewInformer(rc ResourceClient) *Informer {
	s := NewStore()
	return &Informer{Store: s, Reflector: NewReflector(rc, s)}
}

// AddHandler registers event handlers on the store.
func (i *Informer) AddHandler(h Handler) { i.Store.AddHandler(h) }

// Run lists and watches until ctx ends.
func (i *Informer) Run(ctx context.Context) { i.Reflector.Run(ctx) }

// HasSynced reports whether the first complete state has arrived.
func (i *Informer) HasSynced() bool { return i.Store.HasSynced() }
