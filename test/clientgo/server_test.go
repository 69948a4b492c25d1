// Package clientgo checks that the real client-go (latest release) works
// against an rvplay server process: typed clientsets with JSON, the dynamic
// client, shared informers (list+watch and watch-list), RetryOnConflict
// and list pagination. It is a module of its own so that the product
// module never depends on client-go.
package clientgo

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// serverBin is the rvplay binary built once for all tests.
var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rvplay-clientgo-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "rvplay")
	build := exec.Command("go", "build", "-o", serverBin, "./server")
	build.Dir = "../.."
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building the rvplay server (go build ./server) failed: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer collects a process's output for failure reports.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServer runs a fresh rvplay server (its own SQLite file) with one
// session "t" and returns the session's base URL.
func startServer(t *testing.T) string {
	t.Helper()
	addr := freeAddr(t)
	var out syncBuffer
	cmd := exec.Command(serverBin, "--addr", addr, "--db", filepath.Join(t.TempDir(), "x.db"), "--session", "t")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("server output:\n%s", out.String())
		}
	})
	base := "http://" + addr + "/s/t"
	// The process gives no readiness signal but its HTTP answers, so
	// poll /version until it answers (or the process dies).
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(base + "/version")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return base
			}
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("server exited before answering: %v\n%s", err, out.String())
		case <-time.After(25 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer %s/version within 15s (last error %v)\n%s", base, err, out.String())
		}
	}
}

// restConfig is what the README tells users: JSON, because rvplay does
// not speak protobuf (client-go's typed clients prefer it since v0.32).
func restConfig(base string) *rest.Config {
	return &rest.Config{
		Host:          base,
		ContentConfig: rest.ContentConfig{ContentType: "application/json"},
		QPS:           1000,
		Burst:         1000,
	}
}

// requestLog records the URLs client-go requests, to check which protocol
// path (LIST vs watch-list) it took.
type requestLog struct {
	mu   sync.Mutex
	urls []string
}

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		l.mu.Lock()
		l.urls = append(l.urls, req.Method+" "+req.URL.RequestURI())
		l.mu.Unlock()
		return rt.RoundTrip(req)
	})
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.urls...)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
