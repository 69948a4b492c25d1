// Command server serves rvplay sessions over HTTP: per session the etcd v3
// JSON gateway (/s/<name>/v3/...) and the Kubernetes API (/s/<name>/...),
// with watches as chunked HTTP or WebSockets, plus the pages, the health
// endpoints and the metrics. Sessions and their data persist in one SQLite
// file (storage.go), or on an etcd cluster that several replicas share,
// and survive restarts. This package wires flags (each also settable
// as an RVPLAY_... environment variable, flags.go) to the parts and runs
// the graceful shutdown: the sessions and who may use them are package
// classroom's, the transport package httpapi's, the pages web's, the
// operations packages telemetry's, metrics', health's and ratelimit's.
// It also tunes Go's collector (memlimit.go): a soft memory limit from the
// budgets and GOGC=200, each unless Go's own environment variable
// (GOMEMLIMIT, GOGC) sets it.
//
//	go run ./server --addr 127.0.0.1:8080 --db rvplay.db --session demo
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/etcdgrpc"
	"github.com/rvplay/rvplay/server/health"
	"github.com/rvplay/rvplay/server/metrics"
	"github.com/rvplay/rvplay/server/ratelimit"
	"github.com/rvplay/rvplay/server/tlscert"
	"github.com/rvplay/rvplay/web"
	"github.com/rvplay/rvplay/web/lessons"
)

type sessionFlags []string

func (f *sessionFlags) String() string { return strings.Join(*f, ",") }

// Set adds a session, or several separated by commas (as RVPLAY_SESSION
// carries them; a session name has no comma).
func (f *sessionFlags) Set(v string) error {
	for _, name := range strings.Split(v, ",") {
		if name = strings.TrimSpace(name); name != "" {
			*f = append(*f, name)
		}
	}
	return nil
}

