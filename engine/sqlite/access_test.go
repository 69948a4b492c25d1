//go:build !js

package sqlite

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

var t0 = time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC)

func guarded(name string) SessionInfo {
	return SessionInfo{Name: name, Guarded: true, TeacherTokenHash: []byte("teacher-hash-" + name),
		JoinCodeHash: []byte("code-hash-" + name), CreatedAt: t0, LastUsedAt: t0}
}

func TestGuardedSessionAccessAndStudentsSurviveAReopen(t *testing.T) {
	db, path := openTemp(t)
	if err := db.CreateSession(guarded("class")); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(SessionInfo{Name: "open", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(guarded("class")); !errors.Is(err, ErrSessionExists) {
		t.Fatalf("second create = %v, want ErrSessionExists", err)
	}
	alice := Student{ID: "alice-x2k9q", Name: "Alice", TokenHash: []byte("alice-token-hash"), JoinedAt: t0.Add(time.Minute)}
	if err := db.AddStudent("class", alice); err != nil {
		t.Fatal(err)
	}
	if err := db.AddStudent("nope", alice); !errors.Is(err, ErrNoSession) {
		t.Fatalf("student of an unknown session: %v", err)
	}
	if err := db.Touch(map[string]time.Time{"class": t0.Add(time.Hour), "open": t0.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	infos := reopenedInfos(t, path)
	want := []SessionInfo{
		{Name: "class", Guarded: true, TeacherTokenHash: []byte("teacher-hash-class"), JoinCodeHash: []byte("code-hash-class"),
			CreatedAt: t0, LastUsedAt: t0.Add(time.Hour), Students: []Student{alice}},
		{Name: "open", CreatedAt: t0},
	}
	if !reflect.DeepEqual(infos, want) {
		t.Fatalf("infos\n got %+v\nwant %+v", infos, want)
	}
}

func TestANewJoinCodeReplacesTheOldOneAndSurvivesAReopen(t *testing.T) {
	db, path := openTemp(t)
	if err := db.CreateSession(guarded("class")); err != nil {
		t.Fatal(err)
	}
	if err := db.CreateSession(SessionInfo{Name: "open", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.SetJoinCode("class", []byte("new-code-hash")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"open", "nope"} {
		if err := db.SetJoinCode(name, []byte("x")); !errors.Is(err, ErrNoSession) {
			t.Fatalf("a join code for %s: %v, want ErrNoSession (only a guarded session has one)", name, err)
		}
	}
	db.Close()
	infos := reopenedInfos(t, path)
	if got := string(infos[0].JoinCodeHash); infos[0].Name != "class" || got != "new-code-hash" || string(infos[0].TeacherTokenHash) != "teacher-hash-class" {
		t.Fatalf("after a reopen: %+v, want the new join code's hash and the teacher's as it was", infos[0])
	}
	if infos[1].JoinCodeHash != nil {
		t.Fatalf("the open session got a join code: %+v", infos[1])
	}
}

func TestResetSessionStartsAFreshStoreAndKeepsAccess(t *testing.T) {
	db, _ := openTemp(t)
	if err := db.CreateSession(guarded("class")); err != nil {
		t.Fatal(err)
	}
	alice := Student{ID: "alice", Name: "Alice", TokenHash: []byte("h"), JoinedAt: t0}
	if err := db.AddStudent("class", alice); err != nil {
		t.Fatal(err)
	}
	b := session(t, db, "class")
	if err := b.Commit([]mvcc.Record{put(2, 0, "k", "v", 2, 1)}); err != nil {
		t.Fatal(err)
	}
	if err := b.SetCompactRevision(2); err != nil {
		t.Fatal(err)
	}
	if err := db.ResetSession("class"); !errors.Is(err, ErrSessionInUse) {
		t.Fatalf("reset of a session in use = %v, want ErrSessionInUse", err)
	}
	b.Close()
	if err := db.ResetSession("class"); err != nil {
		t.Fatal(err)
	}
	got, meta := load(t, session(t, db, "class"))
	if len(got) != 0 || meta.CompactRevision != -1 {
		t.Fatalf("after reset: %d records, meta %+v", len(got), meta)
	}
	infos, _ := db.SessionInfos()
	if len(infos) != 1 || !infos[0].Guarded || !reflect.DeepEqual(infos[0].Students, []Student{alice}) || !infos[0].CreatedAt.Equal(t0) {
		t.Fatalf("access after reset: %+v", infos)
	}
	var n int
	if err := db.rdb.QueryRow("SELECT count(*) FROM records").Scan(&n); err != nil || n != 0 {
		t.Fatalf("records left: %d (%v)", n, err)
	}
	if err := db.rdb.QueryRow("SELECT count(*) FROM sessions").Scan(&n); err != nil || n != 1 {
		t.Fatalf("session rows: %d (%v)", n, err)
	}
}

// A crash between retiring a session and purging it leaves a retired row:
// it is not listed, its name is free at once, and PurgeDeleted finishes
// the deletion.
func TestARetiredSessionIsHiddenAndPurgedLater(t *testing.T) {
	db, path := openTemp(t)
	if err := db.CreateSession(guarded("gone")); err != nil {
		t.Fatal(err)
	}
	b := session(t, db, "gone")
	if err := b.Commit([]mvcc.Record{put(2, 0, "k", "v", 2, 1)}); err != nil {
		t.Fatal(err)
	}
	b.Close()
	// DeleteSession's first transaction alone, as if the process died after it.
	if err := db.write(func(w *writer) error {
		id, err := liveSessionID(w, "gone")
		if err != nil {
			return err
		}
		return retire(w, id)
	}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	db2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	if names, _ := db2.Sessions(); len(names) != 0 {
		t.Fatalf("a retired session is listed: %v", names)
	}
	if infos, _ := db2.SessionInfos(); len(infos) != 0 {
		t.Fatalf("a retired session has infos: %+v", infos)
	}
	if err := db2.CreateSession(SessionInfo{Name: "gone", CreatedAt: t0}); err != nil {
		t.Fatalf("the name of a retired session is not free: %v", err)
	}
	if err := db2.PurgeDeleted(); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db2.rdb.QueryRow("SELECT count(*) FROM records").Scan(&n); err != nil || n != 0 {
		t.Fatalf("records left: %d (%v)", n, err)
	}
	if got, _ := load(t, session(t, db2, "gone")); len(got) != 0 {
		t.Fatalf("the new session sees %d records of the old one", len(got))
	}
}

// reopenedInfos opens the file at path again and reads its sessions, as a
// server does when it starts.
func reopenedInfos(t *testing.T, path string) []SessionInfo {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	infos, err := db.SessionInfos()
	if err != nil {
		t.Fatal(err)
	}
	return infos
}
