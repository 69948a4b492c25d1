package mvcc

import (
	"sort"
	"sync"
	"time"
)

// Clock is a session's time source: the store's lease expiry reads it, and
// so does the Kubernetes registry on top (creationTimestamp, managedFields
// times, bookmark intervals, watch timeouts, the watch-cache lag), so that
// tests and lessons drive the whole session's time by hand with one clock.
type Clock interface {
	Now() time.Time
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer of a Clock.
type Timer interface {
	C() <-chan time.Time
	Stop() bool
}

// RealClock is the wall clock.
type RealClock struct{}

func (RealClock) Now() time.Time { return time.Now() }
func (RealClock) NewTimer(d time.Duration) Timer {
	return realTimer{time.NewTimer(d)}
}

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

// FakeClock is a Clock that only moves when Step or Set is called.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
	// waiters are signalled whenever a timer is created, so that a test can
	// wait until a watch has armed its bookmark or timeout timer.
	waiters []chan struct{}
}

// NewFakeClock returns a FakeClock reading t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{now: t} }

func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *FakeClock) NewTimer(d time.Duration) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), ch: make(chan time.Time, 1)}
	if d <= 0 {
		t.fired = true
		t.ch <- c.now
	} else {
		c.timers = append(c.timers, t)
	}
	for _, w := range c.waiters {
		close(w)
	}
	c.waiters = nil
	return t
}

// TimerCreated returns a channel closed when the next timer is created.
func (c *FakeClock) TimerCreated() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan struct{})
	c.waiters = append(c.waiters, ch)
	return ch
}

// Timers is the number of armed timers.
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// Step moves the clock forward by d, firing due timers in time order.
func (c *FakeClock) Step(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t, firing due timers in time order.
func (c *FakeClock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	var due, keep []*fakeTimer
	for _, tm := range c.timers {
		if !tm.at.After(t) {
			due = append(due, tm)
		} else {
			keep = append(keep, tm)
		}
	}
	c.timers = keep
	sort.Slice(due, func(i, j int) bool { return due[i].at.Before(due[j].at) })
	for _, tm := range due {
		tm.fired = true
		tm.ch <- tm.at
	}
	c.mu.Unlock()
}

type fakeTimer struct {
	c     *FakeClock
	at    time.Time
	ch    chan time.Time
	fired bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }
func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	for i, tm := range t.c.timers {
		if tm == t {
			t.c.timers = append(t.c.timers[:i], t.c.timers[i+1:]...)
			return true
		}
	}
	return false
}
