//go:build !js

package jsconsole

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
)

// Start starts a console on h, in a Node process running runner.mjs.
func Start(h api.Handler, opts Options) (*Console, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, ErrNoNode
	}
	args := []string{filepath.Join(filepath.Dir(hostModule()), "runner.mjs")}
	if !opts.Now.IsZero() {
		args = append(args, opts.Now.UTC().Format(time.RFC3339))
	}
	cmd := exec.Command(node, args...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := newConsole(h)
	l := &process{cmd: cmd, stdin: stdin, read: make(chan struct{})}
	c.link = l
	go func() {
		defer close(l.read)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			c.receive(sc.Bytes())
		}
		c.ended()
	}()
	return c, nil
}

// process is the link to a Node process: JSON lines on its stdin and
// stdout.
type process struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	stdin io.WriteCloser
	read  chan struct{} // closed when its stdout ended
}

func (p *process) send(msg []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, _ = p.stdin.Write(append(msg, '\n'))
}

func (p *process) close() error {
	p.stdin.Close()
	<-p.read
	return p.cmd.Wait()
}
