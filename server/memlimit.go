package main

import (
	"log/slog"
	"os"
	"runtime/debug"
)

// memoryHeadroom is what the server holds beyond its sessions' indexes and
// the bodies being read: answers being encoded, watch pages, the database
// driver's caches, the collector's own structures.
const memoryHeadroom = 512 << 20

// setMemoryLimit gives Go's collector a soft limit derived from the
// server's own budgets, so that the heap the collector lets grow stays near
// what the budgets admit: by default the collector lets the heap reach
// twice what is live, which under a full --memory-budget put the process at
// 2.2-2.5 times it (test/stress, attack 3). The limit is soft: past it the
// collector works harder (at most half the CPU), nothing fails. GOMEMLIMIT
// in the environment, Go's own setting, wins.
func setMemoryLimit(memoryBudget, bodyMemory int64) {
	if _, set := os.LookupEnv("GOMEMLIMIT"); set || memoryBudget <= 0 {
		return
	}
	limit := memoryBudget + bodyMemory + memoryHeadroom
	debug.SetMemoryLimit(limit)
	slog.Debug("memory limit", "bytes", limit)
}
