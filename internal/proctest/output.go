package proctest

import (
	"bytes"
	"sync"
)

// Output collects what a process or a server writes (its stdout and
// stderr, a logger's lines) for a test to read while it runs or to show
// when it fails. Writes come from the goroutines that copy a process's
// pipes or that serve requests, reads from the test: the mutex keeps them
// apart. The zero value is ready to use.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p; it never fails.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.Write(p)
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
