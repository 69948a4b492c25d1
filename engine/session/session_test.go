package session

import (
	"context"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
)

func open(t *testing.T, name string, opts Options) *Session {
	t.Helper()
	s, err := New(name, mvcc.NewMemoryBackend(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func serve(s *Session, method, path, body string) *api.Response {
	return s.Serve(context.Background(), &api.Request{Method: method, Path: path, Body: []byte(body)})
}

func TestEtcdPathsGoToTheGatewayAndTheRestToKube(t *testing.T) {
	var kubeSaw []string
	s := open(t, "demo", Options{Kube: func(name string, store mvcc.KV) api.Handler {
		return api.HandlerFunc(func(_ context.Context, r *api.Request) *api.Response {
			kubeSaw = append(kubeSaw, r.Path)
			return &api.Response{Status: 200}
		})
	}})
	if r := serve(s, "POST", "/v3/kv/put", `{"key":"YQ==","value":"Yg=="}`); r.Status != 200 || !strings.Contains(string(r.Body), `"revision":"2"`) {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	if r := serve(s, "POST", "/v3/nope", `{}`); r.Status != 404 || string(r.Body) != "Not Found\n" {
		t.Fatalf("unknown gateway path: %d %q", r.Status, r.Body)
	}
	serve(s, "GET", "/api/v1/namespaces", "")
	serve(s, "GET", "/v3x", "")
	if strings.Join(kubeSaw, ",") != "/api/v1/namespaces,/v3x" {
		t.Fatalf("kube saw %v", kubeSaw)
	}
}

func TestWithoutKubeHandlerOtherPathsAnswer404PageNotFound(t *testing.T) {
	s := open(t, "demo", Options{Kube: func(string, mvcc.KV) api.Handler { return nil }})
	r := serve(s, "GET", "/api/v1/pods", "")
	if r.Status != 404 || string(r.Body) != "404 page not found\n" || r.Header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Fatalf("%d %q %v", r.Status, r.Body, r.Header)
	}
}

func TestClusterAndMemberIDsAreStablePerSessionName(t *testing.T) {
	header := func(name string) string {
		s := open(t, name, Options{})
		b := string(serve(s, "POST", "/v3/kv/range", `{"key":"YQ=="}`).Body)
		return b[:strings.Index(b, `"revision"`)]
	}
	a1, a2, b := header("a"), header("a"), header("b")
	if a1 != a2 || a1 == b {
		t.Fatalf("headers: %s / %s / %s", a1, a2, b)
	}
}

func TestLessonRoutesAreServedWhenTheSessionHasLessons(t *testing.T) {
	def := `{"slug":"demo","steps":[{"id":"put","actions":[{"id":"p","run":"etcdctl put a b"}],"solution":["p"],"verify":{"key":{"key":"a","exists":true}}}]}`
	c, err := lesson.Load(fstest.MapFS{"01-demo/lesson.json": {Data: []byte(def)}})
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, "demo", Options{Lessons: c})
	verify := func() string {
		r := serve(s, "POST", "/rvplay/v1/lessons/demo/steps/1/verify", `{}`)
		return strconv.Itoa(r.Status) + " " + string(r.Body)
	}
	if got := verify(); !strings.HasPrefix(got, `200 {"lesson":"demo","step":1,"passed":false`) {
		t.Fatalf("before the put: %s", got)
	}
	serve(s, "POST", "/v3/kv/put", `{"key":"YQ==","value":"Yg=="}`)
	if got := verify(); !strings.HasPrefix(got, `200 {"lesson":"demo","step":1,"passed":true`) {
		t.Fatalf("after the put: %s", got)
	}
	if r := serve(open(t, "bare", Options{}), "GET", "/rvplay/v1/lessons", ""); r.Status != 404 {
		t.Fatalf("a session without lessons: %d %s", r.Status, r.Body)
	}
}

// The WebAssembly build links this package: it must stay free of net/http,
// SQLite, syscall/js and websocket libraries.
func TestSessionLinksNoTransportOrSQLite(t *testing.T) {
	if runtime.GOOS == "js" {
		t.Skip("needs the go command, which WebAssembly tests cannot run")
	}
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"net/http", "modernc.org/sqlite", "syscall/js", "gorilla/websocket", "engine/sqlite"} {
			if strings.Contains(dep, bad) {
				t.Errorf("engine/session depends on %s", dep)
			}
		}
	}
}

// TestANewSessionIsEmptyUntilItsFirstKubernetesRequest holds what the
// README says a new session is: an empty store at revision 1, which
// etcd's API leaves without namespaces; the first Kubernetes request (here
// /version) writes kube-apiserver's four namespaces at the next four
// revisions before it is answered.
func TestANewSessionIsEmptyUntilItsFirstKubernetesRequest(t *testing.T) {
	s := open(t, "demo", Options{})
	every := `{"key":"AA==","range_end":"AA==","keys_only":true}`
	if r := serve(s, "POST", "/v3/kv/range", every); r.Status != 200 || !strings.Contains(string(r.Body), `"revision":"1"`) || strings.Contains(string(r.Body), `"kvs"`) {
		t.Fatalf("a new session: %d %s, want no key at revision 1", r.Status, r.Body)
	}
	if r := serve(s, "POST", "/v3/kv/put", `{"key":"Zm9v","value":"YmFy"}`); !strings.Contains(string(r.Body), `"revision":"2"`) {
		t.Fatalf("put foo: %s", r.Body)
	}
	if r := serve(s, "POST", "/v3/kv/range", every); strings.Count(string(r.Body), `"key"`) != 1 {
		t.Fatalf("after an etcd put: %s, want foo alone", r.Body)
	}
	if r := serve(s, "GET", "/version", ""); r.Status != 200 {
		t.Fatalf("/version: %d %s", r.Status, r.Body)
	}
	r, err := s.Store.Range(context.Background(), &mvcc.RangeRequest{Key: []byte("/registry/namespaces/"), RangeEnd: []byte("/registry/namespaces0")})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, kv := range r.Kvs {
		got = append(got, strings.TrimPrefix(string(kv.Key), "/registry/namespaces/")+"@"+strconv.FormatInt(kv.CreateRevision, 10))
	}
	if want := "default@3 kube-node-lease@6 kube-public@5 kube-system@4"; strings.Join(got, " ") != want || r.Header.Revision != 6 {
		t.Fatalf("after the first Kubernetes request: %v at revision %d, want %s at 6", got, r.Header.Revision, want)
	}
}
