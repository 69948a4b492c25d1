package proctest

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a server process whose output goes to a log file, as a
// service manager runs one: the harnesses of etcd, kube-apiserver and
// kine start theirs through Start.
type Process struct {
	Cmd *exec.Cmd
	// Log is the file its stdout and stderr are appended to.
	Log string
	// Exited is closed once the process has ended; Err is then how.
	Exited chan struct{}
	Err    error
}

// Start starts cmd (its program, arguments and working directory as the
// caller set them) with its output appended to the file at logPath (so
// that a restarted server's log follows its first run's), in a process
// group of its own: a signal to the test binary's group (a ^C) does not
// reach the server behind Stop's back, and Stop signals the server alone.
func Start(cmd *exec.Cmd, logPath string) (*Process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("exec %s: %w", cmd.Path, err)
	}
	p := &Process{Cmd: cmd, Log: logPath, Exited: make(chan struct{})}
	go func() {
		p.Err = cmd.Wait()
		f.Close()
		close(p.Exited)
	}()
	return p, nil
}

// Pid is the process's ID.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Stop ends the process as Stop does (SIGTERM, SIGKILL after grace), name
// saying which server it was in the error.
func (p *Process) Stop(name string, grace time.Duration) error {
	return Stop(p.Cmd.Process, p.Exited, name, grace)
}

// LogTail is the last n bytes of the process's log, for an error that
// says why it did not start.
func (p *Process) LogTail(n int) string {
	b, _ := os.ReadFile(p.Log)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
