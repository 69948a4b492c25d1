package main

import (
	"context"
	"flag"
	"os"
	"testing"
	"time"
)

var benchDuration = flag.Duration("kubeload.duration", 6*time.Second, "how long the load runs on each system")

// BenchmarkKubeAPIServerOnRvplayVsEtcd is the command's run: the same
// kube-apiserver on rvplay and on etcd 3.6, GET+PUT of ConfigMaps. It runs
// for a fixed time whatever b.N is; use -benchtime 1x.
func BenchmarkKubeAPIServerOnRvplayVsEtcd(b *testing.B) {
	cfg := DefaultConfig
	cfg.Duration = *benchDuration
	ctx := context.Background()
	s, err := StartSystems(ctx, b.TempDir(), cfg.Clients)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	c := Compare(ctx, os.Stdout, s, cfg)
	Print(os.Stdout, c)
	onEtcd, onRvplay := c.OnEtcd, c.OnRvplay
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(onEtcd.OpsPerSec(), "etcd-updates/s")
	b.ReportMetric(onRvplay.OpsPerSec(), "rvplay-updates/s")
	b.ReportMetric(onRvplay.OpsPerSec()/onEtcd.OpsPerSec(), "ratio")
	b.ReportMetric(c.MedianRatio(), "median-ratio")
	eKas, eStore := onEtcd.CPUPerUpdate()
	rKas, rStore := onRvplay.CPUPerUpdate()
	b.ReportMetric(float64(rStore)/float64(eStore), "store-cpu-ratio")
	b.ReportMetric(float64(rKas+rStore)/float64(eKas+eStore), "total-cpu-ratio")
	b.ReportMetric(ms(onEtcd.Quantile(.99)), "etcd-p99-ms")
	b.ReportMetric(ms(onRvplay.Quantile(.99)), "rvplay-p99-ms")
}

// BenchmarkReplicasOnAnEtcdCluster is -replicas's run: GET+PUT of
// ConfigMaps through one rvplay replica, through two (the clients split
// between them), and through a kube-apiserver, all on one three-member
// etcd cluster. It runs for a fixed time whatever b.N is; use -benchtime 1x.
func BenchmarkReplicasOnAnEtcdCluster(b *testing.B) {
	cfg := Config{Duration: *benchDuration, Clients: 8}
	ctx := context.Background()
	s, err := StartReplicas(ctx, b.TempDir(), cfg.Clients)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Stop()
	r := CompareReplicas(ctx, s, cfg)
	PrintReplicas(os.Stdout, r)
	b.ReportMetric(0, "ns/op")
	b.ReportMetric(r.One.OpsPerSec(), "one-replica-updates/s")
	b.ReportMetric(r.Two.OpsPerSec(), "two-replicas-updates/s")
	if r.KubeAPIServer.Ops > 0 {
		b.ReportMetric(r.KubeAPIServer.OpsPerSec(), "kube-apiserver-updates/s")
	}
}

// The ratio a run reports beside the pooled one is the middle of its
// rounds' ratios: one round hit by a burst of background load moves it not.
func TestMedianRatioIsTheMiddleRound(t *testing.T) {
	for _, c := range []struct {
		ratios []float64
		want   float64
	}{
		{nil, 0},
		{[]float64{1.2}, 1.2},
		{[]float64{3, 0.5, 1.1}, 1.1},
		{[]float64{0.4, 1.0, 1.2, 9}, 1.1},
	} {
		if got := (Comparison{Ratios: c.ratios}).MedianRatio(); got != c.want {
			t.Errorf("median of %v: %v, want %v", c.ratios, got, c.want)
		}
	}
}
