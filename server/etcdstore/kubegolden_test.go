package etcdstore_test

import (
	"testing"

	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/api/kubeapi/kubegolden"
	"github.com/rvplay/rvplay/internal/etcdtest"
)

// goldenDir holds the recorded kube-apiserver exchanges kubeapi's own
// golden tests replay on the in-memory store.
const goldenDir = "../../engine/api/kubeapi/testdata/"

// replayKubeGolden plays a recording on the Kubernetes API of a session
// stored on a real etcd, a fresh one on which another session wrote
// first, so that the session's revisions do not start where the
// in-memory store's do: the replay compares resourceVersions relative to
// the session's first write. (Another session's writes between the
// requests would shift them, as they do on a class's cluster; the
// recording's kube-apiserver had none.)
func replayKubeGolden(t *testing.T, file string, known map[int]string, loose bool) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	other := open(t, cli, sessionOpts("other"))
	defer other.Close()
	put(t, other, "k", "written before the session's first write: its revisions start past 1")
	s := open(t, cli, sessionOpts("golden"))
	defer s.Close()
	ko, clock := kubegolden.KubeOptions()
	h := kubeapi.New(kubeapi.Options{Store: s, Kube: ko})
	defer h.Registry().Close()
	kubegolden.Replay(t, kubegolden.Target{Serve: h.Serve, Now: clock.Now}, kubegolden.Load(t, goldenDir+file), known, loose)
}

// TestKubernetesAPIOnEtcdMatchesRecordedKubeApiserver: the Kubernetes
// exchanges recorded from kube-apiserver v1.36.3 (on its own etcd) match
// on a session stored on etcd as they do on the in-memory store.
func TestKubernetesAPIOnEtcdMatchesRecordedKubeApiserver(t *testing.T) {
	replayKubeGolden(t, kubegolden.File, kubegolden.Known, false)
}

// TestCustomResourcesOnEtcdMatchRecordedKubeApiserver is the same for the
// exchanges about a CustomResourceDefinition and its custom resources.
func TestCustomResourcesOnEtcdMatchRecordedKubeApiserver(t *testing.T) {
	replayKubeGolden(t, kubegolden.CRDFile, kubegolden.KnownCRD, true)
}

// TestEventsOnEtcdMatchRecordedKubeApiserver is the same for the exchanges
// about events.k8s.io/v1 Events (core/v1 Events in another form, in one
// storage): with a lease of etcd's for each.
func TestEventsOnEtcdMatchRecordedKubeApiserver(t *testing.T) {
	replayKubeGolden(t, kubegolden.EventsFile, kubegolden.KnownEvents, true)
}

// TestCoreEventsOnEtcdMatchRecordedKubeApiserver is the same for the
// exchanges about core/v1 Events' validation through core/v1.
func TestCoreEventsOnEtcdMatchRecordedKubeApiserver(t *testing.T) {
	replayKubeGolden(t, kubegolden.CoreEventsFile, kubegolden.KnownCoreEvents, true)
}
