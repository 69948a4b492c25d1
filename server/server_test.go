package main

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/server/classroom"
)

func get(t *testing.T, url string) answer {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

func TestHealthzAnswersOK(t *testing.T) {
	srv := startServer(t, "")
	if a := get(t, srv.URL+"/healthz"); a.status != 200 || a.body != "ok" {
		t.Fatalf("healthz: %d %q", a.status, a.body)
	}
}

// The sessions named on the command line are open and listed; a session
// created over HTTP is guarded, and listed only to the holder of its token
// (package classroom tests the contract in full).
func TestOpenSessionsAreListedAndCreatedOnesAreGuarded(t *testing.T) {
	srv := startServer(t, tempDB(t), "demo")
	if a := get(t, srv.URL+"/sessions"); a.status != 200 || strings.TrimSpace(a.body) != `[{"id":"demo","url":"/s/demo/","guarded":false,"role":"teacher"}]` {
		t.Fatalf("list: %d %s", a.status, a.body)
	}
	a := post(t, srv.URL+"/sessions", `{"name":"class-1"}`)
	var created classroom.Created
	if err := json.Unmarshal([]byte(a.body), &created); err != nil || a.status != 201 || created.ID != "class-1" || created.TeacherToken == "" {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	if a := get(t, srv.URL+"/sessions"); strings.Contains(a.body, "class-1") {
		t.Fatalf("a guarded session is listed to anyone: %s", a.body)
	}
	if a := post(t, srv.URL+"/s/class-1/v3/kv/range", `{"key":"AA=="}`); a.status != 401 {
		t.Fatalf("guarded session without a token: %d %s", a.status, a.body)
	}
	// A new session is empty at revision 1.
	if a := do(t, "POST", srv.URL+created.URL+"v3/kv/range", created.TeacherToken, `{"key":"AA==","range_end":"AA=="}`); !strings.Contains(a.body, `"revision":"1"`) {
		t.Fatalf("new session: %d %s", a.status, a.body)
	}
}

func TestSessionPathsRoute(t *testing.T) {
	web := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "web "+r.URL.Path) })
	srv, _ := startServerWith(t, "", classroom.Options{}, web, "demo")

	if a := get(t, srv.URL+"/s/demo/"); a.body != "web /s/demo/" {
		t.Fatalf("lab page: %s", a.body)
	}
	for _, p := range []string{"/", "/lab", "/static/js/app.js"} {
		if a := get(t, srv.URL+p); a.body != "web "+p {
			t.Fatalf("%s: %s", p, a.body)
		}
	}
	if a := get(t, srv.URL+"/healthz"); a.body != "ok" {
		t.Fatalf("healthz: %s", a.body)
	}
	// Not the etcd gateway: the Kubernetes API's, which has no such path.
	if a := get(t, srv.URL+"/s/demo/no/such/api"); a.status != 404 {
		t.Fatalf("kube path: %d %q %v", a.status, a.body, a.header)
	}
	if a := post(t, srv.URL+"/s/demo/v3/kv/put", `{"key":"YQ==","value":"Yg=="}`); a.status != 200 {
		t.Fatalf("put: %d %s", a.status, a.body)
	}
	if a := get(t, srv.URL+"/s/nope/api"); a.status != 404 || !strings.Contains(a.body, `"message":"sessions \"nope\" not found"`) {
		t.Fatalf("unknown session: %d %s", a.status, a.body)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Get(srv.URL + "/s/demo")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 301 || resp.Header.Get("Location") != "/s/demo/" {
		t.Fatalf("redirect: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestBodyOverLimitAnswers413InEachProtocol(t *testing.T) {
	srv := startServer(t, "", "big")
	huge := `{"key":"YQ==","value":"` + strings.Repeat("A", 3<<20) + `"}`
	a := post(t, srv.URL+"/s/big/v3/kv/put", huge)
	if a.status != 413 || a.body != `{"error":"etcdserver: request is too large","message":"etcdserver: request is too large","code":3}` {
		t.Fatalf("etcd: %d %s", a.status, a.body)
	}
	a = post(t, srv.URL+"/s/big/api/v1/namespaces/default/configmaps", huge)
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}`
	if a.status != 413 || strings.TrimSpace(a.body) != want || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("kube: %d %s", a.status, a.body)
	}
}

func TestWatchStreamsChunkedOneFlushPerFrame(t *testing.T) {
	srv := startServer(t, "", "w")
	base := srv.URL + "/s/w"
	w := openWatch(t, base+"/v3/watch", `{"create_request":{"key":"YQ==","prev_kv":true}}`)
	if w.resp.Header.Get("Content-Type") != "application/json" || len(w.resp.TransferEncoding) == 0 || w.resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("headers: %v %v", w.resp.Header, w.resp.TransferEncoding)
	}
	if l := w.next(); !strings.Contains(l, `"created":true`) {
		t.Fatalf("created: %s", l)
	}
	post(t, base+"/v3/kv/put", `{"key":"YQ==","value":"MQ=="}`)
	post(t, base+"/v3/kv/put", `{"key":"YQ==","value":"Mg=="}`)
	want := []string{
		`{"result":{"header":{"cluster_id":"ID","member_id":"ID","revision":"2","raft_term":"2"},"events":[{"kv":{"key":"YQ==","create_revision":"2","mod_revision":"2","version":"1","value":"MQ=="}}]}}`,
		`{"result":{"header":{"cluster_id":"ID","member_id":"ID","revision":"3","raft_term":"2"},"events":[{"kv":{"key":"YQ==","create_revision":"2","mod_revision":"3","version":"2","value":"Mg=="},"prev_kv":{"key":"YQ==","create_revision":"2","mod_revision":"2","version":"1","value":"MQ=="}}]}}`,
	}
	for _, wl := range want {
		if l := normalize(w.next()); l != wl {
			t.Fatalf("frame\n got %s\nwant %s", l, wl)
		}
	}
}

func TestWatchOverWebSocketOneMessagePerFrame(t *testing.T) {
	srv := startServer(t, "", "ws")
	base := srv.URL + "/s/ws"
	conn, resp, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(base, "http")+"/v3/watch", nil)
	if err != nil {
		t.Fatalf("dial: %v %v", err, resp)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if err := conn.WriteMessage(websocket.TextMessage, []byte(`{"create_request":{"key":"YQ=="}}`)); err != nil {
		t.Fatal(err)
	}
	_, m, err := conn.ReadMessage()
	if err != nil || !strings.Contains(string(m), `"created":true`) || strings.HasSuffix(string(m), "\n") {
		t.Fatalf("created: %q %v", m, err)
	}
	post(t, base+"/v3/kv/put", `{"key":"YQ==","value":"MQ=="}`)
	_, m, err = conn.ReadMessage()
	if err != nil || !strings.Contains(string(m), `"events":[{"kv":{"key":"YQ=="`) {
		t.Fatalf("event: %q %v", m, err)
	}
	// A further request on the same socket: a second watch, ID 1.
	conn.WriteMessage(websocket.TextMessage, []byte(`{"create_request":{"key":"Yg=="}}`))
	_, m, err = conn.ReadMessage()
	if err != nil || !strings.Contains(string(m), `"watch_id":"1","created":true`) {
		t.Fatalf("second watch: %q %v", m, err)
	}
}

// TestServerShutsDownGracefullyAndKeepsSessions: SIGTERM ends the process
// promptly even with a watch open (which ends with etcd's "transport is
// closing" line), and the sessions (with their data) are there after a
// restart on the same file.
func TestServerShutsDownGracefullyAndKeepsSessions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the server binary")
	}
	bin := buildServer(t)
	db := tempDB(t)
	p := startProcess(t, bin, db, "demo")
	a := post(t, p.URL+"/sessions", `{"name":"later"}`)
	var later classroom.Created
	if err := json.Unmarshal([]byte(a.body), &later); err != nil || a.status != 201 {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	do(t, "POST", p.URL+"/s/later/v3/kv/put", later.TeacherToken, `{"key":"YQ==","value":"MQ=="}`)
	w := openWatch(t, p.URL+"/s/demo/v3/watch", `{"create_request":{"key":"YQ=="}}`)
	w.next()
	p.Signal(syscall.SIGTERM)
	select {
	case <-p.Exited():
	case <-time.After(15 * time.Second):
		t.Fatal("no exit within 15s of SIGTERM")
	}
	if err := p.ExitErr(); err != nil {
		t.Fatalf("exit: %v, want exit code 0", err)
	}
	if l := w.next(); l != `{"error":{"grpc_code":14,"http_code":503,"message":"transport is closing","http_status":"Service Unavailable"}}` {
		t.Fatalf("last watch line: %s", l)
	}
	p2 := startProcess(t, bin, db, "")
	if a := do(t, "GET", p2.URL+"/sessions", later.TeacherToken, ""); !strings.Contains(a.body, `"later"`) || !strings.Contains(a.body, `"demo"`) {
		t.Fatalf("sessions after restart: %s", a.body)
	}
	if a := do(t, "POST", p2.URL+"/s/later/v3/kv/range", later.TeacherToken, `{"key":"YQ=="}`); !strings.Contains(a.body, `"value":"MQ=="`) {
		t.Fatalf("data after restart: %s", a.body)
	}
}

func TestProgressNotifyIntervalIsConfigurable(t *testing.T) {
	var opts classroom.Options
	opts.Session.Gateway.ProgressInterval = 20 * time.Millisecond
	srv, _ := startServerWith(t, "", opts, nil, "p")
	w := openWatch(t, srv.URL+"/s/p/v3/watch", `{"create_request":{"key":"YQ==","progress_notify":true}}`)
	w.next() // created
	want := `{"result":{"header":{"cluster_id":"ID","member_id":"ID","revision":"1","raft_term":"2"}}}`
	if l := normalize(w.next()); l != want {
		t.Fatalf("progress notification %s, want %s", l, want)
	}
}
