package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/api"
)

// chanStream yields the frames sent on frames; Close is observable.
type chanStream struct {
	frames    chan []byte
	closed    chan struct{}
	closeOnce sync.Once
}

func newChanStream() *chanStream {
	return &chanStream{frames: make(chan []byte), closed: make(chan struct{})}
}

func (s *chanStream) Next(ctx context.Context) ([]byte, error) {
	select {
	case f, ok := <-s.frames:
		if !ok {
			return nil, io.EOF
		}
		return f, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (s *chanStream) Close() { s.closeOnce.Do(func() { close(s.closed) }) }

func streaming(s api.Stream) api.Handler {
	return api.HandlerFunc(func(context.Context, *api.Request) *api.Response {
		return &api.Response{Status: 200, Header: api.Header{"Content-Type": {"application/json"}}, Stream: s}
	})
}

func waitClosed(t *testing.T, s *chanStream) {
	t.Helper()
	select {
	case <-s.closed:
	case <-time.After(15 * time.Second):
		t.Fatal("stream not closed")
	}
}

func TestChunkedStreamFlushesEveryFrame(t *testing.T) {
	s := newChanStream()
	srv := httptest.NewServer(Handler(streaming(s), Options{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	for _, f := range []string{"one\n", "two\n"} {
		// The next frame is only produced once the previous one was read:
		// it can only have been read if it was flushed.
		s.frames <- []byte(f)
		line, err := rd.ReadString('\n')
		if err != nil || line != f {
			t.Fatalf("read %q, %v", line, err)
		}
	}
	close(s.frames)
	if rest, _ := io.ReadAll(rd); len(rest) != 0 {
		t.Fatalf("after the end: %q", rest)
	}
	waitClosed(t, s)
}

func TestClientHangingUpClosesTheStream(t *testing.T) {
	s := newChanStream()
	srv := httptest.NewServer(Handler(streaming(s), Options{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	waitClosed(t, s)
}

func TestTrailerKeysBecomeHTTPTrailers(t *testing.T) {
	h := api.HandlerFunc(func(context.Context, *api.Request) *api.Response {
		return &api.Response{Status: 400, Header: api.Header{
			"Trailer":                           {"Grpc-Trailer-Content-Type"},
			"Trailer:Grpc-Trailer-Content-Type": {"application/grpc"},
		}, Body: []byte(`{}`)}
	})
	srv := httptest.NewServer(Handler(h, Options{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Trailer.Get("Grpc-Trailer-Content-Type") != "application/grpc" {
		t.Fatalf("%d trailer %v header %v", resp.StatusCode, resp.Trailer, resp.Header)
	}
}

func TestBodyLimitAnswersTooLargeWithoutCallingTheHandler(t *testing.T) {
	called := false
	h := api.HandlerFunc(func(context.Context, *api.Request) *api.Response {
		called = true
		return &api.Response{Status: 200}
	})
	srv := httptest.NewServer(Handler(h, Options{MaxBodyBytes: 10, Refuse: func(path string, why api.Refusal) *api.Response {
		if why.Kind != api.BodyTooLarge || why.Limit != 10 {
			return &api.Response{Status: 500}
		}
		return &api.Response{Status: 413, Body: []byte(path)}
	}}))
	defer srv.Close()
	for _, chunked := range []bool{false, true} {
		var body io.Reader = strings.NewReader(strings.Repeat("x", 11))
		if chunked {
			body = io.MultiReader(body) // unknown length: sent chunked
		}
		resp, err := http.Post(srv.URL+"/p", "text/plain", body)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 413 || string(b) != "/p" || called {
			t.Fatalf("chunked=%v: %d %q called=%v", chunked, resp.StatusCode, b, called)
		}
	}
}

func wsURL(srv *httptest.Server) string { return "ws" + strings.TrimPrefix(srv.URL, "http") }

func TestWebSocketSendsOneMessagePerFrameAndPassesClientMessages(t *testing.T) {
	s := &receivingStream{chanStream: newChanStream(), got: make(chan string, 1)}
	var method string
	h := api.HandlerFunc(func(_ context.Context, r *api.Request) *api.Response {
		method = r.Method
		return &api.Response{Status: 200, Stream: s}
	})
	srv := httptest.NewServer(Handler(h, Options{WebSocketMethod: func(string) string { return "POST" }}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if method != "POST" {
		t.Fatalf("method %q", method)
	}
	s.frames <- []byte("{\"a\":1}\n")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, m, err := conn.ReadMessage(); err != nil || string(m) != `{"a":1}` {
		t.Fatalf("message %q %v", m, err)
	}
	conn.WriteMessage(websocket.TextMessage, []byte("hello"))
	if got := <-s.got; got != "hello" {
		t.Fatalf("received %q", got)
	}
	close(s.frames) // end of stream: a normal close
	_, _, err = conn.ReadMessage()
	if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("end: %v", err)
	}
}

type receivingStream struct {
	*chanStream
	got chan string
}

func (r *receivingStream) Receive(msg []byte) error { r.got <- string(msg); return nil }

// A WebSocket client that stops reading is disconnected once the frames
// waiting for it stay unsent for WriteTimeout; the stream is closed.
func TestSlowWebSocketClientIsDisconnected(t *testing.T) {
	s := newChanStream()
	srv := httptest.NewServer(Handler(streaming(s), Options{SendBuffer: 1, WriteTimeout: 200 * time.Millisecond}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	big := bytes.Repeat([]byte("x"), 256<<10)
	go func() {
		for {
			select {
			case s.frames <- big:
			case <-s.closed:
				return
			}
		}
	}()
	waitClosed(t, s) // the client never read a thing
}

// A page cannot send User-Agent: the lab's clients send it as a header on
// fetch and as a subprotocol on a WebSocket, and the session sees it as
// the User-Agent.
func TestTheBrowsersUserAgentReachesTheSessionAsUserAgent(t *testing.T) {
	seen := make(chan string, 4)
	h := api.HandlerFunc(func(_ context.Context, r *api.Request) *api.Response {
		seen <- r.Header.Get("User-Agent")
		if r.Query.Get("watch") == "true" {
			s := newChanStream()
			go func() { s.frames <- []byte("{}\n") }()
			return &api.Response{Status: 200, Stream: s}
		}
		return &api.Response{Status: 200, Body: []byte("{}")}
	})
	srv := httptest.NewServer(Handler(h, Options{}))
	defer srv.Close()

	req, _ := http.NewRequest("GET", srv.URL+"/x", nil)
	req.Header.Set("User-Agent", "Mozilla/5.0")
	req.Header.Set(api.BrowserUserAgentHeader, "operator-a/rvplay-lab")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ua := <-seen; ua != "operator-a/rvplay-lab" {
		t.Fatalf("fetch: the session saw %q", ua)
	}

	proto := api.UserAgentProtocol("reflector/rvplay-lab")
	d := websocket.Dialer{Subprotocols: []string{proto}}
	conn, wsResp, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http")+"/x?watch=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if ua := <-seen; ua != "reflector/rvplay-lab" {
		t.Fatalf("WebSocket: the session saw %q", ua)
	}
	if got := wsResp.Header.Get("Sec-Websocket-Protocol"); got != proto {
		t.Fatalf("the handshake must accept the subprotocol a browser offered, or the browser fails it: %q", got)
	}
	if _, msg, err := conn.ReadMessage(); err != nil || string(msg) != "{}" {
		t.Fatalf("%q %v", msg, err)
	}
}
