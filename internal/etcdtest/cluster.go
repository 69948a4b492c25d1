package etcdtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/internal/proctest"
)

// Cluster is several etcd members on loopback, one cluster.
type Cluster struct {
	Members []*Server
}

// Endpoints are the members' client URLs.
func (c *Cluster) Endpoints() []string {
	out := make([]string, len(c.Members))
	for i, m := range c.Members {
		out[i] = m.URL
	}
	return out
}

// Hosts are the members' client addresses, host:port, comma-separated
// (rvplay's --store etcd://...).
func (c *Cluster) Hosts() string {
	var hs []string
	for _, u := range c.Endpoints() {
		hs = append(hs, strings.TrimPrefix(u, "http://"))
	}
	return strings.Join(hs, ",")
}

// StartCluster starts an n-member cluster for the test and stops it when
// the test ends.
func StartCluster(tb testing.TB, n int) *Cluster {
	tb.Helper()
	bin := Require(tb)
	c, err := StartClusterBinary(bin, tb.TempDir(), n)
	if err != nil {
		tb.Fatalf("starting an etcd cluster: %v", err)
	}
	tb.Cleanup(func() {
		if err := c.Stop(); err != nil {
			tb.Errorf("stopping etcd: %v", err)
		}
	})
	return c
}

// StartClusterBinary starts an n-member cluster of the etcd at bin, its
// members' data in dir, and waits until every member is healthy. The
// caller must Stop it.
func StartClusterBinary(bin, dir string, n int) (*Cluster, error) {
	ports, err := proctest.FreePorts(2 * n)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var initial []string
	for i := 0; i < n; i++ {
		initial = append(initial, fmt.Sprintf("m%d=http://127.0.0.1:%d", i, ports[2*i+1]))
	}
	c := &Cluster{}
	for i := 0; i < n; i++ {
		client := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i])
		peer := fmt.Sprintf("http://127.0.0.1:%d", ports[2*i+1])
		data := filepath.Join(dir, fmt.Sprintf("m%d", i))
		s := &Server{URL: client, DataDir: data, LogPath: data + ".log", bin: bin, args: []string{
			"--name", fmt.Sprintf("m%d", i), "--data-dir", data,
			"--listen-client-urls", client, "--advertise-client-urls", client,
			"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
			"--initial-cluster", strings.Join(initial, ","), "--initial-cluster-state", "new",
			"--initial-cluster-token", "rvplay-test", "--logger", "zap", "--log-level", "warn"}}
		if err := s.exec(); err != nil {
			return nil, errors.Join(err, c.Stop())
		}
		c.Members = append(c.Members, s)
	}
	for _, m := range c.Members {
		if err := m.waitReady(readyTimeout); err != nil {
			return nil, errors.Join(fmt.Errorf("%w\netcd log:\n%s", err, m.p.LogTail(4000)), c.Stop())
		}
	}
	return c, nil
}

// Stop stops every member.
func (c *Cluster) Stop() error {
	var errs []error
	for _, m := range c.Members {
		errs = append(errs, m.Stop())
	}
	return errors.Join(errs...)
}
