package httpapi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// observer hands on what the adapter reports.
type observer struct {
	behind, slow chan struct{}
}

func newObserver() *observer {
	return &observer{behind: make(chan struct{}, 1024), slow: make(chan struct{}, 16)}
}

func (o *observer) FramesSent(*http.Request, int) {}
func (o *observer) Behind(*http.Request)          { o.behind <- struct{}{} }
func (o *observer) SlowClosed(*http.Request)      { o.slow <- struct{}{} }

func wait(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(15 * time.Second):
		t.Fatalf("no %s within 15s", what)
	}
}

// feed sends frames numbered from 0, each about size bytes, until the
// stream is closed or n are sent.
func feed(s *chanStream, n, size int) {
	for i := range n {
		f := []byte(fmt.Sprintf("%d:%s\n", i, strings.Repeat("x", size)))
		select {
		case s.frames <- f:
		case <-s.closed:
			return
		}
	}
	close(s.frames)
}

// An etcd-style stream waits for a client that is behind, however long:
// the client gets every frame, in order, and then the stream's normal end.
func TestAStreamWithoutCloseSlowWaitsForItsClient(t *testing.T) {
	s := newChanStream()
	obs := newObserver()
	srv := httptest.NewServer(Handler(streaming(s), Options{SendBuffer: 1, SlowTimeout: time.Millisecond,
		WriteTimeout: time.Minute, Observe: obs}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 64
	go feed(s, n, 256<<10) // 16 MiB: more than the socket's buffers hold
	wait(t, obs.behind, "report of a client behind")
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	for i := range n {
		_, m, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := fmt.Sprintf("%d:", i); !bytes.HasPrefix(m, []byte(want)) || bytes.HasSuffix(m, []byte("\n")) {
			t.Fatalf("message %d starts %q, want %q and no newline", i, m[:min(len(m), 12)], want)
		}
	}
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("after the last frame: %v, want the stream's normal close", err)
	}
	select {
	case <-obs.slow:
		t.Fatal("the stream was closed for being slow")
	default:
	}
}

// A Kubernetes-style stream keeps each event's newline, as kube-apiserver's
// watch does, and closes a client whose buffer stays full for SlowTimeout
// with a normal close after what it had already been sent.
func TestAStreamWithCloseSlowClosesAClientThatStaysBehind(t *testing.T) {
	s := newChanStream()
	obs := newObserver()
	kube := func(string) WebSocketStyle { return WebSocketStyle{KeepNewline: true, CloseSlow: true} }
	srv := httptest.NewServer(Handler(streaming(s), Options{SendBuffer: 1, SlowTimeout: 50 * time.Millisecond,
		WriteTimeout: time.Minute, Observe: obs, WebSocketStyle: kube}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	s.frames <- []byte("{\"type\":\"ADDED\"}\n")
	if _, m, err := conn.ReadMessage(); err != nil || string(m) != "{\"type\":\"ADDED\"}\n" {
		t.Fatalf("first event %q %v, want it whole with its newline", m, err)
	}
	const n = 64
	go feed(s, n, 256<<10)
	wait(t, obs.slow, "slow close")
	got := 0
	for {
		_, m, err := conn.ReadMessage()
		if err != nil {
			if !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
				t.Fatalf("after %d frames: %v, want a normal close", got, err)
			}
			break
		}
		if want := fmt.Sprintf("%d:", got); !bytes.HasPrefix(m, []byte(want)) {
			t.Fatalf("message %d starts %q", got, m[:min(len(m), 12)])
		}
		got++
	}
	if got >= n {
		t.Fatalf("the client got all %d frames", got)
	}
	waitClosed(t, s)
}

// A client that answers no ping within two intervals is gone: its
// connection and its stream are closed.
func TestAClientThatAnswersNoPingIsDisconnected(t *testing.T) {
	s := newChanStream()
	srv := httptest.NewServer(Handler(streaming(s), Options{PingInterval: 20 * time.Millisecond}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The client never reads, so gorilla/websocket never answers a ping.
	waitClosed(t, s)
}

// A client message over ReadLimit ends the connection with 1009 (message
// too big), as gorilla/websocket answers it, and the stream with it.
func TestAClientMessageOverTheReadLimitEndsTheConnection(t *testing.T) {
	s := &receivingStream{chanStream: newChanStream(), got: make(chan string, 1)}
	srv := httptest.NewServer(Handler(streaming(s), Options{ReadLimit: 1024}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.WriteMessage(websocket.TextMessage, bytes.Repeat([]byte("x"), 2048))
	conn.SetReadDeadline(time.Now().Add(15 * time.Second))
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseMessageTooBig) {
		t.Fatalf("after an oversized message: %v, want close 1009", err)
	}
	waitClosed(t, s.chanStream)
	select {
	case m := <-s.got:
		t.Fatalf("the stream received %d bytes", len(m))
	default:
	}
}
