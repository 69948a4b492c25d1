package classroom

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/lesson/classnames"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/server/httpapi"
	"github.com/rvplay/rvplay/server/telemetry"
)

// Storage keeps the sessions: their data and the classroom's records about
// them. It is also Backends (*sqlite.DB: one mvcc.Backend per session, on
// which the registry opens an mvcc.Store) or Stores (server/etcdstore's
// Sessions: each session a store of its own, a prefix of an etcd cluster).
type Storage interface {
	SessionInfos() ([]sqlite.SessionInfo, error)
	CreateSession(info sqlite.SessionInfo) error
	AddStudent(session string, st sqlite.Student) error
	// SetJoinCode replaces the join code hash of guarded session name.
	SetJoinCode(name string, hash []byte) error
	Touch(lastUsed map[string]time.Time) error
	DeleteSession(name string) error
	ResetSession(name string) error
	PurgeDeleted() error
	// A class's records (progress.go).
	ClassProgress(name string) ([]sqlite.PassedStep, error)
	AddPassedSteps(name string, steps []sqlite.PassedStep) error
	ClassFindingCounts(name string) ([]sqlite.FindingCount, error)
	AddFindings(name string, findings []sqlite.Finding) error
	ClassSettings(name string) ([]byte, error)
	SetClassSettings(name string, settings []byte) error
	ClassFirstCreations(name string) (map[string]int64, error)
	AddFirstCreation(name, key string, rev int64) error
}

// Backends is a Storage that keeps each session's records in an
// mvcc.Backend.
type Backends interface {
	// Session opens the Backend of session name, creating the session if
	// needed; at most one Backend of a session is open at a time.
	Session(name string) (mvcc.Backend, error)
}

// Stores is a Storage whose sessions are stores of their own, shared with
// other servers (several replicas on one etcd cluster): a session another
// server created or a student another server admitted is found there.
type Stores interface {
	// SessionStore opens the store of session name.
	SessionStore(name string) (mvcc.KV, error)
	// SessionInfo reads session name as SessionInfos does, ok false when
	// there is none.
	SessionInfo(name string) (info sqlite.SessionInfo, ok bool, err error)
}

// EndedWatcher is a Stores that tells, as it happens, of each session
// ended by any server (etcdstore.Sessions watches the cluster's registry).
type EndedWatcher interface {
	// WatchEnded calls ended, from another goroutine, with the name of
	// each session ended after it returned, until ctx ends.
	WatchEnded(ctx context.Context, ended func(name string))
}

// JoinCodeAnnouncer is a Stores that carries a join code just renewed to
// the other servers on it, for a short while, so that their teachers'
// dashboards show it too (etcdstore.Sessions: a key on a short lease,
// which every replica watches). Storage keeps only the code's hash, which
// no dashboard can show.
type JoinCodeAnnouncer interface {
	// AnnounceJoinCode tells every server watching that session name's
	// join code is now code.
	AnnounceJoinCode(name, code string) error
	// WatchJoinCodes calls renewed, from another goroutine, with each code
	// announced after it returned, until ctx ends. A notice may be stale
	// or come twice.
	WatchJoinCodes(ctx context.Context, renewed func(name, code string))
}

// Defaults of Options.
const (
	DefaultMaxSessions   = 1000
	DefaultMaxLoaded     = 64
	DefaultUnloadAfter   = 5 * time.Minute
	DefaultExpireAfter   = 7 * 24 * time.Hour
	defaultSweepInterval = time.Minute
)

// Options configure a Registry. Zero values take the defaults.
type Options struct {
	// Session configures every session the registry loads.
	Session session.Options
	// HTTP configures the net/http adapter of every loaded session. Its
	// Refuse defaults to session.Refuse, its WebSocketMethod and
	// WebSocketStyle to this package's, which follow the protocol of the
	// path.
	HTTP httpapi.Options
	// MaxSessions caps how many sessions exist (loaded or not); creating
	// one more is refused.
	MaxSessions int
	// MaxLoaded caps how many sessions are loaded (a store, its index and
	// its goroutines in memory) at once. Loading one more unloads the
	// session idle the longest, or, when every loaded session is in use, is
	// refused with 429 until one is idle.
	MaxLoaded int
	// UnloadAfter is how long a loaded session without requests or
	// streams stays loaded.
	UnloadAfter time.Duration
	// ExpireAfter is how long a guarded session may go unused before it is
	// ended and its data deleted. Open sessions never expire.
	ExpireAfter time.Duration
	// Clock is the time source; nil: the wall clock.
	Clock clock.Clock
	// CA is the PEM certificate a client must trust to reach this server
	// over HTTPS when it is not in the system's roots; every kubeconfig
	// carries it.
	CA []byte
	// Logger takes the sessions' lifecycle events (created, joined, join
	// code renewed, loaded, unloaded, reset, ended, expired) and the errors
	// of the registry's own work. Nil: slog.Default().
	Logger *slog.Logger
}

