package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/rvplay/rvplay/internal/proctest"
)

// kine is k3s's etcd shim on SQLite (github.com/k3s-io/kine), the gRPC
// comparison's third system: built from the module proxy by the wrapper
// module in testdata/kine (cgo, so SQLite is mattn/go-sqlite3 as k3s ships
// it) into the reference programs' cache, run with its default SQLite
// datastore (WAL, SQLite's default synchronous=FULL) in a fresh directory.
type kine struct {
	Addr string // host:port of its etcd gRPC API
	p    *proctest.Process
}

// KineBinary builds kine once per wrapper module and Go version.
func KineBinary() (string, error) {
	return referenceBinary("bench/gatewayload/testdata/kine", "kine")
}

// startKine starts kine on a free loopback port with its data in dir and
// waits until its gRPC API answers.
func startKine(bin, dir string) (*kine, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	ports, err := proctest.FreePorts(1)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	cmd := exec.Command(bin, "--listen-address", addr, "--metrics-bind-address", "0")
	cmd.Dir = dir // its default datastore is ./db/state.db
	p, err := proctest.Start(cmd, filepath.Join(dir, "kine.log"))
	if err != nil {
		return nil, err
	}
	k := &kine{Addr: addr, p: p}
	c, err := NewGRPC("kine", addr)
	if err == nil {
		defer c.Close()
		deadline := time.Now().Add(30 * time.Second)
		for {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			_, err = c.Get(ctx, []byte("/ready"))
			cancel()
			if err == nil || time.Now().After(deadline) {
				break
			}
			select {
			case <-p.Exited:
				err = errors.New("kine exited at start")
			case <-time.After(50 * time.Millisecond):
				continue
			}
			break
		}
	}
	if err != nil {
		k.Stop()
		return nil, fmt.Errorf("kine: %v\n%s", err, p.LogTail(1<<20))
	}
	return k, nil
}

// Stop ends kine (SIGTERM, SIGKILL after proctest.Grace).
func (k *kine) Stop() {
	_ = k.p.Stop("kine", proctest.Grace)
}
