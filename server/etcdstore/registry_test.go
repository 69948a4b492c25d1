package etcdstore_test

import (
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/server/classroom"
	"github.com/rvplay/rvplay/server/etcdstore"
)

// replica is a registry on sessions, as a server has, closed when t ends.
func replica(t *testing.T, sessions *etcdstore.Sessions) *classroom.Registry {
	r, err := classroom.New(sessions, classroom.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// Two registries on one cluster, as two replicas have: what one does, the
// other learns from the cluster.
func TestRegistriesOnOneClusterLearnWhatTheOtherDid(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	a, b := replica(t, etcdstore.NewSessions(cli, "", etcdstore.Options{})), replica(t, etcdstore.NewSessions(cli, "", etcdstore.Options{}))
	created, err := a.CreateGuarded("class")
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := b.Lookup("class"); !ok || !s.Guarded {
		t.Fatalf("b looks up a's new session: %+v, %v", s, ok)
	}
	if _, err := b.CreateGuarded("class"); err != classroom.ErrExists {
		t.Fatalf("b creates a session a created: %v, want ErrExists", err)
	}
	if created, err := b.CreateOpen("class"); err != nil || created {
		t.Fatalf("b's CreateOpen of a's guarded session: %v, %v (it is kept as it is)", created, err)
	}
	if s, _ := b.Lookup("class"); !s.Guarded {
		t.Fatal("b's CreateOpen made a's guarded session open")
	}
	joined, err := a.Join(ctx, "class", created.JoinCode, "Ada")
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := b.Authenticate("class", joined.Token); !ok || p.Role != api.RoleStudent || p.ID != joined.ID {
		t.Fatalf("b authenticates a's student: %+v, %v", p, ok)
	}
	if _, ok := b.Authenticate("class", "not-a-token"); ok {
		t.Fatal("b took a token nobody was given")
	}
	if p, ok := b.Authenticate("class", created.TeacherToken); !ok || p.Role != api.RoleTeacher {
		t.Fatalf("b authenticates the teacher: %+v, %v", p, ok)
	}
	if _, release, err := b.Acquire(ctx, "class"); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	if err := a.End(ctx, "class"); err != nil {
		t.Fatal(err)
	}
	b.Sweep(ctx)
	if _, ok := b.Lookup("class"); ok {
		t.Fatal("after its sweep, b still has the session a ended")
	}
	if _, _, err := b.Acquire(ctx, "class"); err != classroom.ErrNotFound {
		t.Fatalf("acquiring the ended session on b: %v", err)
	}
}

// A join code renewed on one replica is the class's on every replica at
// once: the old code admits nobody on the other, the new one does, and
// the students who joined stay.
func TestANewJoinCodeIsEveryReplicasAtOnce(t *testing.T) {
	sessions := etcdstore.NewSessions(client(t, etcdtest.Start(t, etcdtest.Options{}).URL), "", etcdstore.Options{})
	a, b := replica(t, sessions), replica(t, sessions)
	created, err := a.CreateGuarded("class")
	if err != nil {
		t.Fatal(err)
	}
	ada, err := b.Join(ctx, "class", created.JoinCode, "Ada")
	if err != nil {
		t.Fatal(err)
	}
	code, err := a.NewJoinCode(ctx, "class")
	if err != nil || code == created.JoinCode {
		t.Fatalf("a's new join code: %q, %v", code, err)
	}
	for _, r := range []*classroom.Registry{b, a} {
		if _, err := r.Join(ctx, "class", created.JoinCode, "Eve"); err != classroom.ErrWrongCode {
			t.Fatalf("joining with the old code: %v, want ErrWrongCode", err)
		}
		if _, err := r.Join(ctx, "class", code, "Bo"); err != nil {
			t.Fatalf("joining with the new code: %v", err)
		}
		if p, ok := r.Authenticate("class", ada.Token); !ok || p.ID != ada.ID {
			t.Fatalf("Ada, who joined before: %+v, %v", p, ok)
		}
	}
	if info, ok, err := sessions.SessionInfo("class"); err != nil || !ok || len(info.Students) != 3 || len(info.TeacherTokenHash) == 0 {
		t.Fatalf("on the cluster: %+v, %v, %v (the record keeps the teacher's hash)", info, ok, err)
	}
	if _, err := b.NewJoinCode(ctx, "nope"); err != classroom.ErrNotFound {
		t.Fatalf("a join code for no session: %v", err)
	}
	if _, err := b.CreateOpen("open"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.NewJoinCode(ctx, "open"); err != classroom.ErrOpenSession {
		t.Fatalf("a join code for an open session: %v", err)
	}
	if err := sessions.SetJoinCode("open", []byte("x")); !errors.Is(err, sqlite.ErrNoSession) {
		t.Fatalf("storing a join code for an open session: %v", err)
	}
}
