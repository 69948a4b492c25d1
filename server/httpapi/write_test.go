package httpapi

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/rvplay/rvplay/engine/api"
)

// served reports when each request's handling has returned: what it held
// (the answer) is then garbage.
type served struct {
	h    http.Handler
	done chan struct{}
}

func (s *served) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer func() { s.done <- struct{}{} }()
	s.h.ServeHTTP(w, r)
}

// A client that asks for a large answer and never reads it does not keep
// the answer in the server's memory: its write deadline ends the request.
func TestAnAnswerNobodyReadsIsDroppedAfterTheWriteTimeout(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 64<<20) // far more than socket buffers take
	h := api.HandlerFunc(func(context.Context, *api.Request) *api.Response {
		return &api.Response{Status: 200, Body: big}
	})
	s := &served{h: Handler(h, Options{WriteTimeout: 200 * time.Millisecond}), done: make(chan struct{}, 1)}
	srv := httptest.NewServer(s)
	defer srv.Close()
	c := rawRequest(t, srv, "POST /v3/kv/range HTTP/1.1\r\nContent-Length: 2", "{}")
	defer c.Close() // never read
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		t.Fatal("the server still holds an answer its client never reads")
	}
}

// Every complete answer declares its length, whether the adapter sets
// Content-Length (a large one) or leaves it to net/http (one of at most
// selfDeclared bytes), over HTTP/1.1 and HTTP/2 alike, for GET and HEAD:
// a client never sees a small answer chunked.
func TestAnswersDeclareTheirLength(t *testing.T) {
	for _, proto := range []string{"HTTP/1.1", "HTTP/2.0"} {
		for _, n := range []int{1, 100, selfDeclared, selfDeclared + 1, 5000, 3 << 20} {
			body := bytes.Repeat([]byte("x"), n)
			h := Handler(api.HandlerFunc(func(context.Context, *api.Request) *api.Response {
				return &api.Response{Status: 200, Header: api.Header{"Content-Type": {"application/json"}}, Body: body}
			}), Options{})
			srv := httptest.NewUnstartedServer(h)
			if proto == "HTTP/2.0" {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			for _, method := range []string{"GET", "HEAD"} {
				req, _ := http.NewRequest(method, srv.URL+"/v3/kv/range", nil)
				resp, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				got, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.Proto != proto {
					t.Fatalf("served over %s, want %s", resp.Proto, proto)
				}
				if resp.ContentLength != int64(n) || len(resp.TransferEncoding) > 0 {
					t.Errorf("%s %s, %d bytes: Content-Length %d, Transfer-Encoding %v; want %d declared", proto, method, n, resp.ContentLength, resp.TransferEncoding, n)
				}
				if method == "GET" && len(got) != n {
					t.Errorf("%s GET: %d bytes read, want %d", proto, len(got), n)
				}
			}
			srv.Close()
		}
	}
}
