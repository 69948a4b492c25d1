// Package proctest is what tests need of the server processes they start
// (rvplay, etcd, kube-apiserver, the reference API servers): free loopback
// ports to give them (FreePorts), their output collected while they run
// (Output), and a stop the way a service manager does it (Stop): SIGTERM
// first, so that the process shuts down as in production and a test sees a
// clean exit, and SIGKILL only when it has not exited within a grace
// period, so that a hung server cannot hang the test binary. It is test
// tooling: product code must not import it.
package proctest

import (
	"fmt"
	"os"
	"syscall"
	"time"
)

// Grace is how long Stop waits after SIGTERM before it kills.
const Grace = 10 * time.Second

// Stop sends p SIGTERM and waits until exited is closed (the caller closes
// it when p's Wait returns), killing p if that takes longer than grace. It
// returns nil when p had already exited or stopped on SIGTERM, and an error
// naming the process when it had to be killed.
func Stop(p *os.Process, exited <-chan struct{}, name string, grace time.Duration) error {
	select {
	case <-exited:
		return nil
	default:
	}
	_ = p.Signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case <-exited:
		return nil
	case <-timer.C:
		_ = p.Kill()
		<-exited
		return fmt.Errorf("%s did not stop on SIGTERM within %v; killed", name, grace)
	}
}
