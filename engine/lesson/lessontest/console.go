package lessontest

import (
	"context"
	"fmt"
	"strings"

	"github.com/rvplay/rvplay/engine/console"
)

// runCommand runs a console command line in the lab's console
// (engine/console), with stdin as the editor's text that `-f -` reads,
// and returns what it printed. A failing command is an outcome (a 409 is
// what a lesson shows); a command the console does not know is an error.
func (r *Runner) runCommand(ctx context.Context, line, stdin string) (string, error) {
	cons := console.New(r.front, console.Options{Editor: stdinEditor(stdin), Now: r.Clock.Now})
	var out, errOut strings.Builder
	status := cons.Run(ctx, line, console.Output{Stdout: &out, Stderr: &errOut})
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
