package etcddiff

import (
	"net/http/httptest"
	"os"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/internal/rvplaytest"
	"github.com/rvplay/rvplay/server/httpapi"
)

func TestMain(m *testing.M) { os.Exit(rvplaytest.RunTests(m)) }

// memoryTarget serves a session on the memory backend through the
// server's net/http adapter on a real loopback HTTP server.
func memoryTarget(t *testing.T) *Target { return memoryTargetWith(t, session.Options{}) }

// memoryTargetWith is memoryTarget for a session opened with opts.
func memoryTargetWith(t *testing.T, opts session.Options) *Target {
	sess, err := session.New("diff", mvcc.NewMemoryBackend(), opts)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.Handler(sess, httpapi.Options{}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		sess.Close()
	})
	return NewTarget("rvplay-memory", srv.URL)
}

// sqliteTarget starts the server binary on a fresh SQLite file.
func sqliteTarget(t *testing.T) *Target {
	r := rvplaytest.Start(t, "diff")
	return NewTarget("rvplay-sqlite", r.SessionURL)
}

// TestGatewayMatchesEtcd runs every seed against a real etcd (the
// reference) and rvplay's gateway on the memory backend and on SQLite
// (through the server binary), comparing every answer.
func TestGatewayMatchesEtcd(t *testing.T) {
	for _, seed := range seeds() {
		t.Run(fmtSeed(seed), func(t *testing.T) {
			t.Parallel()
			ref := etcdtest.Start(t, etcdtest.Options{})
			checkSeed(t, seed, NewTarget("etcd", ref.URL), memoryTarget(t), sqliteTarget(t))
		})
	}
}
