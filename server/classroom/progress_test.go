package classroom

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/session"
)

// The steps a class passed outlive the session's time in memory: it is
// unloaded when idle, and the server restarts; the teacher still sees
// everyone's progress, a student their own.
func TestClassProgressOutlivesAnUnloadAndARestart(t *testing.T) {
	opts := Options{Session: sessionWithLessons(t), UnloadAfter: time.Minute}
	e := newEnv(t, opts)
	class := e.create("class")
	ada, bob := e.join(class, "Ada"), e.join(class, "Bob")
	for _, v := range []struct {
		token string
		step  string
	}{{ada.Token, "1"}, {ada.Token, "2"}, {bob.Token, "1"}} {
		must(t, "verify", e.do("POST", "/s/class/rvplay/v1/lessons/races/steps/"+v.step+"/verify", cred{bearer: v.token}, `{}`), 200, `"passed":true`)
	}
	want := ada.ID + " Ada races [1 2]; " + bob.ID + " Bob races [1]"
	check := func(when string) {
		t.Helper()
		a := e.do("GET", "/s/class/rvplay/v1/lessons/progress", cred{bearer: class.TeacherToken}, "")
		var out struct{ Progress []lesson.Progress }
		json.Unmarshal([]byte(a.body), &out)
		var got []string
		for _, p := range out.Progress {
			got = append(got, fmt.Sprint(p.Principal, " ", p.Name, " ", p.Lesson, " ", p.Steps))
		}
		if a.status != 200 || strings.Join(got, "; ") != want {
			t.Fatalf("%s: %d %s\nwant %s", when, a.status, a.body, want)
		}
		must(t, when+": Bob's own", e.do("GET", "/s/class/rvplay/v1/lessons/progress", cred{bearer: bob.Token}, ""), 200,
			`{"progress":[{"principal":"`+bob.ID+`","name":"Bob","lesson":"races","steps":[1]`)
	}
	check("loaded")
	e.clock.Step(time.Minute)
	e.reg.Sweep(ctx)
	if s := e.reg.Stats(); s.Loaded != 0 {
		t.Fatalf("not unloaded: %+v", s)
	}
	check("after an unload")
	e.restart(opts)
	check("after a restart")
	// Passing a step again is no new progress; a new step is.
	must(t, "verify again", e.do("POST", "/s/class/rvplay/v1/lessons/races/steps/1/verify", cred{bearer: ada.Token}, `{}`), 200)
	must(t, "verify 3", e.do("POST", "/s/class/rvplay/v1/lessons/races/steps/3/verify", cred{bearer: bob.Token}, `{}`), 200)
	steps, err := e.db.ClassProgress("class")
	if err != nil || len(steps) != 4 || steps[3].Principal != bob.ID || steps[3].Step != 3 || steps[0].PassedAt.After(steps[3].PassedAt) {
		t.Fatalf("stored: %+v (%v)", steps, err)
	}
}

// The settings a class's teacher leaves come back when the session loads
// again, after an unload, a restart and a reset; an open session starts
// again from the flags.
func TestAClassKeepsItsSettings(t *testing.T) {
	opts := Options{Session: sessionWithLessons(t), UnloadAfter: time.Minute}
	e := newEnv(t, opts)
	class := e.create("class")
	e.reg.CreateOpen("demo")
	teacher := cred{bearer: class.TeacherToken}
	must(t, "settings", e.do("PATCH", "/s/class/rvplay/v1/settings", teacher, `{"compactionInterval":"30s"}`), 200)
	must(t, "a push whose set-up sets the bookmark interval", e.do("POST", "/s/class"+PushPath, teacher, `{"lesson":"races","step":1}`), 200)
	must(t, "an open session's settings", e.do("PATCH", "/s/demo/rvplay/v1/settings", cred{}, `{"compactionInterval":"30s"}`), 200)
	want := `"bookmarkInterval":"2s","compactionInterval":"30s"`
	check := func(when string) {
		t.Helper()
		must(t, when, e.do("GET", "/s/class/rvplay/v1/settings", teacher, ""), 200, want)
	}
	check("loaded")
	e.clock.Step(time.Minute)
	e.reg.Sweep(ctx)
	if s := e.reg.Stats(); s.Loaded != 0 {
		t.Fatalf("not unloaded: %+v", s)
	}
	check("after an unload")
	must(t, "the open session after an unload", e.do("GET", "/s/demo/rvplay/v1/settings", cred{}, ""), 200, `"compactionInterval":"5m0s"`)
	e.restart(opts)
	check("after a restart")
	must(t, "reset", e.do("POST", "/s/class/rvplay/v1/reset", teacher, ""), 200)
	check("after a reset")
}

