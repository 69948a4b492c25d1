package client

import (
	"context"
	"errors"
	"math/rand"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

// Backoff describes retry timing the way apimachinery's wait.Backoff does:
// Steps attempts, the first wait Duration, each next wait multiplied by
// Factor (capped at Cap if set), each wait stretched by up to Jitter×itself.
type Backoff struct {
	Duration time.Duration
	Factor   float64
	Jitter   float64
	Steps    int
	Cap      time.Duration
}

// DefaultRetry is client-go's retry.DefaultRetry: for conflicts that a
// quick re-read and re-apply will resolve. Five attempts, 10ms apart.
var DefaultRetry = Backoff{Steps: 5, Duration: 10 * time.Millisecond, Factor: 1.0, Jitter: 0.1}

// DefaultBackoff is client-go's retry.DefaultBackoff: four attempts,
// waiting 10ms, 50ms, 250ms between them.
var DefaultBackoff = Backoff{Steps: 4, Duration: 10 * time.Millisecond, Factor: 5.0, Jitter: 0.1}

// Step returns the next wait and advances b.
func (b *Backoff) Step(rnd func() float64) time.Duration {
	if b.Steps < 1 {
		return jitter(b.Duration, b.Jitter, rnd)
	}
	b.Steps--
	d := b.Duration
	if b.Factor != 0 {
		b.Duration = time.Duration(float64(b.Duration) * b.Factor)
		if b.Cap > 0 && b.Duration > b.Cap {
			b.Duration = b.Cap
			b.Steps = 0
		}
	}
	return jitter(d, b.Jitter, rnd)
}

func jitter(d time.Duration, maxFactor float64, rnd func() float64) time.Duration {
	if maxFactor <= 0 {
		return d
	}
	return d + time.Duration(rnd()*maxFactor*float64(d))
}

// Retrier runs retry loops with an injectable clock and random source, so
// lessons can show the waits and tests are deterministic.
type Retrier struct {
	// Clock times the waits between attempts. Default: the wall clock.
	Clock clock.Clock
	// Rand returns a number in [0,1) for jitter. Default: math/rand.
	Rand func() float64
	// OnAttempt, if set, is told about every attempt: its number (from 1),
	// its error, and the wait before the next attempt (0 if none follows).
	OnAttempt func(attempt int, err error, wait time.Duration)
}

var defaultRand = struct {
	sync.Mutex
	r *rand.Rand
}{r: rand.New(rand.NewSource(time.Now().UnixNano()))}

func randFloat() float64 {
	defaultRand.Lock()
	defer defaultRand.Unlock()
	return defaultRand.r.Float64()
}

// ErrRetriesExhausted is returned by OnError when fn never succeeded and
// no retriable error was recorded (Steps < 1).
var ErrRetriesExhausted = errors.New("timed out waiting for the condition")

// OnError runs fn up to backoff.Steps times while it returns an error
// that retriable accepts, waiting backoff.Step() between attempts. It
// returns nil on success, the first non-retriable error at once, or the
// last retriable error when the attempts run out.
func (r Retrier) OnError(ctx context.Context, backoff Backoff, retriable func(error) bool, fn func() error) error {
	clk, rnd := r.Clock, r.Rand
	if clk == nil {
		clk = clock.Real{}
	}
	if rnd == nil {
		rnd = randFloat
	}
	var last error
	for attempt := 1; backoff.Steps > 0; attempt++ {
		err := fn()
		if err == nil {
			if r.OnAttempt != nil {
				r.OnAttempt(attempt, nil, 0)
			}
			return nil
		}
		if !retriable(err) {
			if r.OnAttempt != nil {
				r.OnAttempt(attempt, err, 0)
			}
			return err
		}
		last = err
		if backoff.Steps == 1 {
			if r.OnAttempt != nil {
				r.OnAttempt(attempt, err, 0)
			}
			break
		}
		wait := backoff.Step(rnd)
		if r.OnAttempt != nil {
			r.OnAttempt(attempt, err, wait)
		}
		if err := clock.Sleep(ctx, clk, wait); err != nil {
			return last
		}
	}
	if last == nil {
		return ErrRetriesExhausted
	}
	return last
}

// RetryOnConflict runs fn again while it fails with a 409 Conflict: fn
// should re-read the object, re-apply its change and update it.
func (r Retrier) RetryOnConflict(ctx context.Context, backoff Backoff, fn func() error) error {
	return r.OnError(ctx, backoff, IsConflict, fn)
}

// OnError is Retrier{}.OnError with real sleeps and jitter.
func OnError(backoff Backoff, retriable func(error) bool, fn func() error) error {
	return Retrier{}.OnError(context.Background(), backoff, retriable, fn)
}

// RetryOnConflict is client-go's retry.RetryOnConflict: fn runs up to
// backoff.Steps times while it returns a Conflict error.
func RetryOnConflict(backoff Backoff, fn func() error) error {
	return Retrier{}.RetryOnConflict(context.Background(), backoff, fn)
}
