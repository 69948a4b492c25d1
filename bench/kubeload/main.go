// Command kubeload drives Kubernetes REST APIs with one load: each client
// updates a ConfigMap of its own by GET then PUT (the read-modify-write of
// kubectl edit and of controllers), and prints updates/s, p50/p99 and the
// ratios. It compares a real kube-apiserver (v1.36, built from the module
// proxy by the wrapper module in testdata/kubeapiserver) with
// --etcd-servers at rvplay's etcd gRPC API (the server binary on SQLite,
// --grpc-addr) and at a real etcd 3.6; and (-replicas, replicas.go) one and
// two rvplay replicas on a three-member etcd cluster (--store etcd://),
// beside a kube-apiserver on the same cluster.
//
//	go run ./bench/kubeload -duration 5s
//	go run ./bench/kubeload -replicas -duration 5s
//	go test ./bench/kubeload -run x -bench . -benchtime 1x -v
//
// The first run builds kube-apiserver (minutes on two cores); both builds
// are cached in test/kubediff/.bin. It is a benchmark tool: product code
// must not import it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/kubeapiservertest"
	"github.com/rvplay/rvplay/internal/loadstats"
	"github.com/rvplay/rvplay/internal/refbuild"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// Config is one run's load, the same on both systems.
type Config struct {
	Duration time.Duration // per system, measured
	Clients  int
	Rounds   int           // Compare splits Duration into this many rounds per system
	Warmup   time.Duration // Compare's load on each system before the rounds, not counted
}

// DefaultConfig is the run BENCHMARKS.md reports.
var DefaultConfig = Config{Duration: 6 * time.Second, Clients: 8, Rounds: 6, Warmup: 2 * time.Second}

// Result is the load on one system: its operations are updates.
type Result = loadstats.Result

// Run is the load on one system and the processor time its two processes
// took meanwhile. On two cores shared with other work, updates/s measures
// how much of the machine each system got as much as the system; the
// processor time an update costs does not depend on that.
type Run struct {
	Result
	APIServerCPU, StoreCPU time.Duration
}

// Merge adds o, another round on the same system.
func (r *Run) Merge(o Run) {
	r.Result.Merge(o.Result)
	r.APIServerCPU += o.APIServerCPU
	r.StoreCPU += o.StoreCPU
}

// CPUPerUpdate is the processor time of kube-apiserver and of its store
// per update.
func (r Run) CPUPerUpdate() (apiServer, store time.Duration) {
	if r.Ops == 0 {
		return 0, 0
	}
	return r.APIServerCPU / time.Duration(r.Ops), r.StoreCPU / time.Duration(r.Ops)
}

// target is a Kubernetes REST API under load: a kube-apiserver, or a
// session of an rvplay replica.
type target struct {
	// url is where /api/v1/... is.
	url    string
	client *http.Client
}

// kubeAPIServer is the target of a running kube-apiserver.
func kubeAPIServer(k *kubeapiservertest.Server) *target {
	return &target{url: k.URL, client: kubeapiservertest.Client}
}

