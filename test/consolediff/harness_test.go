// Package consolediff compares the lab's console (web/static/js/console.js,
// run under Node by internal/jsconsole) with the real tools, byte for
// byte: the same command lines run through Debian's etcdctl against a real
// etcd and through the console against an rvplay session, and through the
// real kubectl against an rvplay server session and through the console
// against a twin session (same clock, same UIDs).
// Outputs, error lines and exit codes must be equal.
package consolediff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/internal/jsconsole"
	"github.com/rvplay/rvplay/internal/proctest"
)

// step is one command line (or a few, run as one shell script on the real
// side and one after another in the console).
type step struct {
	line string
	// real replaces line on the real side where the line names things only
	// the lab has (the articles' endpoints and certificate paths).
	real string
	// console replaces line in the console, for what the console does
	// another way (it has no sed).
	console string
	// rv names an object (deployments/default/web) whose live
	// resourceVersion replaces $RV in the line on both sides.
	rv string
	// normalize rewrites both outputs before comparing, for the few fields
	// that differ by nature (etcd's db size, its raft index).
	normalize func(string) string
	// watch: the command streams; both sides run until their output
	// reaches want (a substring) and are then interrupted.
	watch string
	// after runs (on both sides) once the watch's output has reached
	// watch, before it is interrupted.
	after []string
}

// result is what a command printed and how it ended.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s--- stderr\n%s", r.code, r.stdout, r.stderr)
}

// realShell runs lines through bash with the given environment.
type realShell struct {
	env []string
	// filterStderr drops noise the real tool logs (etcdctl's client
	// retry warnings, JSON lines from its logger).
	filterStderr func(string) string
}

func (s realShell) run(t *testing.T, script string) result {
	t.Helper()
	return s.runIn(t, "", script)
}

// runIn runs a script in dir ("" for the current directory).
func (s realShell) runIn(t *testing.T, dir, script string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "shopt -s expand_aliases\n"+script)
	cmd.Env = s.env
	cmd.Dir = dir
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("bash -c %q: %v", script, err)
	}
	r := result{out.String(), errOut.String(), code}
	if s.filterStderr != nil {
		r.stderr = s.filterStderr(r.stderr)
	}
	return r
}

// watchUntil runs script and interrupts it (SIGINT, as Ctrl+C) once its
// stdout contains want; after runs in between.
func (s realShell) watchUntil(t *testing.T, script, want string, after func()) result {
	t.Helper()
	return s.watchUntilIn(t, "", script, want, after)
}

