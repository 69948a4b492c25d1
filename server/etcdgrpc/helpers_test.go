package etcdgrpc

import (
	"context"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/server/classroom"
)

var t0 = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

// env is a registry on a real SQLite file with an open session "demo",
// the default one, and a guarded session "class" with a teacher and a
// student, served over gRPC on a loopback port.
type env struct {
	t       testing.TB
	reg     *classroom.Registry
	srv     *Server
	addr    string
	clock   *clock.Fake
	teacher string // the teacher token of "class"
	student string // Ada's token in "class"
}

func newEnv(t testing.TB, opts Options) *env {
	t.Helper()
	e := &env{t: t, clock: clock.NewFake(t0)}
	db, err := sqlite.OpenWithOptions(filepath.Join(t.TempDir(), "rvplay.db"), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Sessions run on the fake clock: leases expire when the test says.
	e.reg, err = classroom.New(db, classroom.Options{Logger: quiet, Session: session.Options{Clock: e.clock}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.reg.CreateOpen("demo"); err != nil {
		t.Fatal(err)
	}
	created, err := e.reg.CreateGuarded("class")
	if err != nil {
		t.Fatal(err)
	}
	e.teacher = created.TeacherToken
	joined, err := e.reg.Join(context.Background(), "class", created.JoinCode, "Ada")
	if err != nil {
		t.Fatal(err)
	}
	e.student = joined.Token

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	opts.Sessions = Registry(e.reg)
	if opts.DefaultSession == "" {
		opts.DefaultSession = "demo"
	}
	if opts.ClientURL == "" {
		opts.ClientURL = "http://" + e.addr
	}
	if opts.Logger == nil {
		opts.Logger = quiet
	}
	e.srv = New(opts)
	go e.srv.Serve(ln)
	t.Cleanup(func() {
		e.srv.Stop()
		e.reg.Close()
		db.Close()
	})
	return e
}

// client is clientv3 on e, authenticated as user:password unless user is
// empty.
func (e *env) client(user, password string) *clientv3.Client {
	e.t.Helper()
	return e.clientWith(clientv3.Config{Username: user, Password: password})
}

// clientWith is clientv3 on e configured by cfg.
func (e *env) clientWith(cfg clientv3.Config) *clientv3.Client {
	e.t.Helper()
	cfg.Endpoints = []string{e.addr}
	cfg.DialTimeout = 10 * time.Second
	cfg.Logger = zap.NewNop()
	c, err := clientv3.New(cfg)
	if err != nil {
		e.t.Fatalf("clientv3.New(%q): %v", cfg.Username, err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}
