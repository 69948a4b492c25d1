//go:build !js

package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/mvcc/mvcctest"
)

// TestStoreConformance runs the Store's conformance suite on SQLite. Every
// restart in the suite closes the database file and opens it again, so the
// suite's restart cases exercise a real reopen: migrations skipped, Load
// from disk.
func TestStoreConformance(t *testing.T) {
	mvcctest.Run(t, func(t *testing.T) func() mvcc.Backend {
		path := filepath.Join(t.TempDir(), "rvplay.db")
		var db *DB
		t.Cleanup(func() {
			if db != nil {
				db.Close()
			}
		})
		return func() mvcc.Backend {
			if db != nil {
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
			}
			var err error
			if db, err = Open(path); err != nil {
				t.Fatal(err)
			}
			return session(t, db, "conformance")
		}
	})
}

// TestStoreConformanceBesideOtherSessions runs the suite on a session that
// shares its file with another, busy one: nothing of the neighbour may show.
func TestStoreConformanceBesideOtherSessions(t *testing.T) {
	mvcctest.Run(t, func(t *testing.T) func() mvcc.Backend {
		db, _ := openTemp(t)
		neighbour, err := mvcc.Open(session(t, db, "neighbour"), mvcc.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { neighbour.Close() })
		for _, k := range []string{"a", "b", "foo", "zoo"} {
			if _, err := neighbour.Put(t.Context(), &mvcc.PutRequest{Key: []byte(k), Value: []byte("neighbour")}); err != nil {
				t.Fatal(err)
			}
		}
		return func() mvcc.Backend { return session(t, db, "conformance") }
	})
}
