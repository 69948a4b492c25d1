//go:build js && wasm

// Command wasm is the playground engine compiled to WebAssembly: one session
// on the memory backend (engine/mvcc, engine/kube and the transport-neutral
// API code), exposed to the page through a coarse bridge on
// globalThis.rvplay (see bridge.go), and the lab's Go clients
// (wasm/internal/labapi), which talk to that session offline and to the
// server on a server session (wasm/internal/remote: fetch and WebSocket).
// It must not import net/http (megabytes of WebAssembly) or anything that
// cannot build for js/wasm (SQLite).
package main

import (
	"syscall/js"

	"github.com/rvplay/rvplay/wasm/wasmgc"
)

func main() {
	wasmgc.Tune() // fewer stop-the-world GC cycles on the one thread
	// Marks for the page's start-up profile: package initialisation ends
	// here, session creation ends at "go-session".
	mark("go-main")
	b := newBridge(newMemorySession)
	if err := b.reset(); err != nil {
		panic(err)
	}
	mark("go-session")
	b.install("rvplay")
	select {} // keep the Go runtime alive for JS calls
}

func mark(name string) {
	if p := js.Global().Get("performance"); p.Truthy() && p.Get("mark").Truthy() {
		p.Call("mark", name)
	}
}
