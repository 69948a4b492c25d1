package classroom

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Every teacher-only action of a class, tried without credentials, with a
// token of another session, with a student's token and with the
// teacher's: the dashboard, what it shows, the exports, pushing, settings,
// compaction, reset and the end.
func TestEveryTeacherActionWithEveryCredential(t *testing.T) {
	e := newEnv(t, Options{Session: sessionWithLessons(t)})
	class := e.create("class")
	other := e.create("other")
	ada := e.join(class, "Ada")
	type action struct {
		method, path, body string
		teacher            int
	}
	compact := func() string {
		var r struct{ Header struct{ Revision string } }
		json.Unmarshal([]byte(e.do("POST", "/s/class/v3/kv/put", cred{bearer: class.TeacherToken}, `{"key":"dA=="}`).body), &r)
		return `{"revision":"` + r.Header.Revision + `"}`
	}
	for _, a := range []action{
		{"GET", DashboardPath, "", 200},
		{"GET", ClassPath, "", 200},
		{"GET", ResultsJSONPath, "", 200},
		{"GET", ResultsCSVPath, "", 200},
		{"POST", PushPath, `{"lesson":"races","step":1}`, 200},
		{"PATCH", "/rvplay/v1/settings", `{"compactionInterval":"30s"}`, 200},
		{"POST", "/v3/kv/compaction", "", 200},
		{"POST", "/rvplay/v1/reset", "", 200},
	} {
		body := a.body
		if a.path == "/v3/kv/compaction" {
			body = compact()
		}
		path := "/s/class" + a.path
		what := a.method + " " + a.path
		none := e.do(a.method, path, cred{}, body)
		if a.path == DashboardPath {
			// A browser without the session's cookie goes to the join form.
			if none.status != http.StatusSeeOther || none.header.Get("Location") != "/?join=class" {
				t.Fatalf("%s without credentials: %d %v", what, none.status, none.header)
			}
		} else {
			must(t, what+" without credentials", none, 401)
		}
		if a.path != DashboardPath {
			must(t, what+" with another session's token", e.do(a.method, path, cred{bearer: other.TeacherToken}, body), 401)
		} else if a := e.do(a.method, path, cred{bearer: other.TeacherToken}, body); a.status != http.StatusSeeOther {
			t.Fatalf("%s with another session's token: %d %s", what, a.status, a.body)
		}
		must(t, what+" as a student", e.do(a.method, path, cred{bearer: ada.Token}, body), 403)
		must(t, what+" as a student, by cookie", e.do(a.method, path, cred{cookie: ada.Token}, body), 403)
		must(t, what+" as the teacher", e.do(a.method, path, cred{bearer: class.TeacherToken}, body), a.teacher)
		if a.path == DashboardPath {
			must(t, what+" as the teacher, by cookie", e.do(a.method, path, cred{cookie: class.TeacherToken}, body), 200, "lab page /s/class/dashboard")
		}
	}
	must(t, "end, without credentials", e.do("DELETE", "/s/class", cred{}, ""), 401)
	must(t, "end, with another session's token", e.do("DELETE", "/s/class", cred{bearer: other.TeacherToken}, ""), 401)
	must(t, "end, as a student", e.do("DELETE", "/s/class", cred{bearer: ada.Token}, ""), 403)
	must(t, "end, as the teacher", e.do("DELETE", "/s/class", cred{bearer: class.TeacherToken}, ""), 200)
}

