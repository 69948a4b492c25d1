package client

import (
	"context"
	"sort"
	"sync"
)

// Handler receives a Store's changes (client-go's ResourceEventHandler).
// Any field may be nil. Handlers run synchronously, in order, outside the
// store's lock, so they may read the store.
type Handler struct {
	OnAdd    func(obj Object)
	OnUpdate func(oldObj, newObj Object)
	// OnDelete gets an Object when a watch delivered the delete (the
	// object as deleted, at the delete's resourceVersion) and a
	// DeletedFinalStateUnknown when a relist found the object gone, so a
	// handler type-asserts, as client-go's must.
	OnDelete func(obj any)
}

// DeletedFinalStateUnknown is what OnDelete gets for a delete the store
// learned from a relist (client-go's tools/cache type of that name): the
// watch that would have carried the DELETED event was lost (disconnected,
// then 410), so the object's final state is unknown. Obj is the last state
// the store knew, with its older resourceVersion, not the deleted object.
type DeletedFinalStateUnknown struct {
	Key string
	Obj Object
}

// Store is an informer's local cache: a thread-safe map from
// "namespace/name" to the latest object the Reflector delivered, plus the
// resourceVersion it is synced to.
type Store struct {
	mu       sync.Mutex
	items    map[string]Object
	rv       string
	synced   bool
	syncedCh chan struct{}
	handlers []Handler
	// deliver serialises handler calls so they observe store order.
	deliver sync.Mutex
}

// NewStore returns an empty, unsynced store.
func NewStore() *Store {
	return &Store{items: map[string]Object{}, syncedCh: make(chan struct{})}
}

// AddHandler registers a handler. Objects already in the store are
// announced to it as adds, as a shared informer does for late handlers.
func (s *Store) AddHandler(h Handler) {
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.mu.Lock()
	s.handlers = append(s.handlers, h)
	existing := s.listLocked()
	s.mu.Unlock()
	if h.OnAdd != nil {
		for _, o := range existing {
			h.OnAdd(o)
		}
	}
}

type change struct {
	kind     string // Added, Modified, Deleted
	old, obj Object
	// unknown is set on a delete found by Replace: OnDelete gets it.
	unknown *DeletedFinalStateUnknown
}

func (s *Store) notify(changes []change) {
	s.mu.Lock()
	hs := append([]Handler(nil), s.handlers...)
	s.mu.Unlock()
	for _, c := range changes {
		for _, h := range hs {
			switch {
			case c.kind == Added && h.OnAdd != nil:
				h.OnAdd(c.obj)
			case c.kind == Modified && h.OnUpdate != nil:
				h.OnUpdate(c.old, c.obj)
			case c.kind == Deleted && h.OnDelete != nil && c.unknown != nil:
				h.OnDelete(*c.unknown)
			case c.kind == Deleted && h.OnDelete != nil:
				h.OnDelete(c.obj)
			}
		}
	}
}

// Add stores a new object (or replaces one with the same key).
func (s *Store) Add(obj Object) { s.upsert(obj) }

// Update stores a changed object.
func (s *Store) Update(obj Object) { s.upsert(obj) }

func (s *Store) upsert(obj Object) {
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.mu.Lock()
	key := obj.Key()
	old, had := s.items[key]
	s.items[key] = obj
	s.mu.Unlock()
	if had {
		s.notify([]change{{kind: Modified, old: old, obj: obj}})
	} else {
		s.notify([]change{{kind: Added, obj: obj}})
	}
}

// Delete removes an object by key.
func (s *Store) Delete(obj Object) {
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.mu.Lock()
	key := obj.Key()
	_, had := s.items[key]
	delete(s.items, key)
	s.mu.Unlock()
	if had {
		// Handlers see the final state the watch delivered (its RV is
		// the delete's revision), like client-go.
		s.notify([]change{{kind: Deleted, obj: obj}})
	}
}

// Replace swaps in a complete state read at resourceVersion rv (a list, or
// a watch-list's initial events), announcing the difference as client-go's
// DeltaFIFO.Replace and shared informer do: new objects as added, ones
// whose resourceVersion changed as updated (unchanged ones are not
// announced), then, in key order, the ones that disappeared as deletes
// whose final state is unknown, which it also returns. The first Replace
// marks the store synced.
func (s *Store) Replace(objs []Object, rv string) []DeletedFinalStateUnknown {
	s.deliver.Lock()
	defer s.deliver.Unlock()
	s.mu.Lock()
	next := make(map[string]Object, len(objs))
	for _, o := range objs {
		next[o.Key()] = o
	}
	var changes []change
	for _, k := range sortedKeys(next) {
		o := next[k]
		old, ok := s.items[k]
		switch {
		case !ok:
			changes = append(changes, change{kind: Added, obj: o})
		case old.ResourceVersion() != o.ResourceVersion():
			changes = append(changes, change{kind: Modified, old: old, obj: o})
		}
	}
	var gone []DeletedFinalStateUnknown
	for _, k := range sortedKeys(s.items) {
		if _, ok := next[k]; !ok {
			gone = append(gone, DeletedFinalStateUnknown{Key: k, Obj: s.items[k]})
		}
	}
	for i := range gone {
		changes = append(changes, change{kind: Deleted, obj: gone[i].Obj, unknown: &gone[i]})
	}
	s.items = next
	s.rv = rv
	first := !s.synced
	s.synced = true
	s.mu.Unlock()
	s.notify(changes)
	if first {
		close(s.syncedCh)
	}
	return gone
}

// SetResourceVersion records the revision the store is synced to.
func (s *Store) SetResourceVersion(rv string) {
	s.mu.Lock()
	s.rv = rv
	s.mu.Unlock()
}

// ResourceVersion is the last revision the store was synced to.
func (s *Store) ResourceVersion() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rv
}

// Get returns the object stored under key ("namespace/name").
func (s *Store) Get(key string) (Object, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.items[key]
	return o, ok
}

// List returns the stored objects sorted by key.
func (s *Store) List() []Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listLocked()
}

func (s *Store) listLocked() []Object {
	out := make([]Object, 0, len(s.items))
	for _, k := range sortedKeys(s.items) {
		out = append(out, s.items[k])
	}
	return out
}

// Len is the number of stored objects.
func (s *Store) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.items)
}

// HasSynced reports whether the first complete state has arrived.
func (s *Store) HasSynced() bool {
	select {
	case <-s.syncedCh:
		return true
	default:
		return false
	}
}

// WaitForSync blocks until the store has synced or ctx ends.
func (s *Store) WaitForSync(ctx context.Context) bool {
	select {
	case <-s.syncedCh:
		return true
	case <-ctx.Done():
		return false
	}
}

func sortedKeys(m map[string]Object) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
