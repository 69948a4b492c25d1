package main

import (
	"math"
	"runtime/debug"
	"testing"
)

// The collector's soft limit follows the budgets, and Go's own GOMEMLIMIT
// wins over them.
func TestTheCollectorsLimitFollowsTheMemoryBudget(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	setMemoryLimit(1<<30, 64<<20)
	if got, want := debug.SetMemoryLimit(-1), int64(1<<30+64<<20+memoryHeadroom); got != want {
		t.Fatalf("limit %d, want %d", got, want)
	}

	debug.SetMemoryLimit(math.MaxInt64)
	t.Setenv("GOMEMLIMIT", "2GiB")
	setMemoryLimit(1<<30, 64<<20)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("GOMEMLIMIT set, but the server set its own limit %d", got)
	}
}
