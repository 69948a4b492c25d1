// Command gatewayload drives rvplay's etcd v3 JSON gateway and a real
// etcd's gateway side by side with the same Go load generator: blind puts,
// read-modify-write (range, then a txn that puts only if mod_revision is
// unchanged), single-key ranges, and watchers fed by a paced writer. It
// prints ops/s, p50/p99 latency and the ratio rvplay/etcd per workload.
//
// rvplay runs as the server binary on SQLite (durable: a write is
// acknowledged after its transaction commits); etcd is Debian's etcd-server
// with its default fsync. Both get fresh data directories.
//
//	go run ./bench/gatewayload -duration 5s
//	go test ./bench/gatewayload -bench GatewayVsEtcd -benchtime 1x
//
// It is a benchmark tool: product code must not import it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
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
type Result struct {
	Ops       int
	Elapsed   time.Duration
	Latencies []time.Duration // sorted
	Errors    int
}

func (r *Result) merge(o Result) {
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
	i := int(q * float64(len(r.Latencies)-1))
	return r.Latencies[i]
}

// Gateway is a client of one etcd v3 JSON gateway.
type Gateway struct {
	Name string
	Base string // e.g. http://127.0.0.1:2379 or http://127.0.0.1:8080/s/bench
	c    *http.Client
}

// NewGateway returns a client with enough idle connections for the load.
func NewGateway(name, base string, conns int) *Gateway {
	tr := &http.Transport{MaxIdleConns: conns * 2, MaxIdleConnsPerHost: conns * 2, DisableCompression: true}
	return &Gateway{Name: name, Base: strings.TrimRight(base, "/"), c: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
}

func (g *Gateway) post(ctx context.Context, path string, req, resp any) error {
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, g.Base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	res, err := g.c.Do(hr)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %d %s", g.Name, path, res.StatusCode, raw)
	}
	if resp != nil {
		return json.Unmarshal(raw, resp)
	}
	return nil
}

// The few gateway shapes the load needs. Bytes travel as base64 and
// 64-bit integers as strings, as etcd's gateway writes them.
type kv struct {
	Key         []byte `json:"key"`
	Value       []byte `json:"value"`
	ModRevision string `json:"mod_revision"`
}

type rangeResp struct {
	Kvs []kv `json:"kvs"`
}

type txnResp struct {
	Succeeded bool `json:"succeeded"`
}

type putReq struct {
	Key   []byte `json:"key"`
	Value []byte `json:"value,omitempty"`
}

func benchKey(i int) []byte { return []byte(fmt.Sprintf("/bench/key/%06d", i)) }

func value(n int, seed uint64) []byte {
	v := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 7))
	for i := range v {
		v[i] = 'a' + byte(r.IntN(26))
	}
	return v
}

