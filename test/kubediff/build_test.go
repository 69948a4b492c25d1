package kubediff

import (
	"os"
	"testing"
	"time"
)

// TestReferenceBuilds builds the two reference programs (once per inputs,
// into .bin) and reports how long each took: 0s means the binary was
// already there. scripts/build-reference.sh runs it to warm a machine.
func TestReferenceBuilds(t *testing.T) {
	for _, name := range []string{"etcd36", "sampleapiserver"} {
		bin, took, err := refBinary(name)
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skipf("cannot build the reference here (set CI=true to make this a failure): %v", err)
		}
		t.Logf("%s: %s (built in %v)", name, bin, took.Round(time.Millisecond))
	}
}
