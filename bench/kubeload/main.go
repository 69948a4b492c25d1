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
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/kubeapiservertest"
	"github.com/rvplay/rvplay/internal/loadstats"
	"github.com/rvplay/rvplay/internal/refbuild"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// Config is one run's load, the same on both systems.
type Config struct {
	Duration time.Duration // per system
	Clients  int
}

// Result is the load on one system: its operations are updates.
type Result = loadstats.Result

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

// load runs clients clients updating for d, client i through targets[i %
// len(targets)].
func load(ctx context.Context, targets []*target, clients int, d time.Duration) Result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var res Result
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			errs := 0
			for n := 1; ctx.Err() == nil; n++ {
				t0 := time.Now()
				if err := targets[i%len(targets)].update(ctx, i, n); err != nil {
					if ctx.Err() == nil {
						errs++
						if errs == 1 {
							fmt.Fprintf(os.Stderr, "  update: %v\n", err)
						}
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
	stops            []func()
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
	s.OnRvplay = kubeAPIServer(onRvplay)
	s.stops = append(s.stops, onRvplay.Stop)
	onEtcd, err := kubeapiservertest.Start(kas, filepath.Join(dir, "kas-etcd"), strings.TrimPrefix(e.URL, "http://"))
	if err != nil {
		return s, fmt.Errorf("on etcd: %w", err)
	}
	s.OnEtcd = kubeAPIServer(onEtcd)
	s.stops = append(s.stops, onEtcd.Stop)
	for _, k := range []*target{s.OnRvplay, s.OnEtcd} {
		if err := k.prepare(ctx, clients); err != nil {
			return s, err
		}
	}
	return s, nil
}

// rounds alternate the systems so that the machine's background load hits
// both alike.
const rounds = 3

// Compare runs the load on both kube-apiservers in alternating rounds.
func Compare(ctx context.Context, s *Systems, cfg Config) (onEtcd, onRvplay Result) {
	part := cfg.Duration / rounds
	for i := 0; i < rounds; i++ {
		onEtcd.Merge(load(ctx, []*target{s.OnEtcd}, cfg.Clients, part))
		onRvplay.Merge(load(ctx, []*target{s.OnRvplay}, cfg.Clients, part))
	}
	return onEtcd, onRvplay
}

// Print writes both results and the ratios rvplay/etcd.
func Print(w io.Writer, onEtcd, onRvplay Result) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
	fmt.Fprintf(w, "%-26s %10s %9s %9s %7s\n", "kube-apiserver storing in", "updates/s", "p50", "p99", "errors")
	fmt.Fprintf(w, "%-26s %10.0f %9s %9s %7d\n", "etcd 3.6", onEtcd.OpsPerSec(), ms(onEtcd.Quantile(.5)), ms(onEtcd.Quantile(.99)), onEtcd.Errors)
	fmt.Fprintf(w, "%-26s %10.0f %9s %9s %7d\n", "rvplay (SQLite, gRPC)", onRvplay.OpsPerSec(), ms(onRvplay.Quantile(.5)), ms(onRvplay.Quantile(.99)), onRvplay.Errors)
	fmt.Fprintf(w, "rvplay/etcd: updates/s %.2fx  p50 %.2fx  p99 %.2fx\n", onRvplay.OpsPerSec()/onEtcd.OpsPerSec(),
		float64(onRvplay.Quantile(.5))/float64(onEtcd.Quantile(.5)), float64(onRvplay.Quantile(.99))/float64(onEtcd.Quantile(.99)))
}

func main() {
	cfg := Config{Duration: 6 * time.Second, Clients: 8}
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the load runs on each system")
	flag.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients, each updating a ConfigMap of its own")
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
	fmt.Printf("kubeload: %v per system, %d clients, GET+PUT of a ConfigMap of each client's own\n", cfg.Duration, cfg.Clients)
	onEtcd, onRvplay := Compare(ctx, s, cfg)
	Print(os.Stdout, onEtcd, onRvplay)
}
