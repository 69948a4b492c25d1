//go:build js && wasm

package main

import (
	"context"
	"errors"
	"sync"
	"syscall/js"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/wasm/internal/labapi"
	"github.com/rvplay/rvplay/wasm/internal/remote"
)

// clientHubs publishes engine/client to the page as rvplay.clients:
//
//	open({base, clock}, onStep) → hub     base "" = the in-page session,
//	                                      else a server session's URL;
//	                                      clock "manual" = moved by "advance"
//	call(hub, requestJSON, mutate?) → Promise<answerJSON>
//	close(hub)
//
// onStep receives every step of every client of the hub as a JSON string.
// The operations and both JSON shapes are documented in
// web/static/js/goclients.js, the module pages use instead of this.
type clientHubs struct {
	b *bridge

	mu     sync.Mutex
	hubs   map[int]*labapi.Hub
	nextID int
}

func (b *bridge) installClients(ns js.Value) {
	ch := &clientHubs{b: b, hubs: map[int]*labapi.Hub{}}
	o := js.Global().Get("Object").New()
	o.Set("open", b.fn(ch.jsOpen))
	o.Set("call", b.fn(ch.jsCall))
	o.Set("close", b.fn(ch.jsClose))
	ns.Set("clients", o)
}

// inPage is the offline session as it is now: a reset replaces it, and the
// clients carry on against the new one.
func (b *bridge) inPage() api.Handler {
	return api.HandlerFunc(func(ctx context.Context, req *api.Request) *api.Response {
		return b.current().Serve(ctx, req)
	})
}

func (ch *clientHubs) jsOpen(this js.Value, args []js.Value) any {
	var base, clockMode string
	var onStep js.Value
	if len(args) > 0 && args[0].Type() == js.TypeObject {
		if v := args[0].Get("base"); v.Type() == js.TypeString {
			base = v.String()
		}
		if v := args[0].Get("clock"); v.Type() == js.TypeString {
			clockMode = v.String()
		}
	}
	if len(args) > 1 && args[1].Type() == js.TypeFunction {
		onStep = args[1]
	}
	var h api.Handler = ch.b.inPage()
	if base != "" {
		h = remote.New(base)
	}
	opts := labapi.Options{}
	if clockMode == "manual" {
		opts.Clock = clock.NewFake(time.Now())
	}
	if onStep.Truthy() {
		opts.OnStep = func(step []byte) { onStep.Invoke(string(step)) }
	}
	ch.mu.Lock()
	id := ch.nextID
	ch.nextID++
	ch.hubs[id] = labapi.New(h, opts)
	ch.mu.Unlock()
	return id
}

func (ch *clientHubs) hub(args []js.Value) (*labapi.Hub, error) {
	if len(args) == 0 || args[0].Type() != js.TypeNumber {
		return nil, errors.New("rvplay.clients: the first argument is the hub open() returned")
	}
	ch.mu.Lock()
	defer ch.mu.Unlock()
	h := ch.hubs[args[0].Int()]
	if h == nil {
		return nil, errors.New("rvplay.clients: no such hub (closed?)")
	}
	return h, nil
}

func (ch *clientHubs) jsCall(this js.Value, args []js.Value) any {
	h, err := ch.hub(args)
	if err == nil && (len(args) < 2 || args[1].Type() != js.TypeString) {
		err = errors.New("rvplay.clients.call: the second argument is the request as a JSON string")
	}
	if err != nil {
		return promise(func() (any, error) { return nil, err })
	}
	req := []byte(args[1].String())
	var mutate labapi.Mutate
	if len(args) > 2 && args[2].Type() == js.TypeFunction {
		fn := args[2]
		mutate = func(obj []byte) (out []byte, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = errors.New(toString(r))
				}
			}()
			v := fn.Invoke(string(obj))
			if v.Type() != js.TypeString {
				v = js.Global().Get("JSON").Call("stringify", v)
			}
			if v.Type() != js.TypeString {
				return nil, errors.New("the change function returned no object")
			}
			return []byte(v.String()), nil
		}
	}
	return promise(func() (any, error) {
		out, err := h.Call(context.Background(), req, mutate)
		if err != nil {
			return nil, err
		}
		return string(out), nil
	})
}

func (ch *clientHubs) jsClose(this js.Value, args []js.Value) any {
	h, err := ch.hub(args)
	if err != nil {
		return nil
	}
	ch.mu.Lock()
	delete(ch.hubs, args[0].Int())
	ch.mu.Unlock()
	go h.Close() // stopping informers waits for their watches: not in a callback
	return nil
}
