//go:build !js

package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// Every group commit is reported once, with the requests it carried, so
// that the server can count batch sizes and commit times.
func TestOnCommitReportsEachGroupCommit(t *testing.T) {
	var (
		mu       sync.Mutex
		requests int
		commits  int
	)
	db, err := OpenWithOptions(filepath.Join(t.TempDir(), "rvplay.db"), Options{Synchronous: SyncNormal,
		OnCommit: func(n int, elapsed time.Duration) {
			mu.Lock()
			defer mu.Unlock()
			if n <= 0 || elapsed < 0 {
				t.Errorf("commit of %d requests in %v", n, elapsed)
			}
			requests += n
			commits++
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := session(t, db, "s") // creating the session is a write of its own
	mu.Lock()
	before := requests
	mu.Unlock()
	recs := history()
	if err := b.Commit(recs[:2]); err != nil { // one request, two records
		t.Fatal(err)
	}
	if err := b.Commit(recs[2:]); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if requests-before != 2 || commits < 3 {
		t.Fatalf("%d write requests in %d commits reported, want 2 more than the session's own", requests-before, commits)
	}
}

func TestCheckSaysWhetherTheDatabaseIsUsable(t *testing.T) {
	db, _ := openTemp(t)
	if err := db.Check(context.Background()); err != nil {
		t.Fatalf("an open database: %v", err)
	}
	db.Close()
	if err := db.Check(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("a closed database: %v", err)
	}
}
