package clock

import (
	"context"
	"testing"
	"time"
)

func TestAFakeWakesSleepersInTheOrderOfTheirDeadlines(t *testing.T) {
	c := NewFake(time.Unix(0, 0))
	woke := make(chan time.Duration, 2)
	for _, d := range []time.Duration{50 * time.Millisecond, 10 * time.Millisecond} {
		go func(d time.Duration) {
			if Sleep(context.Background(), c, d) == nil {
				woke <- d
			}
		}(d)
	}
	c.WaitForSleepers(context.Background(), 2)
	if s := c.Sleepers(); len(s) != 2 || s[0] != 10*time.Millisecond {
		t.Fatalf("sleepers %v", s)
	}
	c.Step(10 * time.Millisecond)
	if d := <-woke; d != 10*time.Millisecond {
		t.Fatalf("woke %v first", d)
	}
	if s := c.Sleepers(); len(s) != 1 || s[0] != 40*time.Millisecond {
		t.Fatalf("left %v", s)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, c, time.Hour); err == nil {
		t.Fatal("a canceled sleep returns the context's error")
	}
	c.Step(40 * time.Millisecond)
	<-woke
}

func TestAFakeFiresDueTimersInTimeOrderWithTheirDeadlines(t *testing.T) {
	t0 := time.Unix(100, 0)
	c := NewFake(t0)
	late, early := c.NewTimer(3*time.Second), c.NewTimer(time.Second)
	c.Set(t0.Add(2 * time.Second))
	if at := <-early.C(); !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("fired at %v, want its deadline", at)
	}
	select {
	case <-late.C():
		t.Fatal("a timer fired before its deadline")
	default:
	}
	if !late.Stop() || late.Stop() || early.Stop() {
		t.Fatal("Stop reports true once, for an armed timer only")
	}
	c.Step(time.Hour)
	select {
	case <-late.C():
		t.Fatal("a stopped timer fired")
	default:
	}
	if c.Timers() != 0 {
		t.Fatalf("%d timers armed", c.Timers())
	}
}

func TestATimerOfNoDurationFiresAtOnceAndIsStillSeenCreated(t *testing.T) {
	c := NewFake(time.Unix(0, 0))
	created := c.TimerCreated()
	tm := c.NewTimer(0)
	<-created
	if at := <-tm.C(); !at.Equal(time.Unix(0, 0)) || c.Timers() != 0 {
		t.Fatalf("fired at %v with %d armed", at, c.Timers())
	}
	if err := Sleep(context.Background(), c, 0); err != nil {
		t.Fatal(err)
	}
}
