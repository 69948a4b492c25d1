//go:build !js

package sqlite

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// A class's progress, findings and settings outlive the database being closed and a
// reset of the session's store; each is recorded once; ending the session
// deletes them.
func TestClassRecordsSurviveAReopenAndAResetAndGoWithTheSession(t *testing.T) {
	db, path := openTemp(t)
	for _, n := range []string{"class", "other"} {
		if err := db.CreateSession(guarded(n)); err != nil {
			t.Fatal(err)
		}
	}
	steps := []PassedStep{
		{Principal: "ada-x2k9q", Lesson: "lost-update", Step: 1, PassedAt: t0},
		{Principal: "ada-x2k9q", Lesson: "lost-update", Step: 2, PassedAt: t0.Add(time.Minute)},
		{Principal: "bob-k3j8w", Lesson: "etcd-revisions", Step: 1, PassedAt: t0.Add(2 * time.Minute)},
	}
	if err := db.AddPassedSteps("class", steps); err != nil {
		t.Fatal(err)
	}
	// Passing a step again keeps its first time.
	if err := db.AddPassedSteps("class", []PassedStep{{Principal: "ada-x2k9q", Lesson: "lost-update", Step: 1, PassedAt: t0.Add(time.Hour)}}); err != nil {
		t.Fatal(err)
	}
	findings := []Finding{
		{Detector: "retry-409-without-reread", Exchange: "1762160400000000000/17", Principal: "ada-x2k9q", Lesson: "lost-update", FoundAt: t0.Add(time.Minute)},
		{Detector: "relist-after-410", Exchange: "1762160400000000000/40", Principal: "bob-k3j8w", FoundAt: t0.Add(3 * time.Minute)},
	}
	if err := db.AddFindings("class", append(findings, findings[0])); err != nil {
		t.Fatal(err)
	}
	if err := db.SetClassSettings("class", []byte(`{"bookmarkInterval":"2s"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.SetClassSettings("class", []byte(`{"bookmarkInterval":"5s"}`)); err != nil {
		t.Fatal(err)
	}
	if err := db.AddPassedSteps("nope", steps); !errors.Is(err, ErrNoSession) {
		t.Fatalf("steps of an unknown session: %v", err)
	}
	if err := db.AddPassedSteps("other", steps[:1]); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	check := func(when string) {
		t.Helper()
		got, err := db.ClassProgress("class")
		if err != nil || !reflect.DeepEqual(got, steps) {
			t.Fatalf("%s: progress %+v (%v), want %+v", when, got, err, steps)
		}
		counts := []FindingCount{{Principal: "ada-x2k9q", Lesson: "lost-update", Detector: "retry-409-without-reread", N: 1},
			{Principal: "bob-k3j8w", Lesson: "", Detector: "relist-after-410", N: 1}}
		gotF, err := db.ClassFindingCounts("class")
		if err != nil || !reflect.DeepEqual(gotF, counts) {
			t.Fatalf("%s: findings %+v (%v), want %+v", when, gotF, err, counts)
		}
		if got, err := db.ClassSettings("class"); err != nil || string(got) != `{"bookmarkInterval":"5s"}` {
			t.Fatalf("%s: settings %s (%v)", when, got, err)
		}
	}
	check("after a reopen")
	if err := db.ResetSession("class"); err != nil {
		t.Fatal(err)
	}
	check("after a reset")
	if err := db.DeleteSession("class"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ClassProgress("class"); err != nil || len(got) != 0 {
		t.Fatalf("after the end: %+v (%v)", got, err)
	}
	if got, _ := db.ClassSettings("class"); got != nil {
		t.Fatalf("settings after the end: %s", got)
	}
	if got, _ := db.ClassFindingCounts("class"); len(got) != 0 {
		t.Fatalf("findings after the end: %+v", got)
	}
	if got, _ := db.ClassProgress("other"); len(got) != 1 {
		t.Fatalf("another session's progress: %+v", got)
	}
}

// The first creations of a class's students' keys outlive the database
// being closed; a key keeps its first; a reset of the session's store
// drops them (its revisions start again), and so does ending the session.
func TestFirstCreationsSurviveAReopenNotAReset(t *testing.T) {
	db, path := openTemp(t)
	if err := db.CreateSession(guarded("class")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		key string
		rev int64
	}{{"k1-ada-x2k9q", 7}, {"k1-bob-k3j8w", 8}, {"k1-ada-x2k9q", 12}} {
		if err := db.AddFirstCreation("class", c.key, c.rev); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.AddFirstCreation("nope", "k1", 1); !errors.Is(err, ErrNoSession) {
		t.Fatalf("a first creation in an unknown session: %v", err)
	}
	db.Close()
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := map[string]int64{"k1-ada-x2k9q": 7, "k1-bob-k3j8w": 8}
	if got, err := db.ClassFirstCreations("class"); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("after a reopen: %v (%v), want %v", got, err, want)
	}
	if err := db.ResetSession("class"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ClassFirstCreations("class"); err != nil || len(got) != 0 {
		t.Fatalf("after a reset: %v (%v)", got, err)
	}
	if err := db.AddFirstCreation("class", "k1-ada-x2k9q", 6); err != nil {
		t.Fatal(err)
	}
	if err := db.DeleteSession("class"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.ClassFirstCreations("class"); err != nil || len(got) != 0 {
		t.Fatalf("after the end: %v (%v)", got, err)
	}
}
