package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/httpapi"
)

// kubeHandler builds a session's Kubernetes API. Nil until engine/kube's
// REST handler is wired in: every non-etcd path then answers 404.
var kubeHandler func(name string, store *mvcc.Store) api.Handler

// backends opens the persisted state of a session: SQLite in the server.
type backends interface {
	Session(name string) (mvcc.Backend, error)
	Sessions() ([]string, error)
}

// registry holds the sessions this server serves. A session listed by the
// database is opened (its index rebuilt) on first use.
type registry struct {
	db backends
	// opts configure every session this registry opens.
	opts session.Options
	// clients caps each client's watchers across sessions; nil: no cap.
	clients *clientWatchers

	mu     sync.Mutex
	known  map[string]bool
	open   map[string]*liveSession
	closed bool
}

type liveSession struct {
	s    *session.Session
	http http.Handler
}

var errClosed = errors.New("server is shutting down")

func newRegistry(db backends) (*registry, error) {
	names, err := db.Sessions()
	if err != nil {
		return nil, err
	}
	r := &registry{db: db, known: map[string]bool{}, open: map[string]*liveSession{}}
	for _, n := range names {
		r.known[n] = true
	}
	return r, nil
}

// validName accepts DNS labels (RFC 1123), like Kubernetes object names:
// they are safe in URLs, file names and SQL without quoting.
var validName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

func checkName(name string) error {
	if len(name) > 63 || !validName.MatchString(name) {
		return fmt.Errorf("invalid session name %q: a session name must consist of at most 63 lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", name)
	}
	return nil
}

// lookup returns an existing session, opening it if needed; nil if there is
// no such session.
func (r *registry) lookup(name string) (*liveSession, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, errClosed
	}
	if ls := r.open[name]; ls != nil {
		return ls, nil
	}
	if !r.known[name] {
		return nil, nil
	}
	return r.openLocked(name)
}

// create makes a session (or opens the existing one); created reports which.
func (r *registry) create(name string) (ls *liveSession, created bool, err error) {
	if err := checkName(name); err != nil {
		return nil, false, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, false, errClosed
	}
	created = !r.known[name]
	if ls := r.open[name]; ls != nil {
		return ls, false, nil
	}
	ls, err = r.openLocked(name)
	return ls, created, err
}

func (r *registry) openLocked(name string) (*liveSession, error) {
	b, err := r.db.Session(name)
	if err != nil {
		return nil, err
	}
	opts := r.opts
	if opts.Kube == nil {
		opts.Kube = kubeHandler
	}
	s, err := session.New(name, b, opts)
	if err != nil {
		b.Close()
		return nil, err
	}
	hopts := httpapi.Options{
		TooLarge:        tooLarge,
		WebSocketMethod: webSocketMethod,
	}
	if r.clients != nil {
		hopts.WatchLimiter = r.clients.limiter
	}
	ls := &liveSession{s: s, http: httpapi.Handler(s, hopts)}
	r.known[name] = true
	r.open[name] = ls
	return ls, nil
}

func (r *registry) names() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.known))
	for n := range r.known {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// close closes every open session (their watches end).
func (r *registry) close() {
	r.mu.Lock()
	r.closed = true
	open := r.open
	r.open = map[string]*liveSession{}
	r.mu.Unlock()
	for _, ls := range open {
		ls.s.Close()
	}
}

// tooLarge answers a request body above the limit in the protocol of its
// path: etcd's error body for the gateway, a Kubernetes Status otherwise.
func tooLarge(path string, limit int64) *api.Response {
	if session.IsEtcdPath(path) {
		resp := etcdgw.ErrorResponse(mvcc.ErrRequestTooLarge.Code, mvcc.ErrRequestTooLarge.Message)
		resp.Status = http.StatusRequestEntityTooLarge
		return resp
	}
	body := fmt.Sprintf(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is %d","reason":"RequestEntityTooLarge","code":413}`+"\n", limit)
	return &api.Response{Status: http.StatusRequestEntityTooLarge,
		Header: api.Header{"Content-Type": {"application/json"}}, Body: []byte(body)}
}

// webSocketMethod: etcd's gateway serves its WebSockets (watch) as POSTs;
// Kubernetes watches are GETs, as the browser sends them.
func webSocketMethod(path string) string {
	if session.IsEtcdPath(path) {
		return http.MethodPost
	}
	return http.MethodGet
}

// Readable random session names: adjective-animal-number.
var (
	adjectives = strings.Fields("brave calm eager fancy gentle happy jolly kind lively merry nice proud quick silly swift witty bold bright clever cosy")
	animals    = strings.Fields("otter panda koala heron lynx moose orca puffin quokka raven seal tapir walrus yak zebra badger beaver crane dingo eagle")
)

func randomName() string {
	pick := func(words []string) string {
		n, _ := rand.Int(rand.Reader, big.NewInt(int64(len(words))))
		return words[n.Int64()]
	}
	n, _ := rand.Int(rand.Reader, big.NewInt(900))
	return fmt.Sprintf("%s-%s-%d", pick(adjectives), pick(animals), n.Int64()+100)
}
