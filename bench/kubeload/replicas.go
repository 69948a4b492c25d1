package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/kubeapiservertest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// Replicas are two rvplay replicas on a three-member etcd cluster (Debian's
// etcd-server), each serving the open session "load", and a kube-apiserver
// on the same cluster when one could be built.
type Replicas struct {
	A, B *target
	// KubeAPIServer is nil when none could be built or started (Why says
	// why).
	KubeAPIServer *target
	Why           string
	stops         []func()
}

// Stop ends every process, the cluster last.
func (s *Replicas) Stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// StartReplicas starts the cluster, the replicas and the kube-apiserver in
// dir, and creates each client's ConfigMap on both systems.
func StartReplicas(ctx context.Context, dir string, clients int) (s *Replicas, err error) {
	bin, err := etcdtest.Binary()
	if err != nil {
		return nil, err
	}
	s = &Replicas{}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	cluster, err := etcdtest.StartClusterBinary(bin, filepath.Join(dir, "etcd"), 3)
	if err != nil {
		return s, err
	}
	s.stops = append(s.stops, func() { cluster.Stop() })
	rbin, err := rvplaytest.Build(dir)
	if err != nil {
		return s, err
	}
	plain := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	for i, t := range []**target{&s.A, &s.B} {
		r, err := rvplaytest.StartBinary(rbin, filepath.Join(dir, fmt.Sprintf("unused-%d.db", i)), "load",
			"--store", "etcd://"+cluster.Hosts(), "--etcd-compaction-interval", "5m")
		if err != nil {
			return s, err
		}
		s.stops = append(s.stops, func() { r.Stop() })
		*t = &target{url: r.SessionURL, client: plain}
	}
	if err := s.A.prepare(ctx, clients); err != nil {
		return s, err
	}
	kas, built, err := kubeapiservertest.Binary()
	if err != nil {
		s.Why = fmt.Sprintf("no kube-apiserver: %v", err)
		return s, nil
	}
	if built > 0 {
		fmt.Fprintf(os.Stderr, "kubeload: built kube-apiserver in %v\n", built.Round(time.Second))
	}
	k, err := kubeapiservertest.Start(kas, filepath.Join(dir, "kas"), strings.TrimPrefix(cluster.Endpoints()[0], "http://"))
	if err != nil {
		s.Why = fmt.Sprintf("kube-apiserver on etcd %s: %v", cluster.Hosts(), err)
		return s, nil
	}
	s.stops = append(s.stops, k.Stop)
	s.KubeAPIServer = kubeAPIServer(k)
	return s, s.KubeAPIServer.prepare(ctx, clients)
}

// ReplicaResults are the load on one replica, on two (the clients split
// between them) and on the kube-apiserver.
type ReplicaResults struct {
	One, Two, KubeAPIServer Result
	Why                     string
}

// CompareReplicas runs the load in alternating rounds.
func CompareReplicas(ctx context.Context, s *Replicas, cfg Config) (r ReplicaResults) {
	part := cfg.Duration / rounds
	for i := 0; i < rounds; i++ {
		r.One.Merge(load(ctx, []*target{s.A}, cfg.Clients, part))
		r.Two.Merge(load(ctx, []*target{s.A, s.B}, cfg.Clients, part))
		if s.KubeAPIServer != nil {
			r.KubeAPIServer.Merge(load(ctx, []*target{s.KubeAPIServer}, cfg.Clients, part))
		}
	}
	r.Why = s.Why
	return r
}

// PrintReplicas writes the results and the ratios.
func PrintReplicas(w io.Writer, r ReplicaResults) {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d)/1e6) }
	fmt.Fprintf(w, "%-34s %10s %9s %9s %7s\n", "on a 3-member etcd cluster", "updates/s", "p50", "p99", "errors")
	row := func(name string, x Result) {
		fmt.Fprintf(w, "%-34s %10.0f %9s %9s %7d\n", name, x.OpsPerSec(), ms(x.Quantile(.5)), ms(x.Quantile(.99)), x.Errors)
	}
	row("rvplay, one replica", r.One)
	row("rvplay, two replicas", r.Two)
	if r.KubeAPIServer.Ops > 0 {
		row("kube-apiserver", r.KubeAPIServer)
	}
	fmt.Fprintf(w, "two/one replica: updates/s %.2fx\n", r.Two.OpsPerSec()/r.One.OpsPerSec())
	if r.KubeAPIServer.Ops > 0 {
		fmt.Fprintf(w, "one replica/kube-apiserver: updates/s %.2fx  p50 %.2fx\n", r.One.OpsPerSec()/r.KubeAPIServer.OpsPerSec(),
			float64(r.One.Quantile(.5))/float64(r.KubeAPIServer.Quantile(.5)))
	}
	if r.Why != "" {
		fmt.Fprintf(w, "(%s)\n", r.Why)
	}
}
