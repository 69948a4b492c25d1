package classroom

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/api"
)

const (
	kube401 = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`
	etcd401 = `{"error":"etcdserver: invalid auth token","message":"etcdserver: invalid auth token","code":16}`
	etcd403 = `{"error":"etcdserver: permission denied","message":"etcdserver: permission denied","code":7}`
)

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

// passesAuth is an expectation for a path this package guards but another
// serves: whatever it answers, it is neither 401 nor 403.
const passesAuth = -1

// Every guarded action of a session, tried without credentials, with a
// token of another session, with a student's token (as a bearer token and
// as the browser's cookie) and with the teacher's. Refusals come in the
// protocol of the path: a Kubernetes Status (kube-apiserver's words) or
// etcd's error body.
func TestEveryGuardedActionWithEveryCredential(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	other := e.create("")
	alice := e.join(class, "Alice")
	stranger := e.join(other, "Mallory")

	etcdKey := func(k string) string { return b64(k) }
	compactBody := func() string {
		a := e.do("POST", "/s/class/v3/kv/put", cred{bearer: class.TeacherToken}, `{"key":"`+etcdKey("/tick")+`"}`)
		var r struct {
			Header struct {
				Revision string `json:"revision"`
			} `json:"header"`
		}
		json.Unmarshal([]byte(a.body), &r)
		return `{"revision":"` + r.Header.Revision + `"}`
	}
	type action struct {
		method, path string
		body         func() string
		student      int // status for a student; passesAuth: anything but 401 and 403
		teacher      int
		refusal      string // what a student's refusal says
	}
	fixed := func(s string) func() string { return func() string { return s } }
	actions := []action{
		{"GET", "/api/v1/namespaces/default/configmaps", fixed(""), 200, 200, ""},
		{"POST", "/api/v1/namespaces/default/configmaps", fixed(`{"metadata":{"generateName":"cm-"}}`), 201, 201, ""},
		{"DELETE", "/api/v1/namespaces/default", fixed(""), 403, 403,
			`"message":"namespaces \"default\" is forbidden: this namespace may not be deleted","reason":"Forbidden","details":{"name":"default","kind":"namespaces"},"code":403`},
		{"POST", "/v3/kv/range", fixed(`{"key":"AA==","range_end":"AA=="}`), 200, 200, ""},
		{"POST", "/v3/kv/put", fixed(`{"key":"` + etcdKey("/students/notes") + `","value":"aGk="}`), 200, 200, ""},
		{"POST", "/v3/kv/put", fixed(`{"key":"` + etcdKey("/registry/configmaps/default/x") + `","value":"aGk="}`), 403, 200, etcd403},
		{"POST", "/v3/kv/txn", fixed(`{"success":[{"request_delete_range":{"key":"` + etcdKey("/registry/configmaps/default/x") + `"}}]}`), 403, 200, etcd403},
		{"POST", "/v3/kv/deleterange", fixed(`{"key":"` + etcdKey("/") + `","range_end":"` + etcdKey("0") + `"}`), 403, 0, etcd403},
		{"POST", "/v3/kv/compaction", compactBody, 403, 200, etcd403},
		{"GET", "/rvplay/v1/settings", fixed(""), 200, 200, ""},
		{"PUT", "/rvplay/v1/settings", fixed(`{"bookmarkInterval":"5s"}`), 403, 200,
			`"message":"forbidden: User \"` + alice.ID + `\" cannot put path \"/rvplay/v1/settings\"","reason":"Forbidden","details":{},"code":403`},
		{"PATCH", "/rvplay/v1/settings", fixed(`{}`), 403, passesAuth, `cannot patch path`},
		// Failing a pod is every learner's (lesson 9), not the teacher's.
		{"POST", "/rvplay/v1/pods/default/web-0/fail", fixed(`{}`), passesAuth, passesAuth, ""},
		{"POST", "/rvplay/v1/push", fixed(`{}`), 403, passesAuth, `cannot post path \"/rvplay/v1/push\"`},
		{"GET", "/kubeconfig", fixed(""), 200, 200, ""},
		{"POST", "/rvplay/v1/join-code", fixed(""), 403, 201, `cannot post path \"/rvplay/v1/join-code\"`},
		{"POST", "/sign-in", fixed(""), 200, 200, ""},
	}
	check := func(what string, a answer, want int, refusal string) {
		t.Helper()
		switch {
		case want == passesAuth:
			if a.status == 401 || a.status == 403 {
				t.Fatalf("%s: %d %s, want it past authorization", what, a.status, a.body)
			}
		case a.status != want:
			t.Fatalf("%s: %d %s, want %d", what, a.status, a.body, want)
		case refusal != "" && (want == 403) && !strings.Contains(a.body, refusal):
			t.Fatalf("%s: %s, want %s in it", what, a.body, refusal)
		}
	}
	for _, act := range actions {
		what := act.method + " " + act.path
		path := "/s/class" + act.path
		want401 := kube401
		if strings.HasPrefix(act.path, "/v3/") {
			want401 = etcd401
		}
		for _, c := range []struct {
			who string
			cred
		}{{"nobody", cred{}}, {"another session's teacher", cred{bearer: other.TeacherToken}},
			{"another session's student", cred{cookie: stranger.Token}}, {"a made-up token", cred{bearer: "x" + alice.Token}}} {
			a := e.do(act.method, path, c.cred, act.body())
			if a.status != 401 || strings.TrimSpace(a.body) != want401 {
				t.Fatalf("%s by %s: %d %s, want 401 %s", what, c.who, a.status, a.body, want401)
			}
		}
		check(what+" by a student (bearer)", e.do(act.method, path, cred{bearer: alice.Token}, act.body()), act.student, act.refusal)
		check(what+" by a student (cookie)", e.do(act.method, path, cred{cookie: alice.Token}, act.body()), act.student, act.refusal)
		if act.teacher != 0 {
			check(what+" by the teacher", e.do(act.method, path, cred{bearer: class.TeacherToken}, act.body()), act.teacher, act.refusal)
		}
	}
	// A valid bearer token wins over a cookie, and a bad one is not
	// rescued by a good cookie.
	if a := e.do("POST", "/s/class/v3/kv/put", cred{bearer: "nope", cookie: class.TeacherToken}, `{"key":"eA=="}`); a.status != 401 {
		t.Fatalf("bad bearer with a good cookie: %d %s", a.status, a.body)
	}
	// etcd's gateway takes its token without a scheme.
	req, _ := http.NewRequest("POST", e.srv.URL+"/s/class/v3/kv/range", strings.NewReader(`{"key":"eA=="}`))
	req.Header.Set("Authorization", alice.Token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
		t.Fatalf("etcd's bare token: %v %v", resp, err)
	}
}

