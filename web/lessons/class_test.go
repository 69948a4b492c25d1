package lessons_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/lesson/classnames"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/internal/jsconsole"
	"github.com/rvplay/rvplay/web/lessons"
)

// Every lesson decides whether a class's students share its names or get
// their own, and its declaration reads.
func TestEveryLessonSaysWhoseNamesItUses(t *testing.T) {
	if err := classnames.Check(catalog(t)); err != nil {
		t.Fatal(err)
	}
}

// classSession is a class's session as the server runs it: students work
// on their own names where a lesson says so.
func classSession(t *testing.T) *session.Session {
	t.Helper()
	s, err := session.New("class", mvcc.NewMemoryBackend(), session.Options{Lessons: catalog(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.Lessons.Own = classnames.New(s.Store).For
	return s
}

// learner is one person in a class: their principal, their own console
// (the lab's, under Node), and the lesson as the session serves it to them.
type learner struct {
	t       *testing.T
	p       api.Principal
	sess    *session.Session
	console *jsconsole.Console
	l       *lesson.Lesson
	since   int64
}

func join(t *testing.T, sess *session.Session, p api.Principal) *learner {
	t.Helper()
	h := api.HandlerFunc(func(ctx context.Context, req *api.Request) *api.Response {
		return sess.Serve(api.WithPrincipal(ctx, p), req)
	})
	c, err := jsconsole.Start(h, jsconsole.Options{})
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &learner{t: t, p: p, sess: sess, console: c}
}

// call sends a request to the session's lesson routes as the learner.
func (u *learner) call(method, path string, body any, out any) {
	u.t.Helper()
	req := &api.Request{Method: method, Path: path, Header: api.Header{"Content-Type": {"application/json"}}}
	if body != nil {
		req.Body, _ = json.Marshal(body)
	}
	resp := u.sess.Serve(api.WithPrincipal(context.Background(), u.p), req)
	if resp.Status != 200 {
		u.t.Fatalf("%s: %s %s: %d %s", u.p.ID, method, path, resp.Status, resp.Body)
	}
	if out != nil {
		if err := json.Unmarshal(resp.Body, out); err != nil {
			u.t.Fatal(err)
		}
	}
}

// open reads the lesson as the session serves it to the learner (the lab
// reads it again at every step: a revision it maps may have come since).
func (u *learner) open(slug string) {
	u.t.Helper()
	var raw json.RawMessage
	u.call("GET", lesson.LessonsPath+"/"+slug, nil, &raw)
	l, err := lesson.Parse(u.sess.Lessons.Catalog.Lesson(slug).Dir, raw)
	if err != nil {
		u.t.Fatal(err)
	}
	u.l = l
}

// enter starts step n: only what the learner does from now counts.
func (u *learner) enter(n int) {
	u.t.Helper()
	u.open(u.l.Slug)
	u.since = u.verify(n, 1<<62).Seq
}

func (u *learner) verify(n int, since int64) *lesson.VerifyResponse {
	u.t.Helper()
	var out lesson.VerifyResponse
	u.call("POST", fmt.Sprintf("%s/%s/steps/%d/verify", lesson.LessonsPath, u.l.Slug, n), map[string]int64{"since": since}, &out)
	return &out
}

func (u *learner) passes(n int) bool { return u.verify(n, u.since).Passed }

func (u *learner) run(a lesson.Action) {
	u.t.Helper()
	if a.Kind() != "run" {
		u.t.Fatalf("%s: action %s is not a console command", u.l.Slug, a.ID)
	}
	out, status := u.console.RunString(context.Background(), a.Run, a.Stdin, time.Time{})
	if status == 127 || status == 2 {
		u.t.Fatalf("%s: %q: %s", u.p.ID, a.Run, out)
	}
}

// twoStudents joins Alice and Bob to a new class session, each with the
// lesson slug set up and open.
func twoStudents(t *testing.T, slug string) (alice, bob *learner) {
	t.Helper()
	sess := classSession(t)
	alice = join(t, sess, api.Principal{ID: "alice-k3x9q", Name: "Alice", Role: api.RoleStudent})
	bob = join(t, sess, api.Principal{ID: "bob-7hw2d", Name: "Bob", Role: api.RoleStudent})
	for _, u := range []*learner{alice, bob} {
		u.call("POST", lesson.LessonsPath+"/"+slug+"/setup", nil, nil)
		u.open(slug)
	}
	return alice, bob
}

// Two students do a lesson at once on one session, action for action:
// each passes every step on their own names, and neither's work passes or
// breaks the other's step, not even the article's own commands run by one
// of them (which on shared names would put k1 at version 2 under the
// other's check).
func TestTwoStudentsDoALessonAtOnceOnOneSession(t *testing.T) {
	for _, slug := range []string{"etcd-revisions", "resourceversion-is-mod-revision"} {
		t.Run(slug, func(t *testing.T) {
			sess := classSession(t)
			teacher := join(t, sess, api.Principal{ID: "teacher", Role: api.RoleTeacher})
			alice := join(t, sess, api.Principal{ID: "alice-k3x9q", Name: "Alice", Role: api.RoleStudent})
			bob := join(t, sess, api.Principal{ID: "bob-7hw2d", Name: "Bob", Role: api.RoleStudent})
			article := sess.Lessons.Catalog.Lesson(slug)
			// The teacher's push sets the class up (the lesson's settings).
			teacher.call("POST", lesson.LessonsPath+"/"+slug+"/setup", nil, nil)
			teacher.open(slug)
			if string(mustJSON(t, teacher.l.Steps)) != string(mustJSON(t, article.Steps)) {
				t.Errorf("the teacher's lesson is not the article's")
			}
			for _, u := range []*learner{alice, bob} {
				u.call("POST", lesson.LessonsPath+"/"+slug+"/setup", nil, nil)
				u.open(slug)
			}
			for n := 1; n <= len(article.Steps); n++ {
				step := article.Steps[n-1]
				alice.enter(n)
				bob.enter(n)
				a, b := alice.l.Steps[n-1].SolutionActions(), bob.l.Steps[n-1].SolutionActions()
				for i := range a {
					if a[i].Run != step.SolutionActions()[i].Run && a[i].Run == b[i].Run {
						t.Errorf("step %d: alice and bob both run %q", n, a[i].Run)
					}
				}
				// Bob first does all of his step: Alice's is not passed by it.
				for _, x := range b {
					bob.run(x)
				}
				if !bob.passes(n) {
					t.Fatalf("step %d (%s): bob's solution does not pass his step", n, step.ID)
				}
				if alice.passes(n) {
					t.Fatalf("step %d (%s): bob's work passes alice's step", n, step.ID)
				}
				// Bob runs the article's commands as written (a student
				// who copies them from the articles): they touch the
				// article's names, not Alice's.
				for _, x := range step.SolutionActions() {
					bob.run(x)
				}
				for _, x := range a {
					alice.run(x)
				}
				if !alice.passes(n) {
					t.Fatalf("step %d (%s): alice's solution does not pass her step after bob's work", n, step.ID)
				}
				if !bob.passes(n) {
					t.Fatalf("step %d (%s): bob's step no longer passes after alice's work", n, step.ID)
				}
			}
		})
	}
}

// Lesson 11's blind overwrites (kubectl replace --raw to the object's URI)
// are a student's own: the URI and the body name their Deployment and
// CronTab, and what they get passes their step, not another student's.
func TestAStudentsRawReplacesAreTheirOwn(t *testing.T) {
	alice, bob := twoStudents(t, "inside-update")
	for _, n := range []int{1, 5} { // the unconditional update; the 422 "must be specified"
		alice.enter(n)
		bob.enter(n)
		for _, a := range alice.l.Steps[n-1].SolutionActions() {
			alice.run(a)
		}
		if !alice.passes(n) {
			t.Fatalf("step %d: alice's solution does not pass her step", n)
		}
		if bob.passes(n) {
			t.Fatalf("step %d: alice's work passes bob's step", n)
		}
	}
}

// A wrong action does not pass a student's step, and does not take the
// other student's passed step away.
func TestOneStudentsWrongActionPassesNobodysStep(t *testing.T) {
	alice, bob := twoStudents(t, "etcd-revisions")
	for _, u := range []*learner{alice, bob} {
		u.enter(1)
	}
	for _, x := range alice.l.Steps[0].SolutionActions() {
		alice.run(x)
	}
	// Bob's wrong way through step 1 (writing without reading), on his
	// own key and on Alice's name as the article writes it.
	for _, trap := range bob.l.Steps[0].Traps {
		for _, x := range trap.Actions {
			bob.run(x)
		}
	}
	bob.run(lesson.Action{ID: "article", Run: "etcdctl put k1 v1"})
	if bob.passes(1) {
		t.Error("bob's wrong action passes his step")
	}
	if !alice.passes(1) {
		t.Error("bob's wrong action took alice's step away")
	}
}

// What a student's lesson becomes: their own keys in commands and
// predicates, the revision the article quotes mapped to their own key's,
// their own object names in manifests (not the labels and images that
// share the article's word), and the map the lab applies to the texts.
func TestAStudentsLessonUsesTheirOwnNames(t *testing.T) {
	sess := classSession(t)
	alice := join(t, sess, api.Principal{ID: "alice-k3x9q", Name: "Alice", Role: api.RoleStudent})
	alice.call("POST", lesson.LessonsPath+"/etcd-revisions/setup", nil, nil)
	alice.open("etcd-revisions")
	alice.run(alice.l.Steps[0].Actions[0]) // etcdctl put k1-alice-k3x9q v1
	created := sess.Store.Rev()
	alice.open("etcd-revisions")
	get := alice.l.Steps[3].Action("get-old").Run
	if want := fmt.Sprintf("etcdctl get k1-alice-k3x9q --rev=%d -w json", created); get != want {
		t.Errorf("step 4's read in the past is %q, want %q", get, want)
	}
	var class classnames.Class
	if err := json.Unmarshal(alice.l.Class, &class); err != nil || class.Own["k1"] != "k1-alice-k3x9q" || class.Own["6"] != fmt.Sprint(created) {
		t.Errorf("class: %s %v", alice.l.Class, err)
	}

	alice.open("inside-update")
	stdin := alice.l.Steps[0].Actions[0].Stdin
	if run, want := alice.l.Steps[0].Actions[0].Run, "kubectl replace --raw /apis/apps/v1/namespaces/default/deployments/nginx-alice-k3x9q -f -"; run != want {
		t.Errorf("inside-update's first command is %q, want %q", run, want)
	}
	for _, want := range []string{`"name":"nginx-alice-k3x9q"`, `"app":"nginx"`, `"image":"nginx:1.14.2"`, `"name":"nginx"}`} {
		if !strings.Contains(stdin, want) {
			t.Errorf("inside-update's manifest has no %q:\n%s", want, stdin)
		}
	}
	if got := alice.l.Steps[0].Verify; !strings.Contains(string(mustJSON(t, got)), `"name":"nginx-alice-k3x9q"`) {
		t.Errorf("inside-update's first check: %s", mustJSON(t, got))
	}

	alice.open("list-then-watch")
	if a := alice.l.Steps[0].Actions[0]; a.Namespace != "alice-k3x9q" {
		t.Errorf("list-then-watch's list is in %q, want the student's namespace", a.Namespace)
	}

	alice.open("get-and-list")
	tooNew := alice.l.Steps[3].Action("b-future")
	if tooNew == nil {
		t.Fatal("get-and-list has no too-new action")
	}
	if rv, _ := strconv.ParseInt(tooNew.ResourceVersion, 10, 64); rv < sess.Store.Rev()+100000 {
		t.Errorf("get-and-list's too new resourceVersion is %q, at revision %d", tooNew.ResourceVersion, sess.Store.Rev())
	}

	alice.open("lost-update") // shared: the article's names
	if a := alice.l.Steps[0].Actions[0]; a.Name != "nginx" || a.Namespace != "" {
		t.Errorf("lost-update is shared, yet alice gets %+v", a)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// What a class's lesson routes pay for a student's own names on every
// definition, set-up and verify call (a lab checks after every action and
// a class has up to 200 students): the rewritten lesson from the cache,
// and the rewriting itself for a student seen the first time.
func BenchmarkAStudentsLesson(b *testing.B) {
	c, err := lesson.Load(lessons.Definitions())
	if err != nil {
		b.Fatal(err)
	}
	store, err := mvcc.Open(mvcc.NewMemoryBackend(), mvcc.Options{})
	if err != nil {
		b.Fatal(err)
	}
	for _, slug := range []string{"etcd-revisions", "inside-update"} {
		l := c.Lesson(slug)
		b.Run(slug+"/cached", func(b *testing.B) {
			o := classnames.New(store)
			p := api.Principal{ID: "ada-x7k2q", Role: api.RoleStudent}
			o.For(l, p)
			b.ReportAllocs()
			for b.Loop() {
				o.For(l, p)
			}
		})
		b.Run(slug+"/rewritten", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				classnames.New(store).For(l, api.Principal{ID: "ada-x7k2q", Role: api.RoleStudent})
			}
		})
	}
}

// A student's verify call on a class's session, with their own names (the
// server's) and with the article's (Own nil): what the names add to the
// call a lab makes after every action.
func BenchmarkAStudentsVerify(b *testing.B) {
	s, err := session.New("class", mvcc.NewMemoryBackend(), session.Options{Lessons: catalog(b)})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	ctx := api.WithPrincipal(context.Background(), api.Principal{ID: "ada-x7k2q", Role: api.RoleStudent})
	own := classnames.New(s.Store).For
	for _, mode := range []string{"own", "article"} {
		b.Run(mode, func(b *testing.B) {
			s.Lessons.Own = nil
			if mode == "own" {
				s.Lessons.Own = own
			}
			b.ReportAllocs()
			for b.Loop() {
				resp := s.Serve(ctx, &api.Request{Method: "POST", Path: lesson.LessonsPath + "/etcd-revisions/steps/1/verify", Body: []byte(`{"since":0}`)})
				if resp.Status != 200 {
					b.Fatalf("%d %s", resp.Status, resp.Body)
				}
			}
		})
	}
}

// labSubject is the object the lab's client cards and object editor start
// on in lesson l as served: its first set-up object the cards work on (a
// ConfigMap or a Deployment), in the namespace class.own gives the
// student (lessons.js showLessonClients; the lab's rule, written again
// here as the test's oracle). ok is false for a lesson that sets up no
// such object (the lab's demo stays the subject).
func labSubject(t *testing.T, l *lesson.Lesson) (resource, namespace, name string, ok bool) {
	t.Helper()
	if len(l.Setup.Objects) == 0 {
		return "", "", "", false
	}
	var o struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(l.Setup.Objects[0], &o); err != nil {
		t.Fatal(err)
	}
	resource = map[string]string{"ConfigMap": "configmaps", "Deployment": "deployments"}[o.Kind]
	var class classnames.Class
	if len(l.Class) > 0 {
		if err := json.Unmarshal(l.Class, &class); err != nil {
			t.Fatal(err)
		}
	}
	namespace = cmp.Or(class.Own["default"], "default")
	return resource, namespace, o.Metadata.Name, resource != ""
}

// On a class session, a lesson that gives each student their own names
// has the lab's cards and object editor start on the student's own object:
// the one their set-up created for them and their steps' actions use
// (the namespace their list and watch read, the name their commands
// write), never the article's, which every student of the class sees,
// unless the lesson leaves the set-up's objects everyone's.
func TestAStudentsLabStartsOnTheirOwnObject(t *testing.T) {
	sess := classSession(t)
	ada := api.Principal{ID: "ada-mrtsc", Name: "Ada", Role: api.RoleStudent}
	// The student's namespace, as joining the class creates it.
	ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ada.ID)
	if resp := sess.Serve(context.Background(), &api.Request{Method: "POST", Path: "/api/v1/namespaces", Body: []byte(ns),
		Header: api.Header{"Content-Type": {"application/json"}}}); resp.Status != 201 {
		t.Fatalf("namespace: %d %s", resp.Status, resp.Body)
	}
	u := &learner{t: t, p: ada, sess: sess}
	for _, article := range sess.Lessons.Catalog.Lessons() {
		c, err := classnames.Of(article)
		if err != nil || c.Shared != "" {
			continue
		}
		u.call("POST", lesson.LessonsPath+"/"+article.Slug+"/setup", nil, nil)
		u.open(article.Slug)
		resource, namespace, name, ok := labSubject(t, u.l)
		if !ok {
			continue // lessons 1 (etcd keys only) and 2 (step 1 creates its Deployment)
		}
		r, n, m, _ := labSubject(t, article)
		if !c.Namespace && !slices.Contains(c.Names, m) {
			// The set-up's objects are everyone's (lesson 6 gives a
			// student only the d their step creates): the lab starts on
			// the class's.
			continue
		}
		if r == resource && n == namespace && m == name {
			t.Errorf("%s: a student's lab starts on the article's %s %s/%s", article.Slug, resource, namespace, name)
			continue
		}
		path := fmt.Sprintf("/api/v1/namespaces/%s/%s/%s", namespace, resource, name)
		if resource == "deployments" {
			path = fmt.Sprintf("/apis/apps/v1/namespaces/%s/deployments/%s", namespace, name)
		}
		if resp := sess.Serve(api.WithPrincipal(context.Background(), ada), &api.Request{Method: "GET", Path: path}); resp.Status != 200 {
			t.Errorf("%s: the lab starts on %s, which the student's set-up did not create: %d", article.Slug, path, resp.Status)
		}
		used := false
		for _, s := range u.l.Steps {
			for _, a := range s.Actions {
				used = used || usesObject(a, resource, namespace, name)
			}
		}
		if !used {
			t.Errorf("%s: no action of the student's names %s %s/%s, where their lab starts", article.Slug, resource, namespace, name)
		}
	}
}

// usesObject says whether a names the object: a client's operation on it
// or on its namespace's list (a list, a watch), or a command or manifest
// that names it in the namespace default (kubectl's).
func usesObject(a lesson.Action, resource, namespace, name string) bool {
	if a.Client != "" {
		return a.Resource == resource && cmp.Or(a.Namespace, "default") == namespace && (a.Name == "" || a.Name == name)
	}
	words := strings.FieldsFunc(a.Run+"\n"+a.Stdin, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	})
	return namespace == "default" && slices.Contains(words, name)
}
