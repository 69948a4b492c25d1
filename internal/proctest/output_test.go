package proctest

import (
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

func TestOutputKeepsEveryWriteOfConcurrentWriters(t *testing.T) {
	var out Output
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 100 {
				fmt.Fprintf(&out, "writer %d line %d\n", w, i)
				_ = out.String() // a test reading while the process writes
			}
		})
	}
	wg.Wait()
	got := out.String()
	if n := strings.Count(got, "\n"); n != 400 {
		t.Fatalf("%d lines, want 400", n)
	}
	for w := range 4 {
		for i := range 100 {
			if line := fmt.Sprintf("writer %d line %d\n", w, i); !strings.Contains(got, line) {
				t.Fatalf("missing %q", line)
			}
		}
	}
}

func TestOutputCollectsAProcessStdoutAndStderr(t *testing.T) {
	var out Output
	cmd := exec.Command("sh", "-c", "echo to-stdout; echo to-stderr >&2")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"to-stdout\n", "to-stderr\n"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output %q lacks %q", out.String(), want)
		}
	}
}