// The person a token names reaches the engine as the request's principal.
func TestThePrincipalReachesTheEngine(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	alice := e.join(class, "Alice Liddell")
	if alice.ID == "" || !strings.HasPrefix(alice.ID, "alice-liddell-") || alice.Namespace != alice.ID || alice.Name != "Alice Liddell" {
		t.Fatalf("joined: %+v", alice)
	}
	e.do("GET", "/s/class/api/v1/namespaces", cred{cookie: alice.Token}, "")
	if p := e.lastPrincipal(); p != (api.Principal{ID: alice.ID, Name: "Alice Liddell", Role: api.RoleStudent}) {
		t.Fatalf("student: %+v", p)
	}
	e.do("GET", "/s/class/api/v1/namespaces", cred{bearer: class.TeacherToken}, "")
	if p := e.lastPrincipal(); p.Role != api.RoleTeacher || p.ID != "teacher" {
		t.Fatalf("teacher: %+v", p)
	}
	// Her own namespace was made when she joined.
	a := e.do("GET", "/s/class/api/v1/namespaces/"+alice.ID, cred{cookie: alice.Token}, "")
	must(t, "own namespace", a, 200, `"rvplay/student":"`+alice.ID+`"`, `"rvplay/display-name":"Alice Liddell"`)
}

