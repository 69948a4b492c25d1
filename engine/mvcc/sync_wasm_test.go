//go:build wasm

package mvcc

import (
	"runtime"
	"testing"
)

// WebAssembly runs goroutines on one thread: runtime.Gosched runs every
// other runnable goroutine until it blocks, which orders these tests
// without sleeps.

func TestMutexQueuesWaitersAndPanicsOnADoubleUnlock(t *testing.T) {
	var m mutex
	m.Lock()
	done := make(chan int, 2)
	for i := range 2 {
		go func() {
			m.Lock()
			done <- i
			m.Unlock()
		}()
	}
	runtime.Gosched()
	if m.waiting != 2 {
		t.Fatalf("%d goroutines wait for a held mutex, want 2", m.waiting)
	}
	m.Unlock()
	<-done
	<-done
	if m.locked || m.waiting != 0 {
		t.Fatalf("left locked %v, %d waiting", m.locked, m.waiting)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("unlocking an unlocked mutex did not panic")
		}
	}()
	m.Unlock()
}

func TestRWMutexWaitingWriterHoldsOffNewReaders(t *testing.T) {
	var m rwMutex
	var order []string
	done := make(chan bool, 2)
	m.RLock()
	go func() {
		m.Lock()
		order = append(order, "writer")
		m.Unlock()
		done <- true
	}()
	runtime.Gosched()
	if m.writersWaiting != 1 || m.writer {
		t.Fatalf("a writer behind a reader: waiting %d, holding %v", m.writersWaiting, m.writer)
	}
	go func() {
		m.RLock()
		order = append(order, "second reader")
		m.RUnlock()
		done <- true
	}()
	runtime.Gosched()
	if m.readers != 1 || m.waiting != 2 {
		t.Fatalf("a reader behind a waiting writer got in: %d readers, %d waiting", m.readers, m.waiting)
	}
	m.RUnlock()
	<-done
	<-done
	if len(order) != 2 || order[0] != "writer" {
		t.Fatalf("order %v, want the writer first", order)
	}
	if m.readers != 0 || m.writer || m.waiting != 0 {
		t.Fatalf("left %d readers, writer %v, %d waiting", m.readers, m.writer, m.waiting)
	}
}

func TestRWMutexReadersWaitForTheWriterAndShareTheLock(t *testing.T) {
	var m rwMutex
	m.Lock()
	in := make(chan bool)
	out := make(chan bool)
	for range 3 {
		go func() {
			m.RLock()
			in <- true
			<-out
			m.RUnlock()
		}()
	}
	runtime.Gosched()
	if m.readers != 0 || m.waiting != 3 {
		t.Fatalf("readers got past a writer: %d readers, %d waiting", m.readers, m.waiting)
	}
	m.Unlock()
	for range 3 {
		<-in // all three hold the read lock at once
	}
	if m.readers != 3 {
		t.Fatalf("%d readers hold the lock, want 3", m.readers)
	}
	for range 3 {
		out <- true
	}
	m.Lock() // blocks until the last reader leaves
	if m.readers != 0 {
		t.Fatalf("writer got the lock with %d readers in", m.readers)
	}
	m.Unlock()
}

func TestRWMutexExcludesWritersUnderLoad(t *testing.T) {
	var m rwMutex
	shared, writing := 0, false
	done := make(chan bool)
	for g := range 8 {
		go func() {
			for i := range 200 {
				if (g+i)%3 == 0 {
					m.Lock()
					writing = true
					runtime.Gosched() // let the others try while it is held
					shared++
					writing = false
					m.Unlock()
				} else {
					m.RLock()
					if writing {
						t.Error("a reader ran while a writer held the lock")
					}
					runtime.Gosched()
					m.RUnlock()
				}
			}
			done <- true
		}()
	}
	for range 8 {
		<-done
	}
	want := 0
	for g := range 8 {
		for i := range 200 {
			if (g+i)%3 == 0 {
				want++
			}
		}
	}
	if shared != want {
		t.Fatalf("%d writes counted, want %d", shared, want)
	}
}
