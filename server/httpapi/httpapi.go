// Package httpapi adapts net/http onto the transport-neutral api.Handler:
// it reads the request (with a body limit), calls the handler, and writes
// the answer, streaming long-lived responses either as chunked HTTP (one
// flush per frame) or, when the client asks for an upgrade, as WebSocket
// text messages (one frame per message).
//
// It lives in server/ because it imports net/http and gorilla/websocket,
// which the engine and the WebAssembly build must not.
package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/api"
)

// DefaultMaxBodyBytes is kube-apiserver's request body limit (3 MiB).
const DefaultMaxBodyBytes = 3 << 20

// Options configure the adapter. The zero value is valid.
type Options struct {
	// MaxBodyBytes limits request bodies. Zero: DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// TooLarge answers a request whose body exceeds the limit, in the
	// protocol of its path. Nil: a plain 413.
	TooLarge func(path string, limit int64) *api.Response
	// WebSocketMethod gives the method the handler sees for a WebSocket
	// upgrade of path (a browser can only GET one). etcd's gateway turns
	// every WebSocket into a POST, for instance. Nil: the request's method.
	WebSocketMethod func(path string) string
	// WriteTimeout bounds the write of one frame: a client that does not
	// take a frame within it is disconnected. Zero: 10 s.
	WriteTimeout time.Duration
	// PingInterval is how often a WebSocket is pinged; a client that does
	// not answer within two intervals is disconnected. Zero: 30 s.
	PingInterval time.Duration
	// SendBuffer is how many frames may wait for a WebSocket client; when
	// they stay full for WriteTimeout the client is disconnected. Zero: 256.
	SendBuffer int
	// ReadLimit bounds one message from a WebSocket client. Zero: 1 MiB.
	ReadLimit int64
	// WatchLimiter gives the limiter of the client a request comes from;
	// it rides in the request's context (api.WithWatchLimiter), and every
	// watch the request makes takes a unit. Nil: no per-client cap.
	WatchLimiter func(r *http.Request) api.Limiter
}

func (o *Options) defaults() {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 30 * time.Second
	}
	if o.SendBuffer <= 0 {
		o.SendBuffer = 256
	}
	if o.ReadLimit <= 0 {
		o.ReadLimit = 1 << 20
	}
}

// Adapter serves an api.Handler over net/http.
type Adapter struct {
	h    api.Handler
	opts Options
	up   websocket.Upgrader
}

// Handler returns h served over net/http. The request path given to h is
// r.URL.Path as it reaches this handler (strip any prefix first).
func Handler(h api.Handler, opts Options) *Adapter {
	opts.defaults()
	return &Adapter{h: h, opts: opts, up: websocket.Upgrader{
		// Sessions are open to anyone and carry no credentials, so a page
		// from any origin may watch them, as it may fetch them.
		CheckOrigin: func(*http.Request) bool { return true },
	}}
}

func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws := websocket.IsWebSocketUpgrade(r)
	req := &api.Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  r.URL.Query(),
		Header: api.Header(r.Header),
	}
	if ws && a.opts.WebSocketMethod != nil {
		req.Method = a.opts.WebSocketMethod(r.URL.Path)
	}
	uaProtocol := browserUserAgent(r, ws)
	if r.ContentLength > a.opts.MaxBodyBytes {
		a.writeTooLarge(w, r)
		return
	}
	if r.Body != nil && r.Body != http.NoBody {
		body, err := readBody(w, r, a.opts.MaxBodyBytes)
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				a.writeTooLarge(w, r)
			}
			return // the client went away mid-body: nobody to answer
		}
		req.Body = body
	}
	ctx := r.Context()
	if a.opts.WatchLimiter != nil {
		ctx = api.WithWatchLimiter(ctx, a.opts.WatchLimiter(r))
	}
	resp := a.h.Serve(ctx, req)
	if resp == nil {
		http.Error(w, "no response", http.StatusInternalServerError)
		return
	}
	if resp.Stream != nil {
		defer resp.Stream.Close()
		if ws && resp.Status == http.StatusOK {
			a.serveWebSocket(w, r, resp, uaProtocol)
			return
		}
	}
	writeHeader(w, resp)
	if len(resp.Body) > 0 {
		w.Write(resp.Body)
	}
	if resp.Stream != nil {
		a.streamChunked(w, r, resp.Stream)
	}
}

// browserUserAgent restores the User-Agent a page could not send as one
// (api.BrowserUserAgentHeader on a fetch, api.UserAgentProtocol on a
// WebSocket), so that the session's record and kube's field managers name
// the lab's clients. It returns the subprotocol to accept, if any.
func browserUserAgent(r *http.Request, ws bool) (protocol string) {
	if ua := r.Header.Get(api.BrowserUserAgentHeader); ua != "" {
		r.Header.Set("User-Agent", ua)
	}
	if !ws {
		return ""
	}
	for _, p := range websocket.Subprotocols(r) {
		if ua, ok := api.UserAgentFromProtocol(p); ok {
			r.Header.Set("User-Agent", ua)
			return p
		}
	}
	return ""
}