func (k *target) do(ctx context.Context, method, path string, body []byte) ([]byte, int, error) {
	req, err := http.NewRequestWithContext(ctx, method, k.url+path, bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := k.client.Do(req)
	if err != nil {
		return nil, 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp.StatusCode, err
}

const cmPath = "/api/v1/namespaces/default/configmaps"

// prepare creates one ConfigMap per client.
func (k *target) prepare(ctx context.Context, clients int) error {
	for i := 0; i < clients; i++ {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"load-%d"},"data":{"n":"0"}}`, i)
		b, code, err := k.do(ctx, http.MethodPost, cmPath, []byte(body))
		if err != nil {
			return err
		}
		if code != http.StatusCreated && code != http.StatusConflict {
			return fmt.Errorf("create configmap: %d %s", code, b)
		}
	}
	return nil
}

// update is one read-modify-write of client i's ConfigMap.
func (k *target) update(ctx context.Context, i, n int) error {
	path := fmt.Sprintf("%s/load-%d", cmPath, i)
	b, code, err := k.do(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("get: %d %s", code, b)
	}
	var cm map[string]any
	if err := json.Unmarshal(b, &cm); err != nil {
		return err
	}
	cm["data"] = map[string]any{"n": strconv.Itoa(n)}
	body, _ := json.Marshal(cm)
	b, code, err = k.do(ctx, http.MethodPut, path, body)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return fmt.Errorf("put: %d %s", code, b)
	}
	return nil
}

// written numbers the values the updates write, over every round and
// target: a PUT of the value already stored would be a no-op that the
// store never sees.
var written atomic.Int64

// load runs clients clients updating for d, client i through targets[i %
// len(targets)]: a client starts no update after d, and the one it has in
// flight then finishes and counts (the elapsed time runs until the last
// one is done). Cancelling it instead would leave a PUT that the server
// may still apply after the next round's GET of the same ConfigMap: a 409
// that is the tool's.
func load(ctx context.Context, targets []*target, clients int, d time.Duration) Result {
	var mu sync.Mutex
	var res Result
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(d)
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			errs := 0
			for time.Now().Before(deadline) && ctx.Err() == nil {
				t0 := time.Now()
				if err := targets[i%len(targets)].update(ctx, i, int(written.Add(1))); err != nil {
					errs++
					if errs == 1 {
						fmt.Fprintf(os.Stderr, "  update: %v\n", err)
					}
					continue
				}
				lat = append(lat, time.Since(t0))
			}
			mu.Lock()
			res.Latencies = append(res.Latencies, lat...)
			res.Errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	res.Ops = len(res.Latencies)
	slices.Sort(res.Latencies)
	return res
}

// Systems are the two kube-apiservers and what they store in.
type Systems struct {
	OnRvplay, OnEtcd *target
	// The process IDs of each kube-apiserver and of its store.
	onRvplayPids, onEtcdPids pids
	stops                    []func()
}

// pids are a kube-apiserver's process and its store's.
type pids struct{ apiServer, store int }

// measured is load on one kube-apiserver, with the processor time it and
// its store took.
func measured(ctx context.Context, t *target, p pids, clients int, d time.Duration) Run {
	kas, store := processCPU(p.apiServer), processCPU(p.store)
	res := load(ctx, []*target{t}, clients, d)
	return Run{Result: res, APIServerCPU: processCPU(p.apiServer) - kas, StoreCPU: processCPU(p.store) - store}
}

// processCPU is pid's processor time so far; the processes are this
// tool's children, so /proc is there to read (a failure reads as 0 and
// shows as a nonsensical figure rather than stopping the run).
func processCPU(pid int) time.Duration {
	d, err := rvplaytest.ProcessCPU(pid)
	if err != nil {
		fmt.Fprintf(os.Stderr, "  cpu of %d: %v\n", pid, err)
	}
	return d
}

// Stop ends every process, kube-apiservers first.
func (s *Systems) Stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// referenceBinary builds (once per inputs) the wrapper module at dir,
// relative to the repository's root, into the reference programs' cache.
func referenceBinary(dir, name string) (string, error) {
	bin, _, err := refbuild.InRepo(dir, name)
	return bin, err
}

// StartSystems builds what is missing and starts etcd 3.6, rvplay (SQLite,
// gRPC) and a kube-apiserver on each, in dir.
func StartSystems(ctx context.Context, dir string, clients int) (s *Systems, err error) {
	kas, built, err := kubeapiservertest.Binary()
	if err != nil {
		return nil, err
	}
	if built > 0 {
		fmt.Fprintf(os.Stderr, "kubeload: built kube-apiserver in %v\n", built.Round(time.Second))
	}
	etcdBin, err := referenceBinary("test/kubediff/testdata/etcd36", "etcd36")
	if err != nil {
		return nil, err
	}
	s = &Systems{}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	e, err := etcdtest.StartBinary(etcdBin, etcdtest.Options{DataDir: filepath.Join(dir, "etcd"), Args: []string{"--watch-progress-notify-interval=5s"}})
	if err != nil {
		return s, err
	}
	s.stops = append(s.stops, func() { e.Stop() })
	rbin, err := rvplaytest.Build(dir)
	if err != nil {
		return s, err
	}
	r, err := rvplaytest.StartBinary(rbin, filepath.Join(dir, "rvplay.db"), "kube", "--grpc-addr", "127.0.0.1:0", "--grpc-session", "kube")
	if err != nil {
		return s, err
	}
	s.stops = append(s.stops, func() { r.Stop() })
	if r.GRPCAddr == "" {
		return s, errors.New("rvplay printed no gRPC address")
	}
	onRvplay, err := kubeapiservertest.Start(kas, filepath.Join(dir, "kas-rvplay"), r.GRPCAddr)
	if err != nil {
		return s, fmt.Errorf("on rvplay: %w", err)
	}
	s.OnRvplay, s.onRvplayPids = kubeAPIServer(onRvplay), pids{onRvplay.Pid(), r.Pid()}
	s.stops = append(s.stops, onRvplay.Stop)
	onEtcd, err := kubeapiservertest.Start(kas, filepath.Join(dir, "kas-etcd"), strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		return s, fmt.Errorf("on etcd: %w", err)
	}
	s.OnEtcd, s.onEtcdPids = kubeAPIServer(onEtcd), pids{onEtcd.Pid(), e.Pid()}
	s.stops = append(s.stops, onEtcd.Stop)
	for _, k := range []*target{s.OnRvplay, s.OnEtcd} {
		if err := k.prepare(ctx, clients); err != nil {
			return s, err
		}
	}
	return s, nil
}

// rounds alternate the systems of -replicas so that the machine's
// background load hits them alike.
const rounds = 3

// Comparison is one run on both systems: every measured round merged per
// system, and each round pair's ratio rvplay/etcd of updates/s.
type Comparison struct {
	OnEtcd, OnRvplay Run
	Ratios           []float64 // one per pair of rounds, in the order they ran
}

// MedianRatio is the median of the pairs' ratios: a burst of the machine's
// background load that hits one round moves the pooled figure, not this.
func (c Comparison) MedianRatio() float64 {
	r := slices.Clone(c.Ratios)
	slices.Sort(r)
	if len(r) == 0 {
		return 0
	}
	if len(r)%2 == 1 {
		return r[len(r)/2]
	}
	return (r[len(r)/2-1] + r[len(r)/2]) / 2
}

// Compare runs the load on both kube-apiservers: first cfg.Warmup on each,
// not counted (a kube-apiserver just started still runs its post-start
// work, and its connections and caches are cold), then cfg.Rounds pairs of
// rounds that alternate which system goes first (etcd, rvplay, then
// rvplay, etcd, ...), so that a trend in the machine's background load
// favours neither. Each round's figures go to w as they come.
func Compare(ctx context.Context, w io.Writer, s *Systems, cfg Config) Comparison {
	var c Comparison
	if cfg.Warmup > 0 {
		e := measured(ctx, s.OnEtcd, s.onEtcdPids, cfg.Clients, cfg.Warmup)
		r := measured(ctx, s.OnRvplay, s.onRvplayPids, cfg.Clients, cfg.Warmup)
		fmt.Fprintf(w, "warm-up   etcd %6.0f/s  rvplay %6.0f/s  (not counted)\n", e.OpsPerSec(), r.OpsPerSec())
	}
	part := cfg.Duration / time.Duration(cfg.Rounds)
	for i := 0; i < cfg.Rounds; i++ {
		var e, r Run
		if i%2 == 0 {
			e = measured(ctx, s.OnEtcd, s.onEtcdPids, cfg.Clients, part)
			r = measured(ctx, s.OnRvplay, s.onRvplayPids, cfg.Clients, part)
		} else {
			r = measured(ctx, s.OnRvplay, s.onRvplayPids, cfg.Clients, part)
			e = measured(ctx, s.OnEtcd, s.onEtcdPids, cfg.Clients, part)
		}
		ratio := r.OpsPerSec() / e.OpsPerSec()
		fmt.Fprintf(w, "round %-3d etcd %6.0f/s  rvplay %6.0f/s  %.2fx\n", i+1, e.OpsPerSec(), r.OpsPerSec(), ratio)
		c.OnEtcd.Merge(e)
		c.OnRvplay.Merge(r)
		c.Ratios = append(c.Ratios, ratio)
	}
	return c
}

// Print writes both results and the ratios rvplay/etcd.
func Print(w io.Writer, c Comparison) {
	onEtcd, onRvplay := c.OnEtcd, c.OnRvplay
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
	fmt.Fprintf(w, "%-26s %10s %9s %9s %7s %22s\n", "kube-apiserver storing in", "updates/s", "p50", "p99", "errors", "CPU/update: kas, store")
	for _, sys := range []struct {
		name string
		run  Run
	}{{"etcd 3.6", onEtcd}, {"rvplay (SQLite, gRPC)", onRvplay}} {
		kas, store := sys.run.CPUPerUpdate()
		fmt.Fprintf(w, "%-26s %10.0f %9s %9s %7d %13s %8s\n", sys.name, sys.run.OpsPerSec(), ms(sys.run.Quantile(.5)), ms(sys.run.Quantile(.99)), sys.run.Errors, ms(kas), ms(store))
	}
	fmt.Fprintf(w, "rvplay/etcd: updates/s %.2fx (median of %d rounds %.2fx)  p50 %.2fx  p99 %.2fx\n", onRvplay.OpsPerSec()/onEtcd.OpsPerSec(),
		len(c.Ratios), c.MedianRatio(),
		float64(onRvplay.Quantile(.5))/float64(onEtcd.Quantile(.5)), float64(onRvplay.Quantile(.99))/float64(onEtcd.Quantile(.99)))
	eKas, eStore := onEtcd.CPUPerUpdate()
	rKas, rStore := onRvplay.CPUPerUpdate()
	fmt.Fprintf(w, "rvplay/etcd: CPU per update: store %.2fx, kube-apiserver and store %.2fx\n",
		float64(rStore)/float64(eStore), float64(rKas+rStore)/float64(eKas+eStore))
}

func main() {
	cfg := DefaultConfig
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the load runs on each system, warm-up not counted")
	flag.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients, each updating a ConfigMap of its own")
	flag.IntVar(&cfg.Rounds, "rounds", cfg.Rounds, "rounds per kube-apiserver the duration is split into, alternating which goes first")
	flag.DurationVar(&cfg.Warmup, "warmup", cfg.Warmup, "load on each kube-apiserver before the measured rounds, not counted")
	replicas := flag.Bool("replicas", false, "compare one and two rvplay replicas on a three-member etcd cluster (and a kube-apiserver on it) instead")
	flag.Parse()
	dir, err := os.MkdirTemp("", "kubeload-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	if *replicas {
		s, err := StartReplicas(ctx, dir, cfg.Clients)
		if err != nil {
			log.Fatal(err)
		}
		defer s.Stop()
		fmt.Printf("kubeload: %v per system, %d clients, GET+PUT of a ConfigMap of each client's own\n", cfg.Duration, cfg.Clients)
		PrintReplicas(os.Stdout, CompareReplicas(ctx, s, cfg))
		return
	}
	s, err := StartSystems(ctx, dir, cfg.Clients)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Stop()
	fmt.Printf("kubeload: %v per system in %d rounds after %v of warm-up, %d clients, GET+PUT of a ConfigMap of each client's own\n",
		cfg.Duration, cfg.Rounds, cfg.Warmup, cfg.Clients)
	Print(os.Stdout, Compare(ctx, os.Stdout, s, cfg))
}
