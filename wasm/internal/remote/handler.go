//go:build js && wasm

package remote

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall/js"

	"github.com/rvplay/rvplay/engine/api"
)

// Handler sends requests to the session at Base, an absolute URL without
// a trailing slash ("https://rvplay.example/s/demo").
type Handler struct {
	Base string
	// NoWebSocket sends Kubernetes watches as streamed fetches too (where
	// the JavaScript host has no WebSocket, as Node 20 has none).
	NoWebSocket bool
}

// New returns a Handler for base, resolved against the page's location
// ("/s/demo" on the page's own server).
func New(base string) *Handler {
	if loc := js.Global().Get("location"); loc.Truthy() {
		base = js.Global().Get("URL").New(base, loc.Get("href")).Call("toString").String()
	}
	return &Handler{Base: strings.TrimRight(base, "/"), NoWebSocket: js.Global().Get("WebSocket").Type() != js.TypeFunction}
}

func (h *Handler) url(req *api.Request) string {
	u := h.Base + req.Path
	if q := req.Query.Encode(); q != "" {
		u += "?" + q
	}
	return u
}

// Serve answers req from the server. A network failure is a 503 Status,
// as client-go sees a connection refused: an error it can retry.
func (h *Handler) Serve(ctx context.Context, req *api.Request) *api.Response {
	if IsKubeWatch(req) && !h.NoWebSocket {
		return h.websocket(ctx, req)
	}
	return h.fetch(ctx, req, IsStream(req))
}

func unavailable(err error) *api.Response {
	msg := strings.ReplaceAll(err.Error(), `"`, `'`)
	return &api.Response{Status: 503, Header: api.Header{"Content-Type": {"application/json"}},
		Body: []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"` + msg +
			`","reason":"ServiceUnavailable","code":503}`)}
}

// await settles a Promise from a goroutine (never from inside a JS
// callback, which would stall the event loop the Promise needs).
func await(ctx context.Context, p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	var onOK, onErr js.Func
	release := func() { onOK.Release(); onErr.Release() }
	onOK = js.FuncOf(func(this js.Value, args []js.Value) any {
		release()
		ch <- result{v: args[0]}
		return nil
	})
	onErr = js.FuncOf(func(this js.Value, args []js.Value) any {
		release()
		msg := "failed"
		if len(args) > 0 {
			msg = js.Global().Get("String").Invoke(args[0]).String()
		}
		ch <- result{err: errors.New(msg)}
		return nil
	})
	p.Call("then", onOK, onErr)
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		return js.Undefined(), ctx.Err()
	}
}

func bytesOf(v js.Value) []byte {
	u8 := js.Global().Get("Uint8Array").New(v)
	b := make([]byte, u8.Get("length").Int())
	js.CopyBytesToGo(b, u8)
	return b
}

func headersOf(h js.Value) api.Header {
	out := api.Header{}
	fn := js.FuncOf(func(this js.Value, args []js.Value) any {
		out.Add(args[1].String(), args[0].String())
		return nil
	})
	h.Call("forEach", fn)
	fn.Release()
	return out
}

// fetch sends req; with stream the body becomes a Stream of lines.
func (h *Handler) fetch(ctx context.Context, req *api.Request, stream bool) *api.Response {
	ctl := js.Global().Get("AbortController").New()
	init := map[string]any{"method": req.Method, "credentials": "same-origin", "signal": ctl.Get("signal")}
	hdr := map[string]any{}
	for k, v := range Headers(req) {
		hdr[k] = v
	}
	init["headers"] = hdr
	if len(req.Body) > 0 && req.Method != "GET" && req.Method != "HEAD" {
		u8 := js.Global().Get("Uint8Array").New(len(req.Body))
		js.CopyBytesToJS(u8, req.Body)
		init["body"] = u8
	}
	// Whatever ends the exchange (the caller's context, its end, a
	// stream's Close) aborts the fetch: that is how a browser closes the
	// connection of a stream, and aborting one that is done does nothing.
	fctx, cancel := context.WithCancel(ctx)
	go func() {
		<-fctx.Done()
		ctl.Call("abort")
	}()
	fail := func(err error) *api.Response {
		cancel()
		if ctx.Err() != nil {
			return unavailable(ctx.Err())
		}
		return unavailable(err)
	}
	r, err := await(fctx, js.Global().Call("fetch", h.url(req), js.ValueOf(init)))
	if err != nil {
		return fail(err)
	}
	resp := &api.Response{Status: r.Get("status").Int(), Header: headersOf(r.Get("headers"))}
	if stream && resp.Status == 200 && r.Get("body").Truthy() {
		return &api.Response{Status: resp.Status, Header: resp.Header,
			Stream: &fetchStream{reader: r.Get("body").Call("getReader"), cancel: cancel}}
	}
	ab, err := await(fctx, r.Call("arrayBuffer"))
	if err != nil {
		return fail(err)
	}
	cancel()
	resp.Body = bytesOf(ab)
	return resp
}

