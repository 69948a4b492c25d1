//go:build js && wasm

package main

import (
	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

// kubeHandler builds the session's Kubernetes API, as the server does.
var kubeHandler = kubeapi.ForSession

// newMemorySession builds a fresh offline session: its own memory backend,
// so a reset (or the replay of an imported history) starts at revision 1.
func newMemorySession() (api.Handler, error) {
	return session.New("offline", mvcc.NewMemoryBackend(), session.Options{Kube: kubeHandler})
}
