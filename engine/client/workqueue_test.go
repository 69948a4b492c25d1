package client

import (
	"context"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

func TestWorkQueueDeduplicatesAndRequeuesKeysAddedWhileProcessing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	q := NewWorkQueue(ctx, nil)
	q.Add("a")
	q.Add("b")
	q.Add("a")
	if k, _ := q.Get(); k != "a" {
		t.Fatalf("got %s", k)
	}
	q.Add("a") // while processing: must come back after Done
	if k, _ := q.Get(); k != "b" {
		t.Fatalf("got %s", k)
	}
	q.Done("a")
	q.Done("b")
	if k, _ := q.Get(); k != "a" {
		t.Fatalf("got %s", k)
	}
	q.Done("a")
	cancel()
	if _, ok := q.Get(); ok {
		t.Fatal("a queue whose context ended returned a key")
	}
}

// A key that keeps failing waits 5 ms, then 10, 20, ... (client-go's
// per-item exponential limiter); Forget starts it over.
func TestWorkQueueBacksOffAFailingKey(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock := clock.NewFake(time.Unix(0, 0))
	q := NewWorkQueue(ctx, clock)
	for _, want := range []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond} {
		q.AddRateLimited("k")
		if s := clock.Sleepers(); len(s) != 1 || s[0] != want {
			t.Fatalf("armed %v, want one of %v", s, want)
		}
		clock.Step(want)
		if k, ok := q.Get(); !ok || k != "k" {
			t.Fatal("the key did not come back")
		}
		q.Done("k")
		clock.WaitForSleepers(ctx, 0)
	}
	q.Forget("k")
	q.AddRateLimited("k")
	if s := clock.Sleepers(); len(s) != 1 || s[0] != RateLimitBase {
		t.Fatalf("after Forget: %v", s)
	}
}
