package main

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
)

var (
	benchDuration = flag.Duration("gatewayload.duration", 3*time.Second, "how long each workload runs on each system")
	benchKine     = flag.Bool("gatewayload.kine", true, "BenchmarkGRPCVsEtcd runs kine too (built the first time: minutes)")
)

// BenchmarkGatewayVsEtcd drives a real etcd's gateway and rvplay's (server
// binary, SQLite) with the same workloads and reports, per workload,
// ops/s and p50/p99 latency of both and the ratios rvplay/etcd. Each
// sub-benchmark runs for a fixed time whatever b.N is; use -benchtime 1x.
func BenchmarkGatewayVsEtcd(b *testing.B) {
	etcdtest.Require(b)
	compareAll(b, APIGateway, false)
}

// BenchmarkGRPCVsEtcd is BenchmarkGatewayVsEtcd through etcd's gRPC API
// with clientv3, against etcd 3.6 and kine on SQLite (both built from the
// module proxy the first time, into the reference programs' cache).
func BenchmarkGRPCVsEtcd(b *testing.B) {
	if _, err := DefaultEtcd(APIGRPC); err != nil {
		b.Skipf("cannot build etcd 3.6 here: %v", err)
	}
	withKine := *benchKine
	if withKine {
		if _, err := KineBinary(); err != nil {
			b.Logf("without kine, which cannot be built here: %v", err)
			withKine = false
		}
	}
	compareAll(b, APIGRPC, withKine)
}

func compareAll(b *testing.B, api API, withKine bool) {
	cfg := DefaultConfig()
	cfg.Duration = *benchDuration
	ctx := context.Background()
	s, err := StartSystems(ctx, b.TempDir(), cfg, api, "", withKine)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	PrintHeader(os.Stdout)
	for _, name := range Workloads {
		b.Run(name, func(b *testing.B) {
			etcd, rvplay, kine, err := Compare(ctx, os.Stdout, name, s, cfg)
			if err != nil {
				b.Fatal(err)
			}
			ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(etcd.OpsPerSec(), "etcd-ops/s")
			b.ReportMetric(rvplay.OpsPerSec(), "rvplay-ops/s")
			b.ReportMetric(rvplay.OpsPerSec()/etcd.OpsPerSec(), "ops-ratio")
			b.ReportMetric(ms(etcd.Quantile(.5)), "etcd-p50-ms")
			b.ReportMetric(ms(etcd.Quantile(.99)), "etcd-p99-ms")
			b.ReportMetric(ms(rvplay.Quantile(.5)), "rvplay-p50-ms")
			b.ReportMetric(ms(rvplay.Quantile(.99)), "rvplay-p99-ms")
			if s.Kine != nil {
				b.ReportMetric(kine.OpsPerSec(), "kine-ops/s")
				b.ReportMetric(rvplay.OpsPerSec()/kine.OpsPerSec(), "kine-ops-ratio")
				b.ReportMetric(ms(kine.Quantile(.99)), "kine-p99-ms")
			}
		})
	}
}
