//go:build unix

package kubeapi

import "syscall"

// processCPU is the CPU time (user+system) the process has used, so that
// benchmarks can report a figure that does not depend on how busy the
// machine is.
func processCPU() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
