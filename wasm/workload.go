package main

import (
	"context"
	"fmt"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// WorkloadResult is what one run of the engine workload measured.
type WorkloadResult struct {
	Ops     int
	Elapsed time.Duration
}

// NsPerOp is the mean cost of one engine call.
func (r WorkloadResult) NsPerOp() float64 {
	if r.Ops == 0 {
		return 0
	}
	return float64(r.Elapsed.Nanoseconds()) / float64(r.Ops)
}

// workloadObjects is the size of the keyspace the workload writes: a lab
// holds tens to hundreds of objects, not millions.
const workloadObjects = 200

// RunWorkload runs, n times over, what the API server asks of the store
// while a lab is in use: create objects, read them, update them with a
// compare-and-swap on mod_revision (the optimistic-concurrency write), list
// the prefix, and compact. It runs the same code natively and in
// WebAssembly so the two throughputs can be set side by side.
func RunWorkload(n int) (WorkloadResult, error) {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		return WorkloadResult{}, err
	}
	defer s.Close()
	ctx := context.Background()
	value := make([]byte, 256)
	for i := range value {
		value[i] = 'a' + byte(i%26)
	}
	keys := make([][]byte, workloadObjects)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "/registry/configmaps/default/cm-%03d", i)
	}
	prefix := []byte("/registry/configmaps/")
	prefixEnd := []byte("/registry/configmaps0")
	ops := 0
	start := time.Now()
	for round := 0; round < n; round++ {
		for _, k := range keys {
			if _, err := s.Put(ctx, &mvcc.PutRequest{Key: k, Value: value}); err != nil {
				return WorkloadResult{}, err
			}
			ops++
		}
		for _, k := range keys {
			rr, err := s.Range(ctx, &mvcc.RangeRequest{Key: k})
			if err != nil {
				return WorkloadResult{}, err
			}
			ops++
			if len(rr.Kvs) != 1 {
				return WorkloadResult{}, fmt.Errorf("workload: %s: %d kvs", k, len(rr.Kvs))
			}
			tr, err := s.Txn(ctx, &mvcc.TxnRequest{
				Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Result: mvcc.CompareEqual, Key: k, ModRevision: rr.Kvs[0].ModRevision}},
				Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: k, Value: value}}},
				Failure: []mvcc.RequestOp{{Range: &mvcc.RangeRequest{Key: k}}},
			})
			if err != nil {
				return WorkloadResult{}, err
			}
			ops++
			if !tr.Succeeded {
				return WorkloadResult{}, fmt.Errorf("workload: %s: compare-and-swap failed", k)
			}
		}
		for i := 0; i < 10; i++ {
			if _, err := s.Range(ctx, &mvcc.RangeRequest{Key: prefix, RangeEnd: prefixEnd}); err != nil {
				return WorkloadResult{}, err
			}
			ops++
		}
		if _, err := s.Compact(ctx, &mvcc.CompactionRequest{Revision: s.Rev() - int64(workloadObjects)}); err != nil {
			return WorkloadResult{}, err
		}
		ops++
	}
	return WorkloadResult{Ops: ops, Elapsed: time.Since(start)}, nil
}