func TestJoiningNeedsTheRightCode(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	other := e.create("other")
	for _, body := range []string{
		`{"code":"AAAA-AAAA","name":"Eve"}`,
		`{"code":"` + other.JoinCode + `","name":"Eve"}`, // another session's code
		`{"code":"","name":"Eve"}`,
	} {
		a := e.do("POST", "/s/class/join", cred{}, body)
		if a.status != 403 && a.status != 400 || len(a.header.Values("Set-Cookie")) > 0 {
			t.Fatalf("join with %s: %d %s %v", body, a.status, a.body, a.header)
		}
	}
	must(t, "wrong code", e.do("POST", "/s/class/join", cred{}, `{"code":"AAAA-AAAA","name":"Eve"}`), 403,
		`"message":"sessions \"class\" is forbidden: invalid join code"`)
	must(t, "no name", e.do("POST", "/s/class/join", cred{}, `{"code":"`+class.JoinCode+`","name":"  "}`), 400, "name: Required value")
	must(t, "unknown session", e.do("POST", "/s/nope/join", cred{}, `{"code":"x","name":"Eve"}`), 404, `sessions \"nope\" not found`)
	must(t, "GET join", e.do("GET", "/s/class/join", cred{}, ""), 405)

	// The code is read off a projector: any case, with or without its dash.
	code := strings.ToLower(strings.ReplaceAll(class.JoinCode, "-", " "))
	a := e.do("POST", "/s/class/join", cred{}, `{"code":"`+code+`","name":"Bob"}`)
	must(t, "join", a, 201, `"token":"`, `"namespace":"bob-`)
	cookie := a.header.Get("Set-Cookie")
	for _, attr := range []string{CookieName + "=", "Path=/s/class", "HttpOnly", "SameSite=Strict", "Max-Age="} {
		if !strings.Contains(cookie, attr) {
			t.Fatalf("cookie %q lacks %s", cookie, attr)
		}
	}
	// An open session has no code to join with.
	if _, err := e.reg.CreateOpen("demo"); err != nil {
		t.Fatal(err)
	}
	must(t, "join open", e.do("POST", "/s/demo/join", cred{}, `{"code":"x","name":"Eve"}`), 400, "is open")
}