// fetchStream reads a streamed body as newline-terminated frames.
type fetchStream struct {
	reader js.Value
	cancel func()
	lines  lines
	ready  [][]byte
	ended  bool
}

func (s *fetchStream) Next(ctx context.Context) ([]byte, error) {
	for len(s.ready) == 0 {
		if s.ended {
			return nil, api.EOF
		}
		chunk, err := await(ctx, s.reader.Call("read"))
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.ended = true
			return nil, err
		}
		if chunk.Get("done").Bool() {
			s.ended = true
			if r := s.lines.rest(); r != nil {
				s.ready = append(s.ready, r)
			}
			continue
		}
		s.ready = append(s.ready, s.lines.add(bytesOf(chunk.Get("value")))...)
	}
	f := s.ready[0]
	s.ready = s.ready[1:]
	return f, nil
}

func (s *fetchStream) Close() { s.cancel() }

// websocket opens a Kubernetes watch as a WebSocket. The browser hides why
// a handshake failed, so then the same request is sent as a fetch, which
// answers the watch's error (410, 403, 429...) with its status and body.
func (h *Handler) websocket(ctx context.Context, req *api.Request) *api.Response {
	u := h.url(req)
	switch {
	case strings.HasPrefix(u, "https:"):
		u = "wss:" + u[len("https:"):]
	case strings.HasPrefix(u, "http:"):
		u = "ws:" + u[len("http:"):]
	}
	var protocols []any
	if ua := req.Header.Get("User-Agent"); ua != "" {
		protocols = append(protocols, api.UserAgentProtocol(ua))
	}
	ws := js.Global().Get("WebSocket").New(u, js.ValueOf(protocols))
	ws.Set("binaryType", "arraybuffer")
	s := &wsStream{ws: ws, notify: make(chan struct{}, 1), opened: make(chan bool, 1)}
	s.funcs = []js.Func{
		js.FuncOf(func(this js.Value, args []js.Value) any {
			s.opened <- true
			return nil
		}),
		js.FuncOf(func(this js.Value, args []js.Value) any {
			data := args[0].Get("data")
			var frame []byte
			if data.Type() == js.TypeString {
				frame = []byte(data.String())
			} else {
				frame = bytesOf(data)
			}
			s.push(append(frame, '\n'))
			return nil
		}),
		js.FuncOf(func(this js.Value, args []js.Value) any {
			select {
			case s.opened <- false:
			default:
			}
			s.end()
			return nil
		}),
	}
	ws.Set("onopen", s.funcs[0])
	ws.Set("onmessage", s.funcs[1])
	ws.Set("onclose", s.funcs[2])
	select {
	case ok := <-s.opened:
		if !ok {
			s.Close()
			return h.fetch(ctx, req, true)
		}
	case <-ctx.Done():
		s.Close()
		return unavailable(ctx.Err())
	}
	return &api.Response{Status: 200, Header: api.Header{"Content-Type": {"application/json"}}, Stream: s}
}

// wsStream queues the messages of a WebSocket; JavaScript callbacks only
// append and signal, they never block.
type wsStream struct {
	ws     js.Value
	funcs  []js.Func
	opened chan bool
	notify chan struct{}

	mu     sync.Mutex
	queue  [][]byte
	closed bool
	once   sync.Once
}

func (s *wsStream) push(frame []byte) {
	s.mu.Lock()
	s.queue = append(s.queue, frame)
	s.mu.Unlock()
	s.signal()
}

func (s *wsStream) end() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.signal()
}

func (s *wsStream) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

func (s *wsStream) Next(ctx context.Context) ([]byte, error) {
	for {
		s.mu.Lock()
		if len(s.queue) > 0 {
			f := s.queue[0]
			s.queue = s.queue[1:]
			s.mu.Unlock()
			return f, nil
		}
		closed := s.closed
		s.mu.Unlock()
		if closed {
			return nil, api.EOF
		}
		select {
		case <-s.notify:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Close ends the WebSocket normally; its callbacks are released once it
// can no longer call them.
func (s *wsStream) Close() {
	s.once.Do(func() {
		for _, ev := range []string{"onopen", "onmessage", "onclose"} {
			s.ws.Set(ev, js.Null())
		}
		s.ws.Call("close", 1000)
		for _, f := range s.funcs {
			f.Release()
		}
		s.end()
	})
}
