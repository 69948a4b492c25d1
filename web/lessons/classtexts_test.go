package lessons_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/url"
	"path"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/lesson/classnames"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/web/lessons"
)

// placeholder is how a text names a revision its lesson's class maps
// ({{6}}): the lab resolves it through the map the session applied to the
// student's commands (lessons.js, ownRevisions).
var placeholder = regexp.MustCompile(`\{\{(\d+)\}\}`)

// storePlaceholder is how a text names a revision that its step's
// answers show: {{store:9}}, the store's revision its last answer shows,
// {{write~1:7}}, the write before the last one, and the other kinds of
// shownRevision. On a server session the lab shows the one the learner's
// own answers showed (lessons.js, seenRevision).
var storePlaceholder = regexp.MustCompile(`\{\{([a-z-]+)(?:~(\d+))?:(\d+)\}\}`)

// prose is a text without its code (fenced blocks and inline code, which
// the lab rewrites as it rewrites commands) and without its placeholders.
func prose(text string) string {
	var b strings.Builder
	fence := false
	for line := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fence = !fence
			continue
		}
		if !fence {
			b.WriteString(line + "\n")
		}
	}
	s := regexp.MustCompile("`[^`]*`").ReplaceAllString(b.String(), " ")
	return storePlaceholder.ReplaceAllString(placeholder.ReplaceAllString(s, " "), " ")
}

// lessonNumber is a number that names a lesson, in each language's way
// ("lesson 6", "第 6 课", "레슨 6"): not a revision.
var lessonNumber = regexp.MustCompile(`(?i)lessons?\s+\d+|第\s*\d+\s*课|레슨\s*\d+`)

// bareNumber finds n as a number of its own in s (not 16, not 6.5, not
// k6; Korean particles follow a number directly: 6이).
func bareNumber(s, n string) bool {
	return regexp.MustCompile(`(^|[^0-9A-Za-z_.-])` + regexp.QuoteMeta(n) + `($|[^0-9A-Za-z_.-])`).MatchString(s)
}

// A revision a lesson's class maps for each student (lesson 1's 6, the
// create_revision of their own k1) is, in every step's prose and in every
// language, a placeholder, so that the prose says the number the student's
// own commands use (etcdctl get k1-<id> --rev=<theirs>), not the
// article's; and every placeholder names a revision its lesson maps, never
// in a title (the lesson list shows titles as they are). The introduction
// describes the new store the article's numbers come from ("your first
// write will be revision 6"), as the class note under it says.
func TestStepTextsNameTheRevisionsAClassMapsByPlaceholder(t *testing.T) {
	files := lessons.Files()
	for _, l := range catalog(t).Lessons() {
		c, err := classnames.Of(l)
		if err != nil {
			t.Fatal(err)
		}
		texts, _ := fs.Glob(files, path.Join(l.Dir, "*", "*.md"))
		for _, name := range texts {
			b, err := fs.ReadFile(files, name)
			if err != nil {
				t.Fatal(err)
			}
			text := string(b)
			for _, m := range placeholder.FindAllStringSubmatch(text, -1) {
				if _, ok := c.Revisions[m[1]]; !ok {
					t.Errorf("%s: %s names no revision its lesson's class maps (%v)", name, m[0], c.Revisions)
				}
			}
			if title, _, _ := strings.Cut(text, "\n"); placeholder.MatchString(title) || storePlaceholder.MatchString(title) {
				t.Errorf("%s: a placeholder in the title %q", name, title)
			}
			if path.Base(name) == "00.md" {
				continue
			}
			p := lessonNumber.ReplaceAllString(prose(text), " ")
			for rev := range c.Revisions {
				for line := range strings.SplitSeq(p, "\n") {
					if bareNumber(line, rev) {
						t.Errorf("%s: the prose says revision %s as the article does, where a student's commands say their own: write {{%s}}\n\t%s", name, rev, rev, strings.TrimSpace(line))
					}
				}
			}
		}
	}
}

