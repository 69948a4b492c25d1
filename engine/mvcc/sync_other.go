//go:build !wasm

package mvcc

import (
	"sync"
	"sync/atomic"
)

// The store's own synchronisation types: the standard ones, except in
// WebAssembly (sync_wasm.go says why).
type (
	mutex     = sync.Mutex
	rwMutex   = sync.RWMutex
	atomicRev = atomic.Int64
)

type atomicPointer[T any] = atomic.Pointer[T]
