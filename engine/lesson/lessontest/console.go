package lessontest

import (
	"context"
	"fmt"
	"time"

	"github.com/rvplay/rvplay/internal/jsconsole"
)

// commandTimeout bounds one console command.
const commandTimeout = 10 * time.Second

// runCommand runs a console command line in the lab's console
// (web/static/js/console.js, under Node through internal/jsconsole), with
// stdin as the editor's text that `-f -` reads, and returns what it
// printed. A failing command is an outcome (a 409 is what a lesson shows);
// a command the console does not know is an error.
func (r *Runner) runCommand(ctx context.Context, line, stdin string) (string, error) {
	r.mu.Lock()
	if r.js == nil {
		c, err := jsconsole.Start(r.front, jsconsole.Options{})
		if err != nil {
			r.mu.Unlock()
			return "", fmt.Errorf("console: %w", err)
		}
		r.js = c
	}
	c := r.js
	r.mu.Unlock()
	// A command that waits (rollout status) must end within a test's
	// patience: its deadline is real time, as Ctrl+C is in the lab.
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	stop := r.passTime(ctx)
	out, status := c.RunString(ctx, line, stdin, r.Clock.Now())
	stop()
	if ctx.Err() != nil {
		return out, fmt.Errorf("console: %q did not finish within %v", line, commandTimeout)
	}
	if status == 127 || status == 2 {
		return out, fmt.Errorf("console: %q: %s", line, out)
	}
	return out, nil
}

// passTime lets time pass while a command waits, as it does while a learner
// watches `kubectl rollout status`: whenever something arms a timer (the
// controllers' backoff after a conflict), the fake clock moves on by a
// small step, and so it does, a step every idle real millisecond, while a
// timer is armed and nothing else happens (the kubelet's ready delay: once
// every pod waits for it, nobody arms another timer), up to maxPassed in
// all. It stops when the returned function is called.
func (r *Runner) passTime(ctx context.Context) (stop func()) {
	const tick, idle, maxPassed = 10 * time.Millisecond, time.Millisecond, 30 * time.Second
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		quiet := time.NewTicker(idle)
		defer quiet.Stop()
		for passed := time.Duration(0); passed < maxPassed; passed += tick {
			select {
			case <-r.Clock.TimerCreated():
			case <-quiet.C:
				if r.Clock.Timers() == 0 {
					passed -= tick
					continue
				}
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
