package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/session"
)

// rawRequest sends head (a request line and headers, without the blank
// line) and body over a plain TCP connection, as a client that may cut its
// body short or never finish it does.
func rawRequest(t *testing.T, srv *httptest.Server, head, body string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	// A server that refuses a body stops reading it: the write then fails,
	// and the answer is still there to read.
	io.WriteString(c, head+"\r\nHost: "+srv.Listener.Addr().String()+"\r\n\r\n"+body)
	return c
}

// readAnswer reads the answer on c; a server that does not answer within a
// generous time fails the test.
func readAnswer(t *testing.T, c net.Conn) (*http.Response, string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// counting is a handler that counts its calls and answers 200.
type counting struct{ calls atomic.Int64 }

func (h *counting) Serve(context.Context, *api.Request) *api.Response {
	h.calls.Add(1)
	return &api.Response{Status: 200, Body: []byte("{}")}
}

// etcdError decodes etcd's error body.
func etcdError(t *testing.T, body string) (code int, msg string) {
	t.Helper()
	var e struct {
		Code    int
		Message string
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatalf("not etcd's error body: %q", body)
	}
	return e.Code, e.Message
}

// A body that ends before its declared length, or whose chunked encoding is
// broken, is a write that did not happen: 400 in the protocol's words,
// never an empty 200, and the handler never sees it.
func TestBrokenBodiesAnswer400InTheProtocolsWords(t *testing.T) {
	h := &counting{}
	srv := httptest.NewServer(Handler(h, Options{Refuse: session.Refuse}))
	defer srv.Close()
	for _, tc := range []struct {
		name, path, head, body, want string
	}{
		{"short etcd body", "/v3/kv/put", "Content-Length: 100", `{"key":"YQ=="`, "unexpected EOF"},
		{"bad chunk etcd", "/v3/kv/put", "Transfer-Encoding: chunked", "zz\r\n{}\r\n0\r\n\r\n", "invalid byte in chunk length"},
		{"short kube body", "/api/v1/namespaces/default/configmaps", "Content-Length: 100", `{"kind":`, "unexpected EOF"},
		{"bad chunk kube", "/api/v1/namespaces/default/configmaps", "Transfer-Encoding: chunked", "2\r\n{}\r\nzz\r\n", "invalid byte in chunk length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := rawRequest(t, srv, "POST "+tc.path+" HTTP/1.1\r\n"+tc.head, tc.body)
			c.(*net.TCPConn).CloseWrite() // the rest never comes
			resp, body := readAnswer(t, c)
			if resp.StatusCode != 400 || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			if strings.HasPrefix(tc.path, "/v3/") {
				if code, _ := etcdError(t, body); code != 3 {
					t.Fatalf("etcd code %d: %s", code, body)
				}
			} else if !strings.Contains(body, `"kind":"Status"`) || !strings.Contains(body, `"reason":"BadRequest"`) {
				t.Fatalf("not a BadRequest Status: %s", body)
			}
		})
	}
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("the handler saw %d broken bodies", n)
	}
}

