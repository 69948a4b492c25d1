//go:build js && wasm

// Command wasm is the playground engine compiled to WebAssembly: one session
// on the memory backend (engine/mvcc, engine/kube and the transport-neutral
// API code), exposed to the page through a coarse bridge on
// globalThis.rvplay (see bridge.go). It must not import net/http (megabytes
// of WebAssembly) or anything that cannot build for js/wasm (SQLite).
package main

func main() {
	b := newBridge(newMemorySession)
	if err := b.reset(); err != nil {
		panic(err)
	}
	b.install("rvplay")
	select {} // keep the Go runtime alive for JS calls
}
