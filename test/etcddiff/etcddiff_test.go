package etcddiff

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/rvplay/rvplay/internal/etcdtest"
)

var (
	flagSeed      = flag.Uint64("etcddiff.seed", 0, "run only this seed (0: the default seeds)")
	flagSeeds     = flag.Int("etcddiff.seeds", 3, "run seeds 1..N")
	flagOps       = flag.Int("etcddiff.ops", 2000, "operations per seed")
	flagKeepGoing = flag.Bool("etcddiff.keepgoing", false, "keep comparing a target after its first difference")
	flagTrace     = flag.Bool("etcddiff.trace", false, "print every op and the reference's answer")
)

// seeds are the sequences a run checks: 1..3 by default.
func seeds() []uint64 {
	if *flagSeed != 0 {
		return []uint64{*flagSeed}
	}
	var s []uint64
	for i := 1; i <= *flagSeeds; i++ {
		s = append(s, uint64(i))
	}
	return s
}

func runOptions() Options {
	o := Options{KeepGoing: *flagKeepGoing}
	if *flagTrace {
		o.Trace = os.Stderr
	}
	return o
}

// checkSeed runs one seed against ref and others and fails the test with
// every difference, each naming the seed, the op and both answers.
func checkSeed(t *testing.T, seed uint64, ref *Target, others ...*Target) {
	t.Helper()
	diffs, err := Run(context.Background(), seed, *flagOps, ref, others, runOptions())
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	for _, d := range diffs {
		t.Errorf("difference (rerun: go test ./test/etcddiff -run '%s' -etcddiff.seed=%d):\n%s", t.Name(), seed, d)
	}
}

// TestSequencesAreDeterministicOnEtcd runs every seed against two fresh
// etcds: equal answers prove that the generator, the watch fences and the
// comparison are deterministic, so any difference rvplay shows is rvplay's.
func TestSequencesAreDeterministicOnEtcd(t *testing.T) {
	for _, seed := range seeds() {
		t.Run(fmtSeed(seed), func(t *testing.T) {
			t.Parallel()
			a := etcdtest.Start(t, etcdtest.Options{})
			b := etcdtest.Start(t, etcdtest.Options{})
			checkSeed(t, seed, NewTarget("etcd-a", a.URL), NewTarget("etcd-b", b.URL))
		})
	}
}

func fmtSeed(seed uint64) string { return fmt.Sprint("seed=", seed) }
