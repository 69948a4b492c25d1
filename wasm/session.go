//go:build js && wasm

package main

import (
	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/web/lessons"
)

// lessonCatalog is the lessons' definitions (web/lessons; the texts stay
// out of the engine: the page loads them as static files). The Go test of
// web/lessons proves they load, so an error here cannot happen in a
// tested build; if it did, the lab would run without lessons.
var lessonCatalog, _ = lesson.Load(lessons.Definitions())

// newMemorySession builds a fresh offline session: its own memory backend,
// so a reset (or the replay of an imported history) starts at revision 1.
func newMemorySession() (api.Handler, error) {
	return session.New("offline", mvcc.NewMemoryBackend(), session.Options{Kube: kubeapi.ForSession, Lessons: lessonCatalog})
}
