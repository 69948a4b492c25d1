package main

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/server/classroom"
)

// memoryData keeps the sessions' records in mvcc memory backends and
// their access in a throwaway SQLite file: for tests and benchmarks that
// measure the server without SQLite's commits. A session unloaded here
// loses its records.
type memoryData struct{ *sqlite.DB }

func (memoryData) Session(string) (mvcc.Backend, error) { return mvcc.NewMemoryBackend(), nil }

// startServer serves the given open sessions through the real routing and
// adapter, on a memory backend or (sqlitePath != "") on a SQLite file.
func startServer(t testing.TB, sqlitePath string, sessions ...string) *httptest.Server {
	t.Helper()
	srv, _ := startServerWith(t, sqlitePath, classroom.Options{}, nil, sessions...)
	return srv
}

func startServerWith(t testing.TB, sqlitePath string, opts classroom.Options, pages http.Handler, sessions ...string) (*httptest.Server, *classroom.Registry) {
	t.Helper()
	return startServerOps(t, sqlitePath, opts, operations{}, pages, sessions...)
}

// startServerOps is startServerWith with the server's operations (health
// checks, metrics, rate limits).
func startServerOps(t testing.TB, sqlitePath string, opts classroom.Options, ops operations, pages http.Handler, sessions ...string) (*httptest.Server, *classroom.Registry) {
	t.Helper()
	memory := sqlitePath == ""
	dbOpts := sqlite.Options{} // the server's own: synchronous=FULL
	if memory {
		sqlitePath = tempDB(t)
		dbOpts.Synchronous = sqlite.SyncNormal
	}
	sdb, err := sqlite.OpenWithOptions(sqlitePath, dbOpts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdb.Close() })
	var store classroom.Storage = sdb
	if memory {
		store = memoryData{sdb}
	}
	reg, err := classroom.New(store, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		if _, err := reg.CreateOpen(s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(routes(reg, pages, ops))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		reg.Close()
	})
	return srv, reg
}

// openMemoryData is a memoryData on a throwaway SQLite file.
func openMemoryData(t testing.TB) (memoryData, error) {
	sdb, err := sqlite.OpenWithOptions(tempDB(t), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		return memoryData{}, err
	}
	t.Cleanup(func() { sdb.Close() })
	return memoryData{sdb}, nil
}

func tempDB(t testing.TB) string { return filepath.Join(t.TempDir(), "rvplay.db") }

type answer struct {
	status int
	header http.Header
	body   string
}

func post(t testing.TB, url, body string) answer {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	h := resp.Header.Clone()
	for k, v := range resp.Trailer {
		h["Trailer-Value-"+k] = v
	}
	return answer{resp.StatusCode, h, string(b)}
}

// watchClient reads a chunked /v3/watch response line by line.
type watchClient struct {
	t     testing.TB
	resp  *http.Response
	lines chan string
}

func openWatch(t testing.TB, url, body string) *watchClient {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	w := &watchClient{t: t, resp: resp, lines: make(chan string, 1024)}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 8<<20)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return w
}

// next returns the next line; a line that does not come within a generous
// time means the stream is stuck, which fails the test (no sleeps: it
// returns as soon as the line is there).
func (w *watchClient) next() string {
	w.t.Helper()
	select {
	case l, ok := <-w.lines:
		if !ok {
			w.t.Fatal("watch stream ended")
		}
		return l
	case <-time.After(10 * time.Second):
		w.t.Fatal("no watch frame within 10s")
	}
	return ""
}

// idFields are the per-cluster IDs, which legitimately differ.
var idFields = regexp.MustCompile(`"(cluster_id|member_id|leader)":"[0-9]+"`)

func normalize(s string) string { return idFields.ReplaceAllString(s, `"$1":"ID"`) }

// do sends a request with a bearer token (none if token is empty).
func do(t testing.TB, method, url, token, body string) answer {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, string(b)}
}
