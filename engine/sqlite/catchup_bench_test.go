//go:build !js

package sqlite

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// BenchmarkCatchUpMemory is issue 10's scenario: 20 watchers of the whole
// keyspace from revision 1 over 20 MB of history (20,000 puts of 1 KiB),
// read in turns, one response per watcher at a time, as 20 clients of one
// server would. It reports the peak of the heap in use above what it was
// before the watchers started (sampled after every response), and the
// goroutines the watchers added.
func BenchmarkCatchUpMemory(b *testing.B) {
	const watchers, puts, size = 20, 20_000, 1024
	be := session(b, openBench(b, SyncNormal), "bench")
	s, err := mvcc.Open(be, mvcc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	value := make([]byte, size)
	for i := 0; i < puts; i += 100 {
		ops := make([]mvcc.RequestOp, 100)
		for j := range ops {
			ops[j] = mvcc.RequestOp{Put: &mvcc.PutRequest{Key: fmt.Appendf(nil, "/registry/k/%04d", (i+j)%1000), Value: value}}
		}
		if _, err := s.Txn(ctx, &mvcc.TxnRequest{Success: ops}); err != nil {
			b.Fatal(err)
		}
	}
	last := s.Rev()
	var peak, added uint64
	var goroutines int
	b.ResetTimer()
	for range b.N {
		runtime.GC()
		base := heapInUse()
		g0 := runtime.NumGoroutine()
		ws := make([]*mvcc.Watcher, watchers)
		for i := range ws {
			if ws[i], err = s.Watch(ctx, &mvcc.WatchRequest{Key: []byte{0}, RangeEnd: []byte{0}, StartRevision: 1}); err != nil {
				b.Fatal(err)
			}
		}
		goroutines = runtime.NumGoroutine() - g0
		reached := make([]int64, watchers)
		for done := 0; done < watchers; {
			for i, w := range ws {
				if reached[i] == last {
					continue
				}
				resp, err := w.Next(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if n := len(resp.Events); n > 0 {
					reached[i] = resp.Events[n-1].Kv.ModRevision
				}
				if reached[i] == last {
					done++
				}
				if h := heapInUse(); h > base && h-base > added {
					added = h - base
				}
			}
		}
		for _, w := range ws {
			w.Cancel()
		}
		peak = max(peak, added)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(goroutines)/watchers, "goroutines/watcher")
}

var ctx = context.Background()

func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}