// A teacher who no longer has the join code (it is shown once, to whoever
// created the session) asks for a new one: it admits students from then
// on, the old one nobody, and the students who joined stay, also after a
// restart. Only the teacher may ask.
func TestANewJoinCodeAdmitsTheClassAndTheOldOneNobody(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	other := e.create("other")
	alice := e.join(class, "Alice")
	teacher := cred{bearer: class.TeacherToken}
	const path = "/s/class/rvplay/v1/join-code"

	must(t, "nobody", e.do("POST", path, cred{}, ""), 401, kube401)
	must(t, "another session's teacher", e.do("POST", path, cred{bearer: other.TeacherToken}, ""), 401, kube401)
	for _, c := range []cred{{bearer: alice.Token}, {cookie: alice.Token}} {
		must(t, "a student", e.do("POST", path, c, ""), 403,
			`"message":"forbidden: User \"`+alice.ID+`\" cannot post path \"/rvplay/v1/join-code\"","reason":"Forbidden"`)
	}
	must(t, "GET", e.do("GET", path, teacher, ""), 405, `"reason":"MethodNotAllowed"`)
	must(t, "another session's code, unchanged", e.do("POST", "/s/other/join", cred{}, `{"code":"`+other.JoinCode+`","name":"Olga"}`), 201)

	a := e.do("POST", path, cred{cookie: class.TeacherToken}, "")
	must(t, "the teacher", a, 201, `"id":"class"`, `"url":"/s/class/"`)
	var renewed NewJoinCode
	if err := json.Unmarshal([]byte(a.body), &renewed); err != nil || len(renewed.JoinCode) != 9 || renewed.JoinCode == class.JoinCode {
		t.Fatalf("renewed: %+v %v, want a new code like %s", renewed, err, class.JoinCode)
	}
	if cc := a.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q: the answer carries a credential", cc)
	}
	if infos, _ := e.db.SessionInfos(); !sameHash(infos[0].JoinCodeHash, hashJoinCode("class", renewed.JoinCode)) {
		t.Fatalf("stored: %x, want the new code's hash", infos[0].JoinCodeHash)
	}

	check := func(when string) {
		t.Helper()
		must(t, "the old code "+when, e.do("POST", "/s/class/join", cred{}, `{"code":"`+class.JoinCode+`","name":"Eve"}`), 403,
			`sessions \"class\" is forbidden: invalid join code`)
		// Read off the projector: any case, with or without its dash.
		code := strings.ToLower(strings.ReplaceAll(renewed.JoinCode, "-", ""))
		must(t, "the new code "+when, e.do("POST", "/s/class/join", cred{}, `{"code":"`+code+`","name":"Bob"}`), 201, `"token":"`)
		must(t, "Alice "+when, e.do("GET", "/s/class/api/v1/namespaces/"+alice.ID, cred{cookie: alice.Token}, ""), 200)
		must(t, "the teacher "+when, e.do("GET", "/s/class/rvplay/v1/class", teacher, ""), 200)
	}
	check("at once")
	e.restart(Options{})
	check("after a restart")

	if _, err := e.reg.CreateOpen("demo"); err != nil {
		t.Fatal(err)
	}
	must(t, "an open session", e.do("POST", "/s/demo/rvplay/v1/join-code", cred{}, ""), 400, "is open")
	// Its dashboard learns so, and offers no new code.
	must(t, "an open session's class", e.do("GET", "/s/demo/rvplay/v1/class", cred{}, ""), 200, `"open":true`)
	if a := e.do("GET", "/s/class/rvplay/v1/class", teacher, ""); strings.Contains(a.body, `"open"`) {
		t.Fatalf("a guarded session's class: %s, want no \"open\"", a.body)
	}
	must(t, "no session", e.do("POST", "/s/nope/rvplay/v1/join-code", teacher, ""), 404, `sessions \"nope\" not found`)
}

// A token of the session signs a browser in: the answer says whom it
// names and hands it over as the session's cookie, with which the browser
// then opens what that person may open. A teacher who created the session
// with curl reaches the dashboard this way; nobody gets in without a
// token of the session.
func TestATokenSignsABrowserIn(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	other := e.create("other")
	alice := e.join(class, "Alice")
	const path = "/s/class/sign-in"

	must(t, "nobody", e.do("POST", path, cred{}, ""), 401, kube401)
	must(t, "another session's teacher", e.do("POST", path, cred{bearer: other.TeacherToken}, ""), 401, kube401)
	must(t, "a made-up token", e.do("POST", path, cred{bearer: "x" + class.TeacherToken}, ""), 401, kube401)
	must(t, "GET", e.do("GET", path, cred{bearer: class.TeacherToken}, ""), 405, `"reason":"MethodNotAllowed"`)

	cookieOf := func(a answer) string {
		t.Helper()
		c := a.header.Get("Set-Cookie")
		for _, want := range []string{CookieName + "=", "Path=/s/class;", "HttpOnly", "SameSite=Strict"} {
			if !strings.Contains(c, want) {
				t.Fatalf("Set-Cookie %q, want %s in it", c, want)
			}
		}
		v, _, _ := strings.Cut(strings.TrimPrefix(c, CookieName+"="), ";")
		return v
	}
	a := e.do("POST", path, cred{bearer: class.TeacherToken}, "")
	must(t, "the teacher", a, 200, `"id":"class"`, `"url":"/s/class/"`, `"principal":"teacher"`, `"role":"teacher"`)
	if cc := a.header.Get("Cache-Control"); cc != "no-store" {
		t.Fatalf("Cache-Control %q", cc)
	}
	teacher := cred{cookie: cookieOf(a)}
	must(t, "the teacher's browser, the dashboard's data", e.do("GET", "/s/class/rvplay/v1/class", teacher, ""), 200)

	a = e.do("POST", path, cred{bearer: alice.Token}, "")
	must(t, "a student", a, 200, `"principal":"`+alice.ID+`"`, `"name":"Alice"`, `"role":"student"`)
	student := cred{cookie: cookieOf(a)}
	must(t, "the student's browser, her namespace", e.do("GET", "/s/class/api/v1/namespaces/"+alice.ID, student, ""), 200)
	must(t, "the student's browser, the dashboard's data", e.do("GET", "/s/class/rvplay/v1/class", student, ""), 403)

	if _, err := e.reg.CreateOpen("demo"); err != nil {
		t.Fatal(err)
	}
	must(t, "an open session", e.do("POST", "/s/demo/sign-in", cred{}, ""), 400, "is open")
	must(t, "no session", e.do("POST", "/s/nope/sign-in", cred{bearer: class.TeacherToken}, ""), 404, `sessions \"nope\" not found`)
}

