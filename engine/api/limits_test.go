package api

import (
	"context"
	"testing"
)

func TestCounterRefusesBeyondItsCapAndTakesBackReleasedUnits(t *testing.T) {
	c := NewCounter(2)
	for i := range 2 {
		if !c.Acquire() {
			t.Fatalf("a counter of 2 refused unit %d", i+1)
		}
	}
	if c.Acquire() {
		t.Fatal("a counter of 2 gave a third unit")
	}
	c.Release()
	if !c.Acquire() {
		t.Fatal("a released unit could not be taken again")
	}
	if c.Held() != 2 {
		t.Fatalf("held %d, want 2", c.Held())
	}
}

func TestAContextWithoutALimiterHasNoCap(t *testing.T) {
	l := WatchLimiter(context.Background())
	for i := 0; i < 1000; i++ {
		if !l.Acquire() {
			t.Fatal("the default limiter refused")
		}
	}
	c := NewCounter(1)
	ctx := WithWatchLimiter(context.Background(), c)
	if WatchLimiter(ctx) != Limiter(c) {
		t.Fatal("the context does not carry the limiter it was given")
	}
}
