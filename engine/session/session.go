// Package session wires one playground session: an mvcc.Store over a
// Backend, the etcd v3 JSON gateway on it, the Kubernetes API (package
// kubeapi, or another handler given in Options) and the lesson routes
// (package lesson), behind one api.Handler that routes by path.
//
// Both the server and the WebAssembly build use it, so it must not import
// net/http, SQLite, syscall/js or a websocket library: the caller chooses the
// Backend (memory in the browser, SQLite on the server).
package session

import (
	"context"
	"strings"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// Options configure a Session.
type Options struct {
	// Store configures the session's mvcc.Store.
	Store mvcc.Options
	// Gateway configures the etcd gateway. Zero cluster and member IDs are
	// replaced by stable IDs derived from the session name.
	Gateway etcdgw.Options
	// Kube builds the Kubernetes API handler over the session's store. Nil:
	// kubeapi.ForSession.
	Kube func(name string, store *mvcc.Store) api.Handler
	// Lessons are the lessons the session serves under /rvplay/v1/lessons
	// (the caller loads them: web/lessons holds the definitions); nil
	// serves none.
	Lessons *lesson.Catalog
}

// Session is one playground: one revision sequence, reachable through the
// etcd gateway (/v3/...) and the Kubernetes API (everything else).
type Session struct {
	Name  string
	Store *mvcc.Store
	// Etcd serves /v3/...
	Etcd api.Handler
	// Kube serves every other path; nil answers 404.
	Kube api.Handler
	// Lessons serves /rvplay/v1/lessons/... and /rvplay/v1/misconceptions;
	// nil when the session has no lessons.
	Lessons *lesson.Service
}

// New opens a Store over b and returns the session serving it.
func New(name string, b mvcc.Backend, opts Options) (*Session, error) {
	g := opts.Gateway
	if g.ClusterID == 0 && g.MemberID == 0 {
		g.ClusterID, g.MemberID = etcdgw.IDsFor(name)
	}
	if opts.Store.MemberID == 0 {
		// The store raises its alarms as the member the gateway reports.
		opts.Store.MemberID = g.MemberID
	}
	store, err := mvcc.Open(b, opts.Store)
	if err != nil {
		return nil, err
	}
	s := &Session{Name: name, Store: store, Etcd: etcdgw.NewWithOptions(store, g)}
	if opts.Kube == nil {
		opts.Kube = kubeapi.ForSession // the Kubernetes API of package kubeapi
	}
	s.Kube = opts.Kube(name, store)
	if opts.Lessons != nil {
		// Exchanges stays nil until the session keeps its record: until
		// then only the predicates on the store can hold.
		s.Lessons = &lesson.Service{Catalog: opts.Lessons, Store: store, Handler: s}
	}
	return s, nil
}

// IsEtcdPath reports whether path belongs to the etcd gateway: /v3/..., and
// /v3beta/..., the alias etcd 3.4 still serves.
func IsEtcdPath(path string) bool {
	return path == "/v3" || strings.HasPrefix(path, "/v3/") || strings.HasPrefix(path, "/v3beta/")
}

// Serve routes a request to the etcd gateway or the Kubernetes API.
func (s *Session) Serve(ctx context.Context, req *api.Request) *api.Response {
	if IsEtcdPath(req.Path) {
		return s.Etcd.Serve(ctx, req)
	}
	if s.Lessons != nil && lesson.Handles(req.Path) {
		return s.Lessons.Serve(ctx, req)
	}
	if s.Kube != nil {
		return s.Kube.Serve(ctx, req)
	}
	return NotFound()
}

// NotFound is kube-apiserver's answer for a path it does not serve.
func NotFound() *api.Response {
	return &api.Response{
		Status: 404,
		Header: api.Header{
			"Content-Type":           {"text/plain; charset=utf-8"},
			"X-Content-Type-Options": {"nosniff"},
		},
		Body: []byte("404 page not found\n"),
	}
}

// Close closes the store (and with it every watch) and its backend.
func (s *Session) Close() error { return s.Store.Close() }