func TestCreatingSessions(t *testing.T) {
	e := newEnv(t, Options{MaxSessions: 2})
	a := e.do("POST", "/sessions", cred{}, `{"name":"class-1"}`)
	must(t, "create", a, 201, `"id":"class-1"`, `"url":"/s/class-1/"`, `"joinCode":"`, `"teacherToken":"`)
	if a.header.Get("Location") != "/s/class-1/" || !strings.Contains(a.header.Get("Set-Cookie"), "Path=/s/class-1;") {
		t.Fatalf("headers: %v", a.header)
	}
	var created Created
	json.Unmarshal([]byte(a.body), &created)
	if len(normalizeJoinCode(created.JoinCode)) != joinCodeLength || strings.Trim(normalizeJoinCode(created.JoinCode), codeAlphabet) != "" {
		t.Fatalf("join code %q", created.JoinCode)
	}
	must(t, "again", e.do("POST", "/sessions", cred{}, `{"name":"class-1"}`), 409, `"reason":"AlreadyExists"`)
	for _, bad := range []string{"Class", "-x", "x-", "a_b", strings.Repeat("a", 64), "a/b"} {
		must(t, "name "+bad, e.do("POST", "/sessions", cred{}, fmt.Sprintf(`{"name":%q}`, bad)), 422, `"reason":"Invalid"`)
	}
	must(t, "malformed", e.do("POST", "/sessions", cred{}, `{"name":`), 400, `"reason":"BadRequest"`)
	must(t, "trailing", e.do("POST", "/sessions", cred{}, `{}}`), 400)
	must(t, "too large", e.do("POST", "/sessions", cred{}, `{"name":"`+strings.Repeat("a", 5000)+`"}`), 413)
	// A random id: 16 characters of base32, a DNS label.
	a = e.do("POST", "/sessions", cred{}, ``)
	var random Created
	if err := json.Unmarshal([]byte(a.body), &random); err != nil || a.status != 201 || len(random.ID) != randomIDLength ||
		strings.Trim(random.ID, idAlphabet) != "" || CheckName(random.ID) != nil {
		t.Fatalf("random id: %d %s", a.status, a.body)
	}
	// The cap: two sessions exist.
	must(t, "beyond the cap", e.do("POST", "/sessions", cred{}, `{}`), 403, `"reason":"Forbidden"`, "at most 2 sessions")
	must(t, "PUT /sessions", e.do("PUT", "/sessions", cred{}, `{}`), 405)
}

// GET /sessions shows a visitor the open sessions and, for a token, the one
// session it belongs to; never another guarded session's name.
func TestListingShowsAVisitorOnlyTheirOwn(t *testing.T) {
	e := newEnv(t, Options{})
	e.reg.CreateOpen("demo")
	class := e.create("class")
	e.create("secret")
	alice := e.join(class, "Alice")
	list := func(token string) string {
		return strings.TrimSpace(e.do("GET", "/sessions", cred{bearer: token}, "").body)
	}
	if got := list(""); got != `[{"id":"demo","url":"/s/demo/","guarded":false,"role":"teacher"}]` {
		t.Fatalf("anonymous: %s", got)
	}
	if got := list(class.TeacherToken); got != `[{"id":"class","url":"/s/class/","guarded":true,"role":"teacher"},{"id":"demo","url":"/s/demo/","guarded":false,"role":"teacher"}]` {
		t.Fatalf("teacher: %s", got)
	}
	if got := list(alice.Token); !strings.Contains(got, `{"id":"class","url":"/s/class/","guarded":true,"role":"student"}`) || strings.Contains(got, "secret") {
		t.Fatalf("student: %s", got)
	}
}

