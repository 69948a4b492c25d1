package main

import (
	"math"
	"os"
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

// The collector's GOGC is the server's own unless GOGC in the environment,
// Go's setting, says otherwise.
func TestTheCollectorsPercentYieldsToGOGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	setGCPercent()
	if got := debug.SetGCPercent(100); got != gcPercent {
		t.Fatalf("GOGC unset: percent %d, want the server's %d", got, gcPercent)
	}

	t.Setenv("GOGC", "50")
	setGCPercent()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("GOGC=50 set, but the server set its own percent %d", got)
	}
}
