//go:build !js

package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/migrations"
)

// fileSize is what the database takes on disk: the main file and its WAL.
func fileSize(t testing.TB, path string) int64 {
	t.Helper()
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

// fillStore writes n puts of value bytes over keys distinct keys.
func fillStore(t testing.TB, s *mvcc.Store, n, keys, value int) {
	t.Helper()
	v := make([]byte, value)
	for i := 0; i < n; i++ {
		if _, err := s.Put(context.Background(), &mvcc.PutRequest{Key: []byte(fmt.Sprintf("/registry/configmaps/default/k%06d", i%keys)), Value: v}); err != nil {
			t.Fatal(err)
		}
	}
}

// openStore opens the file at path and a store over its session "s".
func openStore(t testing.TB, path string) (*DB, *mvcc.Store) {
	t.Helper()
	db, err := OpenWithOptions(path, Options{Synchronous: SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	s, err := mvcc.Open(session(t, db, "s"), mvcc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return db, s
}

// Compaction must give the file's space back, not only free pages inside
// it: the file shrinks to what the retained records need.
func TestCompactionShrinksTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rvplay.db")
	open := func() (*DB, *mvcc.Store) { return openStore(t, path) }
	db, s := open()
	fillStore(t, s, 4000, 100, 1000) // 40 revisions of 100 keys
	s.Close()
	db.Close() // the last connection checkpoints the WAL into the file
	full := fileSize(t, path)
	db, s = open()
	if _, err := s.Compact(context.Background(), &mvcc.CompactionRequest{Revision: s.Rev(), Physical: true}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db.Close()
	after := fileSize(t, path)
	t.Logf("file: %d bytes full, %d after compacting 39 of 40 revisions", full, after)
	if after > full/10 {
		t.Fatalf("the file kept %d of its %d bytes after compaction removed 97%% of the records", after, full)
	}
}

// A file written before migration 0003 (auto_vacuum NONE) is switched to
// incremental vacuum at Open, with its data intact.
func TestAnOlderFileIsSwitchedToIncrementalVacuum(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.db")
	raw, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := raw.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := migrations.List(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	first := fstest.MapFS{all[0].Name: {Data: []byte(all[0].SQL)}}
	if err := applyMigrations(context.Background(), conn, first); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	raw.Close()

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	b := session(t, db, "s")
	if err := b.Commit(history()); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode int
	if err := db.rdb.QueryRow("PRAGMA auto_vacuum").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != 2 {
		t.Fatalf("auto_vacuum is %d, want 2 (INCREMENTAL)", mode)
	}
	got, _ := load(t, session(t, db, "s"))
	sameRecords(t, got, history())
}

// RecordOverhead, what mvcc counts a record beyond its key and value, is
// what a record takes in this file: the file grows by RecordSize per record,
// give or take a quarter, for records that fit in a page of the records
// b-tree. (A WITHOUT ROWID row keeps at most about 1 KiB in a 4 KiB page
// and spills the rest to an overflow page of its own: a record of a 1 KiB
// value takes 4.7 KiB of file, which this test logs.)
func TestRecordOverheadMatchesTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 100 MB")
	}
	for _, value := range []int{100, 500, 900, 1000} {
		path := filepath.Join(t.TempDir(), "rvplay.db")
		db, s := openStore(t, path)
		s.Close()
		db.Close()
		empty := fileSize(t, path)

		db, s = openStore(t, path)
		const n = 20000
		fillStore(t, s, n, 1000, value)
		counted := s.Usage().DBSizeInUse
		s.Close()
		db.Close()
		grown := fileSize(t, path) - empty
		ratio := float64(counted) / float64(grown)
		t.Logf("%d records of %d-byte values: the file grew by %d, RecordSize counts %d (%.2f); %.1f bytes a record beyond key and value",
			n, value, grown, counted, ratio, float64(grown)/n-float64(value+len("/registry/configmaps/default/k000000")))
		if value < 1000 && (ratio < 0.75 || ratio > 1.33) {
			t.Errorf("%d-byte values: RecordSize counts %.2f of what the file takes", value, ratio)
		}
	}
}
