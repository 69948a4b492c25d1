package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/refbuild"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// API is the etcd API a run goes through.
type API string

const (
	APIGateway API = "gateway" // the v3 JSON gateway over HTTP/1.1
	APIGRPC    API = "grpc"    // the gRPC API with clientv3
)

// Systems are the systems of one run, reached through one API: etcd,
// rvplay, and through gRPC kine when asked for.
type Systems struct {
	API          API
	Etcd, Rvplay Client
	Kine         Client // nil unless started
	EtcdVersion  string
	stop         func()
}

// DefaultEtcd is the etcd binary an API is compared with: Debian's etcd
// 3.4 for the gateway (its figures in BENCHMARKS.md were measured with
// it), etcd 3.6 built from the module proxy for gRPC (the differential
// tests' own).
func DefaultEtcd(api API) (string, error) {
	if api == APIGateway {
		return etcdtest.Binary()
	}
	return referenceBinary("test/kubediff/testdata/etcd36", "etcd36")
}

// referenceBinary builds (once per inputs) the wrapper module at dir,
// relative to the repository's root, into the reference programs' cache.
func referenceBinary(dir, name string) (string, error) {
	bin, _, err := refbuild.InRepo(dir, name)
	return bin, err
}

// StartSystems starts a fresh etcd (etcdBin; empty: DefaultEtcd) and a
// fresh rvplay server (SQLite) in dir, and with withKine (gRPC only) kine,
// builds the binaries if needed, connects to each through api and
// prefills them.
func StartSystems(ctx context.Context, dir string, cfg Config, api API, etcdBin string, withKine bool) (*Systems, error) {
	if api != APIGateway && api != APIGRPC {
		return nil, fmt.Errorf("unknown API %q (gateway or grpc)", api)
	}
	if withKine && api != APIGRPC {
		return nil, errors.New("kine serves etcd's gRPC API only, not its JSON gateway")
	}
	var err error
	if etcdBin == "" {
		if etcdBin, err = DefaultEtcd(api); err != nil {
			return nil, err
		}
	}
	version, err := exec.Command(etcdBin, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %v", etcdBin, err)
	}
	e, err := etcdtest.StartBinary(etcdBin, etcdtest.Options{DataDir: filepath.Join(dir, "etcd")})
	if err != nil {
		return nil, err
	}
	rbin, err := rvplaytest.Build(dir)
	if err != nil {
		e.Stop()
		return nil, err
	}
	var flags []string
	if api == APIGRPC {
		flags = []string{"--grpc-addr", "127.0.0.1:0", "--grpc-session", "bench"}
	}
	r, err := rvplaytest.StartBinary(rbin, filepath.Join(dir, "rvplay.db"), "bench", flags...)
	if err != nil {
		e.Stop()
		return nil, err
	}
	s := &Systems{API: api, EtcdVersion: strings.TrimPrefix(strings.SplitN(string(version), "\n", 2)[0], "etcd Version: ")}
	stopServers := func() { r.Stop(); e.Stop() }
	s.stop = stopServers
	if api == APIGateway {
		conns := cfg.Clients + cfg.Watchers + 8
		s.Etcd = NewGateway("etcd", e.URL, conns)
		s.Rvplay = NewGateway("rvplay", r.SessionURL, conns)
	} else {
		if r.GRPCAddr == "" {
			stopServers()
			return nil, errors.New("rvplay printed no gRPC address")
		}
		if s.Etcd, err = NewGRPC("etcd", strings.TrimPrefix(e.URL, "http://")); err == nil {
			if s.Rvplay, err = NewGRPC("rvplay", r.GRPCAddr); err != nil {
				s.Etcd.Close()
			}
		}
		if err != nil {
			stopServers()
			return nil, err
		}
	}
	if withKine {
		kbin, err := KineBinary()
		var k *kine
		if err == nil {
			k, err = startKine(kbin, filepath.Join(dir, "kine"))
		}
		var kc *GRPC
		if err == nil {
			if kc, err = NewGRPC("kine", k.Addr); err != nil {
				k.Stop()
			}
		}
		if err != nil {
			s.Etcd.Close()
			s.Rvplay.Close()
			stopServers()
			return nil, err
		}
		kc.putsOneByOne = true
		s.Kine = kc
		prev := stopServers
		stopServers = func() { k.Stop(); prev() }
	}
	s.stop = func() {
		for _, c := range s.all() {
			c.Close()
		}
		stopServers()
	}
	for _, c := range s.all() {
		if err := Prefill(ctx, c, cfg); err != nil {
			s.Stop()
			return nil, err
		}
	}
	return s, nil
}

