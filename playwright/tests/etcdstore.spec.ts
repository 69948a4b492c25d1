// A server whose sessions live on an etcd cluster (--store etcd://) gives
// them the cluster's revisions, which jump when another session writes:
// the lab says so under its revisions, and so do the introductions and
// steps of the lessons that compare revision numbers (1 and 2), not the
// others. The suite's own server runs on SQLite, where none of it shows
// (lessons-session.spec.ts); this file starts one real etcd (Debian's
// etcd-server, which `task deps` installs: a missing one fails the test,
// never skips it) and one rvplay on it, for its one test.
import { expect, test } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { locale } from './lessonlib';

const etcdBinary = process.env.RVPLAY_ETCD || '/usr/bin/etcd';
const serverBinary = resolve(__dirname, '..', '..', 'bin', 'rvplay');

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const s = createServer();
    s.on('error', fail);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => done(port));
    });
  });
}

// start runs a process whose output is kept for the failure message.
function start(bin: string, args: string[]): { child: ChildProcess; output: () => string } {
  let out = '';
  const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (b) => { out = (out + b).slice(-4000); });
  child.stderr!.on('data', (b) => { out = (out + b).slice(-4000); });
  return { child, output: () => out };
}

// healthy waits until url answers 200, or fails when the process exits
// first (or after the hook's timeout).
async function healthy(url: string, p: ReturnType<typeof start>, what: string) {
  const exited = new Promise<never>((_, fail) => {
    p.child.once('error', (e) => fail(new Error(`${what}: ${e.message}`)));
    p.child.once('exit', (code) => fail(new Error(`${what} exited (${code}) before it was healthy:\n${p.output()}`)));
  });
  const ready = (async () => {
    for (;;) {
      try {
        if ((await fetch(url)).ok) return;
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  await Promise.race([ready, exited]);
}

async function stop(p: ReturnType<typeof start> | undefined) {
  if (!p || p.child.exitCode !== null || p.child.signalCode !== null) return;
  const gone = new Promise((r) => p.child.once('exit', r));
  p.child.kill('SIGTERM');
  await gone;
}

let etcd: ReturnType<typeof start> | undefined;
let rvplay: ReturnType<typeof start> | undefined;
let dir = '';
let baseURL = '';

test.beforeAll(async () => {
  test.setTimeout(60_000);
  dir = mkdtempSync(join(tmpdir(), 'rvplay-e2e-etcd-'));
  const [client, peer, port] = [await freePort(), await freePort(), await freePort()];
  const clientURL = `http://127.0.0.1:${client}`;
  const peerURL = `http://127.0.0.1:${peer}`;
  etcd = start(etcdBinary, ['--name', 'rvplay-e2e', '--data-dir', join(dir, 'etcd'),
    '--listen-client-urls', clientURL, '--advertise-client-urls', clientURL,
    '--listen-peer-urls', peerURL, '--initial-advertise-peer-urls', peerURL,
    '--initial-cluster', `rvplay-e2e=${peerURL}`, '--initial-cluster-state', 'new', '--log-level', 'warn']);
  await healthy(`${clientURL}/health`, etcd, `etcd (${etcdBinary}; task deps installs Debian's etcd-server)`);
  baseURL = `http://127.0.0.1:${port}`;
  rvplay = start(serverBinary, ['--addr', `127.0.0.1:${port}`, '--store', `etcd://127.0.0.1:${client}`]);
  await healthy(`${baseURL}/healthz`, rvplay, `rvplay --store etcd:// (${serverBinary})`);
});

test.afterAll(async () => {
  await stop(rvplay);
  await stop(etcd);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('a session on an etcd cluster says its revisions jump in the lab and in lessons 1 and 2, not in the others', async ({ browser }, testInfo) => {
  const ctx = await browser.newContext({ baseURL, locale });
  const created = await ctx.request.post('/sessions', { data: {} });
  expect(created.status()).toBe(201);
  const { id } = await created.json();
  const page = await ctx.newPage();
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto(`/s/${id}/`);
  await expect(page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 30_000 });
  await expect(page.getByTestId('store-note')).toBeVisible();
  const panel = page.getByTestId('lesson-panel');
  for (const [slug, note] of [['etcd-revisions', 1], ['resourceversion-is-mod-revision', 1], ['lost-update', 0]] as const) {
    await panel.locator(`[data-testid="lesson-link"][data-lesson="${slug}"]`).click();
    await expect(panel).toHaveAttribute('data-lesson', slug);
    await expect(panel.getByTestId('lesson-title')).toBeVisible();
    await expect(panel.getByTestId('lesson-store-note'), slug).toHaveCount(note);
    if (slug === 'resourceversion-is-mod-revision') await testInfo.attach(`lesson 2 on a session stored on etcd (1440x900)`, { body: await page.screenshot(), contentType: 'image/png' });
    await panel.getByTestId('lesson-all').first().click();
    await expect(panel).toHaveAttribute('data-view', 'list');
  }
  await ctx.close();
});
