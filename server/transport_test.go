package main

import (
	"bufio"
	"flag"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/sqlite"
	"github.com/rvplay/rvplay/server/classroom"
)

// startTransportServer serves open sessions through the server's whole
// chain, transport bounds included, with the transport flags given.
func startTransportServer(t *testing.T, args []string, sessions ...string) *httptest.Server {
	t.Helper()
	fs := flag.NewFlagSet("rvplay", flag.ContinueOnError)
	tp := transportFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	var opts classroom.Options
	origins, err := tp.apply(&opts)
	if err != nil {
		t.Fatal(err)
	}
	sdb, err := sqlite.OpenWithOptions(tempDB(t), sqlite.Options{Synchronous: sqlite.SyncNormal})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sdb.Close() })
	reg, err := classroom.New(memoryData{sdb}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		if _, err := reg.CreateOpen(s); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(routes(reg, nil, operations{Wrap: func(h http.Handler) http.Handler { return tp.guard(origins, h) }}))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		reg.Close()
	})
	return srv
}

func postFrom(t *testing.T, url, origin, body string) answer {
	t.Helper()
	r, _ := http.NewRequest("POST", url, strings.NewReader(body))
	r.Header.Set("Content-Type", "text/plain") // what a page can send without a preflight
	if origin != "" {
		r.Header.Set("Origin", origin)
	}
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{resp.StatusCode, resp.Header, string(b)}
}

// No page of another site can create a session, or write into or wipe one;
// curl, kubectl and the server's own pages can.
func TestPagesOfOtherSitesCannotChangeSessions(t *testing.T) {
	srv := startTransportServer(t, []string{"--allowed-origins", "https://lab.example.org"}, "demo")
	evil := "https://evil.example"
	put := `{"key":"YQ==","value":"Yg=="}`
	wipe := `{"key":"AA==","range_end":"AA=="}`
	for _, tc := range []struct {
		path, body, want string
	}{
		{"/sessions", `{"name":"squat"}`, `"reason":"Forbidden"`},
		{"/s/demo/v3/kv/put", put, `"code":7`},
		{"/s/demo/v3/kv/deleterange", wipe, `"code":7`},
		{"/s/demo/api/v1/namespaces/default/configmaps", `{"metadata":{"name":"x"}}`, `"reason":"Forbidden"`},
	} {
		if a := postFrom(t, srv.URL+tc.path, evil, tc.body); a.status != 403 || !strings.Contains(a.body, tc.want) || a.header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("%s from %s: %d %v %s", tc.path, evil, a.status, a.header, a.body)
		}
	}
	if a := get(t, srv.URL+"/sessions"); strings.Contains(a.body, "squat") {
		t.Fatalf("a foreign page created a session: %s", a.body)
	}
	for _, origin := range []string{"", srv.URL, "https://lab.example.org"} {
		if a := postFrom(t, srv.URL+"/s/demo/v3/kv/put", origin, put); a.status != 200 {
			t.Fatalf("put from %q: %d %s", origin, a.status, a.body)
		}
	}
	// The guard answers an allowed origin's CORS, once: the sessions'
	// adapters leave origins to it (httpapi.Options.OriginsGuarded).
	a := postFrom(t, srv.URL+"/s/demo/v3/kv/put", "https://lab.example.org", put)
	if acao, vary := a.header.Values("Access-Control-Allow-Origin"), a.header.Values("Vary"); len(acao) != 1 || acao[0] != "https://lab.example.org" || len(vary) != 1 || vary[0] != "Origin" {
		t.Fatalf("an allowed origin's CORS headers: %v", a.header)
	}
	pre, _ := http.NewRequest("OPTIONS", srv.URL+"/s/demo/api/v1/namespaces/default/configmaps", nil)
	pre.Header.Set("Origin", "https://lab.example.org")
	pre.Header.Set("Access-Control-Request-Method", "POST")
	resp, err := http.DefaultClient.Do(pre)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 204 || !strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("an allowed origin's preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if a := postFrom(t, srv.URL+"/sessions", "", `{"name":"class"}`); a.status != 201 {
		t.Fatalf("curl creating a session: %d %s", a.status, a.body)
	}
}

func TestTransportFlagsSetTheBounds(t *testing.T) {
	srv := startTransportServer(t, []string{"--max-body-bytes", "100", "--max-response-bytes", "200"}, "demo")
	value := strings.Repeat("dmFs", 30) // 90 bytes
	if a := post(t, srv.URL+"/s/demo/v3/kv/put", `{"key":"YQ==","value":"`+value+`"}`); a.status != 413 {
		t.Fatalf("body over --max-body-bytes: %d %s", a.status, a.body)
	}
	for _, k := range []string{"YQ==", "Yg==", "Yw=="} {
		if a := post(t, srv.URL+"/s/demo/v3/kv/put", `{"key":"`+k+`","value":"`+value[:60]+`"}`); a.status != 200 {
			t.Fatalf("put: %d %s", a.status, a.body)
		}
	}
	if a := post(t, srv.URL+"/s/demo/v3/kv/range", `{"key":"AA==","range_end":"AA=="}`); a.status != 429 || !strings.Contains(a.body, "trying to send message larger than max") {
		t.Fatalf("range over --max-response-bytes: %d %s", a.status, a.body)
	}
	for _, args := range [][]string{{"--allowed-origins", "evil.example"}, {"--max-body-bytes", "100", "--body-memory-bytes", "99"}} {
		fs := flag.NewFlagSet("rvplay", flag.ContinueOnError)
		tp := transportFlags(fs)
		fs.Parse(args)
		if _, err := tp.apply(&classroom.Options{}); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// A session's body that does not arrive within --body-timeout is refused
// in the session's protocol: the adapters count on the transport's guard
// for the deadline (Options.BodyDeadlineSet), and get it.
func TestASessionsBodyIsBoundByTheBodyTimeout(t *testing.T) {
	srv := startTransportServer(t, []string{"--body-timeout", "200ms"}, "demo")
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "POST /s/demo/v3/kv/put HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"+`{"key":`)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !strings.Contains(string(body), "not received within 200ms") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}
