package crdrules

import (
	"testing"

	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/api/kubeapi/kubegolden"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// knownCEL are the recorded exchanges rvplay does not match, with why.
var knownCEL = map[int]string{
	22: "the replay's clock stands still, so the definition's two managedFields entries have one time and sort by manager (Python-urllib first); kube's, a second apart, sort by time (the status writer's first)",
}

// TestCELGoldenExchanges replays what a real kube-apiserver v1.36.3
// answered about CEL rules (recorded by test/kubediff's
// TestRecordCELGolden): each kind of rule broken on a create, an update,
// a patch and a status write, the definitions refused for their rules,
// and a rule added to a served definition (ratcheted on an update that
// leaves the value it fails on as it was: kube's Warning header with the
// error it did not give).
func TestCELGoldenExchanges(t *testing.T) {
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ko, clock := kubegolden.KubeOptions()
	h := kubeapi.New(kubeapi.Options{Store: st, Kube: ko})
	t.Cleanup(h.Registry().Close)
	kubegolden.Replay(t, kubegolden.Target{Serve: h.Serve, Now: clock.Now}, kubegolden.Load(t, "testdata/cel_exchanges.jsonl"), knownCEL, true)
}
