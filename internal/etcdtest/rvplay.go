package etcdtest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Rvplay is a running rvplay server binary (package ./server) serving one
// session on SQLite: the counterpart of Server for side-by-side runs.
type Rvplay struct {
	// URL is the server's address, e.g. http://127.0.0.1:40123.
	URL string
	// SessionURL is the session's base URL: SessionURL + "/v3/kv/range".
	SessionURL string
	DBPath     string

	cmd      *exec.Cmd
	exited   chan struct{}
	exitErr  error
	stopOnce sync.Once
	log      *lockedBuffer
}

var (
	buildMu   sync.Mutex
	builtPath string
)

// BuildRvplay builds the server binary once per process into dir (a
// directory that outlives the caller's test) and returns its path.
func BuildRvplay(dir string) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if builtPath != "" {
		if _, err := os.Stat(builtPath); err == nil {
			return builtPath, nil
		}
	}
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "rvplay-server")
	cmd := exec.Command("go", "build", "-o", out, "./server")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./server: %v\n%s", err, b)
	}
	builtPath = out
	return out, nil
}

// moduleRoot finds the main module's directory (where go.mod is).
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the rvplay module")
	}
	return filepath.Dir(gomod), nil
}

// RvplayBinDir is where StartRvplayServer puts the server binary. A test
// package's TestMain may set it to a directory it removes afterwards; when
// empty a temporary directory is made (and left behind).
var RvplayBinDir string

var binDir struct {
	once sync.Once
	dir  string
	err  error
}

// StartRvplayServer builds (once) and starts the server binary on a free
// loopback port with a fresh SQLite file in the test's temp dir, serving
// session, with flags added to its command line; it stops the server when
// the test ends.
func StartRvplayServer(tb testing.TB, session string, flags ...string) *Rvplay {
	tb.Helper()
	binDir.once.Do(func() {
		if binDir.dir = RvplayBinDir; binDir.dir == "" {
			binDir.dir, binDir.err = os.MkdirTemp("", "rvplay-bin-")
		}
	})
	if binDir.err != nil {
		tb.Fatal(binDir.err)
	}
	bin, err := BuildRvplay(binDir.dir)
	if err != nil {
		tb.Fatal(err)
	}
	r, err := StartRvplayBinary(bin, filepath.Join(tb.TempDir(), "rvplay.db"), session, flags...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := r.Stop(); err != nil {
			tb.Errorf("stopping rvplay: %v", err)
		}
	})
	return r
}

// StartRvplayBinary starts bin on a free port over dbPath serving session,
// with flags added to its command line, and waits until it prints its
// address. The caller must Stop it.
func StartRvplayBinary(bin, dbPath, session string, flags ...string) (*Rvplay, error) {
	cmd := exec.Command(bin, append([]string{"--addr", "127.0.0.1:0", "--db", dbPath, "--session", session}, flags...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	log := &lockedBuffer{}
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	r := &Rvplay{DBPath: dbPath, cmd: cmd, exited: make(chan struct{}), log: log}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			log.Write([]byte(line + "\n"))
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
		r.exitErr = cmd.Wait()
		close(r.exited)
	}()
	select {
	case u := <-addr:
		r.URL = u
		r.SessionURL = u + "/s/" + session
		return r, nil
	case <-r.exited:
		return nil, fmt.Errorf("rvplay server exited at start: %v\n%s", r.exitErr, log.String())
	case <-time.After(readyTimeout):
		r.Stop()
		return nil, fmt.Errorf("rvplay server printed no address within %v\n%s", readyTimeout, log.String())
	}
}

// Log returns what the server wrote.
func (r *Rvplay) Log() string { return r.log.String() }

// Stop ends the server (SIGTERM, SIGKILL after 10 s) and waits for it.
func (r *Rvplay) Stop() error {
	var err error
	r.stopOnce.Do(func() {
		select {
		case <-r.exited:
			return
		default:
		}
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-r.exited:
		case <-time.After(10 * time.Second):
			_ = r.cmd.Process.Kill()
			<-r.exited
			err = errors.New("rvplay did not stop on SIGTERM within 10s; killed")
		}
	})
	return err
}

type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
