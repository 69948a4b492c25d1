//go:build js && wasm

package jsconsole

import (
	"errors"
	"syscall/js"

	"github.com/rvplay/rvplay/engine/api"
)

// Start starts a console on h in the Node this WebAssembly test runs in
// (go_js_wasm_exec): host.mjs is imported, and the messages cross as
// strings between Go and it.
func Start(h api.Handler, opts Options) (*Console, error) {
	if js.Global().Get("process").Type() != js.TypeObject {
		return nil, ErrNoNode
	}
	mod, err := await(js.Global().Get("Function").New("u", "return import(u)").Invoke("file://" + hostModule()))
	if err != nil {
		return nil, err
	}
	c := newConsole(h)
	// The host's messages come from a later task, never from inside a call
	// this package makes into JavaScript, and are handled in order by one
	// goroutine, so that the callback never blocks the event loop.
	inbox := make(chan []byte, 1<<16)
	go func() {
		for msg := range inbox {
			c.receive(msg)
		}
	}()
	toGo := js.FuncOf(func(_ js.Value, args []js.Value) any {
		inbox <- []byte(args[0].String())
		return nil
	})
	send := js.Global().Get("Function").New("f", `return (o) => { const s = JSON.stringify(o); setTimeout(() => f(s), 0); };`).Invoke(toGo)
	now := js.Null()
	if !opts.Now.IsZero() {
		now = js.ValueOf(float64(opts.Now.UnixMilli()))
	}
	receive := mod.Call("startHost", send, now)
	c.link = &inProcess{receive: receive, toGo: toGo, c: c}
	return c, nil
}

// inProcess is the link to host.mjs in this Node.
type inProcess struct {
	receive js.Value
	toGo    js.Func
	c       *Console
}

func (l *inProcess) send(msg []byte) {
	l.receive.Invoke(js.Global().Get("JSON").Call("parse", string(msg)))
}

func (l *inProcess) close() error {
	l.c.ended()
	return nil
}

// await waits for a Promise. Go's scheduler hands control back to
// JavaScript while this goroutine waits, so the Promise can settle.
func await(p js.Value) (js.Value, error) {
	type result struct {
		v   js.Value
		err error
	}
	ch := make(chan result, 1)
	then := js.FuncOf(func(_ js.Value, args []js.Value) any { ch <- result{v: args[0]}; return nil })
	catch := js.FuncOf(func(_ js.Value, args []js.Value) any {
		ch <- result{err: errors.New("jsconsole: " + args[0].Call("toString").String())}
		return nil
	})
	defer then.Release()
	defer catch.Release()
	p.Call("then", then, catch)
	r := <-ch
	return r.v, r.err
}
