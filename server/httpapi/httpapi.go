// Package httpapi adapts net/http onto the transport-neutral api.Handler:
// it reads the request, calls the handler, and writes the answer,
// streaming long-lived responses either as chunked HTTP (one flush per
// frame) or, when the client asks for an upgrade, as WebSocket text
// messages (one frame per message; the messages waiting for a client go
// out in one write, batch.go).
//
// It enforces the bounds of the transport, so that no client can make the
// server hold memory or goroutines for long: bodies are read as they
// arrive, under a size limit, a read deadline and a server-wide budget of
// memory for bodies being read (body.go); every answer is written under a
// write deadline; state-changing requests from other sites' pages are
// refused (origins.go). What it refuses, the handler's protocol words
// (Options.Refuse).
//
// It lives in server/ because it imports net/http and gorilla/websocket,
// which the engine and the WebAssembly build must not.
package httpapi

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/rvplay/rvplay/engine/api"
)

// DefaultMaxBodyBytes is kube-apiserver's request body limit (3 MiB).
const DefaultMaxBodyBytes = 3 << 20

// DefaultBodyTimeout is how long a client has to send a request's body.
const DefaultBodyTimeout = 30 * time.Second

// DefaultWriteTimeout is how long a client has to take a watch event, or
// each MiB of an answer.
const DefaultWriteTimeout = 10 * time.Second

// Options configure the adapter. The zero value is valid.
type Options struct {
	// MaxBodyBytes limits request bodies. Zero: DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyTimeout bounds the time a client takes to send a body. Zero:
	// DefaultBodyTimeout.
	BodyTimeout time.Duration
	// BodyDeadlineSet says that every request reaches the adapter with its
	// body's read deadline already set, BodyTimeout from its arrival (the
	// server's BodyDeadline, outside every session): the adapter then only
	// lifts it once the body is in, rather than set it again on every
	// request. False: the adapter sets it.
	BodyDeadlineSet bool
	// Bodies is the server-wide budget of memory for bodies being read,
	// shared by every adapter of the server. Nil: no budget.
	Bodies *BodyBudget
	// Origins says which pages may change state. Nil: the server's own.
	Origins *Origins
	// OriginsGuarded says that every request reaches the adapter through
	// Origins.Guard with the same Origins (the server's, outside every
	// session), which refused what Origins does not permit and answered
	// its CORS: the adapter then does not look at the same headers again
	// on every request. WebSocket upgrades are checked either way. False:
	// the adapter checks.
	OriginsGuarded bool
	// Refuse answers a request the adapter refuses itself, in the protocol
	// of its path (package session's Refuse). Nil: plain text.
	Refuse func(path string, why api.Refusal) *api.Response
	// WebSocketMethod gives the method the handler sees for a WebSocket
	// upgrade of path (a browser can only GET one). etcd's gateway turns
	// every WebSocket into a POST, for instance. Nil: the request's method.
	WebSocketMethod func(path string) string
	// WriteTimeout bounds the write of one frame of a stream, and of each
	// MiB of an answer (so that a large answer still reaches a slow
	// client): a client that does not take it in time is disconnected, and
	// what was written for it is freed. Zero: DefaultWriteTimeout.
	WriteTimeout time.Duration
	// PingInterval is how often a WebSocket is pinged; a client that does
	// not answer within two intervals is disconnected. Zero: 30 s.
	PingInterval time.Duration
	// SendBuffer is how many frames may wait for a WebSocket client. Zero:
	// 256.
	SendBuffer int
	// SlowTimeout is how long a WebSocket's buffer may stay full before a
	// stream whose style says CloseSlow is closed for being slow. Zero:
	// WriteTimeout.
	SlowTimeout time.Duration
	// WebSocketStyle gives the style of a WebSocket stream on path. Nil:
	// the zero style.
	WebSocketStyle func(path string) WebSocketStyle
	// Observe, if set, is told of what streams do (the metrics).
	Observe StreamObserver
	// ReadLimit bounds one message from a WebSocket client. Zero: 1 MiB.
	ReadLimit int64
	// WatchLimiter gives the limiter of the client a request comes from;
	// it rides in the request's context (api.WithWatchLimiter), and every
	// watch the request makes takes a unit. Nil: no per-client cap.
	WatchLimiter func(r *http.Request) api.Limiter
}