// The probe of issue 10: clients that declare a large body and never send
// its last byte. Memory for a body is reserved as its bytes arrive, so the
// bodies being read never hold more than the budget; past it a body is
// refused at once (429, etcd's "too many requests"), and what was reserved
// goes back when a body ends, however it ends.
func TestStalledUploadsHoldNoMoreThanTheBudget(t *testing.T) {
	// A body of 1 MiB - 1 bytes holds a buffer of 1 MiB (doubled from 4 KiB
	// as its bytes came), and is waiting for its last byte.
	const limit = 1 << 20
	const fits = 3
	budget := NewBodyBudget(fits*limit, 0)
	changed := make(chan int64, 1024)
	budget.changed = func(held int64) { changed <- held }
	h := &counting{}
	srv := httptest.NewServer(Handler(h, Options{MaxBodyBytes: limit, Bodies: budget, Refuse: session.Refuse}))
	defer srv.Close()
	head := fmt.Sprintf("POST /v3/kv/put HTTP/1.1\r\nContent-Length: %d", limit)
	almost := strings.Repeat("x", limit-1)
	waitHeld := func(want int64) {
		t.Helper()
		for {
			select {
			case held := <-changed:
				if held > budget.max {
					t.Fatalf("bodies hold %d bytes, over the budget of %d", held, budget.max)
				}
				if held == want {
					return
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("bodies never held %d bytes (now %d)", want, budget.Held())
			}
		}
	}
	var stalled []net.Conn
	for i := 1; i <= fits; i++ {
		stalled = append(stalled, rawRequest(t, srv, head, almost))
		waitHeld(int64(i) * limit)
	}
	for range 5 {
		c := rawRequest(t, srv, head, almost)
		resp, body := readAnswer(t, c)
		if code, msg := etcdError(t, body); resp.StatusCode != 429 || code != 8 || msg != "etcdserver: too many requests" || resp.Header.Get("Retry-After") != "1" {
			t.Fatalf("over the budget: %d %s %v", resp.StatusCode, body, resp.Header)
		}
	}
	if held := budget.Held(); held != fits*limit {
		t.Fatalf("after the refusals the stalled bodies hold %d bytes", held)
	}
	for _, c := range stalled {
		c.(*net.TCPConn).CloseWrite()
		readAnswer(t, c) // 400: cut short
	}
	if held := budget.Held(); held != 0 {
		t.Fatalf("%d bytes still reserved after every body ended", held)
	}
	if n := h.calls.Load(); n != 0 {
		t.Fatalf("the handler saw %d incomplete bodies", n)
	}
}

// A body that does not arrive in time is refused, and its memory freed,
// rather than held for as long as the client keeps the connection.
// It is so whether the adapter sets the deadline itself or a BodyDeadline
// around it did (Options.BodyDeadlineSet).
func TestABodyThatDoesNotArriveInTimeIsRefused(t *testing.T) {
	budget := NewBodyBudget(1<<20, 0)
	for _, outer := range []bool{false, true} {
		var h http.Handler = Handler(&counting{}, Options{BodyTimeout: 200 * time.Millisecond, Bodies: budget, Refuse: session.Refuse, BodyDeadlineSet: outer})
		if outer {
			h = BodyDeadline(h, 200*time.Millisecond)
		}
		srv := httptest.NewServer(h)
		defer srv.Close()
		bodyRefusedInTime(t, srv, budget)
	}
}

func bodyRefusedInTime(t *testing.T, srv *httptest.Server, budget *BodyBudget) {
	t.Helper()
	for _, path := range []string{"/v3/kv/put", "/api/v1/namespaces/default/configmaps"} {
		c := rawRequest(t, srv, "POST "+path+" HTTP/1.1\r\nContent-Length: 1000", `{"key":`)
		resp, body := readAnswer(t, c)
		if !strings.Contains(body, "not received within 200ms") {
			t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
		}
		if want := map[bool]int{true: 400, false: 504}[strings.HasPrefix(path, "/v3/")]; resp.StatusCode != want {
			t.Fatalf("%s: status %d, want %d", path, resp.StatusCode, want)
		}
		if held := budget.Held(); held != 0 {
			t.Fatalf("%d bytes still reserved", held)
		}
	}
}

// A body waits for memory a while before it is refused: when another body
// gives its memory back in the meantime, it is served.
func TestABodyWaitsBrieflyForMemory(t *testing.T) {
	budget := NewBodyBudget(11, time.Minute) // the first body's buffer: 10 bytes and one to see its end
	waiting := make(chan struct{})
	budget.waiting = func() { close(waiting) }
	reserved := make(chan struct{}, 1)
	budget.changed = func(held int64) {
		if held == 11 {
			reserved <- struct{}{}
		}
	}
	h := &counting{}
	srv := httptest.NewServer(Handler(h, Options{Bodies: budget, Refuse: session.Refuse}))
	defer srv.Close()
	first := rawRequest(t, srv, "POST /v3/kv/put HTTP/1.1\r\nContent-Length: 10", "12345")
	<-reserved
	second := rawRequest(t, srv, "POST /v3/kv/put HTTP/1.1\r\nContent-Length: 2", "{}")
	<-waiting // the second found the budget taken by the first
	io.WriteString(first, "67890")
	for _, c := range []net.Conn{first, second} {
		if resp, body := readAnswer(t, c); resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, body)
		}
	}
	if h.calls.Load() != 2 || budget.Held() != 0 {
		t.Fatalf("calls %d, held %d", h.calls.Load(), budget.Held())
	}
}

// A handler of the server's own that reads a body itself gets it under the
// same deadline: a client that never finishes it does not hold the handler.
func TestBodyDeadlineBoundsHandlersThatReadBodiesThemselves(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
		}
	})
	srv := httptest.NewServer(BodyDeadline(h, 200*time.Millisecond))
	defer srv.Close()
	c := rawRequest(t, srv, "POST /sessions HTTP/1.1\r\nContent-Length: 100", `{"name":`)
	if resp, body := readAnswer(t, c); resp.StatusCode != 400 || !strings.Contains(body, "timeout") {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

// While no body waits for memory, giving memory back makes nothing: a
// body is reserved and released on every request.
func TestBodyBudgetReleaseWithoutWaitersAllocatesNothing(t *testing.T) {
	b := NewBodyBudget(1<<20, time.Second)
	ctx := context.Background()
	if n := testing.AllocsPerRun(100, func() {
		if !b.reserve(ctx, 100) {
			t.Fatal("refused")
		}
		b.release(100)
	}); n != 0 {
		t.Errorf("reserve and release: %v allocations", n)
	}
}
