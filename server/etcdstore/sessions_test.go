package etcdstore_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/internal/etcdtest"
	"github.com/rvplay/rvplay/server/etcdstore"
)

func TestSessionsKeepTheClassroomsRecordsOnTheCluster(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	s := etcdstore.NewSessions(cli, "", etcdstore.Options{})
	at := time.Date(2026, 11, 26, 1, 0, 0, 0, time.UTC)
	if err := s.CreateSession(sqlite.SessionInfo{Name: "class", Guarded: true, TeacherTokenHash: []byte("t"), JoinCodeHash: []byte("j"), CreatedAt: at, LastUsedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateSession(sqlite.SessionInfo{Name: "class"}); !errors.Is(err, sqlite.ErrSessionExists) {
		t.Fatalf("a second create: %v", err)
	}
	if err := s.CreateSession(sqlite.SessionInfo{Name: "open", CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	for i, id := range []string{"bo", "ada"} {
		if err := s.AddStudent("class", sqlite.Student{ID: id, Name: id, TokenHash: []byte(id), JoinedAt: at.Add(time.Duration(i) * time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.AddStudent("nope", sqlite.Student{ID: "x"}); !errors.Is(err, sqlite.ErrNoSession) {
		t.Fatalf("a student of no session: %v", err)
	}
	if err := s.Touch(map[string]time.Time{"class": at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Touch(map[string]time.Time{"class": at.Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	infos, err := s.SessionInfos()
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%d %s %v %s %s %s/%s; %s %v", len(infos), infos[0].Name, infos[0].Guarded, infos[0].TeacherTokenHash,
		infos[0].LastUsedAt.Format(time.TimeOnly), infos[0].Students[0].ID, infos[0].Students[1].ID, infos[1].Name, infos[1].Guarded)
	if want := "2 class true t 02:00:00 bo/ada; open false"; got != want {
		t.Fatalf("infos: %s, want %s (the later use kept, students in joining order)", got, want)
	}

	first := sqlite.PassedStep{Principal: "ada", Lesson: "watch", Step: 1, PassedAt: at}
	again := first
	again.PassedAt = at.Add(time.Hour)
	if err := s.AddPassedSteps("class", []sqlite.PassedStep{first, again, {Principal: "ada", Lesson: "list/watch", Step: 2, PassedAt: at}}); err != nil {
		t.Fatal(err)
	}
	steps, err := s.ClassProgress("class")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].Lesson != "list/watch" || !steps[1].PassedAt.Equal(at) {
		t.Fatalf("progress: %+v (each step once, at its first time)", steps)
	}
	for _, f := range []sqlite.Finding{{Detector: "d", Exchange: "1", Principal: "ada", Lesson: "l"}, {Detector: "d", Exchange: "1", Principal: "ada", Lesson: "l"}, {Detector: "d", Exchange: "2", Principal: "ada", Lesson: "l"}} {
		if err := s.AddFindings("class", []sqlite.Finding{f}); err != nil {
			t.Fatal(err)
		}
	}
	if counts, err := s.ClassFindingCounts("class"); err != nil || fmt.Sprint(counts) != "[{ada l d 2}]" {
		t.Fatalf("finding counts: %v, %v", counts, err)
	}
	if err := s.SetClassSettings("class", []byte(`{"x":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, rev := range []int64{7, 9} {
		if err := s.AddFirstCreation("class", "k1-ada/x", rev); err != nil {
			t.Fatal(err)
		}
	}
	if created, err := s.ClassFirstCreations("class"); err != nil || fmt.Sprint(created) != "map[k1-ada/x:7]" {
		t.Fatalf("first creations: %v, %v (a key's first kept)", created, err)
	}

	kv, err := s.SessionStore("class")
	if err != nil {
		t.Fatal(err)
	}
	put(t, kv, "k", "v")
	kv.Close()
	if err := s.ResetSession("class"); err != nil {
		t.Fatal(err)
	}
	kv, err = s.SessionStore("class")
	if err != nil {
		t.Fatal(err)
	}
	defer kv.Close()
	if got := keys(t, kv); len(got) != 0 {
		t.Fatalf("after a reset: %v", got)
	}
	if settings, _ := s.ClassSettings("class"); string(settings) != `{"x":1}` {
		t.Fatalf("a reset keeps the class's settings: %s", settings)
	}
	if created, err := s.ClassFirstCreations("class"); err != nil || len(created) != 0 {
		t.Fatalf("a reset drops the first creations of the keys it deleted: %v, %v", created, err)
	}
	if err := s.AddFirstCreation("class", "k1-ada", 12); err != nil {
		t.Fatal(err)
	}
	put(t, kv, "k", "v")
	if err := s.DeleteSession("class"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.SessionInfo("class"); ok || err != nil {
		t.Fatalf("after the delete: %v, %v", ok, err)
	}
	resp, err := cli.Get(ctx, etcdstore.DefaultRoot, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, kv := range resp.Kvs {
		left = append(left, string(kv.Key))
	}
	if fmt.Sprint(left) != "[/rvplay/sessions/open]" {
		t.Fatalf("keys left after the delete: %v", left)
	}
	if err := s.DeleteSession("class"); !errors.Is(err, sqlite.ErrNoSession) {
		t.Fatalf("a second delete: %v", err)
	}
}

// A replica hears of each session another ended as the cluster deletes
// it: the sessions deleted after WatchEnded returned, in order, and
// nothing for a reset or for any other record.
func TestWatchEndedTellsOfEachSessionEndedOnTheCluster(t *testing.T) {
	cli := client(t, etcdtest.Start(t, etcdtest.Options{}).URL)
	s := etcdstore.NewSessions(cli, "", etcdstore.Options{})
	for _, name := range []string{"a", "b", "c d"} {
		if err := s.CreateSession(sqlite.SessionInfo{Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	watchCtx, stop := context.WithCancel(context.Background())
	defer stop()
	ended := make(chan string, 10)
	s.WatchEnded(watchCtx, func(name string) { ended <- name })
	for _, change := range []func() error{
		func() error { return s.DeleteSession("a") },
		func() error { return s.ResetSession("b") },
		func() error { return s.AddStudent("b", sqlite.Student{ID: "x"}) },
		func() error { return s.SetClassSettings("b", []byte("{}")) },
		func() error { return s.DeleteSession("c d") },
		func() error { return s.DeleteSession("b") },
	} {
		if err := change(); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"a", "c d", "b"} {
		select {
		case got := <-ended:
			if got != want {
				t.Fatalf("heard that %q ended, want %q", got, want)
			}
		case <-time.After(30 * time.Second): // only turns a hang into a failure
			t.Fatalf("not told that %q ended", want)
		}
	}
}
