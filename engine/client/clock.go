package client

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock is the time source of the clients: the Reflector's backoff and
// "very short watch" rule, the Retrier's waits, the controller's requeues.
// The real one keeps client-go's timings; a FakeClock lets tests and
// lessons drive them by hand.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// TimerClock is a Clock with timers, which arm when they are made: a
// client that schedules work for later on one (the controller's requeues)
// has armed its timer before it goes on, so a test that moves a fake clock
// next cannot overtake it. RealClock and FakeClock are TimerClocks.
type TimerClock interface {
	Clock
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time                                   { return time.Now() }
func (RealClock) Sleep(ctx context.Context, d time.Duration) error { return SleepContext(ctx, d) }
func (RealClock) NewTimer(d time.Duration) Timer                   { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

// SleepOn waits d on clock's timer, or until ctx ends: Sleep for a Clock
// that has timers.
func SleepOn(ctx context.Context, clock TimerClock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FakeClock only moves when Advance is called. Timers (and so sleepers)
// fire, in the order of their deadlines, once the clock has reached them.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// changed is closed and replaced whenever a timer is armed or
	// disarmed, so a test can wait for a client to reach its next wait.
	changed chan struct{}
}

type fakeTimer struct {
	c     *FakeClock
	until time.Time
	ch    chan time.Time
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

func (c *FakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, until: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.ch <- c.now
		return t
	}
	c.timers = append(c.timers, t)
	c.signalLocked()
	return t
}

func (c *FakeClock) Sleep(ctx context.Context, d time.Duration) error { return SleepOn(ctx, c, d) }

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			c.signalLocked()
			return true
		}
	}
	return false
}

func (c *FakeClock) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Advance moves the clock forward by d and fires every timer whose
// deadline it reached.
func (c *FakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].until.Before(c.timers[j].until) })
	keep := c.timers[:0]
	for _, t := range c.timers {
		if !t.until.After(c.now) {
			t.ch <- t.until
		} else {
			keep = append(keep, t)
		}
	}
	c.timers = keep
	c.signalLocked()
	c.mu.Unlock()
}

// Sleepers reports the armed timers (sleeps in progress among them) by
// the time left, shortest first.
func (c *FakeClock) Sleepers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Duration, 0, len(c.timers))
	for _, t := range c.timers {
		out = append(out, t.until.Sub(c.now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// WaitForSleepers blocks until at least n timers are armed or ctx ends;
// it reports whether they are.
func (c *FakeClock) WaitForSleepers(ctx context.Context, n int) bool {
	for {
		c.mu.Lock()
		ok, ch := len(c.timers) >= n, c.changed
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
