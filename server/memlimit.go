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

// gcPercent is the collector's GOGC when the environment sets none. Go's
// 100 lets the heap grow by what is live before collecting again; the
// server's live heap at rest is about 2 MB (what its libraries register
// as they start: etcd's and Kubernetes' API types, CEL; kube's schemas and
// the lessons are read on first use), so at 100 it collects every few
// thousand requests and each collection marks all of it. At 200 a gateway put
// costs the server about 6% less CPU (3-11% in four runs) and a range
// 3-4% less, a CAS the same within the noise, for 8-11 MiB more resident
// memory at that size (BENCHMARKS.md, the gateway's section). A large heap grows by twice what is live too, but no further
// than the soft limit setMemoryLimit derives from the budgets.
const gcPercent = 200

// setGCPercent sets the collector's GOGC to gcPercent unless GOGC, Go's
// own setting, is in the environment: that wins, off included.
func setGCPercent() {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	debug.SetGCPercent(gcPercent)
	slog.Debug("collector", "gogc", gcPercent)
}
