package client

import (
	"context"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

// WorkQueue is client-go's rate-limited work queue, as controllers use it:
// a key added while queued is not duplicated, one added while being
// processed is queued again once it is done (so no two workers ever hold
// the same key), AddAfter queues a key later on the queue's clock, and
// AddRateLimited waits longer each time a key fails (5 ms doubling up to
// 1000 s, client-go's DefaultControllerRateLimiter per item) until Forget.
type WorkQueue struct {
	Clock clock.Clock

	mu         sync.Mutex
	order      []string
	dirty      map[string]bool
	processing map[string]bool
	failures   map[string]int
	signal     chan struct{}
	ctx        context.Context
}

// The per-item exponential backoff of client-go's default controller
// rate limiter.
const (
	RateLimitBase = 5 * time.Millisecond
	RateLimitMax  = 1000 * time.Second
)

// NewWorkQueue returns an empty queue whose delays end with ctx.
func NewWorkQueue(ctx context.Context, clk clock.Clock) *WorkQueue {
	if clk == nil {
		clk = clock.Real{}
	}
	return &WorkQueue{Clock: clk, dirty: map[string]bool{}, processing: map[string]bool{},
		failures: map[string]int{}, signal: make(chan struct{}, 1), ctx: ctx}
}

// Add queues key.
func (q *WorkQueue) Add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dirty[key] {
		return
	}
	q.dirty[key] = true
	if q.processing[key] {
		return
	}
	q.order = append(q.order, key)
	q.wake()
}

func (q *WorkQueue) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// AddAfter queues key once d has passed on the queue's clock.
func (q *WorkQueue) AddAfter(key string, d time.Duration) {
	if d <= 0 {
		q.Add(key)
		return
	}
	// The timer is armed before AddAfter returns, so that a test moving a
	// fake clock next cannot overtake it.
	t := q.Clock.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			q.Add(key)
		case <-q.ctx.Done():
		}
	}()
}

// AddRateLimited queues key after its next backoff.
func (q *WorkQueue) AddRateLimited(key string) {
	q.mu.Lock()
	n := q.failures[key]
	q.failures[key] = n + 1
	q.mu.Unlock()
	d := RateLimitBase
	for i := 0; i < n && d < RateLimitMax; i++ {
		d *= 2
	}
	q.AddAfter(key, min(d, RateLimitMax))
}

// Forget resets key's backoff (it was processed successfully).
func (q *WorkQueue) Forget(key string) {
	q.mu.Lock()
	delete(q.failures, key)
	q.mu.Unlock()
}

// Get waits for the next key; ok is false once the queue's context ended.
func (q *WorkQueue) Get() (key string, ok bool) {
	for {
		q.mu.Lock()
		if len(q.order) > 0 {
			key := q.order[0]
			q.order = q.order[1:]
			delete(q.dirty, key)
			q.processing[key] = true
			if len(q.order) > 0 {
				q.wake()
			}
			q.mu.Unlock()
			return key, true
		}
		q.mu.Unlock()
		select {
		case <-q.signal:
		case <-q.ctx.Done():
			return "", false
		}
	}
}

// Done marks key processed; if it was added meanwhile, it is queued
// again.
func (q *WorkQueue) Done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, key)
	if q.dirty[key] {
		q.order = append(q.order, key)
		q.wake()
	}
}

// Len is the number of keys waiting.
func (q *WorkQueue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// Work runs sync for each key until ctx ends: a failure queues the key
// again after its backoff, a success forgets its failures.
func (q *WorkQueue) Work(sync func(key string) error) {
	for {
		key, ok := q.Get()
		if !ok {
			return
		}
		if err := sync(key); err != nil && q.ctx.Err() == nil {
			q.AddRateLimited(key)
		} else {
			q.Forget(key)
		}
		q.Done(key)
	}
}

// Context is the queue's: it ends the controller's work.
func (q *WorkQueue) Context() context.Context { return q.ctx }