// WebSocketStyle is how a protocol's streams behave on a WebSocket.
type WebSocketStyle struct {
	// KeepNewline keeps each frame's trailing newline in its message, as
	// kube-apiserver's watch does (its JSON encoder ends each event with
	// one); etcd's websocket proxy sends each response without it.
	KeepNewline bool
	// CloseSlow closes the stream of a client that leaves its buffer full
	// for SlowTimeout, as kube-apiserver's watch cache terminates a
	// watcher whose buffer stays full: the stream ends with a normal
	// close, the client watches again from its last resourceVersion (and
	// lists again if that is compacted). Without it the stream waits for
	// its client, as etcd lets a slow watcher fall behind and catch up
	// later; a client that takes nothing at all for WriteTimeout is
	// disconnected either way.
	CloseSlow bool
}

// StreamObserver is told of what streams do.
type StreamObserver interface {
	// FramesSent: n frames of r's stream were written to its client
	// (those of a batch are told at once).
	FramesSent(r *http.Request, n int)
	// Behind: a frame of r's stream found its client's buffer full, so
	// the stream waits for the client (or, in the CloseSlow style, gives
	// it SlowTimeout).
	Behind(r *http.Request)
	// SlowClosed: r's stream was closed because its client did not keep
	// up.
	SlowClosed(r *http.Request)
}

func (o *Options) defaults() {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.PingInterval <= 0 {
		o.PingInterval = 30 * time.Second
	}
	if o.SendBuffer <= 0 {
		o.SendBuffer = 256
	}
	if o.SlowTimeout <= 0 {
		o.SlowTimeout = o.WriteTimeout
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
		CheckOrigin: opts.Origins.Permit,
	}}
}

func (a *Adapter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !a.opts.OriginsGuarded {
		if !a.opts.Origins.Permit(r) {
			a.refuse(w, r, api.Refusal{Kind: api.CrossOrigin, Detail: originOf(r)})
			return
		}
		if a.opts.Origins.cors(w, r) {
			return
		}
	}
	ws := websocket.IsWebSocketUpgrade(r)
	x := &exchange{req: api.Request{
		Method: r.Method,
		Path:   r.URL.Path,
		Query:  query(r.URL),
		Header: api.Header(r.Header),
	}}
	req := &x.req
	if ws && a.opts.WebSocketMethod != nil {
		req.Method = a.opts.WebSocketMethod(r.URL.Path)
	}
	uaProtocol := browserUserAgent(r, ws)
	hasBody := r.Body != nil && r.Body != http.NoBody
	if hasBody {
		if refused := readBody(w, r, a.opts.MaxBodyBytes, a.opts.BodyTimeout, !a.opts.BodyDeadlineSet, a.opts.Bodies, &x.body); refused != nil {
			x.body.release()
			a.refuse(w, r, *refused)
			return
		}
		req.Body = x.body.data
	}
	var ctx context.Context = r.Context()
	if a.opts.WatchLimiter != nil {
		x.ctx = limiterContext{Context: ctx, r: r, limiter: a.opts.WatchLimiter}
		ctx = &x.ctx
	}
	resp := a.h.Serve(ctx, req)
	if hasBody {
		// The handler has decoded the body: its memory goes back to the
		// budget before the answer is written, however long that takes.
		x.body.release()
		req.Body, x.body.data = nil, nil
	}
	if resp == nil {
		http.Error(w, "no response", http.StatusInternalServerError)
		return
	}
	if resp.Stream == nil {
		a.writeComplete(w, resp)
		return
	}
	defer resp.Stream.Close()
	if ws && resp.Status == http.StatusOK {
		a.serveWebSocket(w, r, resp, uaProtocol)
		return
	}
	writeHeader(w, resp)
	if len(resp.Body) > 0 {
		w.Write(resp.Body)
	}
	a.streamChunked(w, r, resp.Stream)
}

// exchange is what the adapter makes for one request, in one allocation
// (a request comes every few microseconds): the request the handler
// serves, its body, and the context that carries its client's watch
// limiter.
type exchange struct {
	req  api.Request
	body body
	ctx  limiterContext
}

