package classroom

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/lesson"
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