func (o *Options) defaults() {
	if o.MaxSessions <= 0 {
		o.MaxSessions = DefaultMaxSessions
	}
	if o.MaxLoaded <= 0 {
		o.MaxLoaded = DefaultMaxLoaded
	}
	if o.UnloadAfter <= 0 {
		o.UnloadAfter = DefaultUnloadAfter
	}
	if o.ExpireAfter <= 0 {
		o.ExpireAfter = DefaultExpireAfter
	}
	if o.Clock == nil {
		o.Clock = clock.Real{}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.HTTP.Refuse == nil {
		o.HTTP.Refuse = session.Refuse
	}
	if o.HTTP.WebSocketMethod == nil {
		o.HTTP.WebSocketMethod = webSocketMethod
	}
	if o.HTTP.WebSocketStyle == nil {
		o.HTTP.WebSocketStyle = webSocketStyle
	}
}

// Errors of the registry; the HTTP layer answers each in the protocol of
// the request's path.
var (
	ErrClosed        = errors.New("server is shutting down")
	ErrNotFound      = errors.New("no such session")
	ErrExists        = errors.New("session already exists")
	ErrTooMany       = errors.New("too many sessions")
	ErrTooManyLoaded = errors.New("too many sessions in use")
	ErrOpenSession   = errors.New("an open session has no join code and is not ended over HTTP")
	ErrWrongCode     = errors.New("invalid join code")
)

// Registry holds the sessions this server serves. Every session is known
// (its name and access, a few hundred bytes), but only those in use are
// loaded: a session is opened on first use (its index rebuilt from
// storage), and unloaded when it has had neither a request nor a stream for
// UnloadAfter, so that an idle session holds no goroutine and no index.
type Registry struct {
	store Storage
	opts  Options

	mu       sync.Mutex
	sessions map[string]*entry
	loaded   map[*entry]bool // loading, loaded or unloading: each holds a slot of MaxLoaded
	creating map[string]bool // names being created, counted against MaxSessions
	closed   bool

	// renewing serializes NewJoinCode, so that the code storage keeps last
	// is the one kept in memory last.
	renewing sync.Mutex
}

// loadState is where an entry is in its life.
type loadState int

const (
	unloaded loadState = iota
	loading
	isLoaded
	unloading // closing its store: for unload, reset or end
	ended
)

// entry is one known session.
type entry struct {
	name    string
	guarded bool
	// teacher and joinCode are hashes; students are keyed by token hash.
	teacher, joinCode []byte
	students          map[string]api.Principal
	joined            map[string]time.Time // by student ID
	created           time.Time
	lastUsed, saved   time.Time // saved: the last use written to storage

	state   loadState
	changed chan struct{} // closed at every state change
	live    *live
	// class is the session's class (channel.go), made when first needed.
	class *class
}

// live is a loaded session.
type live struct {
	// Loaded is what Acquire hands out: one per load, not per request.
	Loaded
	// refs counts requests and streams in progress; idleSince is when it
	// last dropped to zero.
	refs      int
	idleSince time.Time
}

func (e *entry) setState(s loadState) {
	e.state = s
	close(e.changed)
	e.changed = make(chan struct{})
}

// New returns the registry of the sessions store holds. It loads none.
func New(store Storage, opts Options) (*Registry, error) {
	opts.defaults()
	_, backends := store.(Backends)
	_, stores := store.(Stores)
	if !backends && !stores {
		return nil, fmt.Errorf("classroom: %T keeps no sessions' data (neither Backends nor Stores)", store)
	}
	infos, err := store.SessionInfos()
	if err != nil {
		return nil, err
	}
	r := &Registry{store: store, opts: opts, sessions: map[string]*entry{}, loaded: map[*entry]bool{}, creating: map[string]bool{}}
	for _, info := range infos {
		r.sessions[info.Name] = newEntry(info)
	}
	return r, nil
}

func newEntry(info sqlite.SessionInfo) *entry {
	e := &entry{name: info.Name, guarded: info.Guarded, teacher: info.TeacherTokenHash, joinCode: info.JoinCodeHash,
		created: info.CreatedAt, lastUsed: info.LastUsedAt, saved: info.LastUsedAt, changed: make(chan struct{})}
	for _, st := range info.Students {
		e.addStudent(st)
	}
	return e
}

func (e *entry) addStudent(st sqlite.Student) {
	if e.students == nil {
		e.students = map[string]api.Principal{}
	}
	e.students[string(st.TokenHash)] = api.Principal{ID: st.ID, Name: st.Name, Role: api.RoleStudent}
	if e.joined == nil {
		e.joined = map[string]time.Time{}
	}
	e.joined[st.ID] = st.JoinedAt
}

// validName accepts DNS labels (RFC 1123), like Kubernetes object names:
// they are safe in URLs, file names and SQL without quoting.
var validName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// CheckName says why name cannot name a session, or nil.
func CheckName(name string) error {
	if len(name) > 63 || !validName.MatchString(name) {
		return fmt.Errorf("invalid session name %q: a session name must consist of at most 63 lower case alphanumeric characters or '-', and must start and end with an alphanumeric character", name)
	}
	return nil
}

// Created is what creating a guarded session hands its teacher, once: the
// credentials are not kept anywhere in clear.
type Created struct {
	ID           string `json:"id"`
	JoinCode     string `json:"joinCode"`
	URL          string `json:"url"`
	TeacherToken string `json:"teacherToken"`
}

// URL is the base URL path of session name.
func URL(name string) string { return "/s/" + name + "/" }

// CreateOpen makes sure the open session name exists (the server's
// --session): everyone may use it as its teacher. An existing session is
// kept as it is, guarded or not; created reports whether it is new.
func (r *Registry) CreateOpen(name string) (created bool, err error) {
	if err := CheckName(name); err != nil {
		return false, err
	}
	r.discover(name, "")
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return false, ErrClosed
	}
	if r.sessions[name] != nil {
		return false, nil
	}
	info := sqlite.SessionInfo{Name: name, CreatedAt: r.opts.Clock.Now()}
	if err := r.store.CreateSession(info); err != nil && !errors.Is(err, sqlite.ErrSessionExists) {
		return false, err
	}
	r.sessions[name] = newEntry(info)
	r.opts.Logger.Info("session created", "session", name, "guarded", false)
	return true, nil
}

