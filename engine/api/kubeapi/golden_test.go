package kubeapi

import (
	"context"
	"maps"
	"runtime"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi/kubegolden"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/mvcc"
)

type fixture struct {
	h     *Handler
	store *mvcc.Store
	clock *clock.Fake
}

func newFixture(t testing.TB) *fixture {
	st, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ko, c := kubegolden.KubeOptions()
	h := New(Options{Store: st, Kube: ko})
	t.Cleanup(h.Registry().Close)
	return &fixture{h: h, store: st, clock: c}
}

func (f *fixture) do(method, path, contentType string, body []byte) *api.Response {
	return f.doAccept(method, path, contentType, "", body)
}

func (f *fixture) doAccept(method, path, contentType, accept string, body []byte) *api.Response {
	return f.h.Serve(context.Background(), kubegolden.Request(method, path, contentType, accept, body))
}

func (f *fixture) target() kubegolden.Target {
	return kubegolden.Target{Serve: f.h.Serve, Now: f.clock.Now}
}

func TestGoldenExchanges(t *testing.T) {
	kubegolden.Replay(t, newFixture(t).target(), kubegolden.Load(t, "testdata/"+kubegolden.File), kubegolden.Known, false)
}

// TestCustomResourceGoldenExchanges replays what a real kube-apiserver
// answered about a CustomResourceDefinition and its custom resources:
// discovery, OpenAPI, schema validation, pruning and defaulting, the
// status and scale subresources, updates without a resourceVersion, the
// definition's conditions and its deletion; natively and, by
// scripts/test-wasm.sh, in the browser's build.
func TestCustomResourceGoldenExchanges(t *testing.T) {
	kubegolden.Replay(t, newFixture(t).target(), kubegolden.Load(t, "testdata/"+kubegolden.CRDFile), kubegolden.KnownCRD, true)
}

// TestEventsGoldenExchanges replays what a real kube-apiserver answered
// about events.k8s.io/v1 Events: the same objects as core/v1 Events, each
// read, listed and written through both versions, their discovery, table,
// field selectors and validation.
func TestEventsGoldenExchanges(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("the browser build serves no events.k8s.io (engine/kube/events.go)")
	}
	kubegolden.Replay(t, newFixture(t).target(), kubegolden.Load(t, "testdata/"+kubegolden.EventsFile), kubegolden.KnownEvents, true)
}

// TestCoreEventsGoldenExchanges replays what a real kube-apiserver
// answered about core/v1 Events written through core/v1: its legacy rules
// for old-style Events (the involved object's namespace) and new-style
// ones (an eventTime: who reported it, what and why, within their
// lengths), and what it leaves unchecked there that events.k8s.io/v1
// checks (type, immutability, names); natively and, by
// scripts/test-wasm.sh, in the browser's build, which serves no
// events.k8s.io for the two exchanges that read and patch through it.
func TestCoreEventsGoldenExchanges(t *testing.T) {
	exs, known := kubegolden.Load(t, "testdata/"+kubegolden.CoreEventsFile), kubegolden.KnownCoreEvents
	if runtime.GOOS == "js" {
		known = maps.Clone(known)
		for i, e := range exs {
			if strings.HasPrefix(e.Path, "/apis/events.k8s.io/") {
				known[i] = "the browser build serves no events.k8s.io (engine/kube/events.go)"
			}
		}
	}
	kubegolden.Replay(t, newFixture(t).target(), exs, known, true)
}
