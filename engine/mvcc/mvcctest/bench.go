package mvcctest

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// BenchFactory returns a Backend over fresh storage for one benchmark.
type BenchFactory func(b *testing.B) mvcc.Backend

// Keys and values are 64 bytes, as in etcd's own mvcc benchmarks
// (BenchmarkStorePut), so the figures can be set side by side.
const benchBytes = 64

func benchKey(i int) []byte { return []byte(fmt.Sprintf("%064d", i)) }

// keyTable formats keys 0..n-1 before the timer starts: the benchmarks time
// the engine, not fmt (a third of a single-key range otherwise).
func keyTable(n int) [][]byte {
	t := make([][]byte, n)
	for i := range t {
		t[i] = benchKey(i)
	}
	return t
}

var benchValue = make([]byte, benchBytes)

func openBench(b *testing.B, f BenchFactory) *mvcc.Store {
	s, err := mvcc.Open(f(b), mvcc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// Bench runs the engine's benchmarks on a backend: the hot paths of the
// playground (write, compare-and-swap, read, watch delivery, start-up).
func Bench(b *testing.B, f BenchFactory) {
	b.Run("Put", func(b *testing.B) {
		s := openBench(b, f)
		keys := keyTable(b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.Put(ctx, &mvcc.PutRequest{Key: keys[i], Value: benchValue}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("PutParallel", func(b *testing.B) {
		// Concurrent writers: the committer batches them (group commit).
		s := openBench(b, f)
		var n atomic.Int64
		b.SetParallelism(16)
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Put(ctx, &mvcc.PutRequest{Key: benchKey(int(n.Add(1))), Value: benchValue}); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("TxnCompareAndSwap", func(b *testing.B) {
		// Read-modify-write as kube-apiserver updates an object: read the
		// key, then put it only if its mod_revision is unchanged.
		s := openBench(b, f)
		const keys = 1000
		table := keyTable(keys)
		for _, k := range table {
			s.Put(ctx, &mvcc.PutRequest{Key: k, Value: benchValue})
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			k := table[i%keys]
			rr, err := s.Range(ctx, &mvcc.RangeRequest{Key: k})
			if err != nil {
				b.Fatal(err)
			}
			tr, err := s.Txn(ctx, &mvcc.TxnRequest{
				Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Key: k, ModRevision: rr.Kvs[0].ModRevision}},
				Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: k, Value: benchValue}}},
				Failure: []mvcc.RequestOp{{Range: &mvcc.RangeRequest{Key: k}}},
			})
			if err != nil || !tr.Succeeded {
				b.Fatal(err, tr)
			}
		}
	})
	b.Run("RangeKey1", func(b *testing.B) {
		s := openBench(b, f)
		const keys = 10000
		fill(b, s, keys)
		table := keyTable(keys)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.Range(ctx, &mvcc.RangeRequest{Key: table[i%keys]}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("RangeKey100", func(b *testing.B) {
		s := openBench(b, f)
		const keys = 10000
		fill(b, s, keys)
		table := keyTable(keys)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := (i * 100) % (keys - 100)
			rr, err := s.Range(ctx, &mvcc.RangeRequest{Key: table[start], RangeEnd: table[start+100]})
			if err != nil || len(rr.Kvs) != 100 {
				b.Fatal(err)
			}
		}
	})
	b.Run("WatchFanOut100", func(b *testing.B) {
		// One write delivered to 100 watchers of its key.
		s := openBench(b, f)
		const watchers = 100
		ws := make([]*mvcc.Watcher, watchers)
		for i := range ws {
			w, err := s.Watch(ctx, &mvcc.WatchRequest{Key: []byte("k")})
			if err != nil {
				b.Fatal(err)
			}
			ws[i] = w
			defer w.Cancel()
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.Put(ctx, &mvcc.PutRequest{Key: []byte("k"), Value: benchValue}); err != nil {
				b.Fatal(err)
			}
			for _, w := range ws {
				if _, err := w.Next(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("Open100k", func(b *testing.B) {
		// Start-up: rebuilding the key index of 100,000 revisions over
		// 10,000 keys.
		backend := f(b)
		s, err := mvcc.Open(backend, mvcc.Options{})
		if err != nil {
			b.Fatal(err)
		}
		const batch = 100
		for i := 0; i < 100000/batch; i++ {
			ops := make([]mvcc.RequestOp, batch)
			for j := range ops {
				ops[j] = mvcc.RequestOp{Put: &mvcc.PutRequest{Key: benchKey((i*batch + j) % 10000), Value: benchValue}}
			}
			if _, err := s.Txn(ctx, &mvcc.TxnRequest{Success: ops}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := mvcc.Open(backend, mvcc.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func fill(b *testing.B, s *mvcc.Store, keys int) {
	const batch = 100
	for i := 0; i < keys; i += batch {
		ops := make([]mvcc.RequestOp, 0, batch)
		for j := i; j < i+batch && j < keys; j++ {
			ops = append(ops, mvcc.RequestOp{Put: &mvcc.PutRequest{Key: benchKey(j), Value: benchValue}})
		}
		if _, err := s.Txn(ctx, &mvcc.TxnRequest{Success: ops}); err != nil {
			b.Fatal(err)
		}
	}
}