func TestTheLabPageOfAGuardedSessionAsksAStrangerToJoin(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	a := e.do("GET", "/s/class/", cred{}, "")
	if a.status != 303 || a.header.Get("Location") != "/?join=class" {
		t.Fatalf("stranger: %d %v", a.status, a.header)
	}
	must(t, "teacher", e.do("GET", "/s/class/", cred{cookie: class.TeacherToken}, ""), 200, "lab page /s/class/")
	must(t, "unknown", e.do("GET", "/s/nope/", cred{}, ""), 404, `"reason":"NotFound"`, `"details":{"name":"nope","kind":"sessions"}`)
}

func TestTheKubeconfigCarriesTheCallersToken(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	alice := e.join(class, "Alice")
	a := e.do("GET", "/s/class/kubeconfig", cred{cookie: alice.Token}, "")
	host := strings.TrimPrefix(e.srv.URL, "http://")
	must(t, "kubeconfig", a, 200,
		`server: "http://`+host+`/s/class"`, `token: "`+alice.Token+`"`, `namespace: "`+alice.ID+`"`, `current-context: "rvplay-class"`)
	if a.header.Get("Content-Disposition") != `attachment; filename="kubeconfig-class.yaml"` {
		t.Fatalf("headers %v", a.header)
	}
	e.reg.CreateOpen("demo")
	must(t, "open", e.do("GET", "/s/demo/kubeconfig", cred{}, ""), 200, "user: {}")
}

// Reset and end are the teacher's; a reset session is at revision 1 with
// its class intact; an ended one is gone, with its data.
func TestResetAndEndAreTheTeachers(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	other := e.create("other")
	alice := e.join(class, "Alice")
	teacher := cred{bearer: class.TeacherToken}
	e.do("POST", "/s/class/v3/kv/put", teacher, `{"key":"eA==","value":"MQ=="}`)

	must(t, "student reset", e.do("POST", "/s/class/rvplay/v1/reset", cred{cookie: alice.Token}, ""), 403,
		`forbidden: User \"`+alice.ID+`\" cannot post path \"/rvplay/v1/reset\"`)
	must(t, "anonymous reset", e.do("POST", "/s/class/rvplay/v1/reset", cred{}, ""), 401, kube401)
	must(t, "GET reset", e.do("GET", "/s/class/rvplay/v1/reset", teacher, ""), 405)
	w := e.watch("/s/class/v3/watch", teacher, `{"create_request":{"key":"eA=="}}`)
	must(t, "reset", e.do("POST", "/s/class/rvplay/v1/reset", teacher, ""), 200, `"status":"Success"`)
	w.ends()
	must(t, "after reset", e.do("POST", "/s/class/v3/kv/range", cred{cookie: alice.Token}, `{"key":"eA=="}`), 200, `"revision":"1"`)
	if strings.Contains(e.do("POST", "/s/class/v3/kv/range", teacher, `{"key":"eA=="}`).body, `"kvs"`) {
		t.Fatal("a key survived the reset")
	}

	must(t, "student end", e.do("DELETE", "/s/class", cred{cookie: alice.Token}, ""), 403, `cannot delete path \"/s/class\"`)
	must(t, "other teacher end", e.do("DELETE", "/s/class", cred{bearer: other.TeacherToken}, ""), 401)
	must(t, "anonymous end", e.do("DELETE", "/s/class", cred{}, ""), 401)
	a := e.do("DELETE", "/s/class", teacher, "")
	must(t, "end", a, 200, `"status":"Success"`)
	if !strings.Contains(a.header.Get("Set-Cookie"), "Max-Age=0") {
		t.Fatalf("the cookie is not cleared: %v", a.header)
	}
	must(t, "after end", e.do("POST", "/s/class/v3/kv/range", teacher, `{"key":"eA=="}`), 404, `sessions \"class\" not found`)
	names, _ := e.db.Sessions()
	if strings.Join(names, ",") != "other" {
		t.Fatalf("sessions in the database: %v", names)
	}
	// An open session is not ended over HTTP.
	e.reg.CreateOpen("demo")
	must(t, "end open", e.do("DELETE", "/s/demo", cred{}, ""), 403, "open session")
}

