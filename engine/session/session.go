// Package session wires one playground session: a store (an mvcc.Store
// over a Backend, or any mvcc.KV: on the server, a prefix of an etcd
// cluster), the etcd v3 JSON gateway on it, the Kubernetes API (package
// kubeapi, or another handler given in Options) and the session's own API
// (/rvplay/v1/...: settings, the record of exchanges, a pod's failure, the
// lessons of package lesson), behind one api.Handler that routes by path.
// It also runs what a cluster runs beside its API server: kube-apiserver's
// automatic compaction (every 5 minutes unless the settings say otherwise),
// kube-controller-manager's controllers and a kubelet (engine/controllers),
// ordinary clients of the session whose requests are recorded like
// anyone's.
//
// Every request the session serves is noted in its Record (record.go):
// who sent it, what it asked, what it got, which resourceVersion it sent
// and met, how a watch went. Lessons check what a learner achieved
// against it.
//
// Both the server and the WebAssembly build use it, so it must not import
// net/http, SQLite, syscall/js or a websocket library: the caller chooses the
// Backend (memory in the browser, SQLite on the server).
package session

import (
	"context"
	"strings"
	"sync"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/kube"
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
	// kubeapi's, on the session's Clock.
	Kube func(name string, store mvcc.KV) api.Handler
	// Lessons are the lessons the session serves under /rvplay/v1/lessons
	// (the caller loads them: web/lessons holds the definitions); nil
	// serves none.
	Lessons *lesson.Catalog
	// Clock drives the session's time: bookmarks and the watch cache's lag
	// (when Kube is nil), automatic compaction, the controller's waits, the
	// record's times. Nil: the wall clock.
	Clock clock.Clock
	// Settings are the session's initial settings. Nil: DefaultSettings.
	Settings *Settings
	// RecordSize is how many exchanges the record's session ring keeps
	// (default DefaultRecordSize); RecordPerStudent how many each
	// student's own ring keeps (default DefaultRecordPerStudent);
	// RecordStudents how many the students' rings hold together (default
	// DefaultRecordStudents).
	RecordSize       int
	RecordPerStudent int
	RecordStudents   int
	// NoControllers leaves the controllers and the kubelet out.
	NoControllers bool
}

// Session is one playground: one revision sequence, reachable through the
// etcd gateway (/v3/...), the session's own API (/rvplay/...) and the
// Kubernetes API (everything else).
type Session struct {
	Name  string
	Store mvcc.KV
	// Etcd serves /v3/...: it is Gateway.
	Etcd api.Handler
	// Gateway is the etcd v3 API over Store, JSON gateway and the rules
	// that etcd's gRPC API shares with it (server/etcdgrpc).
	Gateway *etcdgw.Gateway
	// Kube serves every other path; nil answers 404.
	Kube api.Handler
	// Control serves /rvplay/...
	Control *Control
	// Record holds the exchanges the session served.
	Record *Record
	// Lessons serves /rvplay/v1/lessons/... and /rvplay/v1/misconceptions;
	// nil when the session has no lessons.
	Lessons *lesson.Service

	clock     clock.Clock
	registry  *kube.Registry // nil when Kube is not kubeapi's
	compactor *compactor
	noCtrl    bool

	settingsMu sync.Mutex
	settings   Settings

	ctx       context.Context // ends at Close
	stop      context.CancelFunc
	running   sync.WaitGroup
	ctrl      controllers
	closeOnce sync.Once
}

// New opens a Store over b and returns the session serving it.
func New(name string, b mvcc.Backend, opts Options) (*Session, error) {
	if opts.Store.MemberID == 0 {
		// The store raises its alarms as the member the gateway reports.
		_, opts.Store.MemberID = gatewayIDs(name, opts.Gateway)
	}
	if opts.Store.Clock == nil && opts.Clock != nil {
		// Leases expire on the session's time.
		opts.Store.Clock = opts.Clock
	}
	store, err := mvcc.Open(b, opts.Store)
	if err != nil {
		return nil, err
	}
	return NewWithStore(name, store, opts)
}

// gatewayIDs are the cluster and member IDs the session's gateway
// reports: those of o, or stable ones derived from the session's name.
func gatewayIDs(name string, o etcdgw.Options) (cluster, member uint64) {
	if o.ClusterID == 0 && o.MemberID == 0 {
		return etcdgw.IDsFor(name)
	}
	return o.ClusterID, o.MemberID
}