// Prefill writes every key once so that ranges and CAS find them.
func Prefill(ctx context.Context, g *Gateway, cfg Config) error {
	v := value(cfg.ValueBytes, 1)
	const batch = 100
	for i := 0; i < cfg.Keys; i += batch {
		var ops []any
		for j := i; j < min(i+batch, cfg.Keys); j++ {
			ops = append(ops, map[string]any{"request_put": putReq{Key: benchKey(j), Value: v}})
		}
		if err := g.post(ctx, "/v3/kv/txn", map[string]any{"success": ops}, nil); err != nil {
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
func Put(ctx context.Context, g *Gateway, cfg Config) Result {
	v := value(cfg.ValueBytes, 2)
	return closedLoop(ctx, cfg, func(ctx context.Context, r *rand.Rand) error {
		return g.post(ctx, "/v3/kv/put", putReq{Key: benchKey(r.IntN(cfg.Keys)), Value: v}, nil)
	})
}

// Range: single-key linearizable ranges of random keys.
func Range(ctx context.Context, g *Gateway, cfg Config) Result {
	return closedLoop(ctx, cfg, func(ctx context.Context, r *rand.Rand) error {
		var rr rangeResp
		if err := g.post(ctx, "/v3/kv/range", map[string]any{"key": benchKey(r.IntN(cfg.Keys))}, &rr); err != nil {
			return err
		}
		if len(rr.Kvs) != 1 {
			return errors.New("range: key missing")
		}
		return nil
	})
}

// CAS: read-modify-write as kube-apiserver updates an object: range the
// key, then a txn that puts only if its mod_revision is unchanged (else
// reads it); a lost race retries. One op = one successful update.
func CAS(ctx context.Context, g *Gateway, cfg Config) Result {
	v := value(cfg.ValueBytes, 3)
	return closedLoop(ctx, cfg, func(ctx context.Context, r *rand.Rand) error {
		k := benchKey(r.IntN(cfg.Keys))
		for ctx.Err() == nil {
			var rr rangeResp
			if err := g.post(ctx, "/v3/kv/range", map[string]any{"key": k}, &rr); err != nil {
				return err
			}
			if len(rr.Kvs) != 1 {
				return errors.New("cas: key missing")
			}
			var tr txnResp
			err := g.post(ctx, "/v3/kv/txn", map[string]any{
				"compare": []any{map[string]any{"key": k, "target": "MOD", "result": "EQUAL", "mod_revision": rr.Kvs[0].ModRevision}},
				"success": []any{map[string]any{"request_put": putReq{Key: k, Value: v}}},
				"failure": []any{map[string]any{"request_range": map[string]any{"key": k}}},
			}, &tr)
			if err != nil {
				return err
			}
			if tr.Succeeded {
				return nil
			}
		}
		return ctx.Err()
	})
}

// Watch: cfg.Watchers watch streams on one prefix, a writer putting at
// cfg.WriteRate; each value carries the time its put was sent, and every
// delivery to every watcher is measured from then. Ops counts deliveries.
func Watch(ctx context.Context, g *Gateway, cfg Config) (Result, error) {
	prefix := []byte("/bench/watch/")
	end := append([]byte(nil), prefix...)
	end[len(end)-1]++
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	type delivery struct{ lat []time.Duration }
	results := make([]delivery, cfg.Watchers)
	var delivered atomic.Int64
	var wg sync.WaitGroup
	ready := make(chan error, cfg.Watchers)
	for i := 0; i < cfg.Watchers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body, _ := json.Marshal(map[string]any{"create_request": map[string]any{"key": prefix, "range_end": end}})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, g.Base+"/v3/watch", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			// Watch streams need their own client: no overall timeout.
			resp, err := (&http.Client{Transport: g.c.Transport}).Do(req)
			if err != nil {
				ready <- err
				return
			}
			defer resp.Body.Close()
			dec := json.NewDecoder(resp.Body)
			created := false
			for {
				var m struct {
					Result struct {
						Created bool `json:"created"`
						Events  []struct {
							Kv kv `json:"kv"`
						} `json:"events"`
					} `json:"result"`
				}
				if err := dec.Decode(&m); err != nil {
					if !created {
						ready <- fmt.Errorf("watch: %v", err)
					}
					return
				}
				now := time.Now()
				if m.Result.Created && !created {
					created = true
					ready <- nil
				}
				for _, e := range m.Result.Events {
					sent, err := strconv.ParseInt(string(e.Kv.Value), 10, 64)
					if err == nil {
						results[i].lat = append(results[i].lat, now.Sub(time.Unix(0, sent)))
						delivered.Add(1)
					}
				}
			}
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
			if err := g.post(ctx, "/v3/kv/put", putReq{Key: k, Value: v}, nil); err != nil {
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
	for _, d := range results {
		all = append(all, d.lat...)
	}
	slices.Sort(all)
	missing := int(want) - len(all)
	return Result{Ops: len(all), Elapsed: elapsed, Latencies: all, Errors: int(errs.Load()) + max(missing, 0)}, nil
}
