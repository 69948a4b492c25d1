package lesson

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/rvplay/rvplay/engine/api"
)

const conflictLesson = `{"slug":"demo","steps":[
 {"id":"read","actions":[{"id":"g","client":"B","do":"get","resource":"deployments","name":"nginx"}],"solution":["g"],
  "verify":{"exchange":{"verb":"get","status":200}}},
 {"id":"conflict","actions":[{"id":"p","client":"B","do":"update","resource":"deployments","name":"nginx"}],"solution":["p"],
  "verify":{"exchange":{"verb":"update","status":409}}}]}`

func newService(t *testing.T, record []Exchange) *Service {
	t.Helper()
	c, err := Load(fstest.MapFS{"01-demo/lesson.json": {Data: []byte(conflictLesson)}})
	if err != nil {
		t.Fatal(err)
	}
	return &Service{Catalog: c, Store: newStore(t), Handler: api.HandlerFunc(func(context.Context, *api.Request) *api.Response {
		return &api.Response{Status: 201}
	}), Exchanges: func(string) []Exchange { return record }}
}

func call(s *Service, ctx context.Context, method, path, body string) (int, map[string]any) {
	resp := s.Serve(ctx, &api.Request{Method: method, Path: path, Body: []byte(body)})
	var out map[string]any
	_ = json.Unmarshal(resp.Body, &out)
	return resp.Status, out
}

func TestVerifyAnswersPassedAndTheSeqToStartTheNextStepFrom(t *testing.T) {
	s := newService(t, numbered(
		Exchange{Principal: "ana", Method: "GET", Path: nginx, Status: 200},
		Exchange{Principal: "bo", Method: "PUT", Path: nginx, Status: 409, Reason: "Conflict"},
	))
	code, out := call(s, context.Background(), "POST", "/rvplay/v1/lessons/demo/steps/2/verify", `{"since":0}`)
	if code != 200 || out["passed"] != true || out["seq"] != float64(2) || out["step"] != float64(2) {
		t.Fatalf("%d %v", code, out)
	}
	code, out = call(s, context.Background(), "POST", "/rvplay/v1/lessons/demo/steps/2/verify", `{"since":2}`)
	if code != 200 || out["passed"] != false || out["unmet"] != "exchange" {
		t.Fatalf("since the conflict: %d %v", code, out)
	}
}

func TestAStudentsVerifyLooksAtTheirOwnExchangesOnly(t *testing.T) {
	s := newService(t, numbered(
		Exchange{Principal: "ana", Method: "GET", Path: nginx, Status: 200},
		Exchange{Principal: "bo", Method: "PUT", Path: nginx, Status: 409, Reason: "Conflict"},
	))
	ana := api.WithPrincipal(context.Background(), api.Principal{ID: "ana", Role: api.RoleStudent})
	if _, out := call(s, ana, "POST", "/rvplay/v1/lessons/demo/steps/2/verify", ``); out["passed"] != false {
		t.Fatalf("bo's conflict completes ana's step: %v", out)
	}
	if _, out := call(s, ana, "POST", "/rvplay/v1/lessons/demo/steps/1/verify", ``); out["passed"] != true {
		t.Fatalf("ana's own read: %v", out)
	}
	bo := api.WithPrincipal(context.Background(), api.Principal{ID: "bo", Role: api.RoleStudent})
	if _, out := call(s, bo, "GET", "/rvplay/v1/misconceptions", ``); out["counts"].(map[string]any)["update-without-resourceversion"] != float64(0) {
		t.Fatalf("%v", out)
	}
}

func TestLessonRoutesAnswerKubernetesStatusesForBadRequests(t *testing.T) {
	s := newService(t, nil)
	for _, tc := range []struct {
		method, path, body string
		code               int
		message            string
	}{
		{"POST", "/rvplay/v1/lessons/nope/steps/1/verify", "", 404, `lessons.rvplay "nope" not found`},
		{"POST", "/rvplay/v1/lessons/demo/steps/3/verify", "", 404, `steps.rvplay "demo/3" not found`},
		{"POST", "/rvplay/v1/lessons/demo/steps/x/verify", "", 400, `step "x" is not a number`},
		{"POST", "/rvplay/v1/lessons/demo/steps/1/verify", "{", 400, `verify: the body is`},
		{"DELETE", "/rvplay/v1/lessons/demo", "", 405, `delete is not supported`},
		{"GET", "/rvplay/v1/lessons/nope", "", 404, `lessons.rvplay "nope" not found`},
	} {
		code, out := call(s, context.Background(), tc.method, tc.path, tc.body)
		if code != tc.code || out["kind"] != "Status" || !strings.Contains(out["message"].(string), tc.message) {
			t.Errorf("%s %s: %d %v", tc.method, tc.path, code, out)
		}
	}
	code, out := call(s, context.Background(), "GET", "/rvplay/v1/lessons", "")
	if ls, _ := out["lessons"].([]any); code != 200 || len(ls) != 1 {
		t.Fatalf("%d %v", code, out)
	}
}

