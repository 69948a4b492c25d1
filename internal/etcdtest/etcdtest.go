// Package etcdtest starts a real etcd server (the etcd binary of Debian's
// etcd-server package) on free loopback ports for tests and benchmarks that
// compare rvplay with etcd. It installs the package when the binary is
// missing. It is test tooling: product code must not import it.
package etcdtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/proctest"
)

// DefaultBinary is where Debian's etcd-server package puts etcd.
const DefaultBinary = "/usr/bin/etcd"

// readyTimeout bounds how long Start waits for a freshly started etcd to
// answer its health endpoint.
const readyTimeout = 30 * time.Second

// Server is a running etcd process serving one member on loopback.
type Server struct {
	// URL is the client URL, e.g. http://127.0.0.1:40123; the JSON gateway
	// is at URL + "/v3/...".
	URL     string
	DataDir string
	// LogPath holds etcd's own log output.
	LogPath string

	bin  string
	args []string

	mu sync.Mutex // serializes Stop and Restart
	p  *proctest.Process
}

// Options tune Start.
type Options struct {
	// DataDir is etcd's data directory; empty means a fresh temporary one.
	DataDir string
	// Args are extra command-line flags for etcd.
	Args []string
}

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// Binary returns the path of the etcd binary, installing Debian's
// etcd-server package (apt-get, through sudo when not root) if there is none.
func Binary() (string, error) {
	binaryOnce.Do(func() { binaryPath, binaryErr = findOrInstall() })
	return binaryPath, binaryErr
}

func findOrInstall() (string, error) {
	if p, err := findBinary(); err == nil {
		return p, nil
	}
	var prefix []string
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("sudo"); err != nil {
			return "", errors.New("etcd is not installed and installing it needs root (no sudo found): run `apt-get install -y etcd-server`")
		}
		prefix = []string{"sudo", "-n"}
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return "", errors.New("etcd is not installed and apt-get is not available to install etcd-server")
	}
	run := func(args ...string) error {
		full := append(append([]string{}, prefix...), args...)
		cmd := exec.Command(full[0], full[1:]...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v\n%s", strings.Join(full, " "), err, tail(out, 2000))
		}
		return nil
	}
	if err := run("apt-get", "update"); err != nil {
		return "", fmt.Errorf("installing etcd-server: %w", err)
	}
	if err := run("apt-get", "install", "-y", "etcd-server"); err != nil {
		return "", fmt.Errorf("installing etcd-server: %w", err)
	}
	return findBinary()
}

func findBinary() (string, error) {
	if st, err := os.Stat(DefaultBinary); err == nil && !st.IsDir() {
		return DefaultBinary, nil
	}
	return exec.LookPath("etcd")
}

// Version is the version the etcd binary reports ("3.4.23").
func Version(bin string) (string, error) {
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "etcd Version: "); ok {
			return strings.TrimSpace(v), nil
		}
	}
	return "", fmt.Errorf("no version in %q", out)
}

// Require returns the etcd binary or ends the test: in CI (CI=true) a
// missing etcd that cannot be installed is a failure, elsewhere a skip.
func Require(tb testing.TB) string {
	tb.Helper()
	p, err := Binary()
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("a real etcd is required in CI: %v", err)
		}
		tb.Skipf("skipping: no real etcd available (%v); install Debian's etcd-server package to run this test", err)
	}
	return p
}

// Start starts etcd for the test and stops it when the test ends.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	bin := Require(tb)
	if opts.DataDir == "" {
		opts.DataDir = filepath.Join(tb.TempDir(), "etcd")
	}
	s, err := StartBinary(bin, opts)
	if err != nil {
		tb.Fatalf("starting etcd: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stopping etcd: %v", err)
		}
	})
	return s
}

// StartBinary starts the etcd at bin and waits until it is healthy. The
// caller must Stop it. Ports are picked free on 127.0.0.1; a start that
// loses a port race is retried.
func StartBinary(bin string, opts Options) (*Server, error) {
	if opts.DataDir == "" {
		return nil, errors.New("etcdtest: DataDir is required")
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := startOnce(bin, opts, attempt)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startOnce(bin string, opts Options, attempt int) (*Server, error) {
	ports, err := proctest.FreePorts(2)
	if err != nil {
		return nil, err
	}
	dir := opts.DataDir
	if attempt > 0 {
		dir = fmt.Sprintf("%s.%d", opts.DataDir, attempt)
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	client := fmt.Sprintf("http://127.0.0.1:%d", ports[0])
	peer := fmt.Sprintf("http://127.0.0.1:%d", ports[1])
	args := []string{
		"--name", "rvplay-test",
		"--data-dir", dir,
		"--listen-client-urls", client,
		"--advertise-client-urls", client,
		"--listen-peer-urls", peer,
		"--initial-advertise-peer-urls", peer,
		"--initial-cluster", "rvplay-test=" + peer,
		"--initial-cluster-state", "new",
		"--logger", "zap",
		"--log-level", "warn",
	}
	args = append(args, opts.Args...)
	s := &Server{URL: client, DataDir: dir, LogPath: dir + ".log", bin: bin, args: args}
	if err := s.exec(); err != nil {
		return nil, err
	}
	if err := s.waitReady(readyTimeout); err != nil {
		s.Stop()
		return nil, fmt.Errorf("%w\netcd log:\n%s", err, s.p.LogTail(4000))
	}
	return s, nil
}

// exec starts the etcd process, its output added to LogPath.
func (s *Server) exec() error {
	p, err := proctest.Start(exec.Command(s.bin, s.args...), s.LogPath)
	if err != nil {
		return err
	}
	s.p = p
	return nil
}

// Restart starts a stopped etcd again, on its data and ports, and waits
// until it is healthy (a cluster's member: once the cluster has a leader).
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.p.Exited:
	default:
		return errors.New("etcdtest: Restart of an etcd that runs")
	}
	if err := s.exec(); err != nil {
		return err
	}
	return s.waitReady(readyTimeout)
}

// waitReady polls /health until etcd reports healthy, the process exits,
// or the timeout passes.
func (s *Server) waitReady(timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/health", nil)
		if resp, err := client.Do(req); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && bytes.Contains(body, []byte(`"true"`)) {
				return nil
			}
		}
		select {
		case <-s.p.Exited:
			return fmt.Errorf("etcd exited before it was ready: %v", s.p.Err)
		case <-ctx.Done():
			return fmt.Errorf("etcd at %s not healthy after %v", s.URL, timeout)
		case <-tick.C:
		}
	}
}

// Pid is the etcd process's ID.
func (s *Server) Pid() int { return s.p.Pid() }

// Stop terminates etcd (SIGTERM, then SIGKILL after 10 s) and waits for
// it; an etcd that has stopped stays so.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p.Stop("etcd", proctest.Grace)
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
