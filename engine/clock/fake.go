package clock

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Fake is a Clock that only moves when Step or Set is called. Its timers
// (and so the sleepers on it) fire in the order of their deadlines once
// the clock has reached them.
type Fake struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// created are closed when the next timer is made (TimerCreated): the
	// lesson runner lets time pass while a client or the store waits.
	created []chan struct{}
	// changed is closed and replaced whenever a timer is armed, disarmed
	// or fired, so that WaitForSleepers sees a client reach its next wait.
	changed chan struct{}
}

type fakeTimer struct {
	c  *Fake
	at time.Time
	ch chan time.Time
}

// NewFake returns a Fake reading t.
func NewFake(t time.Time) *Fake { return &Fake{now: t, changed: make(chan struct{})} }

func (c *Fake) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *Fake) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, w := range c.created {
		close(w)
	}
	c.created = nil
	if d <= 0 {
		return Fired(c.now)
	}
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	c.timers = append(c.timers, t)
	c.signalLocked()
	return t
}

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

func (c *Fake) signalLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// Step moves the clock forward by d, firing due timers in time order.
func (c *Fake) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(c.now.Add(d))
}

// Set moves the clock to t, firing due timers in time order.
func (c *Fake) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(t)
}

func (c *Fake) setLocked(t time.Time) {
	c.now = t
	sort.SliceStable(c.timers, func(i, j int) bool { return c.timers[i].at.Before(c.timers[j].at) })
	keep := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(t) {
			keep = append(keep, tm)
		} else {
			tm.ch <- tm.at
		}
	}
	clear(c.timers[len(keep):])
	c.timers = keep
	c.signalLocked()
}

// TimerCreated returns a channel closed when the next timer is made.
func (c *Fake) TimerCreated() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	c.created = append(c.created, ch)
	return ch
}

// Timers is the number of armed timers.
func (c *Fake) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Sleepers reports the armed timers (sleeps in progress among them) by
// the time left, shortest first.
func (c *Fake) Sleepers() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Duration, 0, len(c.timers))
	for _, t := range c.timers {
		out = append(out, t.at.Sub(c.now))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// WaitForSleepers blocks until at least n timers are armed or ctx ends;
// it reports whether they are.
func (c *Fake) WaitForSleepers(ctx context.Context, n int) bool {
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
