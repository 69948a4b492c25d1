package httpapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/session"
)

func TestOriginsPermitWhatNoOtherSitesPageSent(t *testing.T) {
	o, err := NewOrigins([]string{"https://lab.example.org", " http://127.0.0.1:3000 "})
	if err != nil {
		t.Fatal(err)
	}
	req := func(method string, h ...string) *http.Request {
		r := httptest.NewRequest(method, "http://rvplay.local:8080/s/demo/v3/kv/put", nil)
		for i := 0; i < len(h); i += 2 {
			r.Header.Set(h[i], h[i+1])
		}
		return r
	}
	for _, tc := range []struct {
		name string
		r    *http.Request
		want bool
	}{
		{"curl, kubectl (no Origin)", req("POST"), true},
		{"the server's own page", req("POST", "Origin", "http://rvplay.local:8080"), true},
		{"the browser vouches for the page", req("DELETE", "Origin", "http://proxy.example", "Sec-Fetch-Site", "same-origin"), true},
		{"an allowed origin", req("PUT", "Origin", "https://LAB.example.org"), true},
		{"another allowed origin", req("POST", "Origin", "http://127.0.0.1:3000"), true},
		{"a reading GET from anywhere", req("GET", "Origin", "https://evil.example"), true},
		{"a preflight from anywhere", req("OPTIONS", "Origin", "https://evil.example"), true},
		{"a text/plain POST from another site", req("POST", "Origin", "https://evil.example", "Content-Type", "text/plain"), false},
		{"a PATCH from another port", req("PATCH", "Origin", "http://rvplay.local:9999"), false},
		{"an allowed host on another scheme", req("POST", "Origin", "http://lab.example.org"), false},
		{"a sandboxed page", req("POST", "Origin", "null"), false},
		{"a cross-site page without Origin", req("POST", "Sec-Fetch-Site", "cross-site"), false},
		{"a same-site page without Origin", req("POST", "Sec-Fetch-Site", "same-site"), false},
		{"a WebSocket from another site", req("GET", "Origin", "https://evil.example", "Connection", "Upgrade", "Upgrade", "websocket"), false},
		{"a WebSocket from the server's page", req("GET", "Origin", "http://rvplay.local:8080", "Connection", "Upgrade", "Upgrade", "websocket"), true},
	} {
		if got := o.Permit(tc.r); got != tc.want {
			t.Errorf("%s: permitted %v", tc.name, got)
		}
	}
	for _, bad := range []string{"lab.example.org", "https://lab.example.org/path", "ftp://x", "https://"} {
		if _, err := NewOrigins([]string{bad}); err == nil {
			t.Errorf("NewOrigins accepted %q", bad)
		}
	}
}

// Issue 10's probe: a page on any site could write into a session with a
// text/plain POST (no preflight) and read the answer (a wildcard CORS
// header). Now such a write is refused in the protocol's words before the
// session sees it, and no answer carries a wildcard.
func TestCrossOriginWritesAreRefusedInTheProtocolsWords(t *testing.T) {
	h := &counting{}
	o, _ := NewOrigins([]string{"https://lab.example.org"})
	srv := httptest.NewServer(Handler(h, Options{Origins: o, Refuse: session.Refuse}))
	defer srv.Close()
	send := func(path, origin string) (*http.Response, string) {
		t.Helper()
		r, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(`{"key":"YQ==","value":"Yg=="}`))
		r.Header.Set("Content-Type", "text/plain")
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if acao := resp.Header.Values("Access-Control-Allow-Origin"); len(acao) > 0 && (acao[0] == "*" || acao[0] != origin) {
			t.Fatalf("%s from %q: Access-Control-Allow-Origin %q", path, origin, acao)
		}
		return resp, string(b)
	}
	resp, body := send("/v3/kv/put", "https://evil.example")
	if code, msg := etcdError(t, body); resp.StatusCode != 403 || code != 7 || !strings.Contains(msg, `"https://evil.example"`) {
		t.Fatalf("etcd: %d %s", resp.StatusCode, body)
	}
	resp, body = send("/api/v1/namespaces/default/configmaps", "https://evil.example")
	if resp.StatusCode != 403 || !strings.Contains(body, `"reason":"Forbidden"`) || !strings.Contains(body, `"code":403`) {
		t.Fatalf("kube: %d %s", resp.StatusCode, body)
	}
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("the session saw %d cross-origin writes", n)
	}
	for _, origin := range []string{"", srv.URL, "https://lab.example.org"} {
		if resp, body := send("/v3/kv/put", origin); resp.StatusCode != 200 {
			t.Fatalf("from %q: %d %s", origin, resp.StatusCode, body)
		}
	}
	resp, _ = send("/v3/kv/put", "https://lab.example.org")
	if resp.Header.Get("Access-Control-Allow-Origin") != "https://lab.example.org" || resp.Header.Get("Vary") != "Origin" {
		t.Fatalf("allowed origin's CORS headers: %v", resp.Header)
	}
	// A preflight from an allowed origin is answered as kube-apiserver's
	// CORS filter does; from another, the browser gets nothing to go on.
	pre := func(origin string) *http.Response {
		r, _ := http.NewRequest("OPTIONS", srv.URL+"/api/v1/namespaces/default/configmaps", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "POST")
		r.Header.Set("Access-Control-Request-Headers", "content-type")
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	if resp := pre("https://lab.example.org"); resp.StatusCode != 204 || resp.Header.Get("Access-Control-Allow-Headers") != "content-type" ||
		!strings.Contains(resp.Header.Get("Access-Control-Allow-Methods"), "POST") {
		t.Fatalf("allowed preflight: %d %v", resp.StatusCode, resp.Header)
	}
	if resp := pre("https://evil.example"); resp.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("foreign preflight: %d %v", resp.StatusCode, resp.Header)
	}
}

func TestCrossOriginWebSocketsAreRefused(t *testing.T) {
	srv := httptest.NewServer(Handler(streaming(newChanStream()), Options{Refuse: session.Refuse}))
	defer srv.Close()
	_, resp, err := websocket.DefaultDialer.Dial(wsURL(srv), http.Header{"Origin": {"https://evil.example"}})
	if err == nil || resp == nil || resp.StatusCode != 403 {
		t.Fatalf("foreign WebSocket: %v %v", err, resp)
	}
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), http.Header{"Origin": {srv.URL}})
	if err != nil {
		t.Fatalf("own page's WebSocket: %v", err)
	}
	conn.Close()
}
