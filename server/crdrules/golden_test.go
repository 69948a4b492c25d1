package crdrules

import (
	"testing"

	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/api/kubeapi/kubegolden"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// TestCELGoldenExchanges replays what a real kube-apiserver v1.36.3
// answered about CEL rules (recorded by test/kubediff's
// TestRecordCELGolden): each kind of rule broken on a create, an update,
// a patch and a status write, and the definitions refused for their
// rules.
func TestCELGoldenExchanges(t *testing.T) {
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ko, clock := kubegolden.KubeOptions()
	h := kubeapi.New(kubeapi.Options{Store: st, Kube: ko})
	t.Cleanup(h.Registry().Close)
	kubegolden.Replay(t, kubegolden.Target{Serve: h.Serve, Now: clock.Now}, kubegolden.Load(t, "testdata/cel_exchanges.jsonl"), nil, true)
}
