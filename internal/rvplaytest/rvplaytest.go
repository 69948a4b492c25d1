// Package rvplaytest runs the rvplay server binary (package ./server) as a
// real process, for the tests and benchmarks of every module in the
// repository (the main one, and the separate modules under test/ and bench/
// that require it with a replace directive): linked once per checkout and
// change (bin/test/, see Build), started on a free loopback port over a
// fresh SQLite file, stopped when the test ends. It is test tooling:
// product code must not import it.
package rvplaytest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/proctest"
)

// modulePath is the main module's, which holds ./server.
const modulePath = "github.com/rvplay/rvplay"

// readyTimeout bounds how long a started server may take to print its
// address.
const readyTimeout = 30 * time.Second

// Server is a running rvplay server process.
type Server struct {
	// URL is the server's address, e.g. http://127.0.0.1:40123.
	URL string
	// SessionURL is the base URL of the session it was started with:
	// SessionURL + "/v3/kv/range" (empty if it was started with none).
	SessionURL string
	// DebugURL is the address of Go's profiler (http://127.0.0.1:40124,
	// serving /debug/pprof/) when the server was started with --debug-addr,
	// else empty.
	DebugURL string
	// GRPCAddr is the host:port of etcd's gRPC API when the server was
	// started with --grpc-addr (StartGRPC), else empty.
	GRPCAddr string
	DBPath   string

	cmd      *exec.Cmd
	exited   chan struct{}
	exitErr  error
	stopOnce sync.Once
	log      *proctest.Output
}

var (
	buildMu   sync.Mutex
	builtPath string
)

// Build builds the server binary once per process into dir (a directory
// that outlives the caller's test) and returns its path.
//
// go build writes it first to bin/test/ of the checkout, where it links
// again only when the server's code (or the build's settings) changed: go
// build compares the build ID of the binary already there. The test
// processes of one `task test`, a dozen packages in five modules, so link
// the 80 MB binary once instead of once each (seconds apiece). A lock on
// that directory keeps two processes from building into it at once, and
// dir gets a hard link to the result (a copy across file systems): a later
// build there writes a new file and never changes the one a test runs.
func Build(dir string) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if builtPath != "" {
		if _, err := os.Stat(builtPath); err == nil {
			return builtPath, nil
		}
	}
	root, err := ModuleRoot()
	if err != nil {
		return "", err
	}
	shared := filepath.Join(root, "bin", "test")
	if err := os.MkdirAll(shared, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(shared, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close() // and so unlocked
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking %s: %w", shared, err)
	}
	built := filepath.Join(shared, "rvplay-server")
	cmd := exec.Command("go", "build", "-o", built, "./server")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./server: %v\n%s", err, b)
	}
	out := filepath.Join(dir, "rvplay-server")
	_ = os.Remove(out) // an earlier process's, in a directory given again
	if err := os.Link(built, out); err != nil {
		if err := copyFile(out, built); err != nil {
			return "", err
		}
	}
	builtPath = out
	return out, nil
}

// copyFile copies the executable at from to a new file to.
func copyFile(to, from string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return err
	}
	return dst.Close()
}

// ModuleRoot finds the main module's directory, the repository's root:
// the nearest directory at or above the working directory whose go.mod
// declares modulePath. (`go env GOMOD` would name a test module's own
// go.mod.)
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && declares(b, modulePath) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of %s at or above the working directory", modulePath)
		}
		dir = parent
	}
}

// declares says whether a go.mod file's module directive names path.
func declares(gomod []byte, path string) bool {
	for line := range bytes.Lines(gomod) {
		if f := strings.Fields(string(line)); len(f) == 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == path
		}
	}
	return false
}

// binDir is where ServerBinary puts the server binary: a directory that
// RunTests makes and removes when the package's tests end. It is empty in
// a test process that did not go through RunTests, and ServerBinary then
// refuses: a binary built elsewhere would be left in the temporary
// directory, some 40 MB per test run.
var binDir string

