//go:build !js

package sqlite

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/migrations"
)

func openTemp(t testing.TB) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rvplay.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func session(t testing.TB, db *DB, name string) mvcc.Backend {
	t.Helper()
	b, err := db.Session(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put(main, sub int64, key, value string, create, version int64) mvcc.Record {
	return mvcc.Record{Rev: mvcc.Revision{Main: main, Sub: sub}, KV: mvcc.KeyValue{
		Key: []byte(key), Value: []byte(value), CreateRevision: create, ModRevision: main, Version: version,
	}}
}

func tombstone(main, sub int64, key string) mvcc.Record {
	return mvcc.Record{Rev: mvcc.Revision{Main: main, Sub: sub}, Tombstone: true,
		KV: mvcc.KeyValue{Key: []byte(key), ModRevision: main}}
}

// history is a small store history: a txn with two writes, an update, a
// delete, a recreation, a nil-valued and an empty-valued put, a lease.
func history() []mvcc.Record {
	recs := []mvcc.Record{
		put(2, 0, "a", "1", 2, 1),
		put(2, 1, "b", "1", 2, 1),
		put(3, 0, "a", "2", 2, 2),
		tombstone(4, 0, "a"),
		put(5, 0, "a", "3", 5, 1),
		{Rev: mvcc.Revision{Main: 6}, KV: mvcc.KeyValue{Key: []byte("nil"), CreateRevision: 6, ModRevision: 6, Version: 1}},
		{Rev: mvcc.Revision{Main: 7}, KV: mvcc.KeyValue{Key: []byte("empty"), Value: []byte{}, CreateRevision: 7, ModRevision: 7, Version: 1, Lease: 42}},
	}
	return recs
}

func load(t testing.TB, b mvcc.Backend) ([]mvcc.Record, mvcc.Meta) {
	t.Helper()
	var got []mvcc.Record
	meta, err := b.Load(func(r mvcc.Record) error { got = append(got, r); return nil })
	if err != nil {
		t.Fatal(err)
	}
	return got, meta
}

// sameRecords compares exactly, including nil versus empty values.
func sameRecords(t testing.TB, got, want []mvcc.Record) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("record %d:\n got %#v\nwant %#v", i, got[i], want[i])
		}
		if (got[i].KV.Value == nil) != (want[i].KV.Value == nil) {
			t.Fatalf("record %d: value nil=%v, want nil=%v", i, got[i].KV.Value == nil, want[i].KV.Value == nil)
		}
	}
}

func TestNewSessionIsEmptyAndNeverCompacted(t *testing.T) {
	db, _ := openTemp(t)
	got, meta := load(t, session(t, db, "s"))
	if len(got) != 0 {
		t.Fatalf("new session has %d records", len(got))
	}
	if meta != (mvcc.Meta{CompactRevision: -1, FinishedCompactRevision: -1}) {
		t.Fatalf("meta %+v, want both -1", meta)
	}
}

func TestCommitThenLoadReturnsEveryRecordExactlyInRevisionOrder(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	h := history()
	// Two group commits: Commit takes the records of several txns at once.
	if err := b.Commit(h[:3]); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(h[3:]); err != nil {
		t.Fatal(err)
	}
	got, _ := load(t, b)
	sameRecords(t, got, h)
}

func TestGetReturnsTheRecordOfOneRevision(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	h := history()
	if err := b.Commit(h); err != nil {
		t.Fatal(err)
	}
	for _, want := range h {
		got, ok, err := b.Get(want.Rev)
		if err != nil || !ok {
			t.Fatalf("Get(%v) = ok %v, err %v", want.Rev, ok, err)
		}
		sameRecords(t, []mvcc.Record{got}, []mvcc.Record{want})
	}
	for _, rev := range []mvcc.Revision{{Main: 1}, {Main: 2, Sub: 2}, {Main: 100}} {
		if _, ok, err := b.Get(rev); ok || err != nil {
			t.Fatalf("Get(%v) of a revision never written = ok %v, err %v", rev, ok, err)
		}
	}
}