// CreateGuarded creates a guarded session called name, or with a random
// id when name is empty.
func (r *Registry) CreateGuarded(name string) (Created, error) {
	random := name == ""
	if !random {
		if err := CheckName(name); err != nil {
			return Created{}, err
		}
		r.discover(name, "")
	}
	token := newToken()
	now := r.opts.Clock.Now()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return Created{}, ErrClosed
	}
	if len(r.sessions)+len(r.creating) >= r.opts.MaxSessions {
		r.mu.Unlock()
		return Created{}, ErrTooMany
	}
	for {
		if random {
			name = newSessionID()
		}
		if r.sessions[name] == nil && !r.creating[name] {
			break
		}
		if !random {
			r.mu.Unlock()
			return Created{}, ErrExists
		}
	}
	// The name is reserved while storage creates the session, without
	// holding up every other request behind the insert's commit.
	r.creating[name] = true
	r.mu.Unlock()
	code := newJoinCode()
	info := sqlite.SessionInfo{Name: name, Guarded: true, TeacherTokenHash: hashToken(token),
		JoinCodeHash: hashJoinCode(name, code), CreatedAt: now, LastUsedAt: now}
	err := r.store.CreateSession(info)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.creating, name)
	switch {
	case errors.Is(err, sqlite.ErrSessionExists):
		return Created{}, ErrExists
	case err != nil:
		return Created{}, err
	case r.closed:
		return Created{}, ErrClosed
	}
	r.sessions[name] = newEntry(info)
	r.opts.Logger.Info("session created", "session", name, "guarded", true)
	return Created{ID: name, JoinCode: code, URL: URL(name), TeacherToken: token}, nil
}

