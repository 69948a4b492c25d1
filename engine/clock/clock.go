// Package clock is the one time source of the engine: the store's lease
// expiry, the Kubernetes registry's timestamps, bookmarks and watch
// timeouts, and the clients' backoffs, "very short watch" rule and
// requeues all read a Clock and wait on its Timers.
//
// One interface and one fake matter because a session's parts share one
// time: the lesson runner and the lab's manual clock move the store's and
// the clients' time together with one Fake, so a lease expires, a watch
// times out and a reflector backs off at the same instant of the lesson.
// Two fakes could only be kept in step by hand, and a test driving one
// would silently leave the other behind. The package imports nothing of
// rvplay, so every layer may use it.
package clock

import (
	"context"
	"time"
)

// Clock tells the time and arms timers.
type Clock interface {
	Now() time.Time
	// NewTimer arms a one-shot timer firing once d has passed; d <= 0
	// fires at once. The timer is armed when NewTimer returns, so a
	// test that moves a Fake next cannot overtake it.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer of a Clock.
type Timer interface {
	// C receives the time the timer fired at, once.
	C() <-chan time.Time
	// Stop disarms the timer; it reports whether the timer was armed.
	Stop() bool
}

// Real is the wall clock.
type Real struct{}

func (Real) Now() time.Time                 { return time.Now() }
func (Real) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (t realTimer) C() <-chan time.Time { return t.t.C }
func (t realTimer) Stop() bool          { return t.t.Stop() }

// Sleep waits d on c's timer, or until ctx ends (then it returns
// ctx.Err()); d <= 0 returns at once with ctx.Err().
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Fired returns a Timer that has already fired at t: the timer of a clock
// whose waits end at once (a test's reflector that must not back off).
func Fired(t time.Time) Timer {
	ch := make(chan time.Time, 1)
	ch <- t
	return firedTimer(ch)
}

type firedTimer chan time.Time

func (t firedTimer) C() <-chan time.Time { return t }
func (t firedTimer) Stop() bool          { return false }
