// Command server serves rvplay sessions over HTTP: per session the etcd v3
// JSON gateway (/s/<name>/v3/...) and the Kubernetes API (/s/<name>/...),
// with watches as chunked HTTP or WebSockets, plus the pages. Sessions and
// their data persist in one SQLite file and survive restarts. This package
// only wires flags to the parts: the sessions and who may use them are
// package classroom's, the transport package httpapi's, the pages web's.
//
//	go run ./server --addr 127.0.0.1:8080 --db rvplay.db --session demo
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"log"
	"net"
	"net/http"
	"net/http/pprof"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rvplay/rvplay/engine/api/etcdgw"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/tlscert"
	"github.com/rvplay/rvplay/web"
	"github.com/rvplay/rvplay/web/lessons"
)

type sessionFlags []string

func (f *sessionFlags) String() string     { return strings.Join(*f, ",") }
func (f *sessionFlags) Set(v string) error { *f = append(*f, v); return nil }

func main() {
	log.SetFlags(log.LstdFlags | log.Lmicroseconds)
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8080", "address to listen on (port 0: any free port)")
	dbPath := flag.String("db", "rvplay.db", "SQLite file holding the sessions (created if missing)")
	var names sessionFlags
	flag.Var(&names, "session", "an open session to serve, created if missing (repeatable): everyone who knows its name may do everything in it")
	progress := flag.Duration("watch-progress-notify-interval", etcdgw.DefaultProgressInterval,
		"period of progress notifications for etcd watches created with progress_notify (etcd's flag and default)")
	catchUps := flag.Int("max-watch-catchups", mvcc.DefaultCatchUpConcurrency,
		"how many watchers, across all sessions, may read history from the database at once (the others wait their turn)")
	perSession := flag.Int("max-watchers-per-session", 10000, "watchers one session may hold, both protocols together (0: no cap)")
	perClient := flag.Int("max-watchers-per-client", 2000, "watchers one client (remote address) may hold across all sessions (0: no cap)")
	perStream := flag.Int("max-watchers-per-stream", 1000, "watches one etcd /v3/watch stream may hold (0: no cap)")
	quotaBytes := flag.Int64("quota-backend-bytes", 64<<20, "bytes of records one session may retain, every revision until compaction (etcd's flag, per session; a put beyond it raises the NOSPACE alarm; 0: no quota)")
	maxKeys := flag.Int64("max-keys-per-session", 100000, "keys that may exist at once in one session (0: no cap)")
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
	debugAddr := flag.String("debug-addr", "", "if set, serve Go's profiler (/debug/pprof/) on this address, apart from the sessions")
	flag.Parse()

	if *debugAddr != "" {
		if err := serveDebug(*debugAddr); err != nil {
			return err
		}
	}
	serving, err := servingCertificate(*certFile, *keyFile, *certDir)
	if err != nil {
		return err
	}
	db, err := sqlite.Open(*dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	opts := classroom.Options{
		MaxSessions: *maxSessions,
		MaxLoaded:   *maxLoaded,
		UnloadAfter: *unloadAfter,
		ExpireAfter: *expireAfter,
	}
	if serving != nil {
		opts.CA = serving.CA
	}
	opts.Session.Gateway.ProgressInterval = *progress
	opts.Session.Store.CatchUp = mvcc.NewCatchUpLimiter(*catchUps)
	opts.Session.Store.MaxWatchers = *perSession
	opts.Session.Gateway.MaxWatchersPerStream = *perStream
	opts.Session.Store.QuotaBackendBytes = *quotaBytes
	opts.Session.Store.MaxKeys = *maxKeys
	opts.Session.Store.Memory = mvcc.NewMemoryBudget(*memoryBudget)
	opts.Session.Kube = kubeapi.ForSessions(kubeapi.Options{RequestTimeout: *requestTimeout})
	opts.HTTP.WatchLimiter = newClientWatchers(*perClient).limiter
	origins, err := tp.apply(&opts)
	if err != nil {
		return err
	}
	if opts.Session.Lessons, err = lesson.Load(lessons.Definitions()); err != nil {
		return fmt.Errorf("lessons: %w", err)
	}
	reg, err := classroom.New(db, opts)
	if err != nil {
		return err
	}
	for _, n := range names {
		if _, err := reg.CreateOpen(n); err != nil {
			return fmt.Errorf("session %q: %w", n, err)
		}
	}
	sweeping, stopSweeping := context.WithCancel(context.Background())
	defer stopSweeping()
	go reg.Run(sweeping)

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
	// Streams (watches) live as long as their clients; on shutdown the base
	// context ends them, so that Shutdown does not wait for them forever.
	base, stopStreams := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler: tp.guard(origins, routes(reg, web.Handler())),
		// Bodies and answers get deadlines per request (httpapi); a
		// server-wide ReadTimeout or WriteTimeout would end every watch.
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    1 << 20,
		BaseContext:       func(net.Listener) context.Context { return base },
	}
	// Tests and scripts read the address from this line.
	fmt.Printf("rvplay listening on %s://%s\n", scheme, ln.Addr())
	for _, n := range names {
		fmt.Printf("session %s: %s://%s/s/%s/\n", n, scheme, ln.Addr(), n)
	}

	sig, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		stopStreams()
		reg.Close()
		return err
	case <-sig.Done():
	}
	log.Print("shutting down")
	// Stop accepting, then close the sessions: their watch streams end the
	// way etcd's do when the server goes away, and every acknowledged write
	// is already committed. Streams that do not end by themselves are ended
	// after a grace period, so that Shutdown can finish.
	shutdown := make(chan error, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { shutdown <- srv.Shutdown(ctx) }()
	reg.Close()
	grace := time.NewTimer(2 * time.Second)
	defer grace.Stop()
	select {
	case err = <-shutdown:
	case <-grace.C:
		stopStreams()
		err = <-shutdown
	}
	stopStreams()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
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
	go func() { log.Print(http.Serve(ln, mux)) }()
	return nil
}
