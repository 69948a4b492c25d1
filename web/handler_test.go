package web

import (
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

func get(t *testing.T, h http.Handler, path string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

func body(t *testing.T, r *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLandingOffersOfflineLabAndServerSessions(t *testing.T) {
	r := get(t, Handler(), "/")
	if r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	b := body(t, r)
	for _, id := range []string{`data-testid="landing"`, `data-testid="start-offline"`, `href="/lab"`, `data-testid="session-form"`, `data-testid="session-list"`} {
		if !strings.Contains(b, id) {
			t.Errorf("landing lacks %s", id)
		}
	}
}

func TestOfflineLabLoadsTheEngineInThePage(t *testing.T) {
	b := body(t, get(t, Handler(), "/lab"))
	for _, want := range []string{`"mode":"offline"`, `/static/wasm/wasm_exec.js`, `/static/js/lab.js`, `data-testid="client-a-put"`,
		`data-testid="reflector-start"`, `data-testid="etcd-keys"`, `data-testid="time-travel"`, `data-testid="editor"`, `data-testid="console-input"`, `data-testid="help-overlay"`} {
		if !strings.Contains(b, want) {
			t.Errorf("lab lacks %s", want)
		}
	}
}

func TestSessionLabTalksToTheServerSession(t *testing.T) {
	b := body(t, get(t, Handler(), "/s/demo/"))
	if !strings.Contains(b, `"mode":"server","session":"demo","apiBase":"/s/demo"`) {
		t.Errorf("session lab config missing: %s", b[:200])
	}
	// The engine loads on a server session too: the lab's Go clients run
	// in it and talk to the server.
	if !strings.Contains(b, "wasm_exec.js") {
		t.Error("the lab's Go clients need the WebAssembly engine on a server session")
	}
}

// On a server whose sessions live on an etcd cluster (--store etcd://) a
// session's revisions are the cluster's, shared with every other session:
// the lab's configuration says so (its lessons add a note to the steps
// that compare revision numbers) and the revisions panel shows the note;
// on SQLite and offline, neither.
func TestALabOnAnEtcdClusterSaysItsRevisionsAreTheClusters(t *testing.T) {
	etcd := body(t, get(t, Server{Store: StoreEtcd}.Handler(), "/s/demo/"))
	for _, want := range []string{`"store":"etcd"`, `data-testid="store-note"`, `data-i18n="store.etcd"`, t_(t, "store.etcd")} {
		if !strings.Contains(etcd, want) {
			t.Errorf("the lab of a session on etcd lacks %s", want)
		}
	}
	for path, b := range map[string]string{
		"/s/demo/ on SQLite":    body(t, get(t, Handler(), "/s/demo/")),
		"/lab":                  body(t, get(t, Handler(), "/lab")),
		"/lab on etcd's server": body(t, get(t, Server{Store: StoreEtcd}.Handler(), "/lab")),
	} {
		if strings.Contains(b, `"store":`) || strings.Contains(b, `data-testid="store-note"`) {
			t.Errorf("%s says its revisions are an etcd cluster's", path)
		}
	}
}

// t_ is a page string's English text, HTML-escaped as the page shows it.
func t_(tb testing.TB, key string) string {
	tb.Helper()
	s := t(key)
	if s == "" || s == key {
		tb.Fatalf("no English text for %s", key)
	}
	return html.EscapeString(s)
}

func TestSessionNameIsEscapedInThePage(t *testing.T) {
	b := body(t, get(t, Handler(), "/s/%3Cscript%3E/"))
	if strings.Contains(b, "<script>alert") || strings.Contains(b, "session <script>") {
		t.Fatal("session name inserted unescaped")
	}
}

func TestOnlyExactPagePathsAreServed(t *testing.T) {
	for _, p := range []string{"/nope", "/s/demo/extra", "/lab/x"} {
		if r := get(t, Handler(), p); r.StatusCode != 404 {
			t.Errorf("%s: status %d, want 404", p, r.StatusCode)
		}
	}
}

func TestStaticAssetsHaveTheirContentTypes(t *testing.T) {
	for path, ct := range map[string]string{
		"/static/js/lab.js": "text/javascript; charset=utf-8", "/static/css/lab.css": "text/css; charset=utf-8",
		"/static/vendor/js-yaml-4.1.0.mjs": "text/javascript; charset=utf-8",
	} {
		r := get(t, Handler(), path)
		if r.StatusCode != 200 || r.Header.Get("Content-Type") != ct {
			t.Errorf("%s: %d %q", path, r.StatusCode, r.Header.Get("Content-Type"))
		}
	}
}

// The precompressed variants are chosen by Accept-Encoding: brotli first,
// then gzip, else the raw file; the type stays application/wasm.
func TestWasmIsServedPrecompressedByNegotiation(t *testing.T) {
	a := &assetServer{fsys: fstest.MapFS{
		"wasm/rvplay.wasm":    {Data: []byte("raw")},
		"wasm/rvplay.wasm.gz": {Data: []byte("gz")},
		"wasm/rvplay.wasm.br": {Data: []byte("br")},
	}}
	h := http.StripPrefix("/static/", a)
	for _, c := range []struct{ accept, encoding, body string }{
		{"gzip, deflate, br", "br", "br"},
		{"gzip", "gzip", "gz"},
		{"br;q=0, gzip", "gzip", "gz"},
		{"", "", "raw"},
		{"identity", "", "raw"},
		{"*", "br", "br"},
	} {
		r := get(t, h, "/static/wasm/rvplay.wasm", "Accept-Encoding", c.accept)
		if got := r.Header.Get("Content-Encoding"); got != c.encoding {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q, want %q", c.accept, got, c.encoding)
		}
		if got := body(t, r); got != c.body {
			t.Errorf("Accept-Encoding %q: body %q, want %q", c.accept, got, c.body)
		}
		if r.Header.Get("Content-Type") != "application/wasm" || !strings.Contains(r.Header.Get("Vary"), "Accept-Encoding") {
			t.Errorf("headers %v", r.Header)
		}
	}
	if r := get(t, h, "/static/wasm/rvplay.wasm.gz"); r.StatusCode != 404 {
		t.Errorf("compressed variants must not be addressable: %d", r.StatusCode)
	}
}

func TestAssetsRevalidateWithETag(t *testing.T) {
	h := Handler()
	r := get(t, h, "/static/js/lab.js")
	tag := r.Header.Get("ETag")
	if tag == "" {
		t.Fatal("no ETag")
	}
	if r2 := get(t, h, "/static/js/lab.js", "If-None-Match", tag); r2.StatusCode != 304 {
		t.Fatalf("conditional GET: %d", r2.StatusCode)
	}
}

// The lessons' texts are data the lab fetches, in every language.
func TestLessonTextsAreServedAsStaticFiles(t *testing.T) {
	r := get(t, Handler(), "/static/lessons/01-etcd-revisions/en/01.md")
	if r.StatusCode != 200 || r.Header.Get("Content-Type") != "text/markdown; charset=utf-8" {
		t.Fatalf("status %d, %q", r.StatusCode, r.Header.Get("Content-Type"))
	}
	if b := body(t, r); !strings.HasPrefix(b, "# ") {
		t.Errorf("a step text starts with its title: %.40q", b)
	}
	if r := get(t, Handler(), "/static/lessons/01-etcd-revisions/lesson.json"); r.StatusCode != 200 {
		t.Errorf("definition: %d", r.StatusCode)
	}
}

// The page lists the lessons, so that the lab fetches them while the
// engine loads.
func TestTheLabListsTheLessons(t *testing.T) {
	idx := LessonIndex()
	if len(idx) < 12 || idx[0].Dir != "01-etcd-revisions" || idx[0].Slug != "etcd-revisions" || idx[0].Number != 1 {
		t.Fatalf("lesson index: %+v", idx)
	}
	for i, l := range idx[1:] {
		if l.Number <= idx[i].Number {
			t.Errorf("lessons out of order: %v after %v", l, idx[i])
		}
	}
	if idx[0].Steps != 5 || idx[0].Titles["en"] != "etcd revisions" || idx[0].Titles["zh"] == "" || idx[0].Titles["ko"] == "" {
		t.Errorf("lesson 1: %d steps, titles %v", idx[0].Steps, idx[0].Titles)
	}
	if b := body(t, get(t, Handler(), "/lab")); !strings.Contains(b, `"lessons":[{"dir":"01-etcd-revisions","number":1,"slug":"etcd-revisions","steps":5,"titles":{`) {
		t.Error("the lab's configuration lacks the lessons")
	}
}

// The teacher's dashboard of a class: its configuration (the session's
// API, the lessons for their titles), its panels and controls, and its own
// module and stylesheet. Who may see it is the classroom's to decide.
func TestTheDashboardIsThePageOfAClass(t *testing.T) {
	r := get(t, Handler(), "/s/class-1/dashboard")
	if r.StatusCode != 200 {
		t.Fatalf("status %d", r.StatusCode)
	}
	b := body(t, r)
	for _, want := range []string{`"session":"class-1","apiBase":"/s/class-1","labHref":"/s/class-1/"`, `"slug":"etcd-revisions"`,
		`/static/js/dashboard.js`, `/static/css/dashboard.css`, `data-testid="students"`, `data-testid="lessons-summary"`,
		`data-testid="push-form"`, `data-testid="dash-compact"`, `data-testid="dash-reset"`, `data-testid="dash-settings-open"`,
		`data-testid="dash-export-csv"`, `data-testid="dash-end"`, `data-testid="exchanges-dialog"`, `data-i18n="dash.students"`} {
		if !strings.Contains(b, want) {
			t.Errorf("the dashboard lacks %s", want)
		}
	}
	if b := body(t, get(t, Handler(), "/s/%3Cscript%3E/dashboard")); strings.Contains(b, "<script>alert") || strings.Contains(b, "session <script>") {
		t.Fatal("session name inserted unescaped")
	}
}