// Session is what a request learns about a session before using it.
type Session struct {
	Name    string
	Guarded bool
}

// Lookup says whether session name exists.
func (r *Registry) Lookup(name string) (Session, bool) {
	r.discover(name, "")
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.sessions[name]
	if e == nil {
		return Session{}, false
	}
	return Session{Name: name, Guarded: e.guarded}, true
}

// Authenticate returns who holds token in session name: its teacher or one
// of its students. ok is false for an unknown token (a token of another
// session is unknown here). In an open session everyone is its teacher.
func (r *Registry) Authenticate(name, token string) (p api.Principal, ok bool) {
	r.discover(name, token)
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.sessions[name]
	if e == nil {
		return api.Principal{}, false
	}
	if !e.guarded {
		return teacher, true
	}
	return e.principal(token)
}

// teacher is the principal of a session's teacher.
var teacher = api.Principal{ID: "teacher", Name: "teacher", Role: api.RoleTeacher}

func (e *entry) principal(token string) (api.Principal, bool) {
	if token == "" {
		return api.Principal{}, false
	}
	h := hashToken(token)
	if sameHash(h, e.teacher) {
		return teacher, true
	}
	// A map lookup by hash: the time it takes depends on the hash of the
	// guess, which tells nothing about any student's token.
	p, ok := e.students[string(h)]
	return p, ok
}

// Visible is one session in the answer to GET /sessions.
type Visible struct {
	ID      string `json:"id"`
	URL     string `json:"url"`
	Guarded bool   `json:"guarded"`
	// Role is the caller's role in the session: "teacher" or "student".
	Role string `json:"role"`
}