// limiterContext answers the watch limiter of r's client (api.WatchLimiter)
// by making it when a watch asks for it, rather than for every request,
// most of which never watch.
type limiterContext struct {
	context.Context
	r       *http.Request
	limiter func(r *http.Request) api.Limiter
}

func (c *limiterContext) Value(key any) any {
	if api.IsWatchLimiterKey(key) {
		return c.limiter(c.r)
	}
	return c.Context.Value(key)
}

// query is u's query, nil when it has none (most gateway requests), so
// that those are spared a map of their own: handlers only read it.
func query(u *url.URL) url.Values {
	if u.RawQuery == "" {
		return nil
	}
	return u.Query()
}

// originOf names where a refused request came from.
func originOf(r *http.Request) string {
	if o := r.Header.Get("Origin"); o != "" {
		return o
	}
	return "(a " + r.Header.Get("Sec-Fetch-Site") + " page)"
}

// refuse answers a request the adapter refuses itself. The connection is
// closed after the answer: whatever is left of the body is not read.
func (a *Adapter) refuse(w http.ResponseWriter, r *http.Request, why api.Refusal) {
	w.Header().Set("Connection", "close")
	if why.Kind == api.CrossOrigin {
		http.NewResponseController(w).SetReadDeadline(time.Now()) // see readBody
	}
	var resp *api.Response
	if a.opts.Refuse != nil {
		resp = a.opts.Refuse(r.URL.Path, why)
	} else {
		resp = plainRefusal(why)
	}
	a.writeComplete(w, resp)
}

func plainRefusal(why api.Refusal) *api.Response {
	status, text := http.StatusBadRequest, "request body could not be read: "+why.Detail
	switch why.Kind {
	case api.BodyTooLarge:
		status, text = http.StatusRequestEntityTooLarge, "request entity too large"
	case api.BodyTimeout:
		status, text = http.StatusRequestTimeout, "request body not received within "+why.Detail
	case api.Busy:
		status, text = http.StatusTooManyRequests, "too many requests, please try again later"
	case api.CrossOrigin:
		status, text = http.StatusForbidden, "a page from origin "+why.Detail+" may not change this server's sessions"
	case api.Unauthenticated:
		status, text = http.StatusUnauthorized, "unauthorized"
	case api.Forbidden:
		status, text = http.StatusForbidden, "forbidden: "+why.Detail
	case api.TooManyRequests:
		status, text = http.StatusTooManyRequests, "too many requests, please try again later"
	case api.Stopped:
		status, text = http.StatusServiceUnavailable, "service unavailable: "+why.Detail
	case api.Failed:
		status, text = http.StatusInternalServerError, "internal error: "+why.Detail
	}
	return &api.Response{Status: status, Header: api.Header{"Content-Type": {"text/plain; charset=utf-8"}},
		Body: []byte(text + "\n")}
}

// writeChunk is how much of an answer a client must take within
// WriteTimeout.
const writeChunk = 1 << 20

// writeComplete writes an answer that is not a stream under write
// deadlines: the client must take each MiB of it within WriteTimeout, so
// that a client that stops reading does not keep the answer in memory,
// and a slow one still gets a large answer. The last deadline also bounds
// what net/http writes after the handler returns (it lifts it then).
func (a *Adapter) writeComplete(w http.ResponseWriter, resp *api.Response) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(a.opts.WriteTimeout))
	body := resp.Body
	writeAnswer(w, &api.Response{Status: resp.Status, Header: resp.Header, Body: body[:min(len(body), writeChunk)]}, len(body))
	for off := writeChunk; off < len(body); off += writeChunk {
		rc.SetWriteDeadline(time.Now().Add(a.opts.WriteTimeout))
		if _, err := w.Write(body[off:min(len(body), off+writeChunk)]); err != nil {
			return
		}
	}
}

// writeAnswer writes the header of an answer of length bytes, declaring
// its length unless it has trailers (which need the chunked encoding), and
// resp.Body, the answer or its beginning.
func writeAnswer(w http.ResponseWriter, resp *api.Response, length int) {
	if st := resp.Status; st != http.StatusNoContent && st != http.StatusNotModified && (st == 0 || st >= 200) &&
		(length > selfDeclared || len(resp.Body) < length) {
		_, declared := resp.Header["Content-Length"]
		if _, trailers := resp.Header["Trailer"]; !declared && !trailers {
			w.Header().Set("Content-Length", strconv.Itoa(length))
		}
	}
	writeHeader(w, resp)
	if len(resp.Body) > 0 {
		w.Write(resp.Body)
	}
}