// readBody reads the whole body, at most limit bytes. When the client
// declared the length, the buffer is allocated once at that size instead
// of growing from io.ReadAll's 512 bytes.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if n := r.ContentLength; n > 0 && n <= limit {
		buf := make([]byte, n+1) // one more, to see the EOF in the same read
		got, err := io.ReadFull(body, buf)
		switch {
		case err == io.ErrUnexpectedEOF && int64(got) == n:
			return buf[:got], nil
		case err == nil: // more than declared (not from net/http's server)
		default:
			return nil, err // including a body cut short
		}
		rest, err := io.ReadAll(body) // a body longer than declared
		return append(buf, rest...), err
	}
	return io.ReadAll(body)
}

func (a *Adapter) writeTooLarge(w http.ResponseWriter, r *http.Request) {
	// The rest of the body is not read; closing the connection spares the
	// client from sending it.
	w.Header().Set("Connection", "close")
	if a.opts.TooLarge == nil {
		http.Error(w, "request entity too large", http.StatusRequestEntityTooLarge)
		return
	}
	resp := a.opts.TooLarge(r.URL.Path, a.opts.MaxBodyBytes)
	writeHeader(w, resp)
	w.Write(resp.Body)
}

// writeHeader copies the answer's header and writes the status. Keys that
// begin with "Trailer:" are net/http's convention for trailers and are
// passed as they are.
func writeHeader(w http.ResponseWriter, resp *api.Response) {
	h := w.Header()
	for k, v := range resp.Header {
		if strings.HasPrefix(k, http.TrailerPrefix) {
			h[k] = v
			continue
		}
		h[http.CanonicalHeaderKey(k)] = v
	}
	status := resp.Status
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
}

// streamChunked writes every frame and flushes it, until the stream ends or
// the client goes away or stops reading for WriteTimeout.
func (a *Adapter) streamChunked(w http.ResponseWriter, r *http.Request, s api.Stream) {
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return
	}
	for {
		frame, err := s.Next(r.Context())
		if err != nil {
			return
		}
		rc.SetWriteDeadline(time.Now().Add(a.opts.WriteTimeout))
		if _, err := w.Write(frame); err != nil {
			return
		}
		if err := rc.Flush(); err != nil {
			return
		}
	}
}

// serveWebSocket upgrades the connection and sends every frame as one text
// message (without its trailing newline). One goroutine writes; one reads
// (pongs, and client messages for streams that take them); the stream is
// pumped into a bounded buffer, and a client that leaves it full for
// WriteTimeout is disconnected rather than allowed to hold anything up.
func (a *Adapter) serveWebSocket(w http.ResponseWriter, r *http.Request, resp *api.Response, uaProtocol string) {
	// The 101 carries nothing of the response's header, as etcd's
	// websocket proxy's does not; only the subprotocol that carried the
	// User-Agent is accepted, as the handshake requires.
	var accept http.Header
	if uaProtocol != "" {
		accept = http.Header{"Sec-Websocket-Protocol": {uaProtocol}}
	}
	conn, err := a.up.Upgrade(w, r, accept)
	if err != nil {
		return // Upgrade has answered the client
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	out := make(chan []byte, a.opts.SendBuffer)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer cancel()
		a.writeLoop(ctx, conn, out)
	}()

	conn.SetReadLimit(a.opts.ReadLimit)
	conn.SetReadDeadline(time.Now().Add(2 * a.opts.PingInterval))
	conn.SetPongHandler(func(string) error {
		return conn.SetReadDeadline(time.Now().Add(2 * a.opts.PingInterval))
	})
	rcv, _ := resp.Stream.(api.Receiver)
	go func() {
		defer cancel()
		for {
			typ, msg, err := conn.ReadMessage()
			if err != nil {
				return
			}
			if rcv != nil && (typ == websocket.TextMessage || typ == websocket.BinaryMessage) {
				rcv.Receive(msg) // a refused message ends nothing: the stream decides
			}
		}
	}()

	if len(resp.Body) > 0 {
		out <- bytes.TrimSuffix(resp.Body, []byte("\n"))
	}
	closeWith := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	slow := time.NewTimer(a.opts.WriteTimeout)
	defer slow.Stop()
pump:
	for {
		frame, err := resp.Stream.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				closeWith = nil // the client left or was disconnected
			}
			break
		}
		select {
		case out <- bytes.TrimSuffix(frame, []byte("\n")):
			continue
		default:
		}
		// The buffer is full: the client gets WriteTimeout to make room,
		// then it is too slow, and is told so and hung up on.
		slow.Reset(a.opts.WriteTimeout)
		select {
		case out <- bytes.TrimSuffix(frame, []byte("\n")):
		case <-slow.C:
			closeWith = websocket.FormatCloseMessage(websocket.CloseTryAgainLater, "client too slow")
			break pump
		case <-ctx.Done():
			closeWith = nil
			break pump
		}
	}
	close(out)
	<-writerDone
	if closeWith != nil {
		conn.WriteControl(websocket.CloseMessage, closeWith, time.Now().Add(a.opts.WriteTimeout))
	}
}

// writeLoop is the only writer of conn (gorilla/websocket allows one): it
// sends frames and pings until out is closed or a write fails.
func (a *Adapter) writeLoop(ctx context.Context, conn *websocket.Conn, out <-chan []byte) {
	ping := time.NewTicker(a.opts.PingInterval)
	defer ping.Stop()
	for {
		select {
		case frame, ok := <-out:
			if !ok {
				return
			}
			conn.SetWriteDeadline(time.Now().Add(a.opts.WriteTimeout))
			if err := conn.WriteMessage(websocket.TextMessage, frame); err != nil {
				return
			}
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(a.opts.WriteTimeout)); err != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}
