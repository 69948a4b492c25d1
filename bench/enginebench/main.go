// Command enginebench times the engine's benchmark operations (ops.go).
// Natively it runs one round (after a warm-up round) and prints
// {"op": ns/op, ...} as JSON; built for js/wasm it exposes
// globalThis.enginebench = {ops, run(op, n) → Promise<ns/op>,
// gcPercent(p) → previous}, so a driver (Node: node-driver.mjs, Chromium:
// playwright/tests/lab-bench.spec.ts) can interleave native and wasm
// rounds.
package main