// What a student's prose will say: once their k1 exists, the lesson the
// session serves them maps every placeholder of lesson 1's step texts to
// the revision their own commands read at (k1's create_revision), in
// every language.
func TestAStudentsPlaceholdersResolveToTheirCommandsRevision(t *testing.T) {
	sess := classSession(t)
	bob := join(t, sess, api.Principal{ID: "bob-7hw2d", Name: "Bob", Role: api.RoleStudent})
	// Someone else writes first, so that the student's revision is not the article's.
	if _, err := sess.Store.Put(t.Context(), &mvcc.PutRequest{Key: []byte("elsewhere"), Value: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	alice := join(t, sess, api.Principal{ID: "alice-k3x9q", Name: "Alice", Role: api.RoleStudent})
	for _, u := range []*learner{bob, alice} {
		u.call("POST", lesson.LessonsPath+"/etcd-revisions/setup", nil, nil)
		u.open("etcd-revisions")
		u.run(u.l.Steps[0].Actions[0]) // etcdctl put k1-<id> v1
		u.open("etcd-revisions")
	}
	created := sess.Store.Rev()
	var class classnames.Class
	if err := json.Unmarshal(alice.l.Class, &class); err != nil {
		t.Fatal(err)
	}
	rev := class.Own["6"]
	if rev != fmt.Sprint(created) || rev == "6" {
		t.Fatalf("alice's revision 6 is %q, her k1 was created at %d", rev, created)
	}
	if get := alice.l.Steps[3].Action("get-old").Run; !strings.Contains(get, "--rev="+rev+" ") {
		t.Fatalf("alice's read in the past is %q, not at %s", get, rev)
	}
	files := lessons.Files()
	for _, lang := range []string{"en", "zh", "ko"} {
		name := path.Join(alice.l.Dir, lang, "04.md")
		b, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatal(err)
		}
		// The lab's resolution, as a test oracle: each placeholder is
		// the own map's entry.
		shown := placeholder.ReplaceAllStringFunc(string(b), func(m string) string {
			return class.Own[placeholder.FindStringSubmatch(m)[1]]
		})
		if !strings.Contains(shown, "revision "+rev) || bareNumber(lessonNumber.ReplaceAllString(prose(shown), " "), "6") {
			t.Errorf("%s does not say revision %s where alice's command reads it:\n%s", name, rev, shown)
		}
	}
}

// A revision a step's text quotes as a placeholder of the revisions
// its answers show ({{store:8}}, {{bookmark:8}}) is the one they show:
// replayed on a new store as the article's, the revision the step's
// answers showed (what a class's student sees there instead:
// shownRevision) is the text's number, in every language.
func TestARevisionATextQuotesIsTheOneItsStepsAnswersShow(t *testing.T) {
	c := catalog(t)
	files := lessons.Files()
	checked := 0
	for _, l := range c.Lessons() {
		quoted := map[int]map[string][]string{} // step -> placeholder -> texts
		texts, _ := fs.Glob(files, path.Join(l.Dir, "*", "*.md"))
		for _, name := range texts {
			n, err := strconv.Atoi(strings.TrimSuffix(path.Base(name), ".md"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := fs.ReadFile(files, name)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range storePlaceholder.FindAllStringSubmatch(string(b), -1) {
				if n == 0 {
					t.Errorf("%s: %s in an introduction, which no answer precedes", name, m[0])
					continue
				}
				if _, ok := shownBy[m[1]]; !ok {
					t.Errorf("%s: %s is of no kind the lab knows", name, m[0])
					continue
				}
				if quoted[n] == nil {
					quoted[n] = map[string][]string{}
				}
				quoted[n][m[0]] = append(quoted[n][m[0]], name)
			}
		}
		if len(quoted) == 0 {
			continue
		}
		t.Run(l.Slug, func(t *testing.T) {
			r := start(t, c, l)
			for n := 1; n <= len(l.Steps); n++ {
				since := r.LastSeq()
				for _, a := range l.Steps[n-1].SolutionActions() {
					if out, err := r.Do(context.Background(), a); err != nil {
						t.Fatalf("step %d, action %s: %v\n%s", n, a.ID, err, out)
					}
				}
				// As the lab reads the record once the step passed, and as
				// the learner goes on to the next step: a watch's frames
				// arrive after its action returned, and the next step's
				// resume from where the watch got to (lesson 5 step 3's
				// {{sent:9}}) reads them from the record.
				if l.Steps[n-1].Verify != nil {
					if res, err := r.WaitVerified(l, n, since, verifyWait); err != nil || !res.Passed {
						t.Fatalf("step %d: %+v %v", n, res, err)
					}
				}
				if len(quoted[n]) == 0 {
					continue
				}
				// The runner's requests carry no principal: the teacher's.
				mine, _ := r.Session.Record.Since(uint64(since), session.Filter{Principal: api.PrincipalFrom(context.Background()).ID}, 0)
				for p, names := range quoted[n] {
					m := storePlaceholder.FindStringSubmatch(p)
					back, _ := strconv.Atoi(m[2])
					if seen := strconv.FormatInt(shownRevision(mine, m[1], back), 10); seen != m[3] {
						t.Errorf("step %d's answers show %s where %v quote %s", n, seen, names, p)
					}
					checked++
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("no text quotes a revision an answer shows")
	}
}

// storeFigure finds a store's revision an answer shows written bare, in
// any language: the header's (`header.revision` is 7, 显示 7, 은 7) and a
// 504's "current: 8", which read the article's number to a class's
// student beside their own.
var storeFigure = regexp.MustCompile("`header\\.revision`[^`\\n{]{0,12}[0-9]|current: [0-9]")

// The store's revision an answer shows is written as a placeholder
// wherever a text quotes it: the header's, and a 504's current one.
func TestAStoreRevisionAnAnswerShowsIsAPlaceholder(t *testing.T) {
	files := lessons.Files()
	texts, _ := fs.Glob(files, "*/*/*.md")
	for _, name := range texts {
		b, err := fs.ReadFile(files, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range storeFigure.FindAllString(string(b), -1) {
			t.Errorf("%s: %q quotes the store's revision bare: write {{store:N}}", name, m)
		}
	}
}

// shownRevision is the revision that the newest answer of a kind in
// record showed, or with back K the one K answers of that kind before it
// (0: none), as the lab reads it from the session's record on a server
// session (lessons.js, seenRevision; here a test oracle). The session's
// own API and the lab's own panels (a browser's User-Agent) do not count.
func shownRevision(record []session.Exchange, kind string, back int) int64 {
	shown := shownBy[kind]
	for i := len(record) - 1; i >= 0; i-- {
		e := &record[i]
		if e.Protocol == session.ProtocolRvplay || strings.HasPrefix(e.UserAgent, "Mozilla/") {
			continue
		}
		if rev := shown(e); rev > 0 {
			if back == 0 {
				return rev
			}
			back--
		}
	}
	return 0
}

// shownBy reads what an answer showed of each kind of placeholder (0:
// nothing).
var shownBy = map[string]func(e *session.Exchange) int64{
	// The store's revision: an etcd answer's header.revision, a list's
	// resourceVersion, else the store's revision when it was answered;
	// streams show none.
	"store": func(e *session.Exchange) int64 {
		if e.Watch != nil {
			return 0
		}
		if rv := number(e.RV); e.Status < 300 && (e.Protocol == session.ProtocolEtcd || e.Verb() == "list") && rv > 0 {
			return rv
		}
		return e.Revision
	},
	"list": kubeAnswer("list"),
	"get":  kubeAnswer("get"),
	"write": func(e *session.Exchange) int64 {
		switch e.Verb() {
		case "create", "update", "patch", "apply", "delete", "deletecollection", "put", "deleterange", "txn":
			if e.Status < 300 {
				return number(e.RV)
			}
		}
		return 0
	},
	// What a Kubernetes read or watch asked for (a watch's start).
	"sent": func(e *session.Exchange) int64 {
		if v := e.Verb(); e.Protocol == session.ProtocolKubernetes && (v == "get" || v == "list" || v == "watch") {
			return number(e.RVSent)
		}
		return 0
	},
	"last": func(e *session.Exchange) int64 {
		if e.Watch == nil {
			return 0
		}
		return e.Watch.Summary().LastRV
	},
	"bookmark": func(e *session.Exchange) int64 {
		if e.Watch == nil {
			return 0
		}
		return e.Watch.Summary().BookmarkRV
	},
	"initial-events-end": func(e *session.Exchange) int64 {
		if e.Watch == nil {
			return 0
		}
		return e.Watch.Summary().InitialEventsEndRV
	},
}

// kubeAnswer reads a successful Kubernetes answer's resourceVersion for
// verb.
func kubeAnswer(verb string) func(e *session.Exchange) int64 {
	return func(e *session.Exchange) int64 {
		if e.Protocol == session.ProtocolKubernetes && e.Status < 300 && e.Verb() == verb {
			return number(e.RV)
		}
		return 0
	}
}

func number(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// requestLine is a plain block's line that shows a request a step's
// client makes (lesson 5's GET /api/v1/namespaces/default/configmaps?...).
var requestLine = regexp.MustCompile(`^(GET|PUT|POST|PATCH|DELETE) (/[^?\s]*)(?:\?(\S*))?$`)

// codeBlocks are a text's fenced blocks by their language ("" for a
// plain one), each its lines.
func codeBlocks(text string) (blocks []struct{ lang, body string }) {
	lang, in := "", false
	var body strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		if open, ok := strings.CutPrefix(strings.TrimSpace(line), "```"); ok {
			if in {
				blocks = append(blocks, struct{ lang, body string }{lang, body.String()})
				body.Reset()
			}
			lang, in = strings.TrimSpace(open), !in
			continue
		}
		if in {
			body.WriteString(line + "\n")
		}
	}
	return blocks
}

// rewrittenBlocks are the fenced blocks whose words the lab gives a
// student's own names by the word rule of the commands (lessons.js,
// ownText): a console block and a plain one, which shows a request or an
// answer of the student's step. A yaml or json block gets its own
// metadata's only (labels and images share the object's word).
var rewrittenBlocks = map[string]bool{"console": true, "": true, "yaml": true, "json": true}

// A plain block that shows a request of a step (the path R's watch asks
// for, lessons 5 and 8) shows, read with a class's student's names as the
// lab reads it (the word rule of the commands, classnames.Words here as
// the test oracle of lessons.js's ownText), the path and query their own
// client requests in the step, which their watch panel shows: their
// namespace, not the article's default. A block of another language,
// which the lab leaves as the article wrote it, holds no word a
// student's names change.
func TestAPlainBlocksRequestIsTheOneAStudentsStepMakes(t *testing.T) {
	c := catalog(t)
	files := lessons.Files()
	ada := api.Principal{ID: "ada-x7k2q", Name: "Ada", Role: api.RoleStudent}
	ctx := api.WithPrincipal(context.Background(), ada)
	checked := 0
	for _, l := range c.Lessons() {
		class, err := classnames.Of(l)
		if err != nil {
			t.Fatal(err)
		}
		if class.Shared != "" {
			continue
		}
		texts, _ := fs.Glob(files, path.Join(l.Dir, "*", "*.md"))
		requests := map[int][]string{} // step -> request lines
		for _, name := range texts {
			n, _ := strconv.Atoi(strings.TrimSuffix(path.Base(name), ".md"))
			b, err := fs.ReadFile(files, name)
			if err != nil {
				t.Fatal(err)
			}
			for _, block := range codeBlocks(string(b)) {
				if !rewrittenBlocks[block.lang] && classnames.Words(block.body, own(class, ada.ID)) != block.body {
					t.Errorf("%s: a ```%s block names what a student's names change, and the lab shows it as written:\n%s", name, block.lang, block.body)
				}
				for line := range strings.SplitSeq(block.body, "\n") {
					if block.lang == "" && requestLine.MatchString(line) {
						requests[n] = append(requests[n], name+": "+line)
					}
				}
			}
		}
		if len(requests) == 0 {
			continue
		}
		t.Run(l.Slug, func(t *testing.T) {
			r := start(t, c, l)
			owner := classnames.New(r.Session.Store)
			// The student's namespace, as joining the class creates it.
			ns := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q}}`, ada.ID)
			if resp := r.Handler().Serve(ctx, &api.Request{Method: "POST", Path: "/api/v1/namespaces", Body: []byte(ns),
				Header: api.Header{"Content-Type": {"application/json"}}}); resp.Status != 201 {
				t.Fatalf("namespace: %d %s", resp.Status, resp.Body)
			}
			mine := owner.For(l, ada)
			if res := r.Setup(ctx, mine); len(res.Objects) == 0 {
				t.Fatalf("set-up: %+v", res)
			}
			for n := 1; n <= len(l.Steps); n++ {
				since := r.LastSeq()
				mine = owner.For(l, ada) // as the lab reads it at each step
				for _, a := range mine.Steps[n-1].SolutionActions() {
					if out, err := r.Do(ctx, a); err != nil {
						t.Fatalf("step %d, action %s: %v\n%s", n, a.ID, err, out)
					}
				}
				var served classnames.Class
				if err := json.Unmarshal(mine.Class, &served); err != nil {
					t.Fatal(err)
				}
				record, _ := r.Session.Record.Since(uint64(since), session.Filter{}, 0)
				for _, req := range requests[n] {
					name, line, _ := strings.Cut(req, ": ")
					m := requestLine.FindStringSubmatch(classnames.Words(line, served.Own))
					if article := requestLine.FindStringSubmatch(line)[2]; strings.Contains(article, "/namespaces/") && article == m[2] {
						t.Errorf("%s: a student reads the article's path %s", name, article)
					}
					if !requested(record, m[1], m[2], m[3]) {
						t.Errorf("%s: %s %s?%s is no request of a student's step %d:\n%s", name, m[1], m[2], m[3], n, paths(record))
					}
					checked++
				}
			}
		})
	}
	if checked == 0 {
		t.Fatal("no plain block shows a request")
	}
}

// own is the map a student's names make of class's, with no revision
// mapped (none is a word of a block's names).
func own(class *classnames.Class, id string) map[string]string {
	m := map[string]string{}
	for _, n := range class.Names {
		m[n] = n + classnames.Suffix(id)
	}
	if class.Namespace {
		m["default"] = id
	}
	return m
}

// requested says whether record holds a request of method to path with
// every parameter of query: a placeholder's value is any, and a boolean
// is any of its spellings (the article's watch=1, the lab's watch=true:
// the API server reads both as true).
func requested(record []session.Exchange, method, path, query string) bool {
	want, _ := url.ParseQuery(storePlaceholder.ReplaceAllString(query, "*"))
	same := func(got, want string) bool {
		g, errG := strconv.ParseBool(got)
		w, errW := strconv.ParseBool(want)
		return got == want || want == "*" && got != "" || errG == nil && errW == nil && g == w
	}
	for _, e := range record {
		if e.Method != method || e.Path != path {
			continue
		}
		all := true
		for k, vs := range want {
			if !same(e.Query.Get(k), vs[0]) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

func paths(record []session.Exchange) string {
	var b strings.Builder
	for _, e := range record {
		fmt.Fprintf(&b, "\t%s %s?%s\n", e.Method, e.Path, e.Query.Encode())
	}
	return b.String()
}
