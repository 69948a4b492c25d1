// Package loadstats is what the load commands under bench/ measure of one
// workload on one system (how many operations, in how long, each one's
// latency, how many failed) and the figures they print from it. It is
// benchmark tooling: product code must not import it.
package loadstats

import (
	"slices"
	"time"
)

// Result is one workload on one system.
type Result struct {
	Ops       int
	Elapsed   time.Duration
	Latencies []time.Duration // sorted
	Errors    int
}

// Merge adds o, another run of the same workload on the same system.
func (r *Result) Merge(o Result) {
	r.Ops += o.Ops
	r.Elapsed += o.Elapsed
	r.Errors += o.Errors
	r.Latencies = append(r.Latencies, o.Latencies...)
	slices.Sort(r.Latencies)
}

// OpsPerSec is completed operations per second.
func (r Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// Quantile returns the q-quantile of the latencies (0 when none).
func (r Result) Quantile(q float64) time.Duration {
	if len(r.Latencies) == 0 {
		return 0
	}
	return r.Latencies[int(q*float64(len(r.Latencies)-1))]
}
