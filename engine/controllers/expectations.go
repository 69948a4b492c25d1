package controllers

import (
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

// expectations is kube's UIDTrackingControllerExpectations: what a
// controller's own creates and deletes it has not yet seen come back
// through its informer. Until they have (or ExpectationsTimeout passed), it
// does not create or delete again, so a slow informer cannot make it
// create twice.
type expectations struct {
	clock clock.Clock

	mu    sync.Mutex
	items map[string]*expected
}

type expected struct {
	adds    int64
	deletes map[string]bool // pod keys
	at      time.Time
}

// ExpectationsTimeout is kube-controller-manager's: expectations older
// than this are considered met, in case a watch event was lost.
const ExpectationsTimeout = 5 * time.Minute

func newExpectations(clk clock.Clock) *expectations {
	return &expectations{clock: clk, items: map[string]*expected{}}
}

func (e *expectations) satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.items[key]
	if !ok {
		return true
	}
	return x.adds <= 0 && len(x.deletes) == 0 || e.clock.Now().Sub(x.at) > ExpectationsTimeout
}

func (e *expectations) expectCreations(key string, n int) {
	e.mu.Lock()
	e.items[key] = &expected{adds: int64(n), at: e.clock.Now()}
	e.mu.Unlock()
}

func (e *expectations) expectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	x := &expected{deletes: map[string]bool{}, at: e.clock.Now()}
	for _, k := range podKeys {
		x.deletes[k] = true
	}
	e.items[key] = x
	e.mu.Unlock()
}

func (e *expectations) creationObserved(key string) {
	e.mu.Lock()
	if x, ok := e.items[key]; ok {
		x.adds--
	}
	e.mu.Unlock()
}

func (e *expectations) deletionObserved(key, podKey string) {
	e.mu.Lock()
	if x, ok := e.items[key]; ok {
		delete(x.deletes, podKey)
	}
	e.mu.Unlock()
}

func (e *expectations) forget(key string) {
	e.mu.Lock()
	delete(e.items, key)
	e.mu.Unlock()
}
