package proctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestAStartedProcessLogsToItsFileAndStops(t *testing.T) {
	log := filepath.Join(t.TempDir(), "server.log")
	p, err := Start(exec.Command("sh", "-c", `trap 'echo stopping; exit 0' TERM; echo started; while :; do sleep 0.01; done`), log)
	if err != nil {
		t.Fatal(err)
	}
	// The log is the only sign of readiness the script gives.
	for !strings.Contains(p.LogTail(100), "started") {
		select {
		case <-p.Exited:
			t.Fatalf("exited at start: %v\n%s", p.Err, p.LogTail(1000))
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := p.Stop("server", time.Minute); err != nil {
		t.Fatalf("Stop = %v, want nil", err)
	}
	if p.Err != nil {
		t.Errorf("exit: %v, want a clean exit through the process's own trap", p.Err)
	}
	if got := p.LogTail(100); got != "started\nstopping\n" {
		t.Errorf("log %q, want both lines", got)
	}
}

func TestARestartedProcessAppendsToItsLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "server.log")
	for _, line := range []string{"first", "second"} {
		p, err := Start(exec.Command("sh", "-c", "echo "+line), log)
		if err != nil {
			t.Fatal(err)
		}
		<-p.Exited
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "first\nsecond\n" {
		t.Fatalf("log %q, want both runs' lines", b)
	}
}

func TestStartingAMissingBinaryFails(t *testing.T) {
	_, err := Start(exec.Command(filepath.Join(t.TempDir(), "missing")), filepath.Join(t.TempDir(), "log"))
	if err == nil || !strings.Contains(err.Error(), "exec ") {
		t.Fatalf("Start = %v, want an exec error", err)
	}
}