// NewWithStore returns the session serving store, an open store it takes
// over (Close closes it); opts.Store is not used.
func NewWithStore(name string, store mvcc.KV, opts Options) (*Session, error) {
	g := opts.Gateway
	g.ClusterID, g.MemberID = gatewayIDs(name, g)
	clk := opts.Clock
	if clk == nil {
		clk = clock.Real{}
	}
	settings := DefaultSettings()
	if opts.Settings != nil {
		settings = *opts.Settings
	}
	if err := settings.Validate(); err != nil {
		store.Close()
		return nil, err
	}
	gw := etcdgw.NewWithOptions(store, g)
	s := &Session{Name: name, Store: store, Etcd: gw, Gateway: gw, Control: newControl(),
		Record: NewRecord(opts.RecordSize, opts.RecordPerStudent, opts.RecordStudents), clock: clk, noCtrl: opts.NoControllers}
	if opts.Kube == nil {
		opts.Kube = func(name string, store mvcc.KV) api.Handler {
			return kubeapi.New(kubeapi.Options{Store: store, Kube: kube.Options{Clock: clk}})
		}
	}
	s.Kube = opts.Kube(name, store)
	if ks, ok := s.Kube.(interface{ Registry() *kube.Registry }); ok {
		s.registry = ks.Registry()
	}
	s.ctx, s.stop = context.WithCancel(context.Background())
	s.ctrl.s = s
	s.compactor = newCompactor(store, clk, func(loop func()) {
		s.running.Add(1)
		go func() {
			defer s.running.Done()
			loop()
		}()
	})
	s.applySettings(settings)
	s.Control.Handle(ControlPrefix+"/settings", api.HandlerFunc(s.serveSettings))
	s.Control.Handle(ControlPrefix+"/exchanges", api.HandlerFunc(s.serveExchanges))
	s.Control.HandlePrefix(FailPodPath, api.HandlerFunc(s.serveFailPod))
	if opts.Lessons != nil {
		s.Lessons = &lesson.Service{Catalog: opts.Lessons, Store: store, Handler: s, Exchanges: s.LessonExchanges, Now: clk.Now}
		s.Control.HandlePrefix(lesson.LessonsPath, s.Lessons)
		s.Control.Handle(lesson.MisconceptionsPath, s.Lessons)
	}
	return s, nil
}

// Settings returns the session's settings.
func (s *Session) Settings() Settings {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	return s.settings
}

// UpdateSettings changes the settings to what change makes of the current
// ones, if they are valid, and puts them into effect: a new bookmark
// interval from each watch's next bookmark, a new compaction interval one
// interval from now, a new watch-cache lag at once, the watch cache on or
// off at once (off closes the watches it served: their clients watch
// again, from the store).
func (s *Session) UpdateSettings(change func(Settings) (Settings, error)) (Settings, error) {
	s.settingsMu.Lock()
	defer s.settingsMu.Unlock()
	next, err := change(s.settings)
	if err != nil {
		return s.settings, err
	}
	if err := next.Validate(); err != nil {
		return s.settings, err
	}
	s.applyLocked(next)
	return next, nil
}

func (s *Session) applySettings(st Settings) {
	s.settingsMu.Lock()
	s.applyLocked(st)
	s.settingsMu.Unlock()
}

func (s *Session) applyLocked(st Settings) {
	if s.registry != nil {
		s.registry.SetBookmarkInterval(st.BookmarkInterval)
		s.registry.SetWatchCacheDelay(st.WatchCacheDelay)
		s.registry.SetWatchCache(st.WatchCache)
	}
	if st.CompactionInterval != s.settings.CompactionInterval || s.settings == (Settings{}) {
		s.compactor.setInterval(s.ctx, st.CompactionInterval)
	}
	s.settings = st
	s.ctrl.enable(!st.ControllersPaused)
}

// IsEtcdPath reports whether path belongs to the etcd gateway: /v3/..., and
// /v3beta/..., the alias etcd 3.4 still serves.
func IsEtcdPath(path string) bool {
	return path == "/v3" || strings.HasPrefix(path, "/v3/") || strings.HasPrefix(path, "/v3beta/")
}

// Serve routes a request to the etcd gateway, the session's own API or the
// Kubernetes API, and records the exchange. The first Kubernetes request
// starts the session's controllers: a session used only through the etcd
// gateway stays a plain etcd, with no Kubernetes objects, whose only writes
// of its own are the automatic compaction's (compact_rev_key, as
// kube-apiserver's compactor writes it).
func (s *Session) Serve(ctx context.Context, req *api.Request) *api.Response {
	start := s.clock.Now()
	proto := protocolOf(req.Path)
	var resp *api.Response
	switch {
	case proto == ProtocolEtcd:
		resp = s.Etcd.Serve(ctx, req)
	case proto == ProtocolRvplay:
		resp = s.Control.Serve(ctx, req)
	case s.Kube != nil:
		s.ctrl.kubeUsed()
		resp = s.Kube.Serve(ctx, req)
	default:
		resp = NotFound()
	}
	if resp == nil {
		resp = ControlStatus(500, "InternalError", "no response from the handler")
	}
	// Reading the session's own API is not an exchange worth keeping: a
	// lesson polling the record would fill it with its own polls. Nor is
	// a verify, which evaluates and changes nothing.
	if proto != ProtocolRvplay || (req.Method != "GET" && req.Method != "HEAD" && !strings.HasSuffix(req.Path, "/verify")) {
		s.record(ctx, req, resp, proto, start)
	}
	return resp
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

// Close stops the session's controllers and compaction, then closes the
// store (and with it every watch) and its backend.
func (s *Session) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.stop()
		s.ctrl.stop()
		s.running.Wait()
		if s.registry != nil {
			s.registry.Close()
		}
		err = s.Store.Close()
	})
	return err
}
