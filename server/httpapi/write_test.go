package httpapi

import (
	"bytes"
	"context"
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