// RunTests runs a test package's tests (its TestMain calls it) with the
// server binary built into a directory of their own, removed when they
// end, and returns their exit code.
func RunTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "rvplay-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir
	sharedEtcd.allowed = true
	code := m.Run()
	if sharedEtcd.srv != nil {
		if err := sharedEtcd.srv.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping the tests' etcd:", err)
		}
		os.RemoveAll(sharedEtcd.dir)
	}
	return code
}

// StoreEnv names the environment variable that moves the servers Start
// starts onto another store: RVPLAY_TEST_STORE=etcd runs each on an etcd
// (--store etcd://), so that a suite written for the server (client-go's,
// kubectl's) checks the Kubernetes API on an etcd cluster too. In a test
// process that runs through RunTests the servers share one etcd, each
// under a prefix of its own (--etcd-prefix), as several deployments may
// share a cluster: one etcd start less per server, and the revisions each
// sees move with the others' writes, as on any shared cluster; elsewhere
// each server has a fresh etcd of its own.
const StoreEnv = "RVPLAY_TEST_STORE"

// sharedEtcd is the test process's one etcd (see StoreEnv), started by the
// first server that needs it and stopped by RunTests.
var sharedEtcd struct {
	// allowed: RunTests runs the tests, and so stops the etcd after them.
	allowed bool
	once    sync.Once
	srv     *etcdtest.Server
	dir     string
	err     error
	servers atomic.Int64
}

// etcdFlags are the flags that put a server on etcd (see StoreEnv).
func etcdFlags(tb testing.TB) []string {
	tb.Helper()
	if !sharedEtcd.allowed {
		e := etcdtest.Start(tb, etcdtest.Options{})
		return []string{"--store", "etcd://" + strings.TrimPrefix(e.URL, "http://")}
	}
	bin := etcdtest.Require(tb)
	sharedEtcd.once.Do(func() {
		if sharedEtcd.dir, sharedEtcd.err = os.MkdirTemp("", "rvplay-etcd-"); sharedEtcd.err == nil {
			sharedEtcd.srv, sharedEtcd.err = etcdtest.StartBinary(bin, etcdtest.Options{DataDir: filepath.Join(sharedEtcd.dir, "etcd")})
		}
	})
	if sharedEtcd.err != nil {
		tb.Fatalf("starting the tests' etcd: %v", sharedEtcd.err)
	}
	return []string{"--store", "etcd://" + strings.TrimPrefix(sharedEtcd.srv.URL, "http://"),
		"--etcd-prefix", fmt.Sprintf("/rvplay-%d/", sharedEtcd.servers.Add(1))}
}

// RequireSessionCompaction skips a test that compacts a session's history
// itself when StoreEnv puts the servers on etcd: etcd compacts the whole
// cluster, not one session's prefix, so a session stored there refuses a
// compaction of its own by design (issue 16: the cluster's compaction is
// an operator's action).
func RequireSessionCompaction(tb testing.TB) {
	tb.Helper()
	if os.Getenv(StoreEnv) == "etcd" {
		tb.Skipf("compacts a session itself, which a session stored on etcd refuses by design (%s=etcd: etcd compacts the whole cluster)", StoreEnv)
	}
}

// Start builds (once) and starts the server binary on a free loopback port
// with a fresh SQLite file in the test's temp dir (or on etcd, see
// StoreEnv), serving session (an open session; none if empty), with flags
// added to its command line; it stops the server when the test ends, and
// shows its output if the test failed.
func Start(tb testing.TB, session string, flags ...string) *Server {
	tb.Helper()
	switch store := os.Getenv(StoreEnv); store {
	case "", "sqlite":
	case "etcd":
		flags = append(etcdFlags(tb), flags...)
	default:
		tb.Fatalf("%s=%q: want sqlite or etcd", StoreEnv, store)
	}
	bin := ServerBinary(tb)
	s, err := StartBinary(bin, filepath.Join(tb.TempDir(), "rvplay.db"), session, flags...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := s.Stop(); err != nil {
			tb.Errorf("stopping rvplay: %v", err)
		}
		if tb.Failed() {
			tb.Logf("rvplay output (the last 100 lines):\n%s", tail(s.Log(), 100))
		}
	})
	return s
}

