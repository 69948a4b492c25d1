// Package wasmgc holds the garbage-collector setting of the engine in
// WebAssembly, shared by the lab (wasm/main.go) and the benchmark binary
// (bench/enginebench) so the benchmark measures what the page runs.
//
// Go's js/wasm runtime has one thread: every GC cycle stops the engine, and
// the mark work that native builds spread over idle cores runs inline. A
// lab's live heap is small (a few MiB), so with the default GOGC=100 the
// collector runs after every few MiB of allocation. Interleaved A/B runs
// under Node (bench/enginebench/node-driver.mjs, one process, 7–9
// rounds) gave with GOGC=400: Put 1.3–1.7×, TxnCompareAndSwap 1.2–1.4×,
// WatchFanOut100 1.0–1.2×, ranges unchanged (0.9–1.25×, noise), for a
// larger heap (a 10,000-key store: 72 MiB of wasm memory instead of 30).
// The memory limit bounds that growth for a lab that imports far more.
package wasmgc

import "runtime/debug"

const (
	// Percent is GOGC for the browser engine.
	Percent = 400
	// MemoryLimit makes the collector work harder as the heap nears it
	// (GOMEMLIMIT), whatever Percent would allow.
	MemoryLimit = 256 << 20
)

// Tune applies Percent and MemoryLimit; call it first thing in main.
func Tune() {
	debug.SetGCPercent(Percent)
	debug.SetMemoryLimit(MemoryLimit)
}
