// The smallest proof that the binary serves the playground: the health check
// answers, the landing page renders without a script error, and the engine
// is served the same whichever encoding the browser accepts.
import { createHash } from 'node:crypto';
import { expect, test } from '@playwright/test';

test('the health check answers 200', async ({ request }) => {
  const response = await request.get('/healthz');
  expect(response.status()).toBe(200);
});

test('the landing page renders', async ({ page }) => {
  const pageErrors: Error[] = [];
  page.on('pageerror', (error) => pageErrors.push(error));

  const response = await page.goto('/');
  expect(response?.status()).toBe(200);
  await expect(page).toHaveTitle(/rvplay/i);
  await expect(page.getByTestId('landing')).toBeVisible();
  expect(pageErrors).toEqual([]);
});

// The engine is served precompressed (rvplay.wasm.br and .gz, made beside it
// by the build, the compressed forms taken from a cache when the module is
// unchanged): whichever encoding a browser accepts, it gets the module the
// build made, never a compressed file left from an earlier one.
test('the engine is the same module in every encoding', async ({ request }) => {
  const sha256 = (body: Buffer) => createHash('sha256').update(body).digest('hex');
  const served: Record<string, string> = {};
  for (const encoding of ['identity', 'gzip', 'br']) {
    const response = await request.get('/static/wasm/rvplay.wasm', { headers: { 'Accept-Encoding': encoding } });
    expect(response.status()).toBe(200);
    expect(response.headers()['content-encoding'] ?? 'identity').toBe(encoding);
    const body = await response.body(); // decoded by the client
    expect(body.subarray(0, 4).toString('latin1')).toBe('\0asm');
    served[encoding] = `${body.length} B, sha256 ${sha256(body)}`;
  }
  expect(served.gzip).toBe(served.identity);
  expect(served.br).toBe(served.identity);
});
