package classroom

import (
	"encoding/base64"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/server/ratelimit"
)

const (
	kube429 = `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Too many requests, please try again later.","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}`
	etcd429 = `{"error":"etcdserver: too many requests","message":"etcdserver: too many requests","code":8}`
)

// The rate limit counts each person of a guarded session on their own, so
// that a class behind one address does not share one budget; requests
// without a valid token (joining, creating, guessing) count against their
// address. Past it: 429 with Retry-After, in the protocol of the path.
func TestAClientOverItsRateGets429InItsProtocol(t *testing.T) {
	e := &env{t: t, path: filepath.Join(t.TempDir(), "rvplay.db"), clock: clock.NewFake(t0)}
	limits := ratelimit.New(ratelimit.Options{Rate: 1, Burst: 3, Now: e.clock.Now})
	clients := map[string]int{}
	e.admit = func(r *http.Request, client string) (time.Duration, bool) {
		clients[client]++
		return limits.Allow(client)
	}
	e.open(Options{})
	class := e.create("class")      // the address: 1
	ada := e.join(class, "Ada")     // 2
	grace := e.join(class, "Grace") // 3
	must(t, "a fourth join from the address", e.do("POST", "/s/class/join", cred{}, `{"code":"`+class.JoinCode+`","name":"Eve"}`),
		429, kube429)

	cms := "/s/class/api/v1/namespaces/default/configmaps"
	for i := range 3 {
		must(t, "ada's request "+string(rune('1'+i)), e.do("GET", cms, cred{bearer: ada.Token}, ""), 200)
	}
	a := e.do("GET", cms, cred{bearer: ada.Token}, "")
	must(t, "ada's fourth request", a, 429, kube429)
	if a.header.Get("Retry-After") != "1" || a.header.Get("Content-Type") != "application/json" {
		t.Fatalf("ada's 429 headers: %v", a.header)
	}
	a = e.do("POST", "/s/class/v3/kv/range", cred{cookie: ada.Token}, `{"key":"eA=="}`)
	must(t, "ada's etcd request, by cookie", a, 429, etcd429)
	if a.header.Get("Retry-After") != "1" {
		t.Fatalf("etcd 429 headers: %v", a.header)
	}
	// Grace, at the same address, has her own budget.
	must(t, "grace", e.do("GET", cms, cred{bearer: grace.Token}, ""), 200)
	// Without a token, a request counts against the address: spent.
	must(t, "anonymous", e.do("GET", cms, cred{}, ""), 429, kube429)
	must(t, "an unknown token", e.do("GET", cms, cred{bearer: "not-a-token"}, ""), 429, kube429)

	e.clock.Step(time.Second)
	must(t, "ada a second later", e.do("GET", cms, cred{bearer: ada.Token}, ""), 200)
	must(t, "anonymous a second later", e.do("GET", cms, cred{}, ""), 401, `"reason":"Unauthorized"`)

	for _, c := range []string{"class/" + ada.ID, "class/" + grace.ID, "127.0.0.1"} {
		if clients[c] == 0 {
			t.Errorf("no request counted against client %q (clients %v)", c, clients)
		}
	}
	for c := range clients {
		if strings.Contains(c, ada.Token) || strings.Contains(c, class.TeacherToken) {
			t.Fatalf("a client is keyed by a token: %q", c)
		}
	}
}

// A browser cannot set Authorization on a WebSocket; it sends its token as
// kube-apiserver's bearer subprotocol, beside the subprotocol it wants
// echoed (never the token's).
func TestAWebSocketMayCarryItsTokenAsASubprotocol(t *testing.T) {
	e := newEnv(t, Options{})
	class := e.create("class")
	ada := e.join(class, "Ada")
	wsURL := "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/s/class/api/v1/namespaces/default/configmaps?watch=true"
	bearer := func(token string) string {
		return BearerProtocolPrefix + base64.RawURLEncoding.EncodeToString([]byte(token))
	}
	dial := func(protocols ...string) (*websocket.Conn, *http.Response, error) {
		d := websocket.Dialer{Subprotocols: protocols}
		return d.Dial(wsURL, nil)
	}
	for _, tc := range []struct {
		what      string
		protocols []string
	}{
		{"no token", []string{"rvplay.watch"}},
		{"an unknown token", []string{bearer("not-a-token"), "rvplay.watch"}},
		{"another session's token", []string{bearer(e.create("other").TeacherToken), "rvplay.watch"}},
		{"a token alone, nothing to echo", []string{bearer(ada.Token)}},
		{"two tokens", []string{bearer(ada.Token), bearer(class.TeacherToken), "rvplay.watch"}},
		{"a token not in base64url", []string{BearerProtocolPrefix + "a+b/c=", "rvplay.watch"}},
	} {
		c, resp, err := dial(tc.protocols...)
		if err == nil {
			c.Close()
			t.Fatalf("%s: connected", tc.what)
		}
		if resp == nil || resp.StatusCode != 401 {
			t.Fatalf("%s: %v %v, want 401", tc.what, resp, err)
		}
	}
	for _, token := range []string{ada.Token, class.TeacherToken} {
		c, resp, err := dial(bearer(token), "rvplay.watch")
		if err != nil {
			t.Fatalf("with the token: %v %v", err, resp)
		}
		if got := resp.Header.Values("Sec-Websocket-Protocol"); len(got) != 1 || got[0] != "rvplay.watch" {
			t.Fatalf("echoed subprotocols %q, want only rvplay.watch", got)
		}
		c.Close()
	}
	c, _, err := dial(bearer(ada.Token), "rvplay.watch")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e.do("POST", "/s/class/api/v1/namespaces/default/configmaps", cred{bearer: ada.Token}, `{"metadata":{"name":"seen"}}`)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, m, err := c.ReadMessage(); err != nil || !strings.Contains(string(m), `"name":"seen"`) {
		t.Fatalf("event: %s %v", m, err)
	}
}
