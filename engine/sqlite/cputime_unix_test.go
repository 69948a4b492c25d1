//go:build unix

package sqlite

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user + system) this process has used so far.
// Benchmarks report it beside wall time because on a shared machine wall
// time mostly measures the neighbours.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
