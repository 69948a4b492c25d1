package loadstats

import (
	"testing"
	"time"
)

// Runs of a workload merge into one: operations and time add up, and the
// quantiles are those of every latency together.
func TestMergedRunsGiveTheRateAndQuantilesOfAll(t *testing.T) {
	var r Result
	r.Merge(Result{Ops: 2, Elapsed: time.Second, Latencies: []time.Duration{3, 9}})
	r.Merge(Result{Ops: 2, Elapsed: time.Second, Latencies: []time.Duration{1, 5}, Errors: 1})
	if r.OpsPerSec() != 2 || r.Errors != 1 {
		t.Fatalf("%+v: %v ops/s", r, r.OpsPerSec())
	}
	if r.Quantile(0) != 1 || r.Quantile(.5) != 3 || r.Quantile(1) != 9 {
		t.Fatalf("quantiles of %v", r.Latencies)
	}
	if (Result{}).OpsPerSec() != 0 || (Result{}).Quantile(.99) != 0 {
		t.Fatal("an empty result has no rate and no latencies")
	}
}
