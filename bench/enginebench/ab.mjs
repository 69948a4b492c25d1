// A/B of WebAssembly builds of enginebench in one Node process, without the
// native side: each round runs every op in every build, alternating which
// build goes first, and the figure per build is the best (min) and the
// median ns/op, with the speed against the first build. On this shared
// machine the minimum is the steadier figure for a small change; a change
// was kept when both agreed. Usage:
//   node --stack-size=8192 ab.mjs <wasm_exec.js> <a.wasm,b.wasm[,...]> [rounds] [op,op...]
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const [wasmExec, list, roundsArg, opsArg] = process.argv.slice(2);
createRequire(import.meta.url)(wasmExec); // defines globalThis.Go
const builds = [];
for (const path of list.split(',')) {
  const go = new globalThis.Go();
  const { instance } = await WebAssembly.instantiate(readFileSync(path), go.importObject);
  go.run(instance);
  while (!globalThis.enginebench) await new Promise((r) => setTimeout(r, 1));
  builds.push({ name: path.replace(/^.*\//, ''), eb: globalThis.enginebench, t: {} });
  delete globalThis.enginebench;
}
const ops = opsArg ? opsArg.split(',') : [...builds[0].eb.ops];
const rounds = Number(roundsArg ?? 11);
for (let i = 0; i < 2; i++) for (const b of builds) for (const op of ops) await b.eb.run(op); // warm-up
for (let i = 0; i < rounds; i++) {
  for (const op of ops) {
    for (const b of i % 2 ? [...builds].reverse() : builds) (b.t[op] ??= []).push(await b.eb.run(op));
  }
}
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
for (const op of ops) {
  const base = builds[0].t[op];
  console.log(op.padEnd(18) + builds.map((b) => `${b.name}: min ${Math.min(...b.t[op]).toFixed(0)} med ${median(b.t[op]).toFixed(0)}` +
    ` (${(Math.min(...base) / Math.min(...b.t[op])).toFixed(2)}× / ${(median(base) / median(b.t[op])).toFixed(2)}×)`).join('   '));
}
process.exit(0);