// all are the systems started, in the order they run.
func (s *Systems) all() []Client {
	if s.Kine != nil {
		return []Client{s.Etcd, s.Rvplay, s.Kine}
	}
	return []Client{s.Etcd, s.Rvplay}
}

// Stop ends the servers.
func (s *Systems) Stop() { s.stop() }

// Workload names in the order they run.
var Workloads = []string{"put", "cas", "range", "watch"}

// RunWorkload runs one workload on one system.
func RunWorkload(ctx context.Context, name string, g Client, cfg Config) (Result, error) {
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

// Compare runs a workload on etcd, on rvplay and on kine if started,
// alternating in rounds, and prints each and the ratios of rvplay to the
// others.
func Compare(ctx context.Context, w io.Writer, name string, s *Systems, cfg Config) (etcd, rvplay, kine Result, err error) {
	part := cfg
	part.Duration = cfg.Duration / rounds
	acc := []*Result{&etcd, &rvplay, &kine}
	for i := 0; i < rounds; i++ {
		for j, c := range s.all() {
			r, err := RunWorkload(ctx, name, c, part)
			if err != nil {
				return etcd, rvplay, kine, fmt.Errorf("%s: %w", c.Name(), err)
			}
			acc[j].Merge(r)
		}
	}
	PrintRow(w, name, etcd, rvplay)
	if s.Kine != nil {
		PrintKineRow(w, name, kine, rvplay)
	}
	return etcd, rvplay, kine, nil
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

// PrintKineRow writes kine's row and the ratios rvplay/kine.
func PrintKineRow(w io.Writer, name string, kine, rvplay Result) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
	fmt.Fprintf(w, "%-6s %-7s %10.0f %9s %9s %7d | rvplay/kine: ops/s %.2fx  p50 %.2fx  p99 %.2fx\n", name, "kine", kine.OpsPerSec(), ms(kine.Quantile(.5)), ms(kine.Quantile(.99)), kine.Errors,
		rvplay.OpsPerSec()/kine.OpsPerSec(), ratio(rvplay.Quantile(.5), kine.Quantile(.5)), ratio(rvplay.Quantile(.99), kine.Quantile(.99)))
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
	api := flag.String("api", string(APIGateway), "the etcd API to go through: gateway (JSON over HTTP) or grpc (clientv3)")
	withKine := flag.Bool("kine", false, "with -api grpc, also run kine on SQLite (k3s's etcd shim, built from the module proxy the first time: minutes)")
	etcdBin := flag.String("etcd", "", "the etcd binary to compare with (default: Debian's etcd 3.4 for the gateway, etcd 3.6 built from the module proxy for gRPC)")
	only := flag.String("workloads", strings.Join(Workloads, ","), "comma-separated workloads to run")
	target := flag.String("target", "", "drive only this running server, no etcd and no comparison, for profiling a server started with --debug-addr: a gateway's URL (http://127.0.0.1:8080/s/demo) or, with -api grpc, a gRPC host:port")
	flag.Parse()
	var err error
	if *target != "" {
		err = runTarget(cfg, API(*api), *target, strings.Split(*only, ","))
	} else {
		err = run(cfg, API(*api), *etcdBin, *withKine, strings.Split(*only, ","))
	}
	if err != nil {
		log.Fatal(err)
	}
}

func run(cfg Config, api API, etcdBin string, withKine bool, workloads []string) error {
	dir, err := os.MkdirTemp("", "gatewayload-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := StartSystems(ctx, dir, cfg, api, etcdBin, withKine)
	if err != nil {
		return err
	}
	defer s.Stop()
	fmt.Printf("gatewayload: %v per workload and system, %d clients, %d keys, %d-byte values, %d watchers at %.0f writes/s\n",
		cfg.Duration, cfg.Clients, cfg.Keys, cfg.ValueBytes, cfg.Watchers, cfg.WriteRate)
	fmt.Printf("through %s: rvplay, server binary on SQLite (%s); etcd %s (%s)\n", s.API, s.Rvplay.Endpoint(), s.EtcdVersion, s.Etcd.Endpoint())
	if s.Kine != nil {
		fmt.Printf("kine on SQLite (%s)\n", s.Kine.Endpoint())
	}
	PrintHeader(os.Stdout)
	for _, name := range workloads {
		if _, _, _, err := Compare(ctx, os.Stdout, strings.TrimSpace(name), s, cfg); err != nil {
			return err
		}
	}
	return nil
}

// runTarget prefills one running server and runs the workloads on it
// alone.
func runTarget(cfg Config, api API, target string, workloads []string) error {
	ctx := context.Background()
	var g Client = NewGateway("target", target, cfg.Clients+cfg.Watchers+8)
	if api == APIGRPC {
		c, err := NewGRPC("target", target)
		if err != nil {
			return err
		}
		g = c
	}
	defer g.Close()
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
