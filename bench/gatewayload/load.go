// Command gatewayload drives rvplay and a real etcd side by side with the
// same Go load generator, through etcd's v3 JSON gateway (-api gateway) or
// its gRPC API with the official client, clientv3 (-api grpc): blind puts,
// read-modify-write (range, then a txn that puts only if mod_revision is
// unchanged), single-key ranges, and watchers fed by a paced writer. It
// prints ops/s, p50/p99 latency and the ratio rvplay/etcd per workload.
//
// rvplay runs as the server binary on SQLite (durable: a write is
// acknowledged after its transaction commits); etcd runs with its default
// fsync: Debian's etcd-server (3.4) for the gateway, etcd 3.6 built from
// the module proxy (internal/refbuild, the differential tests' etcd) for
// gRPC, or the binary -etcd names. Both get fresh data directories.
//
//	go run ./bench/gatewayload -duration 5s
//	go run ./bench/gatewayload -api grpc -duration 5s
//	go test ./bench/gatewayload -bench 'GatewayVsEtcd|GRPCVsEtcd' -benchtime 1x
//
// It is a benchmark tool: product code must not import it.
package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rvplay/rvplay/internal/loadstats"
)

// Config is one run's workload shape, the same for both systems.
type Config struct {
	Duration   time.Duration // per workload and system
	Clients    int           // concurrent clients for put, cas, range
	Keys       int           // key space of put, cas, range
	ValueBytes int
	Watchers   int     // watch workload: concurrent watch streams
	WriteRate  float64 // watch workload: writes per second
}

// DefaultConfig is the workload: 100 watchers at 200 writes/s.
func DefaultConfig() Config {
	return Config{Duration: 5 * time.Second, Clients: 16, Keys: 1000, ValueBytes: 64, Watchers: 100, WriteRate: 200}
}

// Result is one workload on one system.
type Result = loadstats.Result

func benchKey(i int) []byte { return []byte(fmt.Sprintf("/bench/key/%06d", i)) }

func value(n int, seed uint64) []byte {
	v := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range v {
		v[i] = 'a' + byte(r.IntN(26))
	}
	return v
}

// Client is one system's etcd v3 API as the workloads use it: its JSON
// gateway (Gateway) or its gRPC API through clientv3 (GRPC).
type Client interface {
	Name() string
	Endpoint() string
	Put(ctx context.Context, key, value []byte) error
	// Get is a linearizable single-key range: the key's mod_revision, 0
	// when it is absent.
	Get(ctx context.Context, key []byte) (int64, error)
	// PutIfUnchanged is kube-apiserver's update: a txn that puts value if
	// key's mod_revision is still modRev, else reads key. It reports
	// whether the put happened.
	PutIfUnchanged(ctx context.Context, key []byte, modRev int64, value []byte) (bool, error)
	// PutAll puts every key in one txn.
	PutAll(ctx context.Context, keys [][]byte, value []byte) error
	// Watch watches the keys under prefix on a stream of its own until ctx
	// ends: created is called once, when the watch is created or could not
	// be, then event with every event's value.
	Watch(ctx context.Context, prefix []byte, created func(error), event func(value []byte))
	Close() error
}

func prefixEnd(prefix []byte) []byte {
	end := append([]byte(nil), prefix...)
	end[len(end)-1]++
	return end
}

// Prefill writes every key once so that ranges and CAS find them.
func Prefill(ctx context.Context, c Client, cfg Config) error {
	v := value(cfg.ValueBytes, 1)
	const batch = 100
	for i := 0; i < cfg.Keys; i += batch {
		var keys [][]byte
		for j := i; j < min(i+batch, cfg.Keys); j++ {
			keys = append(keys, benchKey(j))
		}
		if err := c.PutAll(ctx, keys, v); err != nil {
			return err
		}
	}
	return nil
}

// closedLoop runs cfg.Clients clients, each issuing op back to back for
// cfg.Duration, and measures every op.
func closedLoop(ctx context.Context, cfg Config, op func(ctx context.Context, r *rand.Rand) error) Result {
	ctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var mu sync.Mutex
	var all []time.Duration
	var errs atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	start := time.Now()
	for c := 0; c < cfg.Clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 42))
			var lat []time.Duration
			for ctx.Err() == nil {
				t0 := time.Now()
				err := op(ctx, r)
				if err != nil {
					if ctx.Err() != nil {
						break
					}
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err)
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(all)
	res := Result{Ops: len(all), Elapsed: elapsed, Latencies: all, Errors: int(errs.Load())}
	if e := firstErr.Load(); e != nil {
		fmt.Printf("  %d errors, first: %v\n", res.Errors, e)
	}
	return res
}

