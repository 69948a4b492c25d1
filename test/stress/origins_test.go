package stress

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// evil is the origin of a page a student visits, which is not the lab.
const evil = "https://evil.example"

// Attack 9: cross-origin writes. Issue 10 found the etcd gateway and POST
// /sessions taking text/plain bodies (which a page of any site may send
// without asking) and answering Access-Control-Allow-Origin: *, so any
// page could write into or wipe a session. Now only the server's own
// pages (and --allowed-origins) may change state from a browser: others
// get 403 in the protocol's words, WebSockets included, and no answer
// allows every origin.
func TestAttack09CrossOriginWrites(t *testing.T) {
	const workers = 8
	a := startAttack(t, "09 cross-origin writes", Bounds{RssAnon: 64 << 20, Goroutines: 2*workers + 32})
	mustPost(t, attacker, a.Attack+"/v3/kv/put", putRequest("victim", "still here"))
	a.begin()

	type write struct {
		name, method, path, body string
		// refused says whether the answer is the protocol's 403.
		refused func(b []byte) bool
	}
	etcdDenied := func(b []byte) bool { return decodeEtcdError(b).Code == 7 }
	kubeForbidden := func(b []byte) bool { st := decodeStatus(b); return st.Kind == "Status" && st.Reason == "Forbidden" }
	writes := []write{
		{"a put through the gateway", "POST", "/s/attack/v3/kv/put", putRequest("evil", "written"), etcdDenied},
		{"wiping the keyspace", "POST", "/s/attack/v3/kv/deleterange", fmt.Sprintf(`{"key":%q,"range_end":%q}`, b64("\x00"), b64("\x00")), etcdDenied},
		{"a ConfigMap create", "POST", "/s/attack/api/v1/namespaces/default/configmaps",
			`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"evil"},"data":{"a":"1"}}`, kubeForbidden},
		{"a session create", "POST", "/sessions", `{"name":"evil"}`, kubeForbidden},
		{"a session reset", "POST", "/s/attack/rvplay/v1/reset", ``, kubeForbidden},
	}
	hostile := func(w write) (*http.Response, []byte, error) {
		req, err := http.NewRequest(w.method, a.srv.URL+w.path, strings.NewReader(w.body))
		if err != nil {
			return nil, nil, err
		}
		req.Header.Set("Origin", evil)
		req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
		req.Header.Set("Sec-Fetch-Site", "cross-site")
		resp, err := attacker.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp, b, err
	}
	n, errs := repeatFor(scaled(3*time.Second, 15*time.Second), workers, func(_, n int) error {
		w := writes[n%len(writes)]
		resp, b, err := hostile(w)
		switch {
		case err != nil:
			return fmt.Errorf("%s: %v", w.name, err)
		case resp.StatusCode != http.StatusForbidden || !w.refused(b):
			return fmt.Errorf("%s from %s: %d %.200s, want 403 in the protocol's words", w.name, evil, resp.StatusCode, b)
		case resp.Header.Get("Access-Control-Allow-Origin") != "":
			return fmt.Errorf("%s from %s: Access-Control-Allow-Origin %q", w.name, evil, resp.Header.Get("Access-Control-Allow-Origin"))
		}
		return nil
	})
	for _, err := range errs {
		t.Error(err)
	}

	// A WebSocket from the page is refused before it is upgraded.
	c := mustDial(t, a.srv.URL)
	fmt.Fprintf(c, "GET /s/attack/v3/watch HTTP/1.1\r\nHost: rvplay\r\nOrigin: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n", evil)
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("a WebSocket from %s: %v %v, want 403", evil, resp, err)
	}
	c.Close()

	// Nothing was changed: the victim's key is there, the page's are not,
	// and no session was made.
	got, err := readAll(attacker, a.Attack, "")
	if err != nil {
		t.Fatal(err)
	}
	if got["victim"] != "still here" || got["evil"] != "" {
		t.Errorf("after the attack the session holds victim=%q, evil=%q", got["victim"], got["evil"])
	}
	if status, err := get(attacker, a.srv.URL+"/s/evil/api"); err != nil || status != 404 {
		t.Errorf("a session the page asked for answers %d (%v), want 404", status, err)
	}
	// The server's own pages may (the same request, from its origin).
	req, _ := http.NewRequest("POST", a.Attack+"/v3/kv/put", strings.NewReader(putRequest("own", "page")))
	req.Header.Set("Origin", a.srv.URL)
	req.Header.Set("Content-Type", "text/plain;charset=UTF-8")
	if resp, err := attacker.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("the same put from the server's own origin: %v %v, want 200", resp, err)
	} else {
		resp.Body.Close()
	}
	a.note("%d hostile writes (%d kinds) and a WebSocket from %s: every one a 403, nothing changed", n, len(writes), evil)
	a.end()
}