func (s realShell) watchUntilIn(t *testing.T, dir, script, want string, after func()) result {
	t.Helper()
	if after != nil && strings.HasPrefix(script, "kubectl ") {
		// kubectl logs its requests at -v=6: the watch request tells when
		// the writes that follow will be seen.
		script += " -v=6"
	}
	cmd := exec.Command("bash", "-c", "exec "+script)
	cmd.Env = s.env
	cmd.Dir = dir
	out := &signalBuffer{want: want, reached: make(chan struct{})}
	errOut := &signalBuffer{want: "watch=true", reached: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if after != nil {
		if strings.HasPrefix(script, "kubectl ") {
			select {
			case <-errOut.reached:
			case err := <-exited:
				t.Fatalf("%s ended before watching: %v\n%s\n%s", script, err, out.String(), errOut.String())
			case <-time.After(30 * time.Second):
				_ = cmd.Process.Kill()
				t.Fatalf("%s did not start its watch:\n%s", script, errOut.String())
			}
		}
		after()
	}
	select {
	case <-out.reached:
	case err := <-exited:
		t.Fatalf("%s ended before printing %q: %v\n%s\n%s", script, want, err, out.String(), errOut.String())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("%s did not print %q; printed:\n%s\n%s", script, want, out.String(), errOut.String())
	}
	_ = cmd.Process.Signal(os.Interrupt)
	<-exited
	r := result{upToMarker(out.String(), want), klogLines.ReplaceAllString(errOut.String(), ""), 130}
	if s.filterStderr != nil {
		r.stderr = s.filterStderr(r.stderr)
	}
	return r
}

// klogLines are kubectl's -v log lines.
var klogLines = regexp.MustCompile(`(?m)^I\d{4} .*\n`)

// lab is the console under test: the lab's console under Node, on a
// session of this process, with the editor kubectl edit opens.
type lab struct {
	*jsconsole.Console
	edit func(string) (string, bool)
}

func startConsole(t *testing.T, h api.Handler, now time.Time) *lab {
	t.Helper()
	c, err := jsconsole.Start(h, jsconsole.Options{Now: now})
	if errors.Is(err, jsconsole.ErrNoNode) && os.Getenv("CI") != "true" {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &lab{Console: c}
}

// runConsole runs each line of script through the console, as a learner
// types them one after another.
func runConsole(t *testing.T, c *lab, script string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	code := 0
	for _, line := range splitScript(script) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		code = c.Run(ctx, line, jsconsole.Output{Stdout: &out, Stderr: &errOut, Edit: c.edit})
		cancel()
	}
	return result{out.String(), errOut.String(), code}
}

// splitScript cuts a script into console inputs: one per line, except
// that a heredoc stays with its command.
func splitScript(script string) []string {
	var inputs []string
	lines := strings.Split(strings.TrimRight(script, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		in := lines[i]
		if j := strings.Index(in, "<<"); j >= 0 {
			delim := strings.Trim(strings.Fields(in[j+2:])[0], `'"-`)
			for i+1 < len(lines) {
				i++
				in += "\n" + lines[i]
				if strings.TrimSpace(lines[i]) == delim {
					break
				}
			}
		}
		inputs = append(inputs, in)
	}
	return inputs
}

func consoleWatchUntil(t *testing.T, c *lab, line, want string, after func()) result {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := &signalBuffer{want: want, reached: make(chan struct{})}
	var errOut proctest.Output
	done := make(chan int, 1)
	streaming := make(chan struct{})
	var once sync.Once
	go func() {
		done <- c.Run(ctx, line, jsconsole.Output{Stdout: out, Stderr: &errOut, Streaming: func() { once.Do(func() { close(streaming) }) }})
	}()
	if after != nil {
		select {
		case <-streaming:
		case code := <-done:
			t.Fatalf("console %s ended (%d) before watching:\n%s\n%s", line, code, out.String(), errOut.String())
		case <-time.After(30 * time.Second):
			t.Fatalf("console %s did not start its watch", line)
		}
		after()
	}
	select {
	case <-out.reached:
	case code := <-done:
		t.Fatalf("console %s ended (%d) before printing %q:\n%s\n%s", line, code, want, out.String(), errOut.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("console %s did not print %q; printed:\n%s\n%s", line, want, out.String(), errOut.String())
	}
	cancel()
	code := <-done
	return result{upToMarker(out.String(), want), errOut.String(), code}
}

// upToMarker cuts a stream's output after the line that holds the marker:
// what was printed before it is determined by the order of events, what a
// stream printed after it depends on when the interrupt came.
func upToMarker(s, want string) string {
	i := strings.Index(s, want)
	if i < 0 {
		return s
	}
	end := i + len(want)
	if j := strings.IndexByte(s[end-1:], '\n'); j >= 0 {
		return s[:end-1+j+1]
	}
	return s
}

// signalBuffer closes reached once what was written contains want.
type signalBuffer struct {
	proctest.Output
	want    string
	once    sync.Once
	reached chan struct{}
}

func (s *signalBuffer) Write(p []byte) (int, error) {
	n, err := s.Output.Write(p)
	// The marker counts once the line holding it is complete.
	out := s.String()
	if i := strings.Index(out, s.want); i >= 0 && strings.Contains(out[i+len(s.want)-1:], "\n") {
		s.once.Do(func() { close(s.reached) })
	}
	return n, err
}

func compare(t *testing.T, name string, real, got result) {
	t.Helper()
	if real != got {
		t.Errorf("%s:\nreal tool:\n%s\nconsole:\n%s", name, real, got)
	}
}
