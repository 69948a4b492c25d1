package main

import "testing"

// BenchmarkEngineWorkload is the lab-shaped engine workload; scripts/test-wasm.sh
// runs it natively and under Node and prints the ratio.
func BenchmarkEngineWorkload(b *testing.B) {
	ops := 0
	for b.Loop() {
		r, err := RunWorkload(1)
		if err != nil {
			b.Fatal(err)
		}
		ops += r.Ops
	}
	b.ReportMetric(float64(ops)/b.Elapsed().Seconds(), "engine-ops/s")
}

func TestEngineWorkloadRuns(t *testing.T) {
	r, err := RunWorkload(2)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * (3*workloadObjects + 11); r.Ops != want {
		t.Fatalf("ops = %d, want %d", r.Ops, want)
	}
}