func TestRestartPreservesRecordsAndMeta(t *testing.T) {
	db, path := openTemp(t)
	b := session(t, db, "s")
	h := history()
	if err := b.Commit(h); err != nil {
		t.Fatal(err)
	}
	if err := b.SetCompactRevision(3); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(nil, 2); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	got, meta := load(t, session(t, db2, "s"))
	sameRecords(t, got, h)
	if meta != (mvcc.Meta{CompactRevision: 3, FinishedCompactRevision: 2}) {
		t.Fatalf("meta after restart %+v", meta)
	}
}

func TestRemoveDeletesRevisionsAndRecordsFinishedCompaction(t *testing.T) {
	db, path := openTemp(t)
	b := session(t, db, "s")
	h := history()
	if err := b.Commit(h); err != nil {
		t.Fatal(err)
	}
	if err := b.SetCompactRevision(4); err != nil {
		t.Fatal(err)
	}
	// Compact(4) removes a@2, a@3 and the tombstone a@4; b@2.1 stays.
	removed := []mvcc.Revision{{Main: 2}, {Main: 3}, {Main: 4}}
	if err := b.Remove(removed, 4); err != nil {
		t.Fatal(err)
	}
	// Removing again (a restart resuming the compaction) is harmless.
	if err := b.Remove(removed, 4); err != nil {
		t.Fatal(err)
	}
	for _, r := range removed {
		if _, ok, err := b.Get(r); ok || err != nil {
			t.Fatalf("Get(%v) after Remove = ok %v, err %v", r, ok, err)
		}
	}
	want := append([]mvcc.Record{h[1]}, h[4:]...)
	db.Close()

	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	got, meta := load(t, session(t, db2, "s"))
	sameRecords(t, got, want)
	if meta != (mvcc.Meta{CompactRevision: 4, FinishedCompactRevision: 4}) {
		t.Fatalf("meta %+v", meta)
	}
}

func TestRemoveOfManyRevisionsSpansSeveralBatches(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	n := 2*deleteBatch + 10
	var recs []mvcc.Record
	var revs []mvcc.Revision
	for i := range n {
		r := put(int64(i+2), 0, "k", "v", 2, int64(i+1))
		recs = append(recs, r)
		if i < n-1 {
			revs = append(revs, r.Rev)
		}
	}
	if err := b.Commit(recs); err != nil {
		t.Fatal(err)
	}
	if err := b.Remove(revs, int64(n)); err != nil {
		t.Fatal(err)
	}
	got, meta := load(t, b)
	sameRecords(t, got, recs[n-1:])
	if meta.FinishedCompactRevision != int64(n) {
		t.Fatalf("finished %d, want %d", meta.FinishedCompactRevision, n)
	}
}