func main() {
	if err := run(); err != nil {
		slog.Error("rvplay stopped", "err", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on (port 0: any free port)")
	stores := newStorageFlags(flag.CommandLine)
	var names sessionFlags
	flag.Var(&names, "session", "an open session `name` to serve, created if missing (repeatable; comma-separated in the environment): everyone who knows its name may do everything in it")
	progress := flag.Duration("watch-progress-notify-interval", etcdgw.DefaultProgressInterval,
		"period of progress notifications for etcd watches created with progress_notify (etcd's flag and default)")
	catchUps := flag.Int("max-watch-catchups", mvcc.DefaultCatchUpConcurrency,
		"how many watchers, across all sessions, may read history from the database at once (the others wait their turn)")
	perSession := flag.Int("max-watchers-per-session", 10000, "watchers one session may hold, both protocols together (0: no cap)")
	perClient := flag.Int("max-watchers-per-client", 2000, "watchers one client (a person of a guarded session, else an address) may hold across all sessions (0: no cap)")
	perStream := flag.Int("max-watchers-per-stream", 1000, "watches one etcd /v3/watch stream may hold (0: no cap)")
	quotaBytes := flag.Int64("quota-backend-bytes", 64<<20, "bytes of records one session may retain, every revision until compaction (etcd's flag, per session; a put beyond it raises the NOSPACE alarm; 0: no quota)")
	maxKeys := flag.Int64("max-keys-per-session", 100000, "keys that may exist at once in one session (0: no cap)")
	maxTxnOps := flag.Int("max-txn-ops", mvcc.DefaultMaxTxnOps, "most compares or operations one list of an etcd txn may hold (etcd's flag and default)")
	requestTimeout := flag.Duration("request-timeout", kubeapi.DefaultRequestTimeout, "deadline of every Kubernetes API request but a watch (kube-apiserver's flag and default; writes stop at 34 s as there); 504 past it")
	memoryBudget := flag.Int64("memory-budget", 4<<30, "bytes the key indexes of all loaded sessions may hold in RAM together: their keys and current values (0: no budget)")
	maxSessions := flag.Int("max-sessions", classroom.DefaultMaxSessions,
		"most sessions this server holds, loaded or not; POST /sessions beyond it is refused")
	maxLoaded := flag.Int("max-loaded-sessions", classroom.DefaultMaxLoaded,
		"most sessions loaded (index in memory) at once; an idle one is unloaded to load another")
	unloadAfter := flag.Duration("session-unload-after", classroom.DefaultUnloadAfter,
		"how long a session without requests or watches stays loaded")
	expireAfter := flag.Duration("session-expire-after", classroom.DefaultExpireAfter,
		"how long a guarded session may go unused before it is ended and its data deleted (open sessions never expire)")
	certFile := flag.String("tls-cert-file", "", "serve HTTPS with this certificate (PEM, the chain after the leaf); with --tls-private-key-file")
	keyFile := flag.String("tls-private-key-file", "", "the private key of --tls-cert-file (PEM)")
	certDir := flag.String("cert-dir", "", "without --tls-cert-file: serve HTTPS with a self-signed CA and certificate generated once in this directory (its ca.crt goes into every kubeconfig the server hands out)")
	allowHTTP := flag.Bool("allow-insecure-http", false, "serve plain HTTP on an address other than loopback: tokens and join codes then cross the network in clear")
	tp := transportFlags(flag.CommandLine)
	grpcAddr := flag.String("grpc-addr", "", "if set, serve etcd's v3 gRPC API on this address (port 0: any free port), for etcdctl, clientv3 and kube-apiserver's --etcd-servers; a client chooses its session with etcd's authentication (user <session>, password a token of it)")
	grpcSession := flag.String("grpc-session", "", "the open `session` that gRPC clients without credentials reach, created if missing (without it such a client gets etcd's \"user name is empty\")")
	debugAddr := flag.String("debug-addr", "", "if set, serve Go's profiler (/debug/pprof/) on this address, apart from the sessions")
	clientQPS := flag.Float64("client-qps", 100, "requests a second one client may make on average to the sessions' APIs, beyond which it gets 429 with Retry-After (0: no limit); a client is a person of a guarded session (their token), else an address")
	clientBurst := flag.Int("client-burst", 500, "requests one client may make at once before --client-qps holds it back")
	limitLoopback := flag.Bool("rate-limit-loopback", false, "hold requests without a session token from a loopback address (this machine's own tools, tests and benchmarks) to --client-qps too")
	shutdownDelay := flag.Duration("shutdown-delay-duration", 0, "on SIGTERM, how long to keep serving with /readyz failing before closing, so that a load balancer stops sending new clients (kube-apiserver's flag)")
	shutdownGrace := flag.Duration("shutdown-grace-period", 10*time.Second, "on SIGTERM, how long requests in flight get to finish before their connections are cut")
	logFormat := flag.String("log-format", "text", "how logs are written to standard error: text (key=value) or json (one object a line)")
	logLevel := flag.String("log-level", "info", "the least severe log records written: debug (every request), info (lifecycle events and refused requests), warn or error")
	settings := session.DefaultSettings()
	flag.DurationVar(&settings.BookmarkInterval, "bookmark-interval", settings.BookmarkInterval,
		"a session's initial bookmark interval (kube-apiserver: about 1m); GET and PATCH /s/<session>/rvplay/v1/settings change it")
	flag.DurationVar(&settings.CompactionInterval, "compaction-interval", settings.CompactionInterval,
		"a session's initial automatic compaction interval, as kube-apiserver's --etcd-compaction-interval (5m there); 0: off")
	flag.BoolVar(&settings.WatchCache, "watch-cache", settings.WatchCache,
		"serve a session's Kubernetes watches and the reads kube-apiserver serves from its watch cache (resourceVersion=0, NotOlderThan) from one watch cache per resource, as kube-apiserver's --watch-cache (on by default there and here); false: the store serves each, etcd-level answers")
	flag.DurationVar(&settings.WatchCacheDelay, "watch-cache-delay", settings.WatchCacheDelay,
		"a session's initial lag of the watch cache behind the store (its watches, bookmarks and resourceVersion=0 reads)")
	recordSize := flag.Int("exchange-record-size", session.DefaultRecordSize,
		"how many exchanges each session keeps in its record's session ring, whoever sent them (GET /s/<session>/rvplay/v1/exchanges)")
	recordPerStudent := flag.Int("exchange-record-per-student", session.DefaultRecordPerStudent,
		"how many of their own exchanges each student of a guarded session keeps in a ring of their own, beside the session's ring (their lesson checks, their misconceptions and their watches on the dashboard read it)")
	recordPerClass := flag.Int("exchange-record-per-class", session.DefaultRecordStudents,
		"how many exchanges the students' own rings of one session hold together: past it, every student's ring is halved to make room for a new student (a student beyond it has no ring of their own)")
	if err := parseFlags(flag.CommandLine, os.Args[1:], osEnv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	logger, err := newLogger(os.Stderr, *logFormat, *logLevel)
	if err != nil {
		return err
	}
	slog.SetDefault(logger)
	if err := settings.Validate(); err != nil {
		return err
	}

	if *debugAddr != "" {
		if err := serveDebug(*debugAddr); err != nil {
			return err
		}
	}
	serving, err := servingCertificate(*certFile, *keyFile, *certDir)
	if err != nil {
		return err
	}
	watchers := newClientWatchers(*perClient)
	var reg *classroom.Registry
	m := metrics.New(metrics.Sources{
		Sessions: func() (int, int) { st := reg.Stats(); return st.Sessions, st.Loaded },
		Watchers: watchers.open,
	})
	stores.onCommit, stores.maxTxnOps = m.ObserveCommit, *maxTxnOps
	db, err := stores.open()
	if err != nil {
		return err
	}
	defer func() {
		if err := db.close(); err != nil {
			slog.Error("closing the storage failed", "store", db.where, "err", err)
		} else {
			slog.Info("storage closed", "store", db.where)
		}
	}()
	// The pages say where the sessions live: on etcd a session's revisions
	// are the cluster's, shared with every other session.
	pages := web.Server{}
	if db.etcd != nil {
		pages.Store = web.StoreEtcd
	}
	if db.etcd != nil && settings.CompactionInterval > 0 {
		// etcd compacts the whole cluster: --etcd-compaction-interval's
		// compactor does, not each session's. Said only to whoever set
		// --compaction-interval (its default is on).
		set := false
		flag.Visit(func(f *flag.Flag) { set = set || f.Name == "compaction-interval" })
		if set {
			slog.Info("sessions on etcd compact with the cluster (--etcd-compaction-interval), not each on its own: --compaction-interval is ignored", "compactionInterval", settings.CompactionInterval)
		}
		settings.CompactionInterval = 0
	}
	opts := classroom.Options{
		MaxSessions: *maxSessions,
		MaxLoaded:   *maxLoaded,
		UnloadAfter: *unloadAfter,
		ExpireAfter: *expireAfter,
		Logger:      logger,
	}
	if serving != nil {
		opts.CA = serving.CA
	}
	opts.Session.Gateway.ProgressInterval = *progress
	opts.Session.Settings = &settings
	opts.Session.RecordSize = *recordSize
	opts.Session.RecordPerStudent = *recordPerStudent
	opts.Session.RecordStudents = *recordPerClass
	opts.Session.Store.CatchUp = mvcc.NewCatchUpLimiter(*catchUps)
	opts.Session.Store.MaxWatchers = *perSession
	opts.Session.Gateway.MaxWatchersPerStream = *perStream
	opts.Session.Store.QuotaBackendBytes = *quotaBytes
	opts.Session.Store.MaxKeys = *maxKeys
	opts.Session.Store.Memory = mvcc.NewMemoryBudget(*memoryBudget)
	opts.Session.Store.MaxTxnOps = *maxTxnOps
	setMemoryLimit(*memoryBudget, *tp.bodyMemory)
	setGCPercent()
	opts.Session.Kube = kubeapi.ForSessions(kubeapi.Options{RequestTimeout: *requestTimeout})
	opts.HTTP.WatchLimiter = watchers.limiter
	opts.HTTP.Observe = streamObserver{metrics: m, log: logger}
	origins, err := tp.apply(&opts)
	if err != nil {
		return err
	}
	if opts.Session.Lessons, err = lesson.Open(lessons.Definitions()); err != nil {
		return fmt.Errorf("lessons: %w", err)
	}
	reg, err = classroom.New(db.storage, opts)
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := reg.CreateOpen(n); err != nil {
			return fmt.Errorf("session %q: %w", n, err)
		}
	}
	if *grpcSession != "" {
		if _, err := reg.CreateOpen(*grpcSession); err != nil {
			return fmt.Errorf("--grpc-session %q: %w", *grpcSession, err)
		}
		if s, _ := reg.Lookup(*grpcSession); s.Guarded {
			return fmt.Errorf("--grpc-session %q: a guarded session is reached with its token (etcdctl --user %s:<token>), not without credentials", *grpcSession, *grpcSession)
		}
	}
	sweeping, stopSweeping := context.WithCancel(context.Background())
	defer stopSweeping()
	// Before serving: whatever another replica ends from now on ends here,
	// and a join code another renews shows on the dashboards here.
	reg.FollowEnded(sweeping)
	reg.FollowJoinCodes(sweeping)
	go reg.Run(sweeping)
	stores.compact(sweeping, db, logger)

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	if ip := ln.Addr().(*net.TCPAddr).IP; serving == nil && !ip.IsLoopback() && !*allowHTTP {
		ln.Close()
		return fmt.Errorf("refusing plain HTTP on %s: tokens and join codes would cross the network in clear; serve HTTPS (--tls-cert-file and --tls-private-key-file, or --cert-dir for a self-signed certificate) or pass --allow-insecure-http", ln.Addr())
	}
	scheme := "http"
	if serving != nil {
		scheme = "https"
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{serving.Certificate}, MinVersion: tls.VersionTLS12})
	}
	// Streams (watches) live as long as their clients; a shutdown ends
	// them by closing the sessions, and then, if some are still open after
	// the grace period, by ending the base context.
	base, stopStreams := context.WithCancel(context.Background())
	defer stopStreams()
	var shutdown health.Shutdown
	var writes inFlight
	limiter := ratelimit.New(ratelimit.Options{Rate: *clientQPS, Burst: *clientBurst})
	var etcd *etcdgrpc.Server
	if *grpcAddr != "" {
		etcd, err = serveGRPC(*grpcAddr, *grpcSession, reg, serving, *allowHTTP, etcdgrpc.Options{
			WatchLimiter:     func(client string) api.Limiter { return watchers.limiterFor(client, "etcd") },
			MaxResponseBytes: int(*tp.maxResponse),
			Logger:           logger,
			Admit: func(client string, anonymousLoopback bool) bool {
				if !*limitLoopback && anonymousLoopback {
					return true
				}
				_, ok := limiter.Allow(client)
				if !ok {
					m.RateLimited("etcd")
				}
				return ok
			},
		})
		if err != nil {
			return err
		}
		defer etcd.Stop()
	}
	srv := &http.Server{
		// Bodies and answers get deadlines per request (httpapi); a
		// server-wide ReadTimeout or WriteTimeout would end every watch.
		Handler: routes(reg, pages.Handler(), operations{
			Metrics:       m,
			Limiter:       limiter,
			LimitLoopback: *limitLoopback,
			Checks:        []health.Check{db.check},
			Shutdown:      &shutdown,
			Logger:        logger,
			Wrap:          func(h http.Handler) http.Handler { return writes.track(tp.guard(origins, h)) },
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// Tests and scripts read the address from this line.
	fmt.Printf("rvplay listening on %s://%s\n", scheme, ln.Addr())
	for _, n := range names {
		fmt.Printf("session %s: %s://%s/s/%s/\n", n, scheme, ln.Addr(), n)
	}
	slog.Info("serving", "addr", ln.Addr().String(), "scheme", scheme, "store", db.where, "sessions", reg.Stats().Sessions)

	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		reg.Close()
		return err
	case s := <-signals:
		slog.Info("shutting down", "signal", s.String(), "delay", *shutdownDelay, "gracePeriod", *shutdownGrace)
	}
	return gracefulShutdown(srv, etcd, reg, &shutdown, &writes, stopStreams, *shutdownDelay, *shutdownGrace)
}

// serveGRPC serves etcd's gRPC API on addr over the sessions of reg, with
// the HTTP server's certificate if it has one: tokens go in the clear
// otherwise, so plain gRPC off loopback needs allowPlain, as plain HTTP
// does. It prints the address it listens on (tests read it) before the
// HTTP server's line.
func serveGRPC(addr, session string, reg *classroom.Registry, serving *tlscert.Serving, allowPlain bool, opts etcdgrpc.Options) (*etcdgrpc.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--grpc-addr: %w", err)
	}
	if ip := ln.Addr().(*net.TCPAddr).IP; serving == nil && !ip.IsLoopback() && !allowPlain {
		ln.Close()
		return nil, fmt.Errorf("refusing plain gRPC on %s: tokens would cross the network in clear; serve TLS (--tls-cert-file and --tls-private-key-file, or --cert-dir) or pass --allow-insecure-http", ln.Addr())
	}
	scheme := "http"
	var creds []grpc.ServerOption
	if serving != nil {
		scheme = "https"
		creds = append(creds, grpc.Creds(credentials.NewTLS(&tls.Config{
			Certificates: []tls.Certificate{serving.Certificate}, MinVersion: tls.VersionTLS12})))
	}
	opts.Sessions = etcdgrpc.Registry(reg)
	opts.DefaultSession = session
	opts.ClientURL = scheme + "://" + ln.Addr().String()
	s := etcdgrpc.New(opts, creds...)
	fmt.Printf("rvplay etcd gRPC on %s\n", opts.ClientURL)
	go func() {
		if err := s.Serve(ln); err != nil {
			slog.Error("etcd gRPC stopped", "err", err)
		}
	}()
	slog.Info("serving etcd gRPC", "addr", ln.Addr().String(), "scheme", scheme, "session", session)
	return s, nil
}

// gracefulShutdown stops the server in the order that loses nothing:
// /readyz fails first (and, for delay, new clients are still served while a
// load balancer notices); then the listeners close, and every request in
// flight that is not a watch finishes, so that each write that began is
// committed and acknowledged; then the sessions close, which ends every
// watch in its protocol's way (a Kubernetes watch's stream ends, so that its
// client watches again; an etcd watch gets etcd's "transport is closing");
// watches whose clients do not take their end are cut after the grace
// period. The database closes last (run's deferred Close).
func gracefulShutdown(srv *http.Server, etcd *etcdgrpc.Server, reg *classroom.Registry, shutdown *health.Shutdown, writes *inFlight,
	stopStreams func(), delay, grace time.Duration) error {
	shutdown.Begin()
	if delay > 0 {
		time.Sleep(delay)
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	stopped := make(chan error, 1)
	go func() { stopped <- srv.Shutdown(ctx) }()
	grpcStopped := make(chan struct{})
	go func() {
		if etcd != nil {
			etcd.GracefulStop()
		}
		close(grpcStopped)
	}()
	if err := writes.wait(ctx); err != nil {
		slog.Warn("requests still in flight after the grace period", "gracePeriod", grace)
	}
	reg.Close()
	var err error
	select {
	case err = <-stopped:
	case <-ctx.Done():
		stopStreams()
		err = <-stopped
	}
	select {
	case <-grpcStopped:
	case <-ctx.Done():
		if etcd != nil {
			etcd.Stop()
		}
		<-grpcStopped
	}
	if errors.Is(err, context.DeadlineExceeded) {
		// Connections still busy (hijacked WebSockets are not waited
		// for): what they were doing has been ended with the sessions.
		err = nil
	}
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	slog.Info("stopped serving")
	return err
}

// servingCertificate is the operator's certificate, a self-signed one in
// certDir, or nil (plain HTTP).
func servingCertificate(certFile, keyFile, certDir string) (*tlscert.Serving, error) {
	switch {
	case certFile != "" || keyFile != "":
		if certFile == "" || keyFile == "" {
			return nil, errors.New("--tls-cert-file and --tls-private-key-file go together")
		}
		return tlscert.Load(certFile, keyFile)
	case certDir != "":
		return tlscert.SelfSigned(certDir, tlscert.LocalHosts(), time.Now())
	}
	return nil, nil
}

// serveDebug serves net/http/pprof on its own listener, so that profiling a
// loaded server (as etcd's --enable-pprof and kube-apiserver's --profiling
// allow) never shares a port with what users reach.
func serveDebug(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("debug address: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	fmt.Printf("rvplay profiler on http://%s/debug/pprof/\n", ln.Addr())
	go func() { slog.Error("profiler stopped", "err", http.Serve(ln, mux)) }()
	return nil
}