// Watches are guarded like every other request: chunked HTTP and
// WebSockets, with the bearer token or the browser's cookie.
func TestWatchesAreGuarded(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	alice := e.join(class, "Alice")
	must(t, "etcd watch, nobody", e.do("POST", "/s/class/v3/watch", cred{}, `{"create_request":{"key":"eA=="}}`), 401, etcd401)
	w := e.watch("/s/class/v3/watch", cred{bearer: alice.Token}, `{"create_request":{"key":"eA=="}}`)
	if l := w.next(); !strings.Contains(l, `"created":true`) {
		t.Fatalf("created: %s", l)
	}

	wsURL := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/s/class/api/v1/namespaces/default/configmaps?watch=true"
	_, resp, err := websocket.DefaultDialer.Dial(wsURL, nil)
	if err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("websocket without credentials: %v %v", err, resp)
	}
	h := http.Header{"Cookie": {CookieName + "=" + alice.Token}}
	conn, resp, err := websocket.DefaultDialer.Dial(wsURL, h)
	if err != nil {
		t.Fatalf("websocket with the cookie: %v %v", err, resp)
	}
	defer conn.Close()
	e.do("POST", "/s/class/api/v1/namespaces/default/configmaps", cred{cookie: alice.Token}, `{"metadata":{"name":"seen"}}`)
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, m, err := conn.ReadMessage()
	if err != nil || !strings.Contains(string(m), `"type":"ADDED"`) || !strings.Contains(string(m), `"name":"seen"`) {
		t.Fatalf("websocket event: %s %v", m, err)
	}
}

// watchClient reads a chunked watch line by line.
type watchClient struct {
	t     testing.TB
	lines chan string
}

func (e *env) watch(path string, c cred, body string) *watchClient {
	e.t.Helper()
	req, _ := http.NewRequest("POST", e.srv.URL+path, strings.NewReader(body))
	if c.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+c.bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		e.t.Fatalf("watch %s: %v %v", path, resp, err)
	}
	w := &watchClient{t: e.t, lines: make(chan string, 64)}
	go func() {
		defer close(w.lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			w.lines <- sc.Text()
		}
	}()
	e.t.Cleanup(func() { resp.Body.Close() })
	return w
}

func (w *watchClient) next() string {
	w.t.Helper()
	select {
	case l, ok := <-w.lines:
		if !ok {
			w.t.Fatal("watch ended")
		}
		return l
	case <-time.After(10 * time.Second):
		w.t.Fatal("no watch line within 10s")
	}
	return ""
}

// ends waits for the stream to end (after at most a few lines).
func (w *watchClient) ends() {
	w.t.Helper()
	for {
		select {
		case _, ok := <-w.lines:
			if !ok {
				return
			}
		case <-time.After(10 * time.Second):
			w.t.Fatal("the watch did not end within 10s")
		}
	}
}

// teacherOnly looks at its lists only for the session's own API: every
// path on them must be one of its paths.
func TestEveryTeacherOnlyPathIsTheSessionsOwnAPI(t *testing.T) {
	paths := append(append([]string{resetPath, JoinCodePath}, teacherReadOnly...), teacherOnlyPrefixes...)
	for _, p := range paths {
		if !strings.HasPrefix(p, controlPrefix) {
			t.Errorf("%s is not under %s: teacherOnly would let anyone use it", p, controlPrefix)
		}
		if !teacherOnly(http.MethodPost, p) {
			t.Errorf("POST %s is not the teacher's alone", p)
		}
	}
}
