package etcdstore_test

import (
	"os"
	"testing"

	"github.com/rvplay/rvplay/internal/rvplaytest"
)

// TestMain runs the tests through rvplaytest.RunTests: the tests that start
// the server binary on an etcd cluster (replicas, a leader's loss) share one
// build of it, removed when they end.
func TestMain(m *testing.M) { os.Exit(rvplaytest.RunTests(m)) }
