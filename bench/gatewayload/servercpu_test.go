package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

var (
	benchServers = flag.String("gatewayload.servers", "", "BenchmarkServerCPU: rvplay server binaries to compare, name=path,name=path (default: this tree's server, built)")
	benchRounds  = flag.Int("gatewayload.rounds", 4, "BenchmarkServerCPU: alternating rounds per workload")
)

// cpuSystem is one server of BenchmarkServerCPU: its client and its
// process.
type cpuSystem struct {
	name string
	g    Client
	pid  int
}

// BenchmarkServerCPU drives etcd and one or more rvplay server binaries
// (-gatewayload.servers: a build of an older commit beside this one, say)
// through the gateway with the put, CAS and range workloads, in
// alternating rounds of -gatewayload.duration/-gatewayload.rounds each,
// and reports each server process's CPU time per operation
// (/proc/<pid>/stat; one CAS is a range and a txn), which a busy machine
// changes less than throughput, beside its ops/s and their ratio to
// etcd's, and the largest resident memory (VmRSS) seen after a round.
// Each round's figures are kept too: after the totals, a line a workload
// and server gives the median and range over the rounds of its ops/s
// ratio to etcd's in the same round and of its CPU per operation, which
// says whether a difference between two builds stands out of the rounds'
// spread. Use -benchtime 1x. A BIN may be a script that execs the server with an
// environment of its own (exec env GOGC=200 server "$@": the same process).
func BenchmarkServerCPU(b *testing.B) {
	etcdBin := etcdtest.Require(b)
	cfg := DefaultConfig()
	cfg.Duration = *benchDuration / time.Duration(*benchRounds)
	ctx := context.Background()
	var systems []cpuSystem
	add := func(name, url string, pid int) {
		g := NewGateway(name, url, cfg.Clients+8)
		b.Cleanup(func() { g.Close() })
		if err := Prefill(ctx, g, cfg); err != nil {
			b.Fatal(err)
		}
		systems = append(systems, cpuSystem{name, g, pid})
	}
	e, err := etcdtest.StartBinary(etcdBin, etcdtest.Options{DataDir: filepath.Join(b.TempDir(), "etcd")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Stop() })
	add("etcd", e.URL, e.Pid())
	servers := *benchServers
	if servers == "" {
		bin, err := rvplaytest.Build(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		servers = "rvplay=" + bin
	}
	for _, s := range strings.Split(servers, ",") {
		name, bin, ok := strings.Cut(s, "=")
		if !ok {
			b.Fatalf("-gatewayload.servers: %q is not name=path", s)
		}
		r, err := rvplaytest.StartBinary(bin, filepath.Join(b.TempDir(), "rvplay.db"), "bench")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { r.Stop() })
		add(name, r.SessionURL, r.Pid())
	}
	type total struct {
		cpu time.Duration
		all Result
		// rounds holds each round's CPU per operation (µs) and ops/s.
		rounds []roundFigures
	}
	rss := map[string]int64{} // the largest VmRSS seen, by system
	fmt.Printf("server CPU per operation: %d alternating rounds of %v per workload and system\n", *benchRounds, cfg.Duration)
	totals := map[string]*total{}
	workloads := []string{"put", "cas", "range"}
	for round := 0; round < *benchRounds; round++ {
		for _, w := range workloads {
			for i := range systems {
				s := systems[(i+round)%len(systems)] // each round starts with another system
				before, err := rvplaytest.ProcessCPU(s.pid)
				if err != nil {
					b.Fatal(err)
				}
				r, err := RunWorkload(ctx, w, s.g, cfg)
				if err != nil {
					b.Fatal(err)
				}
				after, err := rvplaytest.ProcessCPU(s.pid)
				if err != nil {
					b.Fatal(err)
				}
				vmRSS, _, err := rvplaytest.ProcessMemory(s.pid)
				if err != nil {
					b.Fatal(err)
				}
				rss[s.name] = max(rss[s.name], vmRSS)
				t := totals[w+"/"+s.name]
				if t == nil {
					t = &total{}
					totals[w+"/"+s.name] = t
				}
				t.cpu += after - before
				t.all.Merge(r)
				t.rounds = append(t.rounds, roundFigures{
					cpuPerOp:  float64(after-before) / float64(max(r.Ops, 1)) / 1e3,
					opsPerSec: r.OpsPerSec(),
				})
			}
		}
	}
	for _, w := range workloads {
		etcd := totals[w+"/etcd"].all.OpsPerSec()
		for _, s := range systems {
			t := totals[w+"/"+s.name]
			b.Run(w+"/"+s.name, func(b *testing.B) {
				b.ReportMetric(0, "ns/op")
				b.ReportMetric(float64(t.cpu)/float64(max(t.all.Ops, 1))/1e3, "cpu-µs/op")
				b.ReportMetric(t.all.OpsPerSec(), "ops/s")
				b.ReportMetric(t.all.OpsPerSec()/etcd, "ops-ratio-to-etcd")
				b.ReportMetric(float64(rss[s.name])/(1<<20), "max-rss-MiB")
			})
		}
	}
	fmt.Println("per round: median (min-max) over the rounds")
	for _, w := range workloads {
		etcd := totals[w+"/etcd"].rounds
		for _, s := range systems[1:] {
			rounds := totals[w+"/"+s.name].rounds
			ratios := make([]float64, len(rounds))
			cpus := make([]float64, len(rounds))
			for i, r := range rounds {
				ratios[i] = r.opsPerSec / max(etcd[i].opsPerSec, 1)
				cpus[i] = r.cpuPerOp
			}
			fmt.Printf("%-6s %-12s ops ratio to etcd %s, cpu-µs/op %s\n", w, s.name, spread(ratios, "%.3f"), spread(cpus, "%.1f"))
		}
	}
}

// roundFigures are one system's figures in one round of one workload.
type roundFigures struct {
	cpuPerOp  float64 // µs
	opsPerSec float64
}

// spread formats xs as "median (min-max)".
func spread(xs []float64, format string) string {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s) == 0 {
		return "-"
	}
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return fmt.Sprintf(format+" ("+format+"-"+format+")", med, s[0], s[len(s)-1])
}
