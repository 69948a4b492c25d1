// The engine's throughput in the browser against native: the same workload
// (wasm/workload.go: creates, reads, compare-and-swap updates, lists and a
// compaction over a lab-sized keyspace) runs in this Chromium through the
// WebAssembly bridge (rvplay.bench) and natively through `go test -bench`.
// Both figures are printed and attached; the browser must reach 40% of native.
import { expect, test } from '@playwright/test';
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const repo = resolve(__dirname, '..', '..');

async function nativeNsPerWorkload(): Promise<number> {
  const { stdout } = await promisify(execFile)('go',
    ['test', '-run', '^$', '-bench', '^BenchmarkEngineWorkload$', '-benchtime', '20x', '-count', '5', './wasm'],
    { cwd: repo, timeout: 120_000 });
  const runs = [...stdout.matchAll(/^BenchmarkEngineWorkload\S*\s+\d+\s+(\d+(?:\.\d+)?) ns\/op/gm)].map((m) => Number(m[1]));
  expect(runs.length).toBeGreaterThan(0);
  return Math.min(...runs);
}

test('the engine in the browser reaches at least 40% of native throughput', async ({ page }, testInfo) => {
  test.setTimeout(180_000);
  const native = await nativeNsPerWorkload();

  await page.goto('/lab');
  await expect(page.getByTestId('lab')).toHaveAttribute('data-ready', 'true');
  const browser = await page.evaluate(async () => {
    const bench = (globalThis as any).rvplay.bench as (n: number) => Promise<{ ops: number, nsPerOp: number }>;
    for (let i = 0; i < 5; i++) await bench(5); // let V8 tier the hot code up
    const runs: number[] = [];
    let ops = 0;
    for (let i = 0; i < 5; i++) {
      const t = performance.now();
      const r = await bench(5);
      runs.push(((performance.now() - t) * 1e6) / 5);
      ops = r.ops / 5;
    }
    return { nsPerWorkload: Math.min(...runs), opsPerWorkload: ops };
  });
  const ratio = native / browser.nsPerWorkload;
  const line = `engine workload (${browser.opsPerWorkload} ops): native ${(native / 1e6).toFixed(2)} ms, ` +
    `Chromium wasm ${(browser.nsPerWorkload / 1e6).toFixed(2)} ms → wasm at ${(100 * ratio).toFixed(0)}% of native throughput`;
  console.log(line);
  testInfo.annotations.push({ type: 'throughput', description: line });
  await testInfo.attach('throughput', { body: line, contentType: 'text/plain' });
  expect(ratio).toBeGreaterThanOrEqual(0.4);
});