// ServerBinary builds the server binary (once per test process, with go
// build's cache) into the directory of RunTests and returns its path. The
// package's TestMain must run its tests through RunTests.
func ServerBinary(tb testing.TB) string {
	tb.Helper()
	if binDir == "" {
		tb.Fatal("rvplaytest: the package's TestMain must run its tests through rvplaytest.RunTests, which removes the server binary it builds")
	}
	bin, err := Build(binDir)
	if err != nil {
		tb.Fatal(err)
	}
	return bin
}

// StartGRPC is Start with etcd's gRPC API served on a free loopback port
// (Server.GRPCAddr), session being the one clients without credentials
// reach.
func StartGRPC(tb testing.TB, session string, flags ...string) *Server {
	tb.Helper()
	return Start(tb, session, append([]string{"--grpc-addr", "127.0.0.1:0", "--grpc-session", session}, flags...)...)
}

// StartBinary starts bin on a free port over dbPath serving session (none
// if empty), with flags added to its command line, and waits until it
// prints its address (and, with --debug-addr, its profiler's). The caller
// must Stop it.
func StartBinary(bin, dbPath, session string, flags ...string) (*Server, error) {
	args := []string{"--addr", "127.0.0.1:0", "--db", dbPath}
	if session != "" {
		args = append(args, "--session", session)
	}
	cmd := exec.Command(bin, append(args, flags...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	log := &proctest.Output{}
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{DBPath: dbPath, cmd: cmd, exited: make(chan struct{}), log: log}
	addr := make(chan string, 1)
	debug := make(chan string, 1)
	grpcAddr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			log.Write([]byte(line + "\n"))
			// The profiler's line comes first (it listens before the
			// sessions open).
			if rest, ok := strings.CutPrefix(line, "rvplay profiler on "); ok {
				debug <- strings.TrimSuffix(strings.TrimSpace(rest), "/debug/pprof/")
			}
			if rest, ok := strings.CutPrefix(line, "rvplay etcd gRPC on "); ok {
				rest = strings.TrimSpace(rest)
				grpcAddr <- rest[strings.Index(rest, "://")+3:]
			}
			if rest, ok := strings.CutPrefix(line, "rvplay listening on "); ok {
				select {
				case addr <- strings.TrimSpace(rest):
				default:
				}
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	go func() {
		s.exitErr = cmd.Wait()
		close(s.exited)
	}()
	select {
	case u := <-addr:
		s.URL = u
		if session != "" {
			s.SessionURL = u + "/s/" + session
		}
		select {
		case s.DebugURL = <-debug:
		default:
		}
		select {
		case s.GRPCAddr = <-grpcAddr:
		default:
		}
		return s, nil
	case <-s.exited:
		return nil, fmt.Errorf("rvplay server exited at start: %v\n%s", s.exitErr, log.String())
	case <-time.After(readyTimeout):
		s.Stop()
		return nil, fmt.Errorf("rvplay server printed no address within %v\n%s", readyTimeout, log.String())
	}
}

// Pid is the server's process id (its /proc/<pid>/ tells what it holds).
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// Exited is closed once the process has ended, by Stop or by itself.
func (s *Server) Exited() <-chan struct{} { return s.exited }

// ExitErr is how the process ended; valid once Exited is closed.
func (s *Server) ExitErr() error { return s.exitErr }

// Log returns what the server wrote.
func (s *Server) Log() string { return s.log.String() }

// Signal sends the server sig without waiting for it to end: for a test
// of what it does while it shuts down (Exited tells when it has).
func (s *Server) Signal(sig os.Signal) error { return s.cmd.Process.Signal(sig) }

// Kill ends the server at once (SIGKILL) and waits for it.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// Stop ends the server (SIGTERM, SIGKILL after 10 s) and waits for it.
func (s *Server) Stop() error {
	var err error
	s.stopOnce.Do(func() { err = proctest.Stop(s.cmd.Process, s.exited, "rvplay", proctest.Grace) })
	return err
}

// tail is the last n lines of text.
func tail(text string, n int) string {
	lines := strings.SplitAfter(text, "\n")
	if len(lines) > n+1 {
		lines = lines[len(lines)-n-1:]
	}
	return strings.Join(lines, "")
}