func TestScanReturnsMainRevisionsFromToInclusiveOnePageAtATime(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	// Two records per main revision.
	var recs []mvcc.Record
	for m := int64(2); m < 2+600; m++ {
		recs = append(recs, put(m, 0, "a", "v", 2, m-1), put(m, 1, "b", "v", 2, m-1))
	}
	if err := b.Commit(recs); err != nil {
		t.Fatal(err)
	}
	all := func(from, to int64, limit mvcc.PageLimit) []mvcc.Record {
		got, err := scanAll(b, from, to, limit)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	pages := mvcc.PageLimit{Records: 7}
	sameRecords(t, all(0, 1<<62, pages), recs)
	sameRecords(t, all(0, 1<<62, mvcc.PageLimit{}), recs)
	sameRecords(t, all(10, 12, pages), recs[16:22])
	sameRecords(t, all(5, 5, pages), recs[6:8])
	sameRecords(t, all(100, 99, pages), nil)
	sameRecords(t, all(10_000, 20_000, pages), nil)
	page, more, err := b.Scan(mvcc.Revision{Main: 3, Sub: 0}, 400, mvcc.PageLimit{Records: 3}, nil)
	if err != nil || !more {
		t.Fatalf("more %v, err %v", more, err)
	}
	sameRecords(t, page, recs[3:6])
	page, more, err = b.Scan(mvcc.Revision{Main: 3, Sub: 0}, 4, mvcc.PageLimit{Records: 3}, nil)
	if err != nil || more {
		t.Fatalf("a page that reaches to: more %v, err %v", more, err)
	}
	sameRecords(t, page, recs[3:6])
}

// scanAll pages through [from, to] as a watcher catching up does.
func scanAll(b mvcc.Backend, from, to int64, limit mvcc.PageLimit) ([]mvcc.Record, error) {
	var out []mvcc.Record
	after := mvcc.Revision{Main: from, Sub: -1}
	for {
		page, more, err := b.Scan(after, to, limit, nil)
		if err != nil {
			return out, err
		}
		out = append(out, page...)
		if !more {
			return out, nil
		}
		after = page[len(page)-1].Rev
	}
}

func TestSessionsAreIsolated(t *testing.T) {
	db, _ := openTemp(t)
	a, b := session(t, db, "a"), session(t, db, "b")
	// Both sessions have their own revision 2.
	if err := a.Commit([]mvcc.Record{put(2, 0, "k", "in a", 2, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit([]mvcc.Record{put(2, 0, "k", "in b", 2, 1), put(3, 0, "k", "in b again", 2, 2)}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetCompactRevision(2); err != nil {
		t.Fatal(err)
	}
	ga, ma := load(t, a)
	gb, mb := load(t, b)
	sameRecords(t, ga, []mvcc.Record{put(2, 0, "k", "in a", 2, 1)})
	sameRecords(t, gb, []mvcc.Record{put(2, 0, "k", "in b", 2, 1), put(3, 0, "k", "in b again", 2, 2)})
	if ma.CompactRevision != 2 || mb.CompactRevision != -1 {
		t.Fatalf("compact revisions a=%d b=%d, want 2 and -1", ma.CompactRevision, mb.CompactRevision)
	}
	if _, ok, _ := a.Get(mvcc.Revision{Main: 3}); ok {
		t.Fatal("session a sees session b's revision 3")
	}
	// The same name gives the same session, once its Backend is closed.
	if _, err := db.Session("a"); !errors.Is(err, ErrSessionInUse) {
		t.Fatalf("a second Backend of an open session: %v, want ErrSessionInUse", err)
	}
	a.Close()
	again, _ := load(t, session(t, db, "a"))
	sameRecords(t, again, ga)
}

func TestSessionsListsNamesSortedAndDeleteSessionRemovesEverything(t *testing.T) {
	db, _ := openTemp(t)
	for _, n := range []string{"zeta", "alpha", "mid"} {
		session(t, db, n).Close()
	}
	doomed := session(t, db, "mid")
	var recs []mvcc.Record
	for i := range deleteBatch + 5 { // more than one delete batch
		recs = append(recs, put(int64(i+2), 0, fmt.Sprint("k", i), "v", int64(i+2), 1))
	}
	if err := doomed.Commit(recs); err != nil {
		t.Fatal(err)
	}
	names, err := db.Sessions()
	if err != nil || !reflect.DeepEqual(names, []string{"alpha", "mid", "zeta"}) {
		t.Fatalf("Sessions() = %v, %v", names, err)
	}
	if err := db.DeleteSession("mid"); err != nil {
		t.Fatal(err)
	}
	names, _ = db.Sessions()
	if !reflect.DeepEqual(names, []string{"alpha", "zeta"}) {
		t.Fatalf("after delete Sessions() = %v", names)
	}
	if err := db.DeleteSession("mid"); !errors.Is(err, ErrNoSession) {
		t.Fatalf("second DeleteSession = %v, want ErrNoSession", err)
	}
	// A Backend of the deleted session refuses writes instead of writing
	// rows that belong to nobody.
	if err := doomed.Commit([]mvcc.Record{put(100_000, 0, "k", "v", 1, 1)}); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Commit on a deleted session = %v, want ErrNoSession", err)
	}
	if err := doomed.SetCompactRevision(5); !errors.Is(err, ErrNoSession) {
		t.Fatalf("SetCompactRevision on a deleted session = %v, want ErrNoSession", err)
	}
	if _, err := doomed.Load(func(mvcc.Record) error { return nil }); !errors.Is(err, ErrNoSession) {
		t.Fatalf("Load of a deleted session = %v, want ErrNoSession", err)
	}
	// Recreated under the same name, it starts empty.
	got, meta := load(t, session(t, db, "mid"))
	if len(got) != 0 || meta.CompactRevision != -1 {
		t.Fatalf("recreated session has %d records, meta %+v", len(got), meta)
	}
	var n int
	if err := db.rdb.QueryRow("SELECT count(*) FROM records").Scan(&n); err != nil || n != 0 {
		t.Fatalf("records left in the file: %d (%v)", n, err)
	}
}

func TestInvalidSessionNamesAreRefused(t *testing.T) {
	db, _ := openTemp(t)
	for _, n := range []string{"", "\xff"} {
		if _, err := db.Session(n); err == nil {
			t.Errorf("Session(%q) succeeded", n)
		}
	}
}

func TestCommitRefusesRecordsOutOfOrderOrDuplicated(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	if err := b.Commit([]mvcc.Record{put(3, 0, "a", "v", 3, 1), put(2, 0, "b", "v", 2, 1)}); err == nil {
		t.Fatal("Commit accepted records out of order")
	}
	if err := b.Commit([]mvcc.Record{put(2, 0, "a", "v", 2, 1)}); err != nil {
		t.Fatal(err)
	}
	// Rewriting a revision is a bug in the caller: refused, nothing changed.
	if err := b.Commit([]mvcc.Record{put(3, 0, "a", "x", 2, 2), put(2, 0, "a", "x", 2, 1)}); err == nil {
		t.Fatal("Commit accepted records out of order")
	}
	if err := b.Commit([]mvcc.Record{put(2, 0, "a", "x", 2, 1), put(3, 0, "a", "x", 2, 2)}); err == nil {
		t.Fatal("Commit overwrote revision 2")
	}
	got, _ := load(t, b)
	sameRecords(t, got, []mvcc.Record{put(2, 0, "a", "v", 2, 1)})
}

// TestGroupCommitFailureOfOneSessionDoesNotFailTheOthers queues several
// sessions' commits while the writer is busy, so they share one SQL
// transaction, and makes one of them fail.
func TestGroupCommitFailureOfOneSessionDoesNotFailTheOthers(t *testing.T) {
	db, _ := openTemp(t)
	a, b, c := session(t, db, "a"), session(t, db, "b"), session(t, db, "c")
	if err := b.Commit([]mvcc.Record{put(2, 0, "k", "v", 2, 1)}); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	busy := make(chan struct{})
	blocked := make(chan error, 1)
	go func() { blocked <- db.write(func(*writer) error { close(busy); <-release; return nil }) }()
	<-busy
	// The writer is inside blocker's transaction: these queue up together.
	reqs := []*writeReq{
		{fn: func(w *writer) error {
			return w.insertRecords(a.(*backend).id, []mvcc.Record{put(2, 0, "k", "a", 2, 1)})
		}},
		// b's revision 2 exists: this one fails on the primary key.
		{fn: func(w *writer) error {
			return w.insertRecords(b.(*backend).id, []mvcc.Record{put(3, 0, "k", "b", 2, 2), put(2, 0, "k", "b", 2, 1)})
		}},
		{fn: func(w *writer) error {
			return w.insertRecords(c.(*backend).id, []mvcc.Record{put(2, 0, "k", "c", 2, 1)})
		}},
	}
	for _, r := range reqs {
		r.done = make(chan error, 1)
		db.wmu.Lock()
		db.queue = append(db.queue, r) // as write does, without waiting
		db.wmu.Unlock()
	}
	close(release)
	if err := <-blocked; err != nil {
		t.Fatal(err)
	}
	errs := []error{<-reqs[0].done, <-reqs[1].done, <-reqs[2].done}
	if errs[0] != nil || errs[1] == nil || errs[2] != nil {
		t.Fatalf("errors %v: want only b's commit to fail", errs)
	}
	ga, _ := load(t, a)
	gb, _ := load(t, b)
	gc, _ := load(t, c)
	sameRecords(t, ga, []mvcc.Record{put(2, 0, "k", "a", 2, 1)})
	sameRecords(t, gb, []mvcc.Record{put(2, 0, "k", "v", 2, 1)}) // b's failed commit left nothing, not even revision 3
	sameRecords(t, gc, []mvcc.Record{put(2, 0, "k", "c", 2, 1)})
}

func TestConcurrentReadersSeeWholeCommitsWhileWritesGoOn(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	const txns = 300
	var wg sync.WaitGroup
	errc := make(chan error, 8)
	stop := make(chan struct{})
	// Readers: every Scan sees a prefix of whole txns (each txn has two
	// records under one main revision), and every Get of a record the
	// scan saw finds it.
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := scanAll(b, 1, 1<<62, mvcc.PageLimit{Records: 64})
				if err != nil {
					errc <- err
					return
				}
				if len(got)%2 != 0 {
					errc <- fmt.Errorf("scan saw %d records: half a txn", len(got))
					return
				}
				for i, r := range got {
					if want := int64(i/2 + 2); r.Rev.Main != want || r.Rev.Sub != int64(i%2) {
						errc <- fmt.Errorf("scan record %d has revision %v", i, r.Rev)
						return
					}
				}
				if len(got) > 0 {
					last := got[len(got)-1]
					if g, ok, err := b.Get(last.Rev); err != nil || !ok || !bytes.Equal(g.KV.Value, last.KV.Value) {
						errc <- fmt.Errorf("Get(%v) = %v, %v, %v", last.Rev, g, ok, err)
						return
					}
				}
			}
		}()
	}
	for m := int64(2); m < 2+txns; m++ {
		if err := b.Commit([]mvcc.Record{put(m, 0, "a", fmt.Sprint(m), 2, m-1), put(m, 1, "b", fmt.Sprint(m), 2, m-1)}); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	got, _ := load(t, b)
	if len(got) != 2*txns {
		t.Fatalf("%d records after the run, want %d", len(got), 2*txns)
	}
}

func TestConcurrentCommitsOfManySessionsAllLand(t *testing.T) {
	db, _ := openTemp(t)
	const sessions, txns = 8, 50
	var wg sync.WaitGroup
	errc := make(chan error, sessions)
	for s := range sessions {
		b := session(t, db, fmt.Sprint("s", s))
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer b.Close()
			for m := int64(2); m < 2+txns; m++ {
				if err := b.Commit([]mvcc.Record{put(m, 0, "k", fmt.Sprint(s), 2, m-1)}); err != nil {
					errc <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Fatal(err)
	}
	for s := range sessions {
		got, _ := load(t, session(t, db, fmt.Sprint("s", s)))
		if len(got) != txns {
			t.Fatalf("session %d has %d records, want %d", s, len(got), txns)
		}
		for _, r := range got {
			if string(r.KV.Value) != fmt.Sprint(s) {
				t.Fatalf("session %d holds %q", s, r.KV.Value)
			}
		}
	}
}

func TestClosedDatabaseReturnsErrorsNotPanics(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	if err := b.Commit(history()); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	checkClosed(t, b)
	if _, err := db.Session("s"); !errors.Is(err, ErrClosed) {
		t.Errorf("Session after Close = %v", err)
	}
	if _, err := db.Sessions(); !errors.Is(err, ErrClosed) {
		t.Errorf("Sessions after Close = %v", err)
	}
	if err := db.DeleteSession("s"); !errors.Is(err, ErrClosed) {
		t.Errorf("DeleteSession after Close = %v", err)
	}
}

func TestClosedBackendReturnsErrorsAndLeavesOthersOpen(t *testing.T) {
	db, _ := openTemp(t)
	b, other := session(t, db, "s"), session(t, db, "other")
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	checkClosed(t, b)
	if err := other.Commit(history()); err != nil {
		t.Fatalf("other session after closing one: %v", err)
	}
}

func checkClosed(t *testing.T, b mvcc.Backend) {
	t.Helper()
	if _, err := b.Load(func(mvcc.Record) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("Load = %v", err)
	}
	if err := b.Commit([]mvcc.Record{put(100, 0, "k", "v", 100, 1)}); !errors.Is(err, ErrClosed) {
		t.Errorf("Commit = %v", err)
	}
	if _, _, err := b.Get(mvcc.Revision{Main: 2}); !errors.Is(err, ErrClosed) {
		t.Errorf("Get = %v", err)
	}
	if _, _, err := b.Scan(mvcc.Revision{Main: 1}, 10, mvcc.PageLimit{}, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Scan = %v", err)
	}
	if err := b.SetCompactRevision(3); !errors.Is(err, ErrClosed) {
		t.Errorf("SetCompactRevision = %v", err)
	}
	if err := b.Remove([]mvcc.Revision{{Main: 2}}, 3); !errors.Is(err, ErrClosed) {
		t.Errorf("Remove = %v", err)
	}
}

func TestLoadStopsAtTheCallbacksError(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	if err := b.Commit(history()); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	calls := 0
	_, err := b.Load(func(mvcc.Record) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("Load = %v after %d calls, want boom after 1", err, calls)
	}
	// The read connection went back to the pool in a usable state.
	got, _ := load(t, b)
	sameRecords(t, got, history())
}

func TestOpenFailsCleanlyOnWhatIsNotADatabase(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	if err := os.WriteFile(garbage, bytes.Repeat([]byte("not sqlite "), 1000), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{garbage, filepath.Join(dir, "no", "such", "dir", "x.db"), dir, ""} {
		if db, err := Open(path); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}

func TestPathWithURISpecialCharactersIsAPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%d.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	session(t, db, "s")
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at %q: %v", path, err)
	}
}

func TestOpenConfiguresWALAndForeignKeysOnEveryConnection(t *testing.T) {
	db, _ := openTemp(t)
	check := func(name, pragma, want string) {
		t.Helper()
		var got string
		if err := db.rdb.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("%s: PRAGMA %s = %q (%v), want %q", name, pragma, got, err, want)
		}
	}
	check("reader", "journal_mode", "wal")
	check("reader", "foreign_keys", "1")
	check("reader", "query_only", "1")
	check("reader", "busy_timeout", "5000")
	err := db.write(func(w *writer) error {
		for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "synchronous": "2", "busy_timeout": "5000"} {
			var got string
			if err := w.conn.QueryRowContext(context.Background(), "PRAGMA "+pragma).Scan(&got); err != nil || got != want {
				t.Errorf("writer: PRAGMA %s = %q (%v), want %q", pragma, got, err, want)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.rdb.Exec("DELETE FROM records"); err == nil {
		t.Error("a read connection could write")
	}
}

func appliedVersions(t *testing.T, db *DB) map[int]string {
	t.Helper()
	rows, err := db.rdb.Query("SELECT version, name, applied_at FROM schema_migrations ORDER BY version")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[int]string{}
	for rows.Next() {
		var v int
		var name, at string
		if err := rows.Scan(&v, &name, &at); err != nil {
			t.Fatal(err)
		}
		if at == "" {
			t.Errorf("migration %d has no applied_at", v)
		}
		got[v] = name
	}
	return got
}

func TestMigrationsAreRecordedAndReopeningAppliesNothingTwice(t *testing.T) {
	db, path := openTemp(t)
	ms, err := migrations.List(migrations.FS)
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{}
	for _, m := range ms {
		want[m.Version] = m.Name
	}
	if got := appliedVersions(t, db); !reflect.DeepEqual(got, want) {
		t.Fatalf("schema_migrations %v, want %v", got, want)
	}
	session(t, db, "s")
	db.Close()
	// Re-running the migrations would fail (CREATE TABLE of an existing
	// table), so a clean second and third Open prove they were skipped.
	for range 2 {
		db2, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := appliedVersions(t, db2); !reflect.DeepEqual(got, want) {
			t.Fatalf("after reopen schema_migrations %v, want %v", got, want)
		}
		if names, _ := db2.Sessions(); !reflect.DeepEqual(names, []string{"s"}) {
			t.Fatalf("sessions after reopen %v", names)
		}
		db2.Close()
	}
}

func TestNewMigrationsApplyInOrderAndAFailedOneRollsBack(t *testing.T) {
	db, _ := openTemp(t)
	fsys := fstest.MapFS{}
	ms, _ := migrations.List(migrations.FS)
	for _, m := range ms {
		fsys[m.Name] = &fstest.MapFile{Data: []byte(m.SQL)}
	}
	next := len(ms) + 1
	fsys[fmt.Sprintf("%04d_notes.sql", next)] = &fstest.MapFile{Data: []byte("CREATE TABLE notes (x INTEGER); INSERT INTO notes VALUES (1);")}
	// Half of this one succeeds before the second statement fails.
	fsys[fmt.Sprintf("%04d_broken.sql", next+1)] = &fstest.MapFile{Data: []byte("CREATE TABLE broken (x INTEGER); INSERT INTO no_such_table VALUES (1);")}
	fsys[fmt.Sprintf("%04d_after.sql", next+2)] = &fstest.MapFile{Data: []byte("CREATE TABLE after (x INTEGER);")}

	err := db.write(func(w *writer) error {
		// applyMigrations runs its own transactions: end the writer's.
		if err := w.exec("COMMIT"); err != nil {
			return err
		}
		defer w.exec("BEGIN IMMEDIATE")
		return applyMigrations(context.Background(), w.conn, fsys)
	})
	if err == nil {
		t.Fatal("a failing migration did not fail")
	}
	got := appliedVersions(t, db)
	if _, ok := got[next]; !ok {
		t.Errorf("migration %d before the broken one was not recorded: %v", next, got)
	}
	if _, ok := got[next+1]; ok {
		t.Errorf("broken migration recorded: %v", got)
	}
	if _, ok := got[next+2]; ok {
		t.Errorf("migration after the broken one applied: %v", got)
	}
	var n int
	if err := db.rdb.QueryRow("SELECT count(*) FROM sqlite_schema WHERE name = 'broken'").Scan(&n); err != nil || n != 0 {
		t.Errorf("the broken migration's table exists (%d, %v): not rolled back", n, err)
	}
	if err := db.rdb.QueryRow("SELECT count(*) FROM notes").Scan(&n); err != nil || n != 1 {
		t.Errorf("notes has %d rows (%v)", n, err)
	}
}

func TestDatabaseFromANewerBuildIsRefused(t *testing.T) {
	db, path := openTemp(t)
	err := db.write(func(w *writer) error {
		_, err := w.conn.ExecContext(context.Background(),
			"INSERT INTO schema_migrations (version, name, applied_at) VALUES (9999, '9999_future.sql', 'x')")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db2, err := Open(path); err == nil {
		db2.Close()
		t.Fatal("Open accepted a database with an unknown migration")
	}
}

func TestRemoveStepWithoutFinishLeavesFinishedCompactRevision(t *testing.T) {
	db, _ := openTemp(t)
	b := session(t, db, "s")
	if err := b.Commit(history()); err != nil {
		t.Fatal(err)
	}
	if err := b.SetCompactRevision(4); err != nil {
		t.Fatal(err)
	}
	// The first step of a compaction removed in two steps.
	if err := b.Remove([]mvcc.Revision{{Main: 2}}, -1); err != nil {
		t.Fatal(err)
	}
	if _, meta := load(t, b); meta != (mvcc.Meta{CompactRevision: 4, FinishedCompactRevision: -1}) {
		t.Fatalf("meta after an unfinished step %+v", meta)
	}
	if err := b.Remove([]mvcc.Revision{{Main: 3}, {Main: 4}}, 4); err != nil {
		t.Fatal(err)
	}
	if _, meta := load(t, b); meta != (mvcc.Meta{CompactRevision: 4, FinishedCompactRevision: 4}) {
		t.Fatalf("meta after the last step %+v", meta)
	}
}
