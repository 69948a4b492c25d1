package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// Systems are the two gateways of one run.
type Systems struct {
	Etcd, Rvplay *Gateway
	stop         func()
}

// StartSystems starts a fresh etcd and a fresh rvplay server (SQLite) in
// dir, builds the server binary if needed, and prefills both.
func StartSystems(ctx context.Context, dir string, cfg Config) (*Systems, error) {
	bin, err := etcdtest.Binary()
	if err != nil {
		return nil, err
	}
	e, err := etcdtest.StartBinary(bin, etcdtest.Options{DataDir: filepath.Join(dir, "etcd")})
	if err != nil {
		return nil, err
	}
	rbin, err := rvplaytest.Build(dir)
	if err != nil {
		e.Stop()
		return nil, err
	}
	r, err := rvplaytest.StartBinary(rbin, filepath.Join(dir, "rvplay.db"), "bench")
	if err != nil {
		e.Stop()
		return nil, err
	}
	conns := cfg.Clients + cfg.Watchers + 8
	s := &Systems{
		Etcd:   NewGateway("etcd", e.URL, conns),
		Rvplay: NewGateway("rvplay", r.SessionURL, conns),
		stop:   func() { r.Stop(); e.Stop() },
	}
	for _, g := range []*Gateway{s.Etcd, s.Rvplay} {
		if err := Prefill(ctx, g, cfg); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// Stop ends both servers.
func (s *Systems) Stop() { s.stop() }

// Workload names in the order they run.
var Workloads = []string{"put", "cas", "range", "watch"}

// RunWorkload runs one workload on one gateway.
func RunWorkload(ctx context.Context, name string, g *Gateway, cfg Config) (Result, error) {
	switch name {
	case "put":
		return Put(ctx, g, cfg), nil
	case "cas":
		return CAS(ctx, g, cfg), nil
	case "range":
		return Range(ctx, g, cfg), nil
	case "watch":
		return Watch(ctx, g, cfg)
	}
	return Result{}, fmt.Errorf("unknown workload %q", name)
}

// rounds splits each workload's time into alternating etcd/rvplay runs,
// so that a change in the machine's background load during the run hits
// both systems alike.
const rounds = 3

// Compare runs a workload on etcd and on rvplay, alternating in rounds,
// and prints both and the ratios rvplay/etcd.
func Compare(ctx context.Context, w io.Writer, name string, s *Systems, cfg Config) (etcd, rvplay Result, err error) {
	part := cfg
	part.Duration = cfg.Duration / rounds
	for i := 0; i < rounds; i++ {
		for _, x := range []struct {
			g   *Gateway
			acc *Result
		}{{s.Etcd, &etcd}, {s.Rvplay, &rvplay}} {
			r, err := RunWorkload(ctx, name, x.g, part)
			if err != nil {
				return etcd, rvplay, err
			}
			x.acc.merge(r)
		}
	}
	PrintRow(w, name, etcd, rvplay)
	return etcd, rvplay, nil
}

// PrintHeader and PrintRow write the comparison table.
func PrintHeader(w io.Writer) {
	fmt.Fprintf(w, "%-6s %-7s %10s %9s %9s %7s | %s\n", "work", "system", "ops/s", "p50", "p99", "errors", "rvplay/etcd")
}

func PrintRow(w io.Writer, name string, etcd, rvplay Result) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
	fmt.Fprintf(w, "%-6s %-7s %10.0f %9s %9s %7d |\n", name, "etcd", etcd.OpsPerSec(), ms(etcd.Quantile(.5)), ms(etcd.Quantile(.99)), etcd.Errors)
	fmt.Fprintf(w, "%-6s %-7s %10.0f %9s %9s %7d | ops/s %.2fx  p50 %.2fx  p99 %.2fx\n", name, "rvplay", rvplay.OpsPerSec(), ms(rvplay.Quantile(.5)), ms(rvplay.Quantile(.99)), rvplay.Errors,
		rvplay.OpsPerSec()/etcd.OpsPerSec(), ratio(rvplay.Quantile(.5), etcd.Quantile(.5)), ratio(rvplay.Quantile(.99), etcd.Quantile(.99)))
}

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func main() {
	cfg := DefaultConfig()
	flag.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long each workload runs on each system")
	flag.IntVar(&cfg.Clients, "clients", cfg.Clients, "concurrent clients for put, cas and range")
	flag.IntVar(&cfg.Keys, "keys", cfg.Keys, "key space")
	flag.IntVar(&cfg.ValueBytes, "value-bytes", cfg.ValueBytes, "value size")
	flag.IntVar(&cfg.Watchers, "watchers", cfg.Watchers, "watch streams in the watch workload")
	flag.Float64Var(&cfg.WriteRate, "write-rate", cfg.WriteRate, "writes per second in the watch workload")
	only := flag.String("workloads", strings.Join(Workloads, ","), "comma-separated workloads to run")
	target := flag.String("target", "", "drive only this running gateway (e.g. http://127.0.0.1:8080/s/demo), no etcd and no comparison: for profiling a server started with --debug-addr")
	flag.Parse()
	var err error
	if *target != "" {
		err = runTarget(cfg, *target, strings.Split(*only, ","))
	} else {
		err = run(cfg, strings.Split(*only, ","))
	}
	if err != nil {
		log.Fatal(err)
	}
}

func run(cfg Config, workloads []string) error {
	dir, err := os.MkdirTemp("", "gatewayload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := StartSystems(ctx, dir, cfg)
	if err != nil {
		return err
	}
	defer s.Stop()
	fmt.Printf("gatewayload: %v per workload and system, %d clients, %d keys, %d-byte values, %d watchers at %.0f writes/s\n",
		cfg.Duration, cfg.Clients, cfg.Keys, cfg.ValueBytes, cfg.Watchers, cfg.WriteRate)
	fmt.Printf("rvplay: server binary on SQLite (%s); etcd: %s\n", s.Rvplay.Base, s.Etcd.Base)
	PrintHeader(os.Stdout)
	for _, name := range workloads {
		if _, _, err := Compare(ctx, os.Stdout, strings.TrimSpace(name), s, cfg); err != nil {
			return err
		}
	}
	return nil
}

// runTarget prefills one running gateway and runs the workloads on it alone.
func runTarget(cfg Config, base string, workloads []string) error {
	ctx := context.Background()
	g := NewGateway("target", base, cfg.Clients+cfg.Watchers+8)
	if err := Prefill(ctx, g, cfg); err != nil {
		return err
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
	for _, name := range workloads {
		r, err := RunWorkload(ctx, strings.TrimSpace(name), g, cfg)
		if err != nil {
			return err
		}
		fmt.Printf("%-6s %10.0f ops/s  p50 %s  p99 %s  errors %d\n", name, r.OpsPerSec(), ms(r.Quantile(.5)), ms(r.Quantile(.99)), r.Errors)
	}
	return nil
}