// The revision a lesson quotes as a student's key's first creation
// (lesson 1's etcdctl get k1 --rev=6) stays that creation's after the
// key is deleted and created again, whether the server still runs or
// restarted on its SQLite file since; a reset of the store starts the
// key's history again, and with it its first creation.
func TestAStudentsFirstCreationOutlivesARestart(t *testing.T) {
	c, err := lesson.Load(fstest.MapFS{"01-keys/lesson.json": {Data: []byte(`{"slug":"keys",
	  "class":{"names":["k1"],"revisions":{"6":"k1"}},
	  "steps":[{"id":"past","actions":[{"id":"get","run":"etcdctl get k1 --rev=6 -w json"}],"solution":["get"]}]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Session: session.Options{Lessons: c}}
	e := newEnv(t, opts)
	class := e.create("class")
	ada := e.join(class, "Ada")
	adas := cred{bearer: ada.Token}
	key := base64.StdEncoding.EncodeToString([]byte("k1-" + ada.ID))
	put := func(what string) string {
		t.Helper()
		a := e.do("POST", "/s/class/v3/kv/put", adas, `{"key":"`+key+`","value":"djE="}`)
		must(t, what, a, 200)
		var out struct{ Header struct{ Revision string } }
		if err := json.Unmarshal([]byte(a.body), &out); err != nil {
			t.Fatal(err)
		}
		return out.Header.Revision
	}
	quoted := func(when string) string {
		t.Helper()
		a := e.do("GET", "/s/class/rvplay/v1/lessons/keys", adas, "")
		var l struct {
			Class struct{ Own map[string]string }
			Steps []struct{ Actions []struct{ Run string } }
		}
		if err := json.Unmarshal([]byte(a.body), &l); err != nil || a.status != 200 {
			t.Fatalf("%s: %d %s", when, a.status, a.body)
		}
		if want := "etcdctl get k1-" + ada.ID + " --rev=" + l.Class.Own["6"] + " -w json"; l.Steps[0].Actions[0].Run != want {
			t.Fatalf("%s: the command is %q, want %q", when, l.Steps[0].Actions[0].Run, want)
		}
		return l.Class.Own["6"]
	}
	first := put("put k1")
	if got := quoted("created"); got != first {
		t.Fatalf("created at %s, the lesson quotes %q", first, got)
	}
	must(t, "delete k1", e.do("POST", "/s/class/v3/kv/deleterange", adas, `{"key":"`+key+`"}`), 200, `"deleted":"1"`)
	again := put("put k1 again")
	if got := quoted("recreated"); got != first {
		t.Fatalf("recreated at %s, the lesson quotes %q, not the first creation %s", again, got, first)
	}
	e.restart(opts)
	if got := quoted("after a restart"); got != first {
		t.Fatalf("after a restart the lesson quotes %q (the recreation is %s), not the first creation %s", got, again, first)
	}
	must(t, "reset", e.do("POST", "/s/class/rvplay/v1/reset", cred{bearer: class.TeacherToken}, ""), 200)
	if created, err := e.db.ClassFirstCreations("class"); err != nil || len(created) != 0 {
		t.Fatalf("after a reset the first creations kept are %v (%v)", created, err)
	}
	anew := put("put k1 in the reset store")
	if got := quoted("after a reset"); got != anew {
		t.Fatalf("after a reset k1 was created at %s, the lesson quotes %q", anew, got)
	}
}
