//go:build js && wasm

package main

import (
	"context"
	"errors"
	"net/url"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall/js"

	"github.com/rvplay/rvplay/engine/api"
)

// bridge adapts JavaScript calls onto an api.Handler. The surface is coarse
// on purpose: one call per request (a Promise of {status, headers, body}),
// one call per watch stream (a callback per frame and a cancel function), so
// that crossing the JS/Go boundary costs one hop per message. No exported
// function ever blocks inside its JS callback: the work runs in a goroutine
// and the answer travels back through a Promise or a callback, because a
// blocked callback would stall the browser's event loop and with it the Go
// scheduler.
type bridge struct {
	newHandler func() (api.Handler, error)

	mu      sync.Mutex
	handler api.Handler
	cancels map[int]context.CancelFunc // open watch streams, ended by reset
	nextID  int

	funcs      []js.Func // kept alive for the page's lifetime
	cancelByID js.Func
}

func newBridge(newHandler func() (api.Handler, error)) *bridge {
	return &bridge{newHandler: newHandler, cancels: map[int]context.CancelFunc{}}
}

// reset replaces the session with a fresh one (revision 1, empty keyspace)
// and ends every open watch stream of the old one.
func (b *bridge) reset() error {
	h, err := b.newHandler()
	if err != nil {
		return err
	}
	b.mu.Lock()
	old := b.handler
	b.handler = h
	cancels := b.cancels
	b.cancels = map[int]context.CancelFunc{}
	b.mu.Unlock()
	for _, cancel := range cancels {
		cancel()
	}
	if c, ok := old.(interface{ Close() error }); ok {
		c.Close()
	}
	return nil
}

func (b *bridge) current() api.Handler {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.handler
}

// install publishes the bridge as globalThis[name].
func (b *bridge) install(name string) js.Value {
	ns := js.Global().Get("Object").New()
	b.cancelByID = b.fn(b.jsCancel)
	ns.Set("request", b.fn(b.jsRequest))
	ns.Set("watch", b.fn(b.jsWatch))
	ns.Set("reset", b.fn(b.jsReset))
	ns.Set("bench", b.fn(b.jsBench))
	ns.Set("decodeStored", b.fn(jsDecodeStored))
	b.installClients(ns)
	ns.Set("version", version)
	js.Global().Set(name, ns)
	if cb := js.Global().Get("__rvplayReady"); cb.Type() == js.TypeFunction {
		cb.Invoke(ns)
	}
	return ns
}

func (b *bridge) fn(f func(this js.Value, args []js.Value) any) js.Func {
	jf := js.FuncOf(f)
	b.funcs = append(b.funcs, jf)
	return jf
}

// promise runs work in a goroutine and settles a JS Promise with its result.
func promise(work func() (any, error)) js.Value {
	var executor js.Func
	executor = js.FuncOf(func(this js.Value, args []js.Value) any {
		resolve, reject := args[0], args[1]
		go func() {
			defer executor.Release()
			v, err := safely(work)
			if err != nil {
				reject.Invoke(js.Global().Get("Error").New(err.Error()))
				return
			}
			resolve.Invoke(v)
		}()
		return nil
	})
	return js.Global().Get("Promise").New(executor)
}

// safely turns a panic in the engine into an error for the page instead of
// killing the WebAssembly instance (after which every later call would fail).
func safely(work func() (any, error)) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("rvplay: internal error: " + toString(r) + "\n" + string(debug.Stack()))
		}
	}()
	return work()
}

func toString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case error:
		return x.Error()
	}
	return "panic"
}

// jsRequest: rvplay.request({method, path, query, headers, body}) → Promise<{status, headers, body}>.
func (b *bridge) jsRequest(this js.Value, args []js.Value) any {
	req, err := requestFromJS(args)
	if err != nil {
		return promise(func() (any, error) { return nil, err })
	}
	h := b.current()
	return promise(func() (any, error) {
		resp := h.Serve(context.Background(), req)
		if resp.Stream != nil {
			// A long-lived answer belongs to watch(); a plain request gets
			// the head only.
			resp.Stream.Close()
		}
		return responseToJS(resp), nil
	})
}

// jsWatch: rvplay.watch({method, path, query, headers, body}, onEvent) → cancel().
// onEvent receives {kind:"open", status, headers, body}, then {kind:"frame",
// data} per frame, and finally {kind:"end", reason} ("eof", "canceled" or an
// error text). It is called from a goroutine, never from inside this call.
func (b *bridge) jsWatch(this js.Value, args []js.Value) any {
	req, err := requestFromJS(args)
	if len(args) < 2 || args[1].Type() != js.TypeFunction {
		err = errors.New("rvplay.watch: second argument must be a callback")
	}
	if err != nil {
		js.Global().Get("console").Call("error", err.Error())
		return js.FuncOf(func(js.Value, []js.Value) any { return nil })
	}
	onEvent := args[1]
	ctx, cancel := context.WithCancel(context.Background())
	b.mu.Lock()
	h := b.handler
	id := b.nextID
	b.nextID++
	b.cancels[id] = cancel
	b.mu.Unlock()

	go func() {
		defer func() {
			b.mu.Lock()
			delete(b.cancels, id)
			b.mu.Unlock()
			cancel()
		}()
		emit := func(kind string, set func(o js.Value)) {
			o := js.Global().Get("Object").New()
			o.Set("kind", kind)
			set(o)
			onEvent.Invoke(o)
		}
		_, err := safely(func() (any, error) {
			resp := h.Serve(ctx, req)
			emit("open", func(o js.Value) {
				r := responseToJS(resp)
				o.Set("status", r["status"])
				o.Set("headers", r["headers"])
				o.Set("body", r["body"])
			})
			if resp.Stream == nil {
				return nil, api.EOF
			}
			defer resp.Stream.Close()
			for {
				frame, err := resp.Stream.Next(ctx)
				if err != nil {
					return nil, err
				}
				emit("frame", func(o js.Value) { o.Set("data", string(frame)) })
			}
		})
		reason := "eof"
		switch {
		case errors.Is(err, api.EOF):
		case ctx.Err() != nil:
			reason = "canceled"
		case err != nil:
			reason = err.Error()
		}
		emit("end", func(o js.Value) { o.Set("reason", reason) })
	}()
	// The cancel function is a plain JS closure over the stream's id, so
	// that calling it after the stream ended is a harmless no-op rather
	// than a call to a released Go function.
	return bindCancel.Invoke(b.cancelByID, id)
}

