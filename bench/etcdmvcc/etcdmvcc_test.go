package etcdmvcc

import (
	"context"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"go.etcd.io/etcd/server/v3/lease"
	"go.etcd.io/etcd/server/v3/storage/backend"
	etcdmvcc "go.etcd.io/etcd/server/v3/storage/mvcc"
	"go.uber.org/zap"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Keys and values are 64 bytes, as in rvplay's engine benchmarks
// (engine/mvcc/mvcctest/bench.go) and etcd's BenchmarkStorePut; ranges read
// from 10,000 keys.
const (
	valueBytes = 64
	rangeKeys  = 10000
)

func benchKey(i int) []byte { return []byte(fmt.Sprintf("%064d", i)) }

// rangeTable holds the keys the range workloads read.
var rangeTable = keyTable(rangeKeys)

// keyTable formats keys 0..n-1 before the clock starts, so that both stores
// are timed without fmt (the same keys as benchKey).
func keyTable(n int) [][]byte {
	t := make([][]byte, n)
	for i := range t {
		t[i] = benchKey(i)
	}
	return t
}

var benchValue = make([]byte, valueBytes)

var ctx = context.Background()

// etcdStore opens etcd's store as its own BenchmarkStorePut does: a bbolt
// backend in a temporary directory with the default batching, and a lessor
// that knows no leases.
func etcdStore(b *testing.B) etcdmvcc.KV {
	cfg := backend.DefaultBackendConfig(zap.NewNop())
	cfg.Path = filepath.Join(b.TempDir(), "db")
	be := backend.New(cfg)
	s := etcdmvcc.NewStore(zap.NewNop(), be, &lease.FakeLessor{}, etcdmvcc.StoreConfig{})
	b.Cleanup(func() {
		s.Close()
		be.Close()
	})
	return s
}

func rvplayStore(b *testing.B) *mvcc.Store {
	s, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// workload is one benchmark written for both stores.
type workload struct {
	name   string
	etcd   func(b *testing.B)
	rvplay func(b *testing.B)
}

var workloads = []workload{
	{
		name: "Put",
		etcd: func(b *testing.B) {
			s := etcdStore(b)
			keys := keyTable(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				s.Put(keys[i], benchValue, lease.NoLease)
			}
		},
		rvplay: func(b *testing.B) {
			s := rvplayStore(b)
			keys := keyTable(b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Put(ctx, &mvcc.PutRequest{Key: keys[i], Value: benchValue}); err != nil {
					b.Fatal(err)
				}
			}
		},
	},
	{
		name: "RangeKey1",
		etcd: func(b *testing.B) {
			s := etcdStore(b)
			fillEtcd(s)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := s.Range(ctx, rangeTable[i%rangeKeys], nil, etcdmvcc.RangeOptions{})
				if err != nil || len(r.KVs) != 1 {
					b.Fatal(err)
				}
			}
		},
		rvplay: func(b *testing.B) {
			s := rvplayStore(b)
			fillRvplay(b, s)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := s.Range(ctx, &mvcc.RangeRequest{Key: rangeTable[i%rangeKeys]})
				if err != nil || len(r.Kvs) != 1 {
					b.Fatal(err)
				}
			}
		},
	},
	{
		name: "RangeKey100",
		etcd: func(b *testing.B) {
			s := etcdStore(b)
			fillEtcd(s)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := (i * 100) % (rangeKeys - 100)
				r, err := s.Range(ctx, rangeTable[start], rangeTable[start+100], etcdmvcc.RangeOptions{})
				if err != nil || len(r.KVs) != 100 {
					b.Fatal(err)
				}
			}
		},
		rvplay: func(b *testing.B) {
			s := rvplayStore(b)
			fillRvplay(b, s)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := (i * 100) % (rangeKeys - 100)
				r, err := s.Range(ctx, &mvcc.RangeRequest{Key: rangeTable[start], RangeEnd: rangeTable[start+100]})
				if err != nil || len(r.Kvs) != 100 {
					b.Fatal(err)
				}
			}
		},
	},
}