func TestVerifiedStepsAreProgressTheTeacherSeesForTheClassAndAStudentForThemself(t *testing.T) {
	s := newService(t, numbered(
		Exchange{Principal: "ana", Method: "GET", Path: nginx, Status: 200},
		Exchange{Principal: "bo", Method: "GET", Path: nginx, Status: 200},
	))
	ana := api.WithPrincipal(context.Background(), api.Principal{ID: "ana", Name: "Ana", Role: api.RoleStudent})
	bo := api.WithPrincipal(context.Background(), api.Principal{ID: "bo", Name: "Bo", Role: api.RoleStudent})
	call(s, ana, "POST", "/rvplay/v1/lessons/demo/steps/1/verify", ``)
	call(s, ana, "POST", "/rvplay/v1/lessons/demo/steps/2/verify", ``) // not passed: no 409
	call(s, bo, "POST", "/rvplay/v1/lessons/demo/steps/1/verify", ``)
	_, out := call(s, context.Background(), "GET", "/rvplay/v1/lessons/progress", "")
	var class []string
	for _, p := range out["progress"].([]any) {
		m := p.(map[string]any)
		class = append(class, fmt.Sprint(m["principal"], " ", m["name"], " ", m["lesson"], " ", m["steps"]))
	}
	if got := strings.Join(class, "; "); got != "ana Ana demo [1]; bo Bo demo [1]" {
		t.Fatalf("the class: %s", got)
	}
	_, out = call(s, bo, "GET", "/rvplay/v1/lessons/progress", "")
	if ps := out["progress"].([]any); len(ps) != 1 || ps[0].(map[string]any)["principal"] != "bo" {
		t.Fatalf("bo sees %v", ps)
	}
}

// On a class's session the settings are the teacher's: a student's set-up
// creates the lesson's objects but sends no settings, and says so.
func TestAStudentsSetupLeavesTheSettingsToTheTeacher(t *testing.T) {
	def := `{"slug":"timed","setup":{"settings":{"bookmarkInterval":"2s"},
	  "objects":[{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"demo"}}]},
	  "steps":[{"id":"read"}]}`
	c, err := Load(fstest.MapFS{"01-timed/lesson.json": {Data: []byte(def)}})
	if err != nil {
		t.Fatal(err)
	}
	var sent []string
	s := &Service{Catalog: c, Store: newStore(t), Handler: api.HandlerFunc(func(ctx context.Context, r *api.Request) *api.Response {
		sent = append(sent, api.PrincipalFrom(ctx).Role.String()+" "+r.Method+" "+r.Path)
		return &api.Response{Status: 201}
	})}
	student := api.WithPrincipal(context.Background(), api.Principal{ID: "ana", Role: api.RoleStudent})
	res := s.Setup(student, c.Lesson("timed"))
	if !res.SettingsSkipped || res.Settings != 0 || len(res.Objects) != 1 || res.Objects[0].Status != 201 {
		t.Fatalf("a student's set-up: %+v", res)
	}
	teacher := api.WithPrincipal(context.Background(), api.Principal{ID: "teacher", Role: api.RoleTeacher})
	if res := s.Setup(teacher, c.Lesson("timed")); res.SettingsSkipped || res.Settings != 201 {
		t.Fatalf("the teacher's set-up: %+v", res)
	}
	want := "student GET /api/v1/namespaces|student POST /api/v1/namespaces/default/configmaps|" +
		"teacher GET /api/v1/namespaces|teacher PUT /rvplay/v1/settings|teacher POST /api/v1/namespaces/default/configmaps"
	if got := strings.Join(sent, "|"); got != want {
		t.Fatalf("requests:\n%s\nwant\n%s", got, want)
	}
}

// Progress recorded elsewhere (the server's database) is restored into a
// new session's Service; Passed hears of each step passed for the first
// time only.
func TestProgressIsRestoredAndEachFirstPassIsTold(t *testing.T) {
	s := newService(t, numbered(Exchange{Principal: "ana", Method: "GET", Path: nginx, Status: 200}))
	s.RestoreProgress([]Progress{{Principal: "bo", Name: "Bo", Lesson: "demo", Steps: []int{1, 2}, Updated: time.Unix(100, 0)}})
	var told []string
	s.Passed = func(p api.Principal, lesson string, step int, _ time.Time) {
		told = append(told, fmt.Sprint(p.ID, " ", lesson, " ", step))
	}
	ana := api.WithPrincipal(context.Background(), api.Principal{ID: "ana", Name: "Ana", Role: api.RoleStudent})
	call(s, ana, "POST", "/rvplay/v1/lessons/demo/steps/1/verify", ``)
	call(s, ana, "POST", "/rvplay/v1/lessons/demo/steps/1/verify", ``)
	if got := strings.Join(told, "; "); got != "ana demo 1" {
		t.Fatalf("told: %s", got)
	}
	var class []string
	for _, p := range s.Progress("") {
		class = append(class, fmt.Sprint(p.Principal, " ", p.Name, " ", p.Lesson, " ", p.Steps))
	}
	if got := strings.Join(class, "; "); got != "ana Ana demo [1]; bo Bo demo [1 2]" {
		t.Fatalf("the class: %s", got)
	}
}
