//go:build wasm

package mvcc

import "sync"

// Under js/wasm every atomic operation is a call into internal/runtime/atomic,
// which is not inlined there (and sync/atomic adds a second call), and
// sync's mutexes take one to lock and one to unlock: a single-key read
// spent eight calls on its read lock and on loading two revisions, a fifth
// of its time in the browser, and a put about twenty on the mutexes of the
// commit path. WebAssembly runs every goroutine on one thread and switches
// goroutines only where one blocks, so plain loads, stores and counters are
// atomic there as long as no call sits between a check and the change it
// guards; a goroutine that has to wait parks on a sync.Cond.

// atomicRev is a revision that goroutines read and write without a lock.
type atomicRev struct{ v int64 }

func (r *atomicRev) Load() int64   { return r.v }
func (r *atomicRev) Store(v int64) { r.v = v }

// atomicPointer is atomic.Pointer.
type atomicPointer[T any] struct{ p *T }

func (a *atomicPointer[T]) Swap(p *T) *T { old := a.p; a.p = p; return old }

func (a *atomicPointer[T]) CompareAndSwap(old, p *T) bool {
	if a.p != old {
		return false
	}
	a.p = p
	return true
}

// mutex is sync.Mutex: when nobody has to wait, a flag and no call.
type mutex struct {
	locked  bool
	waiting int // goroutines blocked in Lock
	mu      sync.Mutex
	cond    sync.Cond
}

func (m *mutex) Lock() {
	if !m.locked {
		m.locked = true
		return
	}
	m.block()
}

func (m *mutex) Unlock() {
	if !m.locked || m.waiting > 0 {
		m.unlockSlow()
		return
	}
	m.locked = false
}

func (m *mutex) unlockSlow() {
	if !m.locked {
		panic("mvcc: unlock of unlocked mutex")
	}
	m.locked = false
	m.mu.Lock()
	m.cond.Broadcast()
	m.mu.Unlock()
}

// block waits for the lock. The count of waiters goes up before the
// condition is checked, and the goroutine parks without blocking in
// between, so an unlock either is seen by the check or finds the waiter
// to wake.
func (m *mutex) block() {
	m.mu.Lock()
	m.cond.L = &m.mu
	m.waiting++
	for m.locked {
		m.cond.Wait()
	}
	m.waiting--
	m.locked = true
	m.mu.Unlock()
}

// rwMutex is sync.RWMutex: when nobody has to wait, a counter and no call.
// As with sync.RWMutex, a waiting writer holds off new readers, and a read
// lock must not be taken recursively.
type rwMutex struct {
	readers        int  // goroutines holding the read lock
	writer         bool // a goroutine holds the write lock
	waiting        int  // goroutines blocked in RLock or Lock
	writersWaiting int  // of which in Lock
	mu             sync.Mutex
	cond           sync.Cond
}

func (m *rwMutex) RLock() {
	if !m.writer && m.writersWaiting == 0 {
		m.readers++
		return
	}
	m.block(false)
}

func (m *rwMutex) RUnlock() {
	m.readers--
	if m.readers == 0 && m.waiting > 0 {
		m.wake()
	}
}

func (m *rwMutex) Lock() {
	if !m.writer && m.readers == 0 {
		m.writer = true
		return
	}
	m.block(true)
}

func (m *rwMutex) Unlock() {
	if !m.writer {
		panic("mvcc: unlock of unlocked rwMutex")
	}
	m.writer = false
	if m.waiting > 0 {
		m.wake()
	}
}

// block waits for the lock, as mutex.block does.
func (m *rwMutex) block(write bool) {
	m.mu.Lock()
	m.cond.L = &m.mu
	m.waiting++
	if write {
		m.writersWaiting++
		for m.writer || m.readers > 0 {
			m.cond.Wait()
		}
		m.writersWaiting--
		m.writer = true
	} else {
		for m.writer || m.writersWaiting > 0 {
			m.cond.Wait()
		}
		m.readers++
	}
	m.waiting--
	m.mu.Unlock()
}

func (m *rwMutex) wake() {
	m.mu.Lock()
	m.cond.Broadcast()
	m.mu.Unlock()
}