// fillEtcd writes the range keys and commits them, as etcd's
// BenchmarkStoreRangeKey benchmarks do before reading.
func fillEtcd(s etcdmvcc.KV) {
	for i := 0; i < rangeKeys; i++ {
		s.Put(benchKey(i), benchValue, lease.NoLease)
	}
	s.Commit()
}

func fillRvplay(b *testing.B, s *mvcc.Store) {
	const batch = 100
	for i := 0; i < rangeKeys; i += batch {
		ops := make([]mvcc.RequestOp, 0, batch)
		for j := i; j < i+batch; j++ {
			ops = append(ops, mvcc.RequestOp{Put: &mvcc.PutRequest{Key: benchKey(j), Value: benchValue}})
		}
		if _, err := s.Txn(ctx, &mvcc.TxnRequest{Success: ops}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEtcdMVCC(b *testing.B) {
	for _, w := range workloads {
		b.Run(w.name, w.etcd)
	}
}

func BenchmarkRvplayMemory(b *testing.B) {
	for _, w := range workloads {
		b.Run(w.name, w.rvplay)
	}
}

var sideBySide = flag.Bool("sidebyside", false, "run TestSideBySide: both stores on every workload, the ratios, and the 2x target asserted")

// speedUpTarget is issue 2's target for the memory backend in process:
// at least 2× etcd's own mvcc store on put and range, so on every workload
// here. It is asserted as stated, with no tolerance below it, for three
// reasons:
//
//   - each store's figure is the best of its runs, and load on the machine
//     only ever adds time to a run, so the minimum is the estimate that
//     load disturbs least; the two stores take turns, so a slow phase of
//     the machine falls on both;
//   - when a workload's ratio is below the target after the first
//     sideBySideRounds, it gets more alternating rounds (up to
//     sideBySideMaxRounds) before the test fails: one unlucky phase on a
//     shared 2-core machine cannot fail it, a store that really is slower
//     still does, since more rounds only sharpen both minimums;
//   - the margin is wide enough: Put, the closest workload, measured
//     2.56–3.04× in three quiet runs and 2.65× at a load average of 10 on
//     2 cores (BENCHMARKS.md); ranges are 15× and more.
//
// A ratio below 1× (rvplay slower than etcd) fails the same way, with its
// own message.
const speedUpTarget = 2.0

// sideBySideRounds alternates the two stores this many times per workload
// and keeps each one's best time, so that background load on the machine
// during one run does not decide the ratio; sideBySideMaxRounds bounds the
// extra rounds of a workload below target.
const (
	sideBySideRounds    = 3
	sideBySideMaxRounds = 9
)

// TestSideBySide runs every workload on both stores, prints ns/op and the
// speed-up of rvplay's memory backend over etcd's mvcc, and fails when a
// speed-up is below speedUpTarget. It runs in `task bench` only (it takes
// about 40 s on an idle machine).
func TestSideBySide(t *testing.T) {
	if !*sideBySide {
		t.Skip("run with -sidebyside")
	}
	t.Logf("%-12s %14s %14s %10s %7s", "workload", "etcd ns/op", "rvplay ns/op", "speed-up", "rounds")
	for _, w := range workloads {
		en, rn := math.Inf(1), math.Inf(1)
		rounds := 0
		for rounds < sideBySideRounds || (en/rn < speedUpTarget && rounds < sideBySideMaxRounds) {
			e := testing.Benchmark(w.etcd)
			r := testing.Benchmark(w.rvplay)
			en = math.Min(en, float64(e.T.Nanoseconds())/float64(e.N))
			rn = math.Min(rn, float64(r.T.Nanoseconds())/float64(r.N))
			rounds++
		}
		speedUp := en / rn
		t.Logf("%-12s %14.0f %14.0f %9.2fx %7d", w.name, en, rn, speedUp, rounds)
		switch {
		case speedUp < 1:
			t.Errorf("%s: rvplay's memory backend is slower than etcd's mvcc store (%.2fx, best of %d alternating runs)", w.name, speedUp, rounds)
		case speedUp < speedUpTarget:
			t.Errorf("%s: rvplay's memory backend is %.2fx etcd's mvcc store, below the %.0fx target (best of %d alternating runs)", w.name, speedUp, speedUpTarget, rounds)
		}
	}
}
