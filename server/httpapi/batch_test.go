package httpapi

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// countingListener's connections count the writes made to them, and the
// second write of each (the first after a WebSocket handshake's answer)
// waits until gate is closed.
type countingListener struct {
	net.Listener
	gate chan struct{}

	mu     sync.Mutex
	writes int
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, l: l}, nil
}

// countingServer serves h on a countingListener, its gate open unless
// gated.
func countingServer(tb testing.TB, h http.Handler, gated bool) (*httptest.Server, *countingListener) {
	srv := httptest.NewUnstartedServer(h)
	l := &countingListener{Listener: srv.Listener, gate: make(chan struct{})}
	if !gated {
		close(l.gate)
	}
	srv.Listener = l
	srv.Start()
	tb.Cleanup(srv.Close)
	return srv, l
}

func (l *countingListener) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.writes
}

type countingConn struct {
	net.Conn
	l      *countingListener
	writes int
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.l.mu.Lock()
	c.l.writes++
	c.writes++
	n := c.writes
	c.l.mu.Unlock()
	if n == 2 {
		<-c.l.gate
	}
	return c.Conn.Write(p)
}

// sentCounter counts the frames the adapter reports sent.
type sentCounter struct{ n atomic.Int64 }

func (o *sentCounter) FramesSent(_ *http.Request, n int) { o.n.Add(int64(n)) }
func (o *sentCounter) Behind(*http.Request)              {}
func (o *sentCounter) SlowClosed(*http.Request)          {}

// The frames waiting for a WebSocket client when its writer is free go
// out together, in one write to the connection, each still a message of
// its own, in order: while the first frame's write waits, the stream
// queues 50 more, and the client gets all 51 in at most three writes
// after the handshake's (not 51). Each frame counts as sent.
func TestWaitingFramesGoOutInOneWrite(t *testing.T) {
	s := newChanStream()
	obs := &sentCounter{}
	srv, l := countingServer(t, Handler(streaming(s), Options{Observe: obs}), true)
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	const n = 51
	frame := func(i int) []byte { return fmt.Appendf(nil, `{"n":%d}`+"\n", i) }
	for i := range n {
		s.frames <- frame(i)
	}
	// The stream has given its 51st frame only once the 50th is queued
	// for the writer, which still waits with the first.
	s.frames <- frame(n)
	close(l.gate)
	conn.SetReadDeadline(time.Now().Add(time.Minute))
	for i := range n + 1 {
		_, m, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
		if want := fmt.Sprintf(`{"n":%d}`, i); string(m) != want {
			t.Fatalf("message %d is %q, want %q", i, m, want)
		}
	}
	if w := l.count() - 1; w > 3 {
		t.Fatalf("%d frames sent in %d writes, want at most 3", n+1, w)
	}
	close(s.frames)
	if _, _, err := conn.ReadMessage(); !websocket.IsCloseError(err, websocket.CloseNormalClosure) {
		t.Fatalf("after the last frame: %v, want the stream's normal close", err)
	}
	if got := obs.n.Load(); got != n+1 {
		t.Fatalf("%d frames counted as sent, want %d", got, n+1)
	}
}

// BenchmarkWebSocketStream sends b.N watch-event-sized frames to one
// WebSocket client that reads as fast as it can, and reports the writes
// the server made per frame.
func BenchmarkWebSocketStream(b *testing.B) {
	s := newChanStream()
	srv, l := countingServer(b, Handler(streaming(s), Options{}), false)
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(srv), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	benchmarkStream(b, s, l, func() error {
		_, _, err := conn.ReadMessage()
		return err
	})
}

// The frames of a chunked stream that are ready when the client's
// connection is free are flushed together: while the first frame's flush
// waits, the stream readies 33 more, and they go out in at most two
// writes (not 33), each still a line of its own, in order, and counted as
// sent by the time the client reads it.
func TestReadyFramesOfAChunkedStreamGoOutInOneFlush(t *testing.T) {
	s := newChanStream()
	obs := &sentCounter{}
	srv, l := countingServer(t, Handler(streaming(s), Options{Observe: obs}), true)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	const n = chunkedReady + 2
	frame := func(i int) []byte { return fmt.Appendf(nil, `{"n":%d}`+"\n", i) }
	// The header went out in the first write; the first frame's flush
	// waits at the gate. Once the stream has given frame n-1, frames 1
	// to n-2 are ready.
	for i := range n {
		s.frames <- frame(i)
	}
	close(l.gate)
	rd := bufio.NewReader(resp.Body)
	for i := range n {
		line, err := rd.ReadString('\n')
		if err != nil || line != string(frame(i)) {
			t.Fatalf("line %d is %q (%v), want %q", i, line, err, frame(i))
		}
	}
	if w := l.count() - 2; w > 2 {
		t.Fatalf("%d frames after the first sent in %d writes, want at most 2", n-1, w)
	}
	if got := obs.n.Load(); got != n {
		t.Fatalf("%d frames counted as sent, want %d", got, n)
	}
	close(s.frames)
	if rest, _ := io.ReadAll(rd); len(rest) != 0 {
		t.Fatalf("after the end: %q", rest)
	}
	waitClosed(t, s)
}

// BenchmarkChunkedStream sends b.N watch-event-sized frames on one
// chunked stream to a client that reads as fast as it can, and reports
// the writes the server made per frame.
func BenchmarkChunkedStream(b *testing.B) {
	s := newChanStream()
	srv, l := countingServer(b, Handler(streaming(s), Options{}), false)
	resp, err := http.Get(srv.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	rd := bufio.NewReader(resp.Body)
	benchmarkStream(b, s, l, func() error {
		_, err := rd.ReadSlice('\n')
		return err
	})
}

// benchmarkStream sends b.N frames on s, each taken by its client with
// read, and reports the writes l counted per frame.
func benchmarkStream(b *testing.B, s *chanStream, l *countingListener, read func() error) {
	frame := watchEvent()
	before := l.count()
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	go func() {
		for range b.N {
			s.frames <- frame
		}
	}()
	for range b.N {
		if err := read(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(l.count()-before)/float64(b.N), "writes/frame")
}

// watchEvent is a frame the size of the class load's events.
func watchEvent() []byte {
	return append([]byte(`{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"w001-1","namespace":"default","resourceVersion":"12345"},"data":{"pad":"`),
		fmt.Appendf(nil, "%0256d\"}}}\n", 0)...)
}
