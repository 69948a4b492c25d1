package main

// The engine's benchmark operations (the hot paths of
// engine/mvcc/mvcctest's Bench: Put, TxnCompareAndSwap, RangeKey1,
// RangeKey100, WatchFanOut100) outside the testing package, so that the
// very same code can be timed natively and in WebAssembly (Node and
// Chromium) and the two throughputs compared round by round. They depend
// only on engine/mvcc; set-up is excluded from the timings.

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Op is one benchmark operation and the number of iterations a round runs
// (the same natively and in wasm, so both do identical work).
type Op struct {
	Name  string
	Iters int
	run   func(n int) (time.Duration, error)
}

// Ops lists the operations in the order rounds run them.
// Each runs for some 20–50 ms natively: shorter runs made the per-round
// ratios swing several-fold on this shared machine.
var Ops = []Op{
	{"Put", 20000, put},
	{"TxnCompareAndSwap", 20000, txnCAS},
	{"RangeKey1", 200000, rangeKey1},
	{"RangeKey100", 10000, rangeKey100},
	{"WatchFanOut100", 5000, watchFanOut},
}

// Run times op over n iterations (n <= 0: its default) and returns ns/op.
func Run(name string, n int) (float64, error) {
	for _, op := range Ops {
		if op.Name != name {
			continue
		}
		if n <= 0 {
			n = op.Iters
		}
		d, err := op.run(n)
		if err != nil {
			return 0, err
		}
		return float64(d.Nanoseconds()) / float64(n), nil
	}
	return 0, fmt.Errorf("enginebench: unknown op %q", name)
}

var ctx = context.Background()

// 64-byte keys and values, as engine/mvcc/mvcctest's benchmarks use.
func key(i int) []byte { return fmt.Appendf(nil, "%064d", i) }

// keyTable formats keys 0..n-1 before the clock starts: the ops time the
// engine, not fmt (which alone cost a third of a single-key range, and
// more under WebAssembly).
func keyTable(n int) [][]byte {
	t := make([][]byte, n)
	for i := range t {
		t[i] = key(i)
	}
	return t
}

var value = make([]byte, 64)

func open() (*mvcc.Store, error) { return mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{}) }

// filled opens a store holding keys 0..n-1 (written in txns of 100) and
// returns it with those keys, for the ops that read or update them.
func filled(n int) (*mvcc.Store, [][]byte, error) {
	s, err := open()
	if err != nil {
		return nil, nil, err
	}
	keys := keyTable(n)
	const batch = 100
	for i := 0; i < n; i += batch {
		ops := make([]mvcc.RequestOp, 0, batch)
		for _, k := range keys[i:min(i+batch, n)] {
			ops = append(ops, mvcc.RequestOp{Put: &mvcc.PutRequest{Key: k, Value: value}})
		}
		if _, err := s.Txn(ctx, &mvcc.TxnRequest{Success: ops}); err != nil {
			s.Close()
			return nil, nil, err
		}
	}
	return s, keys, nil
}

// startClock starts an op's clock after a garbage collection, as testing.B
// does before every benchmark run: the collection of the set-up's garbage
// is set-up too. Natively the collector would do it on the idle second
// core while the op runs; in WebAssembly's one thread it would run inside
// the timed loop.
func startClock() time.Time {
	runtime.GC()
	return time.Now()
}

func put(n int) (time.Duration, error) {
	s, err := open()
	if err != nil {
		return 0, err
	}
	defer s.Close()
	keys := keyTable(n)
	start := startClock()
	for i := 0; i < n; i++ {
		if _, err := s.Put(ctx, &mvcc.PutRequest{Key: keys[i], Value: value}); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func txnCAS(n int) (time.Duration, error) {
	const keys = 1000
	s, table, err := filled(keys)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	start := startClock()
	for i := 0; i < n; i++ {
		k := table[i%keys]
		rr, err := s.Range(ctx, &mvcc.RangeRequest{Key: k})
		if err != nil {
			return 0, err
		}
		tr, err := s.Txn(ctx, &mvcc.TxnRequest{
			Compare: []mvcc.Compare{{Target: mvcc.CompareMod, Key: k, ModRevision: rr.Kvs[0].ModRevision}},
			Success: []mvcc.RequestOp{{Put: &mvcc.PutRequest{Key: k, Value: value}}},
			Failure: []mvcc.RequestOp{{Range: &mvcc.RangeRequest{Key: k}}},
		})
		if err != nil {
			return 0, err
		}
		if !tr.Succeeded {
			return 0, fmt.Errorf("enginebench: compare-and-swap on %s failed", k)
		}
	}
	return time.Since(start), nil
}

func rangeKey1(n int) (time.Duration, error) {
	const keys = 10000
	s, table, err := filled(keys)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	start := startClock()
	for i := 0; i < n; i++ {
		if _, err := s.Range(ctx, &mvcc.RangeRequest{Key: table[i%keys]}); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func rangeKey100(n int) (time.Duration, error) {
	const keys = 10000
	s, table, err := filled(keys)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	start := startClock()
	for i := 0; i < n; i++ {
		from := (i * 100) % (keys - 100)
		rr, err := s.Range(ctx, &mvcc.RangeRequest{Key: table[from], RangeEnd: table[from+100]})
		if err != nil {
			return 0, err
		}
		if len(rr.Kvs) != 100 {
			return 0, fmt.Errorf("enginebench: range of 100 returned %d", len(rr.Kvs))
		}
	}
	return time.Since(start), nil
}

func watchFanOut(n int) (time.Duration, error) {
	s, err := open()
	if err != nil {
		return 0, err
	}
	defer s.Close()
	const watchers = 100
	ws := make([]*mvcc.Watcher, watchers)
	for i := range ws {
		w, err := s.Watch(ctx, &mvcc.WatchRequest{Key: []byte("k")})
		if err != nil {
			return 0, err
		}
		ws[i] = w
		defer w.Cancel()
	}
	start := startClock()
	for i := 0; i < n; i++ {
		if _, err := s.Put(ctx, &mvcc.PutRequest{Key: []byte("k"), Value: value}); err != nil {
			return 0, err
		}
		for _, w := range ws {
			if _, err := w.Next(ctx); err != nil {
				return 0, err
			}
		}
	}
	return time.Since(start), nil
}