// selfDeclared is the length up to which an answer written whole, with no
// flush, is left for net/http to declare: it buffers the first 2 KiB a
// handler writes, and declares the Content-Length of an answer that ends
// within them ("under a few KB", http.ResponseWriter's Write), without
// the two allocations of setting the header here, on nearly every
// gateway answer. TestAnswersDeclareTheirLength holds it to that.
const selfDeclared = 1 << 10

// browserUserAgent restores the User-Agent a page could not send as one
// (api.BrowserUserAgentHeader on a fetch, api.UserAgentProtocol on a
// WebSocket), so that the session's record and kube's field managers name
// the lab's clients. It returns the subprotocol to accept, if any: the
// User-Agent's, or the only one offered.
func browserUserAgent(r *http.Request, ws bool) (protocol string) {
	if ua := r.Header.Get(api.BrowserUserAgentHeader); ua != "" {
		r.Header.Set("User-Agent", ua)
	}
	if !ws {
		return ""
	}
	offered := websocket.Subprotocols(r)
	for _, p := range offered {
		if ua, ok := api.UserAgentFromProtocol(p); ok {
			r.Header.Set("User-Agent", ua)
			return p
		}
	}
	if len(offered) == 1 {
		// As kube-apiserver's WebSocket handshake: the one subprotocol a
		// client offers (beside its bearer token's, which authentication
		// took out) is the one it gets, so that a browser, which fails a
		// handshake that selects none of those it offered, connects.
		return offered[0]
	}
	return ""
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

// chunkedReady is how many frames of a chunked stream may wait, taken
// from the stream, for the client's connection: those that wait when it
// is free go out in one flush.
const chunkedReady = 32

// streamChunked writes every frame and flushes it, until the stream ends or
// the client goes away or stops reading for WriteTimeout. The frames that
// are ready when the connection is free (up to maxBatchBytes) are flushed
// together, in one write instead of one each; a goroutine takes them from
// the stream meanwhile, but no more once the frames taken and not yet
// flushed reach maxBatchBytes: a client that does not read holds one
// large frame (an etcd watch's page of catch-up), as it did when each
// frame was taken only once the previous one was written.
func (a *Adapter) streamChunked(w http.ResponseWriter, r *http.Request, s api.Stream) {
	rc := http.NewResponseController(w)
	rc.SetWriteDeadline(time.Now().Add(a.opts.WriteTimeout))
	if err := rc.Flush(); err != nil {
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	ready := make(chan []byte, chunkedReady)
	var held atomic.Int64          // bytes taken from the stream, not yet flushed
	room := make(chan struct{}, 1) // a flush made room
	taken := make(chan struct{})
	go func() {
		defer close(taken)
		defer close(ready)
		for {
			for held.Load() >= maxBatchBytes {
				select {
				case <-room:
				case <-ctx.Done():
					return
				}
			}
			frame, err := s.Next(ctx)
			if err != nil {
				return
			}
			held.Add(int64(len(frame)))
			select {
			case ready <- frame:
			case <-ctx.Done():
				return
			}
		}
	}()
	// The stream is closed once this returns: it must be left first.
	defer func() {
		cancel()
		<-taken
	}()
	for frame := range ready {
		rc.SetWriteDeadline(time.Now().Add(a.opts.WriteTimeout))
		size := 0
		sent, more := gather(frame, ready, nil, func(f []byte) error {
			size += len(f)
			_, err := w.Write(f)
			return err
		})
		if sent == 0 {
			return
		}
		if a.opts.Observe != nil {
			// Before the flush, so that the frames are counted by the
			// time their client can read them.
			a.opts.Observe.FramesSent(r, sent)
		}
		if err := rc.Flush(); err != nil || !more {
			return
		}
		held.Add(-int64(size))
		select {
		case room <- struct{}{}:
		default:
		}
	}
}

// serveWebSocket upgrades the connection and sends every frame as one text
// message. One goroutine writes; one reads (pongs, and client messages for
// streams that take them); the stream is pumped into a bounded buffer, so
// that nothing a slow client does holds up anyone else: its stream either
// waits for it or, in the CloseSlow style, is closed once the buffer has
// stayed full for SlowTimeout.
func (a *Adapter) serveWebSocket(w http.ResponseWriter, r *http.Request, resp *api.Response, protocol string) {
	// The 101 carries nothing of the response's header, as etcd's
	// websocket proxy's does not; only the subprotocol chosen by
	// browserUserAgent is accepted, as the handshake requires.
	var accept http.Header
	if protocol != "" {
		accept = http.Header{"Sec-Websocket-Protocol": {protocol}}
	}
	var style WebSocketStyle
	if a.opts.WebSocketStyle != nil {
		style = a.opts.WebSocketStyle(r.URL.Path)
	}
	bw := &batchingResponse{ResponseWriter: w}
	conn, err := a.up.Upgrade(bw, r, accept)
	if err != nil {
		return // Upgrade has answered the client
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()

	out := make(chan []byte, a.opts.SendBuffer)
	stop := make(chan struct{}) // closed to end the writer before out is drained
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		defer cancel()
		a.writeLoop(ctx, r, conn, bw.conn, out, stop)
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

	message := func(frame []byte) []byte {
		if style.KeepNewline {
			return frame
		}
		return bytes.TrimSuffix(frame, []byte("\n"))
	}
	if len(resp.Body) > 0 {
		out <- message(resp.Body)
	}
	// A stream that ends, or a client closed for being slow, gets a normal
	// close, as kube-apiserver's watch handler closes its WebSocket when
	// the watch ends.
	closeWith := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "")
	var slow *time.Timer
	if style.CloseSlow {
		slow = time.NewTimer(a.opts.SlowTimeout)
		defer slow.Stop()
	}
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
		case out <- message(frame):
			continue
		default:
		}
		if a.opts.Observe != nil {
			a.opts.Observe.Behind(r)
		}
		if slow == nil {
			// The buffer is full: wait for the client. Meanwhile the
			// stream's watchers fall behind and catch up later.
			select {
			case out <- message(frame):
				continue
			case <-ctx.Done():
				closeWith = nil
				break pump
			}
		}
		// The buffer is full: the client gets SlowTimeout to make room,
		// then its watch is closed.
		slow.Reset(a.opts.SlowTimeout)
		select {
		case out <- message(frame):
		case <-slow.C:
			close(stop)
			if a.opts.Observe != nil {
				a.opts.Observe.SlowClosed(r)
			}
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
// sends frames and pings until out is closed and drained, stop is closed,
// or a write fails. The frames waiting in out when it takes one go with
// it, in one write to bc, conn's connection.
func (a *Adapter) writeLoop(ctx context.Context, r *http.Request, conn *websocket.Conn, bc *batchConn, out <-chan []byte, stop <-chan struct{}) {
	ping := time.NewTicker(a.opts.PingInterval)
	defer ping.Stop()
	for {
		select {
		case frame, ok := <-out:
			if !ok {
				return
			}
			if !a.writeBatch(r, conn, bc, frame, out, stop) {
				return
			}
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(a.opts.WriteTimeout)); err != nil {
				return
			}
		case <-stop:
			return
		case <-ctx.Done():
			return
		}
	}
}

// writeBatch sends frame and the frames already waiting in out, up to
// maxBatchBytes, each as a message, in one write the client must take
// within WriteTimeout. False: the writer is done (out closed, stop
// closed, or a write failed).
func (a *Adapter) writeBatch(r *http.Request, conn *websocket.Conn, bc *batchConn, frame []byte, out <-chan []byte, stop <-chan struct{}) bool {
	bc.hold()
	sent, more := gather(frame, out, stop, func(f []byte) error {
		return conn.WriteMessage(websocket.TextMessage, f)
	})
	if err := bc.flush(time.Now().Add(a.opts.WriteTimeout)); err != nil {
		return false
	}
	if a.opts.Observe != nil && sent > 0 {
		a.opts.Observe.FramesSent(r, sent)
	}
	return more
}
