package proctest

import (
	"os/exec"
	"strings"
	"testing"
	"time"
)

// start runs a shell script and returns its process and a channel closed
// when it has exited.
func start(t *testing.T, script string) (*exec.Cmd, chan struct{}) {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The script prints once its trap is set, so a SIGTERM cannot arrive
	// before the shell knows what to do with it.
	buf := make([]byte, 6)
	if _, err := stdout.Read(buf); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	return cmd, exited
}

func TestAProcessThatStopsOnSIGTERMIsNotKilled(t *testing.T) {
	cmd, exited := start(t, `trap 'exit 0' TERM; echo ready; while :; do sleep 0.01; done`)
	if err := Stop(cmd.Process, exited, "server", time.Minute); err != nil {
		t.Fatalf("Stop = %v, want nil", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d, want 0: the process should have ended through its own trap", code)
	}
}

func TestAProcessThatIgnoresSIGTERMIsKilledAfterTheGrace(t *testing.T) {
	cmd, exited := start(t, `trap '' TERM; echo ready; while :; do sleep 0.01; done`)
	err := Stop(cmd.Process, exited, "stubborn", 50*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "stubborn did not stop on SIGTERM") {
		t.Fatalf("Stop = %v, want an error naming the killed process", err)
	}
	if cmd.ProcessState.Success() {
		t.Error("the process exited successfully; it should have been killed")
	}
}

func TestStoppingAnExitedProcessIsANoOp(t *testing.T) {
	cmd, exited := start(t, `echo ready`)
	<-exited
	if err := Stop(cmd.Process, exited, "server", time.Minute); err != nil {
		t.Fatalf("Stop = %v, want nil", err)
	}
}
