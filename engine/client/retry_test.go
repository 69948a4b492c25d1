package client

import (
	"context"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

// recorder is a Retrier whose waits are recorded and end at once, and
// whose jitter source is fixed.
func recorder(rnd float64) (Retrier, *[]time.Duration) {
	c := &waitRecorder{}
	return Retrier{
		Clock: c,
		Rand:  func() float64 { return rnd },
	}, &c.waits
}

// waitRecorder is a clock whose timers fire at once and note what they
// were armed for.
type waitRecorder struct{ waits []time.Duration }

func (c *waitRecorder) Now() time.Time { return time.Time{} }
func (c *waitRecorder) NewTimer(d time.Duration) clock.Timer {
	c.waits = append(c.waits, d)
	return clock.Fired(time.Time{})
}

func TestDefaultRetryTriesFiveTimesTenMillisecondsApart(t *testing.T) {
	r, waits := recorder(0)
	calls := 0
	err := r.RetryOnConflict(context.Background(), DefaultRetry, func() error {
		calls++
		return statusErr(ReasonConflict, 409)
	})
	if !IsConflict(err) {
		t.Fatalf("want the last conflict back, got %v", err)
	}
	if calls != 5 {
		t.Fatalf("calls = %d, want 5", calls)
	}
	want := []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond}
	if len(*waits) != len(want) {
		t.Fatalf("waits = %v, want %v", *waits, want)
	}
	for i := range want {
		if (*waits)[i] != want[i] {
			t.Fatalf("waits = %v, want %v", *waits, want)
		}
	}
}

func TestDefaultBackoffWaitsTenFiftyTwoHundredFiftyWithJitter(t *testing.T) {
	r, waits := recorder(0.5) // half of the 10% jitter: +5%
	calls := 0
	_ = r.RetryOnConflict(context.Background(), DefaultBackoff, func() error {
		calls++
		return statusErr(ReasonConflict, 409)
	})
	if calls != 4 {
		t.Fatalf("calls = %d, want 4", calls)
	}
	want := []time.Duration{10500 * time.Microsecond, 52500 * time.Microsecond, 262500 * time.Microsecond}
	if len(*waits) != 3 || (*waits)[0] != want[0] || (*waits)[1] != want[1] || (*waits)[2] != want[2] {
		t.Fatalf("waits = %v, want %v", *waits, want)
	}
}

func TestRetryOnConflictStopsOnSuccessAndOnOtherErrors(t *testing.T) {
	r, waits := recorder(0)
	calls := 0
	err := r.RetryOnConflict(context.Background(), DefaultRetry, func() error {
		calls++
		if calls < 3 {
			return statusErr(ReasonConflict, 409)
		}
		return nil
	})
	if err != nil || calls != 3 || len(*waits) != 2 {
		t.Fatalf("err=%v calls=%d waits=%v", err, calls, *waits)
	}
	calls = 0
	err = r.RetryOnConflict(context.Background(), DefaultRetry, func() error {
		calls++
		return statusErr(ReasonNotFound, 404)
	})
	if !IsNotFound(err) || calls != 1 {
		t.Fatalf("a NotFound must not be retried: err=%v calls=%d", err, calls)
	}
	calls = 0
	err = r.RetryOnConflict(context.Background(), DefaultRetry, func() error {
		calls++
		return statusErr(ReasonAlreadyExists, 409)
	})
	if !IsAlreadyExists(err) || calls != 1 {
		t.Fatalf("AlreadyExists is not a conflict: err=%v calls=%d", err, calls)
	}
}

func TestBackoffCapEndsTheSteps(t *testing.T) {
	b := Backoff{Duration: time.Second, Factor: 10, Steps: 5, Cap: 5 * time.Second}
	zero := func() float64 { return 0 }
	if d := b.Step(zero); d != time.Second {
		t.Fatalf("first step %v", d)
	}
	if b.Steps != 0 || b.Duration != 5*time.Second {
		t.Fatalf("cap should end steps: %+v", b)
	}
}