// VisibleTo lists what the holder of token may see: the open sessions,
// where everyone is the teacher, and the guarded session token belongs to.
// Nobody learns the names of guarded sessions they hold no token of.
func (r *Registry) VisibleTo(token string) []Visible {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []Visible{}
	for name, e := range r.sessions {
		if !e.guarded {
			out = append(out, Visible{ID: name, URL: URL(name), Role: api.RoleTeacher.String()})
			continue
		}
		if p, ok := e.principal(token); ok {
			out = append(out, Visible{ID: name, URL: URL(name), Guarded: true, Role: p.Role.String()})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Joined is what a student gets from joining.
type Joined struct {
	Token     string `json:"token"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Namespace string `json:"namespace"`
}

// Join admits a student with the session's join code: a token of their own
// and a namespace named after their id for private experiments.
func (r *Registry) Join(ctx context.Context, name, code, displayName string) (Joined, error) {
	// On shared storage another server may have renewed the code: the old
	// one admits nobody here either.
	r.relearn(name)
	r.mu.Lock()
	e := r.sessions[name]
	switch {
	case e == nil:
		r.mu.Unlock()
		return Joined{}, ErrNotFound
	case !e.guarded:
		r.mu.Unlock()
		return Joined{}, ErrOpenSession
	case !sameHash(hashJoinCode(name, code), e.joinCode):
		r.mu.Unlock()
		return Joined{}, ErrWrongCode
	}
	r.mu.Unlock()

	l, release, err := r.Acquire(ctx, name)
	if err != nil {
		return Joined{}, err
	}
	defer release()
	var id string
	for attempt := 0; ; attempt++ {
		id = studentID(displayName)
		err := createNamespace(ctx, l.sess, id, displayName)
		if err == nil {
			break
		}
		if !errors.Is(err, errNamespaceExists) || attempt == 5 {
			return Joined{}, err
		}
	}
	token := newToken()
	st := sqlite.Student{ID: id, Name: displayName, TokenHash: hashToken(token), JoinedAt: r.opts.Clock.Now()}
	if err := r.store.AddStudent(name, st); err != nil {
		return Joined{}, err
	}
	r.mu.Lock()
	if r.sessions[name] == e {
		e.addStudent(st)
	}
	r.mu.Unlock()
	r.opts.Logger.Info("student joined", "session", name, "principal", id)
	return Joined{Token: token, ID: id, Name: displayName, Namespace: id}, nil
}

// NewJoinCode gives guarded session name a new join code and returns it:
// the old code admits nobody from then on, and the students who joined
// keep their tokens. Only its hash is kept, as at the session's creation.
func (r *Registry) NewJoinCode(ctx context.Context, name string) (string, error) {
	r.discover(name, "")
	r.renewing.Lock()
	defer r.renewing.Unlock()
	r.mu.Lock()
	e := r.sessions[name]
	closed := r.closed
	r.mu.Unlock()
	switch {
	case closed:
		return "", ErrClosed
	case e == nil:
		return "", ErrNotFound
	case !e.guarded:
		return "", ErrOpenSession
	}
	code := newJoinCode()
	hash := hashJoinCode(name, code)
	if err := r.store.SetJoinCode(name, hash); err != nil {
		if errors.Is(err, sqlite.ErrNoSession) {
			return "", ErrNotFound
		}
		return "", err
	}
	r.mu.Lock()
	e.joinCode = hash
	r.mu.Unlock()
	r.opts.Logger.Info("join code renewed", "session", name, "principal", principalOf(ctx))
	if c, ok := r.class(name); ok {
		c.joinCodeRenewed(code)
	}
	// The other servers' dashboards of the class (the projector's may be
	// on another replica) learn it from storage (FollowJoinCodes). The
	// code is renewed whether or not they do: admission reads the hash
	// from storage.
	if a, ok := r.store.(JoinCodeAnnouncer); ok {
		if err := a.AnnounceJoinCode(name, code); err != nil {
			r.opts.Logger.Error("telling the other servers of a new join code failed", "session", name, "err", err)
		}
	}
	return code, nil
}

// Loaded is a session ready to serve: its engine and its net/http adapter.
type Loaded struct {
	sess *session.Session
	HTTP *httpapi.Adapter
}

// Session is the loaded session's engine.
func (l *Loaded) Session() *session.Session { return l.sess }

// Acquire returns session name loaded, loading it if needed, and a release
// to call when the request (or stream) using it ends. While any acquire is
// unreleased the session stays loaded.
func (r *Registry) Acquire(ctx context.Context, name string) (*Loaded, func(), error) {
	x := new(Lease)
	l, err := r.Lease(ctx, name, x)
	if err != nil {
		return nil, nil, err
	}
	return l, x.Release, nil
}

// Lease is Acquire with the hold kept in x, which the caller may make part
// of its own per-request state (the handler's sessionRequest): a request
// then costs no allocation of its own for it. x.Release ends the hold.
func (r *Registry) Lease(ctx context.Context, name string, x *Lease) (*Loaded, error) {
	r.discover(name, "")
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, ErrClosed
		}
		e := r.sessions[name]
		if e == nil {
			r.mu.Unlock()
			return nil, ErrNotFound
		}
		switch e.state {
		case isLoaded:
			l := e.live
			if l.refs++; l.refs == 1 {
				// It comes into use now. A lease taken while another
				// holds it reads no clock (one reading a request less):
				// the session cannot expire while held, and the other's
				// Release notes a later use.
				e.lastUsed = r.opts.Clock.Now()
			}
			r.mu.Unlock()
			x.r, x.e, x.l = r, e, l
			return &l.Loaded, nil
		case unloaded:
			if len(r.loaded) >= r.opts.MaxLoaded {
				victim := r.idlestLocked()
				if victim == nil {
					r.mu.Unlock()
					return nil, ErrTooManyLoaded
				}
				l := r.beginUnloadLocked(victim)
				r.mu.Unlock()
				r.finishUnload(victim, l)
				continue
			}
			r.loaded[e] = true
			e.setState(loading)
			r.mu.Unlock()
			l, err := r.open(name)
			r.mu.Lock()
			if err == nil && r.closed {
				// Close ran meanwhile and did not see this store.
				l.sess.Close()
				err = ErrClosed
			}
			if err != nil {
				delete(r.loaded, e)
				if e.state == loading {
					e.setState(unloaded)
				}
				r.mu.Unlock()
				return nil, err
			}
			l.refs = 1
			e.live = l
			e.lastUsed = r.opts.Clock.Now()
			e.setState(isLoaded)
			r.mu.Unlock()
			r.opts.Logger.Info("session loaded", "session", name, "revision", l.sess.Store.Rev())
			x.r, x.e, x.l = r, e, l
			return &l.Loaded, nil
		default: // loading, unloading, ended: wait for the next state
			ch := e.changed
			r.mu.Unlock()
			select {
			case <-ch:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
}

// ifLoaded returns session name's engine if it is loaded now, without
// loading it, and a release to call when done with it.
func (r *Registry) ifLoaded(name string) (*session.Session, func(), bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.sessions[name]
	if r.closed || e == nil || e.state != isLoaded {
		return nil, nil, false
	}
	e.live.refs++
	return e.live.sess, r.releaser(e, e.live), true
}

func (r *Registry) releaser(e *entry, l *live) func() {
	x := &Lease{r: r, e: e, l: l}
	return x.Release
}

// Lease is one hold on a loaded session (Acquire, Lease). Its zero value
// holds nothing.
type Lease struct {
	r    *Registry
	e    *entry
	l    *live
	done atomic.Bool
}

// Release ends the hold; it counts once however often it is called.
func (x *Lease) Release() {
	if x.r == nil {
		return
	}
	if x.done.Swap(true) {
		return
	}
	r, l := x.r, x.l
	r.mu.Lock()
	defer r.mu.Unlock()
	l.refs--
	now := r.opts.Clock.Now()
	if l.refs == 0 {
		l.idleSince = now
	}
	if x.e.live == l {
		x.e.lastUsed = now
	}
}

func (r *Registry) open(name string) (*live, error) {
	var s *session.Session
	if st, ok := r.store.(Stores); ok {
		kv, err := st.SessionStore(name)
		if err != nil {
			return nil, err
		}
		if s, err = session.NewWithStore(name, kv, r.opts.Session); err != nil {
			return nil, err
		}
	} else {
		b, err := r.store.(Backends).Session(name)
		if err != nil {
			return nil, err
		}
		if s, err = session.New(name, b, r.opts.Session); err != nil {
			b.Close()
			return nil, err
		}
	}
	if err := r.keepProgress(name, s); err != nil {
		s.Close()
		return nil, err
	}
	if s.Lessons != nil {
		// A student works on their own names where a lesson says so
		// (its "class" object); the teacher on the article's.
		owner := classnames.New(s.Store)
		if err := r.keepFirstCreations(name, owner); err != nil {
			s.Close()
			return nil, err
		}
		s.Lessons.Own = owner.For
	}
	if err := r.restoreSettings(name, s); err != nil {
		s.Close()
		return nil, err
	}
	return &live{Loaded: Loaded{sess: s, HTTP: httpapi.Handler(withClusterCompaction(s), r.opts.HTTP)}}, nil
}

// idlestLocked is the loaded session without requests that has been idle
// the longest, or nil.
func (r *Registry) idlestLocked() *entry {
	var best *entry
	for e := range r.loaded {
		if e.state != isLoaded || e.live.refs > 0 {
			continue
		}
		if best == nil || e.live.idleSince.Before(best.live.idleSince) {
			best = e
		}
	}
	return best
}

// beginUnloadLocked takes e's store out of service; finishUnload closes it
// outside the lock and frees its slot.
func (r *Registry) beginUnloadLocked(e *entry) *live {
	l := e.live
	e.live = nil
	e.setState(unloading)
	return l
}

func (r *Registry) finishUnload(e *entry, l *live) {
	r.tallyFindings(e.name, l.sess, true) // before its record goes
	if err := l.sess.Close(); err != nil {
		r.opts.Logger.Error("session unload failed", "session", e.name, "err", err)
	} else {
		r.opts.Logger.Info("session unloaded", "session", e.name)
	}
	r.mu.Lock()
	delete(r.loaded, e)
	if e.state == unloading {
		e.setState(unloaded)
	}
	r.mu.Unlock()
}

// quiesce waits until e is neither loading nor unloading and then takes it
// out of service (state unloading, its store returned for closing), so that
// reset and end have it to themselves. Acquires wait meanwhile. If check is
// not nil and refuses the entry once it is quiet, quiesce returns
// errSkipped and leaves it alone.
func (r *Registry) quiesce(ctx context.Context, name string, check func(*entry) bool) (*entry, *live, error) {
	for {
		r.mu.Lock()
		if r.closed {
			r.mu.Unlock()
			return nil, nil, ErrClosed
		}
		e := r.sessions[name]
		if e == nil {
			r.mu.Unlock()
			return nil, nil, ErrNotFound
		}
		if (e.state == isLoaded || e.state == unloaded) && check != nil && !check(e) {
			r.mu.Unlock()
			return nil, nil, errSkipped
		}
		switch e.state {
		case isLoaded:
			l := r.beginUnloadLocked(e)
			r.mu.Unlock()
			return e, l, nil
		case unloaded:
			r.loaded[e] = true // held until the caller is done
			e.setState(unloading)
			r.mu.Unlock()
			return e, nil, nil
		}
		ch := e.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// Reset gives session name a fresh store at revision 1, keeping who may
// use it. Its watches end as etcd's do when a member stops; requests in
// flight fail.
func (r *Registry) Reset(ctx context.Context, name string) error {
	return r.takeOffline(ctx, name, nil, false, "reset", func() error { return r.store.ResetSession(name) })
}

// End ends guarded session name: it disappears at once (404 from now on),
// its streams end, and its data is deleted. Open sessions are not ended
// this way (ErrOpenSession).
func (r *Registry) End(ctx context.Context, name string) error {
	r.mu.Lock()
	if e := r.sessions[name]; e != nil && !e.guarded {
		r.mu.Unlock()
		return ErrOpenSession
	}
	r.mu.Unlock()
	return r.end(ctx, name, nil)
}

// principalOf names who asked for what ctx is doing, for the logs: the
// principal of its request, or "system" (the registry's own sweeps).
func principalOf(ctx context.Context) string {
	if ri := telemetry.From(ctx); ri != nil && ri.Principal != "" {
		return ri.Principal
	}
	if ctx.Value(sweepKey{}) != nil {
		return "system"
	}
	return api.PrincipalFrom(ctx).ID
}

// sweepKey marks the context of the registry's own work.
type sweepKey struct{}

// errSkipped: end's check found the session no longer due.
var errSkipped = errors.New("skipped")

func (r *Registry) end(ctx context.Context, name string, check func(*entry) bool) error {
	return r.takeOffline(ctx, name, check, true, "ended", func() error { return r.store.DeleteSession(name) })
}

// takeOffline has session name to itself (see quiesce) while op changes
// its storage: its store is closed first (its streams end), and it is
// forgotten at once if remove, or unloaded afterwards otherwise.
func (r *Registry) takeOffline(ctx context.Context, name string, check func(*entry) bool, remove bool, what string, op func() error) error {
	e, l, err := r.quiesce(ctx, name, check)
	if err != nil {
		return err
	}
	if remove {
		r.mu.Lock()
		delete(r.sessions, name)
		r.mu.Unlock()
	}
	if l != nil {
		if !remove {
			r.tallyFindings(name, l.sess, true) // before its record goes
		}
		if err := l.sess.Close(); err != nil {
			r.opts.Logger.Error("closing the store of a session to be "+what+" failed", "session", name, "err", err)
		}
	}
	err = op()
	if err != nil {
		r.opts.Logger.Error("session could not be "+what, "session", name, "err", err)
	} else {
		r.opts.Logger.Info("session "+what, "session", name, "principal", principalOf(ctx))
	}
	r.mu.Lock()
	delete(r.loaded, e)
	if remove {
		e.setState(ended)
	} else {
		e.setState(unloaded)
	}
	c := e.class
	r.mu.Unlock()
	// The class's browsers learn what happened on their channels.
	if c != nil && err == nil {
		if remove {
			c.end()
		} else {
			c.reset()
		}
	}
	return err
}

// class returns session name's class, making it on first use.
func (r *Registry) class(name string) (*class, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.sessions[name]
	if e == nil {
		return nil, false
	}
	if e.class == nil {
		e.class = newClass(name, func() []api.Principal { return r.Students(name) }, r.opts.Clock.Now)
	}
	return e.class, true
}

// Students lists the students of session name, in the order they joined.
func (r *Registry) Students(name string) []api.Principal {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.sessions[name]
	if e == nil {
		return nil
	}
	out := make([]api.Principal, 0, len(e.students))
	for _, p := range e.students {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		if a, b := e.joined[out[i].ID], e.joined[out[j].ID]; !a.Equal(b) {
			return a.Before(b)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// Stats says how many sessions the registry knows and how many are loaded.
type Stats struct{ Sessions, Loaded int }

// Stats returns the registry's counts.
func (r *Registry) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Stats{Sessions: len(r.sessions), Loaded: len(r.loaded)}
}

// Sweep does the registry's periodic work at the clock's current time:
// it unloads sessions idle for UnloadAfter, ends guarded sessions unused
// for ExpireAfter, and records when each session was last used. Run calls
// it every minute; tests call it after moving a fake clock.
func (r *Registry) Sweep(ctx context.Context) {
	r.refresh(ctx)
	now := r.opts.Clock.Now()
	type unload struct {
		e *entry
		l *live
	}
	var unloads []unload
	var expired []string
	touched := map[string]time.Time{}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	for name, e := range r.sessions {
		if e.state == isLoaded && e.live.refs == 0 && now.Sub(e.live.idleSince) >= r.opts.UnloadAfter {
			unloads = append(unloads, unload{e, r.beginUnloadLocked(e)})
		}
		inUse := e.state == isLoaded && e.live.refs > 0
		if e.guarded && !inUse && now.Sub(e.lastUsed) >= r.opts.ExpireAfter {
			expired = append(expired, name)
		}
		if e.guarded && e.lastUsed.After(e.saved) {
			touched[name] = e.lastUsed
		}
	}
	r.mu.Unlock()
	for _, u := range unloads {
		r.finishUnload(u.e, u.l)
	}
	if err := r.store.Touch(touched); err != nil {
		r.opts.Logger.Error("recording when sessions were last used failed", "err", err)
	} else {
		r.mu.Lock()
		for name, t := range touched {
			if e := r.sessions[name]; e != nil && e.saved.Before(t) {
				e.saved = t
			}
		}
		r.mu.Unlock()
	}
	// Used again since it was found expired: not expired.
	stillExpired := func(e *entry) bool {
		inUse := e.state == isLoaded && e.live.refs > 0
		return !inUse && now.Sub(e.lastUsed) >= r.opts.ExpireAfter
	}
	ctx = context.WithValue(ctx, sweepKey{}, true)
	for _, name := range expired {
		r.opts.Logger.Info("session expired", "session", name, "unusedFor", r.opts.ExpireAfter)
		if err := r.end(ctx, name, stillExpired); err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, errSkipped) {
			r.opts.Logger.Error("ending an expired session failed", "session", name, "err", err)
		}
	}
}

// Run finishes deletions a crash interrupted, then sweeps every minute (or
// more often when UnloadAfter is short) until ctx ends.
func (r *Registry) Run(ctx context.Context) {
	if err := r.store.PurgeDeleted(); err != nil {
		r.opts.Logger.Error("finishing interrupted deletions of sessions failed", "err", err)
	}
	every := min(defaultSweepInterval, max(r.opts.UnloadAfter/4, time.Second))
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			r.Sweep(ctx)
		}
	}
}

// Close closes every loaded session (their watches end) and records when
// each session was last used. The registry refuses everything afterwards.
func (r *Registry) Close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	var open []*live
	var classes []*class
	touched := map[string]time.Time{}
	for name, e := range r.sessions {
		if e.state == isLoaded {
			open = append(open, e.live)
		}
		if e.class != nil {
			classes = append(classes, e.class)
		}
		if e.guarded && e.lastUsed.After(e.saved) {
			touched[name] = e.lastUsed
		}
		e.setState(ended) // wakes waiters, who then see closed
	}
	r.mu.Unlock()
	for _, c := range classes {
		c.close(nil)
	}
	for _, l := range open {
		r.tallyFindings(l.sess.Name, l.sess, true) // before its record goes
		if err := l.sess.Close(); err != nil {
			r.opts.Logger.Error("closing a session failed", "session", l.sess.Name, "err", err)
		}
	}
	if err := r.store.Touch(touched); err != nil {
		r.opts.Logger.Error("recording when sessions were last used failed", "err", err)
	}
	r.opts.Logger.Info("sessions closed", "loaded", len(open))
}