// bindCancel makes () => cancelByID(id).
var bindCancel = js.Global().Get("Function").New("f", "id", "return function cancel() { f(id); };")

// jsCancel: the one Go function behind every watch's cancel closure.
func (b *bridge) jsCancel(this js.Value, args []js.Value) any {
	if len(args) == 0 || args[0].Type() != js.TypeNumber {
		return nil
	}
	b.mu.Lock()
	cancel := b.cancels[args[0].Int()]
	b.mu.Unlock()
	if cancel != nil {
		cancel() // never blocks: the stream goroutine notices ctx.Done
	}
	return nil
}

func (b *bridge) jsReset(this js.Value, args []js.Value) any {
	return promise(func() (any, error) { return true, b.reset() })
}

// jsBench: rvplay.bench(n) → Promise<{ops, nsPerOp}> runs the engine
// workload of workload.go n times inside the page, so a benchmark page can
// set the browser's figure beside the native one.
func (b *bridge) jsBench(this js.Value, args []js.Value) any {
	n := 1
	if len(args) > 0 && args[0].Type() == js.TypeNumber {
		n = args[0].Int()
	}
	return promise(func() (any, error) {
		r, err := RunWorkload(n)
		if err != nil {
			return nil, err
		}
		return map[string]any{"ops": r.Ops, "nsPerOp": r.NsPerOp(), "workloads": n}, nil
	})
}

// requestFromJS reads {method, path, query, headers, body}. query is either
// a string ("watch=true&resourceVersion=5") or an object of strings.
func requestFromJS(args []js.Value) (*api.Request, error) {
	if len(args) == 0 || args[0].Type() != js.TypeObject {
		return nil, errors.New("rvplay: request must be an object {method, path, query, headers, body}")
	}
	o := args[0]
	req := &api.Request{Method: "GET", Query: url.Values{}, Header: api.Header{}}
	if m := o.Get("method"); m.Type() == js.TypeString {
		req.Method = strings.ToUpper(m.String())
	}
	p := o.Get("path")
	if p.Type() != js.TypeString || !strings.HasPrefix(p.String(), "/") {
		return nil, errors.New("rvplay: request path must be a string starting with /")
	}
	path := p.String()
	if i := strings.IndexByte(path, '?'); i >= 0 {
		q, err := url.ParseQuery(path[i+1:])
		if err != nil {
			return nil, errors.New("rvplay: bad query: " + err.Error())
		}
		req.Query = q
		path = path[:i]
	}
	req.Path = path
	switch q := o.Get("query"); q.Type() {
	case js.TypeString:
		v, err := url.ParseQuery(strings.TrimPrefix(q.String(), "?"))
		if err != nil {
			return nil, errors.New("rvplay: bad query: " + err.Error())
		}
		for k, vs := range v {
			req.Query[k] = append(req.Query[k], vs...)
		}
	case js.TypeObject:
		keys := js.Global().Get("Object").Call("keys", q)
		for i := 0; i < keys.Length(); i++ {
			k := keys.Index(i).String()
			v := q.Get(k)
			if v.Type() == js.TypeUndefined || v.Type() == js.TypeNull {
				continue
			}
			req.Query.Add(k, jsString(v))
		}
	}
	if hs := o.Get("headers"); hs.Type() == js.TypeObject {
		keys := js.Global().Get("Object").Call("keys", hs)
		for i := 0; i < keys.Length(); i++ {
			k := keys.Index(i).String()
			req.Header.Add(k, jsString(hs.Get(k)))
		}
	}
	if body := o.Get("body"); body.Type() == js.TypeString {
		req.Body = []byte(body.String())
	} else if body.Type() == js.TypeObject {
		// A Uint8Array.
		buf := make([]byte, body.Get("length").Int())
		js.CopyBytesToGo(buf, body)
		req.Body = buf
	}
	return req, nil
}

func jsString(v js.Value) string {
	if v.Type() == js.TypeString {
		return v.String()
	}
	return js.Global().Get("String").Invoke(v).String()
}

// responseToJS converts a response head and body to plain JS-convertible
// values; header names are lower-cased, as fetch's Headers present them.
func responseToJS(resp *api.Response) map[string]any {
	headers := map[string]any{}
	keys := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		headers[strings.ToLower(k)] = strings.Join(resp.Header[k], ", ")
	}
	status := resp.Status
	if status == 0 {
		status = 200
	}
	return map[string]any{"status": status, "headers": headers, "body": string(resp.Body)}
}

// version is the commit the engine was built from (12 hex digits), set by
// the build (scripts/wasm-flags.sh: -X main.version=...): reading it from
// runtime/debug's build information links a parser of 6.7 KB gzip.
var version = "devel"