// Put: blind puts of random keys.
func Put(ctx context.Context, c Client, cfg Config) Result {
	v := value(cfg.ValueBytes, 2)
	return closedLoop(ctx, cfg, func(ctx context.Context, r *rand.Rand) error {
		return c.Put(ctx, benchKey(r.IntN(cfg.Keys)), v)
	})
}

// Range: single-key linearizable ranges of random keys.
func Range(ctx context.Context, c Client, cfg Config) Result {
	return closedLoop(ctx, cfg, func(ctx context.Context, r *rand.Rand) error {
		rev, err := c.Get(ctx, benchKey(r.IntN(cfg.Keys)))
		if err == nil && rev == 0 {
			err = errors.New("range: key missing")
		}
		return err
	})
}

// CAS: read-modify-write as kube-apiserver updates an object: range the
// key, then a txn that puts only if its mod_revision is unchanged (else
// reads it); a lost race retries. One op = one successful update.
func CAS(ctx context.Context, c Client, cfg Config) Result {
	v := value(cfg.ValueBytes, 3)
	return closedLoop(ctx, cfg, func(ctx context.Context, r *rand.Rand) error {
		k := benchKey(r.IntN(cfg.Keys))
		for ctx.Err() == nil {
			rev, err := c.Get(ctx, k)
			if err != nil {
				return err
			}
			if rev == 0 {
				return errors.New("cas: key missing")
			}
			ok, err := c.PutIfUnchanged(ctx, k, rev, v)
			if err != nil || ok {
				return err
			}
		}
		return ctx.Err()
	})
}

// Watch: cfg.Watchers watch streams on one prefix, a writer putting at
// cfg.WriteRate; each value carries the time its put was sent, and every
// delivery to every watcher is measured from then. Ops counts deliveries.
func Watch(ctx context.Context, c Client, cfg Config) (Result, error) {
	prefix := []byte("/bench/watch/")
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	results := make([][]time.Duration, cfg.Watchers)
	var delivered atomic.Int64
	var wg sync.WaitGroup
	ready := make(chan error, cfg.Watchers)
	for i := 0; i < cfg.Watchers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Watch(ctx, prefix, func(err error) { ready <- err }, func(v []byte) {
				now := time.Now()
				sent, err := strconv.ParseInt(string(v), 10, 64)
				if err == nil {
					results[i] = append(results[i], now.Sub(time.Unix(0, sent)))
					delivered.Add(1)
				}
			})
		}()
	}
	for i := 0; i < cfg.Watchers; i++ {
		if err := <-ready; err != nil {
			cancel()
			wg.Wait()
			return Result{}, err
		}
	}

	// Paced writer: one put every 1/rate, on a rotating set of keys.
	// Writes are sent without waiting for the previous one, as independent
	// clients would; the pacing sets the rate.
	interval := time.Duration(float64(time.Second) / cfg.WriteRate)
	start := time.Now()
	var writers sync.WaitGroup
	var written, errs atomic.Int64
	for n := 0; ; n++ {
		// The n-th write is due at start + n*interval; a late writer
		// catches up instead of dropping writes, so the rate holds.
		due := start.Add(time.Duration(n) * interval)
		if due.Sub(start) >= cfg.Duration {
			break
		}
		time.Sleep(time.Until(due))
		k := append(append([]byte(nil), prefix...), []byte(strconv.Itoa(n%100))...)
		v := []byte(strconv.FormatInt(time.Now().UnixNano(), 10))
		writers.Add(1)
		go func() {
			defer writers.Done()
			if err := c.Put(ctx, k, v); err != nil {
				errs.Add(1)
				fmt.Printf("  watch writer: %v\n", err)
				return
			}
			written.Add(1)
		}()
	}
	writers.Wait()
	elapsed := time.Since(start)
	// Wait (bounded) until every watcher has received every write.
	want := written.Load() * int64(cfg.Watchers)
	deadline := time.Now().Add(10 * time.Second)
	for delivered.Load() < want && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	wg.Wait()
	var all []time.Duration
	for _, lat := range results {
		all = append(all, lat...)
	}
	slices.Sort(all)
	missing := int(want) - len(all)
	return Result{Ops: len(all), Elapsed: elapsed, Latencies: all, Errors: int(errs.Load()) + max(missing, 0)}, nil
}
