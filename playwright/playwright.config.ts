// End-to-end tests of rvplay in a real Chromium, against the real server binary.
//
// `task e2e` builds ../bin/rvplay (server and WebAssembly) first; this config
// only starts it, on a free loopback port with a database in a fresh temporary
// directory, so the readiness timeout never pays for compilation and every run
// starts from empty sessions.
//
// Set RVPLAY_BASE_URL to run the suite against a server that is already
// running (for example `task run`) instead.
import { defineConfig } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromiumArgs, chromiumExecutablePath } from './chromium';

const serverBinary = resolve(__dirname, '..', 'bin', 'rvplay');

// Playwright evaluates this file in the runner and again in every worker
// process. The port and the database directory are chosen once, in the runner,
// and reach the workers through the environment they inherit, so all of them
// agree on baseURL.
function freeLoopbackPort(): string {
  // Node has no synchronous listen, and the config must be synchronous: ask a
  // child process to bind port 0 and report what the kernel gave it.
  const script =
    "const s=require('node:net').createServer();" +
    "s.listen(0,'127.0.0.1',()=>{process.stdout.write(String(s.address().port));s.close();});";
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim();
}

const externalBaseURL = process.env.RVPLAY_BASE_URL;
if (!externalBaseURL) {
  process.env.RVPLAY_E2E_PORT ??= freeLoopbackPort();
  process.env.RVPLAY_E2E_DIR ??= mkdtempSync(join(tmpdir(), 'rvplay-e2e-'));
  if (!existsSync(serverBinary)) {
    throw new Error(`${serverBinary} is missing: build it first (go tool -modfile=tools/go.mod task build), or run task e2e`);
  }
}
const port = process.env.RVPLAY_E2E_PORT;
const baseURL = externalBaseURL ?? `http://127.0.0.1:${port}`;
const database = join(process.env.RVPLAY_E2E_DIR ?? tmpdir(), 'e2e.db');

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  // A flaky test is a bug to fix, not to retry.
  retries: 0,
  forbidOnly: !!process.env.CI,
  fullyParallel: true,
  // Two cores: the server, the browser and the runner share them.
  workers: 2,
  timeout: 30_000,
  expect: { timeout: 5_000 },
  // The whole suite must stay under eight minutes on a warm machine (issue
  // 11: every lesson is completed in the browser).
  globalTimeout: 8 * 60_000,
  reporter: [
    ['list'],
    ['html', { outputFolder: 'playwright-report', open: 'never' }],
  ],
  globalSetup: './global-setup.ts',
  globalTeardown: './global-teardown.ts',
  use: {
    baseURL,
    browserName: 'chromium',
    launchOptions: {
      executablePath: chromiumExecutablePath,
      args: chromiumArgs,
    },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    video: 'off',
  },
  webServer: externalBaseURL
    ? undefined
    : {
        command: `"${serverBinary}" --addr 127.0.0.1:${port} --db "${database}"`,
        url: `${baseURL}/healthz`,
        reuseExistingServer: false,
        timeout: 30_000,
        stdout: 'ignore',
        stderr: 'pipe',
        gracefulShutdown: { signal: 'SIGTERM', timeout: 5_000 },
      },
});