// The dashboard's data: who is connected and where, who passed which
// step, each person's watches (where they are against the store's
// revision, how they ended) and the misconceptions found, per person and
// per lesson; the exports carry the same results, also after the session
// was unloaded.
func TestTheClassShowsPresenceProgressWatchesAndMisconceptions(t *testing.T) {
	opts := Options{Session: sessionWithLessons(t), UnloadAfter: time.Minute}
	e := newEnv(t, opts)
	opts.Session.Clock = e.clock
	e.restart(opts)
	class := e.create("class")
	ada, bob := e.join(class, "Ada"), e.join(class, "Bob")
	teacher := cred{bearer: class.TeacherToken}

	// Ada opens the lesson, passes its first step, and updates a
	// ConfigMap without a resourceVersion: a misconception, in the lesson.
	ch := e.channel("class", ada.Token)
	ch.read()
	ch.send(`{"type":"presence","lesson":"races","step":1}`)
	tch := e.channel("class", class.TeacherToken)
	tch.until("Ada in races", func(m message) bool { p, _ := personOf(m.People, ada.ID); return p.Lesson == "races" })
	must(t, "verify", e.do("POST", "/s/class/rvplay/v1/lessons/races/steps/1/verify", cred{bearer: ada.Token}, `{}`), 200, `"passed":true`)
	cms := "/s/class/api/v1/namespaces/default/configmaps"
	must(t, "create", e.do("POST", cms, cred{bearer: ada.Token}, `{"metadata":{"name":"c"}}`), 201)
	must(t, "blind update", e.do("PUT", cms+"/c", cred{bearer: ada.Token}, `{"metadata":{"name":"c"},"data":{"a":"1"}}`), 200)

	// Bob watches the ConfigMaps of default from now on.
	req, _ := http.NewRequest("GET", e.srv.URL+cms+"?watch=true&resourceVersion=0", nil)
	req.Header.Set("Authorization", "Bearer "+bob.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	events := bufio.NewReader(resp.Body)
	if _, err := events.ReadString('\n'); err != nil { // the ADDED of c
		t.Fatal(err)
	}
	must(t, "update", e.do("PUT", cms+"/c", cred{bearer: ada.Token}, `{"metadata":{"name":"c","resourceVersion":"1"},"data":{"a":"2"}}`), 409)
	must(t, "a write Bob's watch does not see", e.do("POST", "/s/class/api/v1/namespaces/"+bob.ID+"/configmaps", cred{bearer: bob.Token}, `{"metadata":{"name":"x"}}`), 201)

	var c struct {
		Class
		Settings json.RawMessage `json:"settings"` // session.Settings renders durations its own way
	}
	a := e.do("GET", "/s/class"+ClassPath, teacher, "")
	if err := json.Unmarshal([]byte(a.body), &c); err != nil || a.status != 200 || !strings.Contains(string(c.Settings), `"compactionInterval":"5m0s"`) {
		t.Fatalf("class: %d %s (%v)", a.status, a.body, err)
	}
	var pa, pb ClassPerson
	for _, p := range c.People {
		switch p.ID {
		case ada.ID:
			pa = p
		case bob.ID:
			pb = p
		}
	}
	if pa.Connections != 1 || pa.Lesson != "races" || pa.Step != 1 || len(pa.Passed["races"]) != 1 ||
		pa.Findings["update-without-resourceversion"] != 1 {
		t.Fatalf("Ada: %+v", pa)
	}
	if pb.Connections != 0 || len(pb.Watches) != 1 {
		t.Fatalf("Bob: %+v", pb)
	}
	w := pb.Watches[0]
	if w.Ended || w.From != "0" || w.Events != 1 || w.LastResourceVersion == 0 || w.Behind != c.Revision-w.LastResourceVersion || w.Behind < 1 {
		t.Fatalf("Bob's watch at revision %d: %+v", c.Revision, w)
	}
	races := c.Lessons[0]
	if races.Slug != "races" || races.Here != 1 || races.Steps[0].Passed != 1 || races.Steps[1].Passed != 0 ||
		races.Findings["update-without-resourceversion"] != 1 {
		t.Fatalf("the lesson: %+v", races)
	}
	if len(c.Detectors) == 0 || c.Record.Last == 0 {
		t.Fatalf("detectors and record: %+v %+v", c.Detectors, c.Record)
	}

	// Bob's watch ends; the session is unloaded: the results still hold
	// the finding, counted once however often it was looked at.
	resp.Body.Close()
	ch.conn.Close()
	tch.conn.Close()
	waitIdle(t, e.reg, "class")
	e.clock.Step(time.Minute)
	e.reg.Sweep(ctx)
	if s := e.reg.Stats(); s.Loaded != 0 {
		t.Fatalf("not unloaded: %+v", s)
	}
	a = e.do("GET", "/s/class"+ResultsJSONPath, teacher, "")
	var res Results
	if err := json.Unmarshal([]byte(a.body), &res); err != nil || a.status != 200 {
		t.Fatalf("results: %d %s", a.status, a.body)
	}
	if !strings.Contains(a.header.Get("Content-Disposition"), `filename="rvplay-class-`) {
		t.Fatalf("results' header: %v", a.header)
	}
	if len(res.People) != 2 || res.People[0].ID != ada.ID || res.People[1].ID != bob.ID || len(res.People[1].Lessons) != 0 {
		t.Fatalf("results' people: %+v", res.People)
	}
	if l := res.People[0].Lessons; len(l) != 1 || l[0].Lesson != "races" || len(l[0].Passed) != 1 ||
		l[0].Findings["update-without-resourceversion"] != 1 || l[0].LastPassed == nil {
		t.Fatalf("Ada's results: %+v", l)
	}
	a = e.do("GET", "/s/class"+ResultsCSVPath, teacher, "")
	rows, err := csv.NewReader(strings.NewReader(a.body)).ReadAll()
	if err != nil || a.status != 200 || a.header.Get("Content-Type") != "text/csv; charset=utf-8" || len(rows) != 3 {
		t.Fatalf("csv: %d %v %q", a.status, err, a.body)
	}
	head := strings.Join(rows[0][:7], ",")
	if head != "id,name,lesson,steps,passed,passed_steps,last_passed" || rows[1][0] != ada.ID || rows[1][2] != "races" ||
		rows[1][3] != "3" || rows[1][4] != "1" || rows[2][0] != bob.ID || rows[2][2] != "" {
		t.Fatalf("csv:\n%s", a.body)
	}
	col := -1
	for i, h := range rows[0] {
		if h == "update-without-resourceversion" {
			col = i
		}
	}
	if col < 0 || rows[1][col] != "1" {
		t.Fatalf("csv's detector column:\n%s", a.body)
	}
}

// A display name that a spreadsheet would read as a formula is exported as
// text.
// The dashboard says how long a student has been on their step: Since is
// when they came to it, reckoned against the server's Now in the same
// answer, and a new step starts it again.
func TestTheClassSaysSinceWhenEachStudentIsOnTheirStep(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	ada := e.join(class, "Ada")
	teacher := e.channel("class", class.TeacherToken)
	teacher.read()
	student := e.channel("class", ada.Token)
	student.read()
	at := func(step int) {
		t.Helper()
		student.send(fmt.Sprintf(`{"type":"presence","lesson":"races","step":%d}`, step))
		teacher.until(fmt.Sprintf("Ada at races/%d", step), func(m message) bool {
			p, _ := personOf(m.People, ada.ID)
			return m.Type == "roster" && p.Step == step
		})
	}
	adaIn := func() (time.Time, Person) {
		t.Helper()
		var c struct {
			Now    time.Time `json:"now"`
			People []Person  `json:"people"`
		}
		a := e.do("GET", "/s/class"+ClassPath, cred{bearer: class.TeacherToken}, "")
		if err := json.Unmarshal([]byte(a.body), &c); err != nil || a.status != 200 {
			t.Fatalf("class: %d %s %v", a.status, a.body, err)
		}
		p, ok := personOf(c.People, ada.ID)
		if !ok {
			t.Fatalf("no Ada in %s", a.body)
		}
		return c.Now, p
	}

	at(2)
	e.clock.Step(7 * time.Minute)
	now, p := adaIn()
	if !now.Equal(t0.Add(7*time.Minute)) || !p.Since.Equal(t0) {
		t.Fatalf("on step 2 for 7 minutes: now %v, since %v; want %v and %v", now, p.Since, t0.Add(7*time.Minute), t0)
	}
	at(3)
	if _, p := adaIn(); !p.Since.Equal(t0.Add(7 * time.Minute)) {
		t.Fatalf("on step 3: since %v, want %v", p.Since, t0.Add(7*time.Minute))
	}
}

func TestTheCSVExportKeepsNamesFromBeingFormulas(t *testing.T) {
	res := &Results{People: []ResultsPerson{{ID: "x-1", Name: "=HYPERLINK(\"http://evil\")"}, {ID: "y-2", Name: "@SUM(A1)"}, {ID: "z-3", Name: "Zoë"}}}
	rows, err := csv.NewReader(strings.NewReader(string(res.CSV()))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if rows[1][1] != `'=HYPERLINK("http://evil")` || rows[2][1] != "'@SUM(A1)" || rows[3][1] != "Zoë" {
		t.Fatalf("%q", rows)
	}
}

// waitIdle waits until session name has no request or stream in progress:
// a stream whose client went away ends on the server's schedule. It polls,
// it does not sleep for an event.
func waitIdle(t testing.TB, r *Registry, name string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r.mu.Lock()
		e := r.sessions[name]
		busy := e != nil && e.state == isLoaded && e.live.refs > 0
		r.mu.Unlock()
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s still in use", name)
		}
		runtime.Gosched()
	}
}
