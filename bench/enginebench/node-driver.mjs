// Interleaves native and Node-WebAssembly rounds of the engine benchmark ops
// (bench/enginebench) and prints, per op, the median over rounds of
// the wasm/native throughput ratio. Usage:
//   node [v8 flags] node-driver.mjs <native binary> <a.wasm[@gc][,b.wasm[@gc]...]> <wasm_exec.js> [rounds] [warmup]
// ("x.wasm@400": that instance runs with debug.SetGCPercent(400))
// Each round runs, op by op, the native binary (it warms up, then times the
// op) and then the op once in each long-lived wasm instance; the machine is shared,
// so only ratios of neighbouring runs are trusted. Several wasm builds (A/B
// of an engine change) run side by side in the one process.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const [nativeBin, wasmPath, wasmExec, roundsArg, warmupArg] = process.argv.slice(2);
const rounds = Number(roundsArg ?? 5), warmup = Number(warmupArg ?? 3);
createRequire(import.meta.url)(wasmExec); // defines globalThis.Go
const builds = [];
for (const spec of wasmPath.split(',')) {
  // "x.wasm@400" runs that instance with debug.SetGCPercent(400).
  // "x.wasm@-1:67108864": GC off until the heap reaches 64 MiB.
  const [path, gc] = spec.split('@');
  const go = new globalThis.Go();
  const { instance } = await WebAssembly.instantiate(readFileSync(path), go.importObject);
  go.run(instance);
  while (!globalThis.enginebench) await new Promise((r) => setTimeout(r, 1));
  builds.push({ name: spec.replace(/^.*\//, ''), eb: globalThis.enginebench, mem: instance.exports.mem });
  if (gc) globalThis.enginebench.gcPercent(...gc.split(':').map(Number));
  delete globalThis.enginebench;
}
const ops = [...builds[0].eb.ops];
const wasmRound = async (eb) => { const r = {}; for (const op of ops) r[op] = await eb.run(op); return r; };
for (let i = 0; i < warmup; i++) for (const b of builds) await wasmRound(b.eb);
const per = () => Object.fromEntries(ops.map((o) => [o, []]));
const nat = per();
for (const b of builds) { b.ratios = per(); b.ns = per(); }
// Native and wasm alternate op by op, so each pair runs within a second of
// each other and sees the same load.
for (let i = 0; i < rounds; i++) {
  for (const op of ops) {
    const n = JSON.parse(execFileSync(nativeBin, ['-ops', op], { encoding: 'utf8' }))[op];
    nat[op].push(n);
    for (const b of builds) {
      const w = await b.eb.run(op);
      b.ratios[op].push(n / w);
      b.ns[op].push(w);
    }
  }
}
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const pct = (x) => (100 * x).toFixed(0);
for (const b of builds) {
  console.log(`${b.name} (${process.version}, ${process.execArgv.join(' ') || 'default flags'}): median of ${rounds} interleaved rounds after ${warmup} warm-up; wasm memory ${(b.mem.buffer.byteLength / 1048576).toFixed(0)} MiB`);
  console.log('  op                   native ns/op   wasm ns/op   wasm/native (min–max)');
  for (const op of ops) {
    console.log(`  ${op.padEnd(20)} ${median(nat[op]).toFixed(0).padStart(12)} ${median(b.ns[op]).toFixed(0).padStart(12)}   ${pct(median(b.ratios[op])).padStart(3)}%  (${pct(Math.min(...b.ratios[op]))}–${pct(Math.max(...b.ratios[op]))}%)`);
  }
}
if (builds.length > 1) {
  console.log(`speed of each build against ${builds[0].name} (median of per-round ratios)`);
  for (const b of builds.slice(1)) {
    console.log(`  ${b.name}: ` + ops.map((op) => `${op} ${median(b.ratios[op].map((r, i) => r / builds[0].ratios[op][i])).toFixed(2)}×`).join(', '));
  }
}
process.exit(0);
