package kubediff

import (
	"os"
	"testing"
	"time"

	"github.com/rvplay/rvplay/internal/kubeapiservertest"
)

// TestReferenceBuilds builds the reference programs (once per inputs, into
// .bin), one subtest each: this test's etcd 3.6 and sample-apiserver, and
// the real kube-apiserver that test/clientgo and test/kubectl run on
// rvplay. It reports how long each took: 0s means the binary was already
// there. scripts/build-reference.sh runs it to warm a machine, one
// subtest per go test, so that each build has a timeout of its own.
func TestReferenceBuilds(t *testing.T) {
	for _, ref := range []struct {
		name  string
		build func() (string, time.Duration, error)
	}{
		{"etcd36", func() (string, time.Duration, error) { return refBinary("etcd36") }},
		{"sampleapiserver", func() (string, time.Duration, error) { return refBinary("sampleapiserver") }},
		{"kube-apiserver", kubeapiservertest.Binary},
	} {
		t.Run(ref.name, func(t *testing.T) {
			bin, took, err := ref.build()
			if err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatal(err)
				}
				t.Skipf("cannot build the reference here (set CI=true to make this a failure): %v", err)
			}
			t.Logf("%s (built in %v)", bin, took.Round(time.Millisecond))
		})
	}
}
