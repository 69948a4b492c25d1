package client

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock is the time source of the clients: the Reflector's backoff and
// "very short watch" rule, the Retrier's waits, the controller's requeue.
// The real one keeps client-go's timings; a FakeClock lets tests and
// lessons drive them by hand.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time                                   { return time.Now() }
func (RealClock) Sleep(ctx context.Context, d time.Duration) error { return SleepContext(ctx, d) }

// FakeClock only moves when Advance is called. Sleepers wake, in the order
// of their deadlines, once the clock has reached them.
type FakeClock struct {
	mu       sync.Mutex
	now      time.Time
	sleepers []*fakeSleeper
	// changed is closed and replaced whenever a sleeper starts or ends, so
	// a test can wait for a client to reach its next wait.
	changed chan struct{}
}

type fakeSleeper struct {
	until time.Time
	wake  chan struct{}
}

// NewFakeClock returns a FakeClock reading t.
func NewFakeClock(t time.Time) *FakeClock {
	return &FakeClock{now: t, changed: make(chan struct{})}
}

func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *FakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	c.mu.Lock()
	s := &fakeSleeper{until: c.now.Add(d), wake: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	c.signalLocked()
	c.mu.Unlock()
	select {
	case <-s.wake:
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		c.removeLocked(s)
		c.signalLocked()
		c.mu.Unlock()
		return ctx.Err()
	}
}

func (c *FakeClock) removeLocked(s *fakeSleeper) {
	for i, x := range c.sleepers {
		if x == s {
			c.sleepers = append(c.sleepers[:i], c.sleepers[i+1:]...)
			return
		}
	}
}

func (c *FakeClock) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Advance moves the clock forward by d and wakes every sleeper whose
// deadline it reached.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	sort.SliceStable(c.sleepers, func(i, j int) bool { return c.sleepers[i].until.Before(c.sleepers[j].until) })
	keep := c.sleepers[:0]
	for _, s := range c.sleepers {
		if !s.until.After(c.now) {
			close(s.wake)
		} else {
			keep = append(keep, s)
		}
	}
	c.sleepers = keep
	c.signalLocked()
	c.mu.Unlock()
}

// Sleepers reports the waits in progress, shortest first.
func (c *FakeClock) Sleepers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Duration, 0, len(c.sleepers))
	for _, s := range c.sleepers {
		out = append(out, s.until.Sub(c.now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// WaitForSleepers blocks until at least n waits are in progress or ctx
// ends; it reports whether they are.
func (c *FakeClock) WaitForSleepers(ctx context.Context, n int) bool {
	for {
		c.mu.Lock()
		ok, ch := len(c.sleepers) >= n, c.changed
		c.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}
