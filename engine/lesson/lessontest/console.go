package lessontest

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/console"
)

// commandTimeout bounds one console command.
const commandTimeout = 10 * time.Second

// runCommand runs a console command line in the lab's console
// (engine/console), with stdin as the editor's text that `-f -` reads,
// and returns what it printed. A failing command is an outcome (a 409 is
// what a lesson shows); a command the console does not know is an error.
func (r *Runner) runCommand(ctx context.Context, line, stdin string) (string, error) {
	cons := console.New(r.front, console.Options{Editor: stdinEditor(stdin), Now: r.Clock.Now})
	var out, errOut strings.Builder
	// A command that waits (rollout status) must end within a test's
	// patience: its deadline is real time, as Ctrl+C is in the lab.
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	stop := r.passTime(ctx)
	status := cons.Run(ctx, line, console.Output{Stdout: &out, Stderr: &errOut})
	stop()
	if ctx.Err() != nil {
		return out.String() + errOut.String(), fmt.Errorf("console: %q did not finish within %v", line, commandTimeout)
	}
	if status == 127 || status == 2 {
		return out.String() + errOut.String(), fmt.Errorf("console: %q: %s", line, errOut.String())
	}
	return out.String() + errOut.String(), nil
}

// stdinEditor is the lab's editor holding what a `-f -` command reads.
type stdinEditor string

func (e stdinEditor) Text(context.Context) (string, error) { return string(e), nil }

func (e stdinEditor) Edit(context.Context, string) (string, error) {
	return "", console.ErrEditCanceled
}

// passTime lets time pass while a command waits, as it does while a learner
// watches `kubectl rollout status`: whenever something arms a timer (the
// controller's ready delay, its backoff after a conflict), the fake clock
// moves on by a small step, up to maxPassed in all. It stops when the
// returned function is called.
func (r *Runner) passTime(ctx context.Context) (stop func()) {
	const tick, maxPassed = 10 * time.Millisecond, 30 * time.Second
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for passed := time.Duration(0); passed < maxPassed; passed += tick {
			select {
			case <-r.Clock.TimerCreated():
			case <-done:
				return
			case <-ctx.Done():
				return
			}
			r.step(tick)
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
