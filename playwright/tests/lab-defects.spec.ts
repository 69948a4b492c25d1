// What a new user hit in the lab (issue 11), one assertion each: the
// request log a card clipped, time travel that changed only one table, the
// compaction line on the wrong side, a server session that looked live
// when the server was gone, presentation mode on a projector, the page's
// words.
import { expect, test, type APIRequestContext, type Page, type TestInfo } from '@playwright/test';
import { exchange, newClass, openLab, run, shownHead } from './labhelpers';

function watchErrors(page: Page) {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

async function newSession(request: APIRequestContext): Promise<string> {
  return (await newClass(request)).id;
}

async function shot(page: Page, testInfo: TestInfo, name: string) {
  await testInfo.attach(name, { body: await page.screenshot(), contentType: 'image/png' });
}

// inside says whether every element matching sel within box lies inside
// box's own rectangle (not clipped by its edges).
async function clipped(page: Page, box: string, sel: string) {
  return page.evaluate(([box, sel]) => {
    const b = document.querySelector(box)!.getBoundingClientRect();
    const out: string[] = [];
    for (const e of document.querySelectorAll(`${box} ${sel}`)) {
      const r = e.getBoundingClientRect();
      if (r.top < b.top - 0.5 || r.bottom > b.bottom + 0.5 || r.left < b.left - 0.5 || r.right > b.right + 0.5) out.push(`${e.textContent} ${JSON.stringify(r)}`);
    }
    return out;
  }, [box, sel]);
}

// The natural first try, then every log line's status must be in the card.
async function conflict(page: Page) {
  await exchange(page, 'a', 'get');
  await exchange(page, 'b', 'get');
  await expect(await exchange(page, 'a', 'put')).toHaveAttribute('data-status', '200');
  await expect(await exchange(page, 'b', 'put')).toHaveAttribute('data-status', '409');
}

for (const [width, height] of [[1280, 800], [1440, 900], [1920, 1080]]) {
  test(`a client card shows its request log and each line's status at ${width}x${height}`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height });
    const errors = watchErrors(page);
    await openLab(page);
    await conflict(page);
    for (const id of ['a', 'b']) {
      const card = `#client-${id}`;
      const log = page.getByTestId(`client-${id}-log`);
      await expect(log).toBeVisible();
      expect(await clipped(page, card, '.log')).toEqual([]);
      expect(await clipped(page, card, '[data-testid="exchange-status"]')).toEqual([]);
      expect(await clipped(page, card, '.outcome')).toEqual([]);
    }
    await expect(page.getByTestId('client-b-outcome')).toBeInViewport();
    expect(errors).toEqual([]);
    await shot(page, testInfo, `client cards at ${width}x${height}`);
  });
}

test('time travel shows the store as it was: table, key history and timeline; marks are clickable', async ({ page }, testInfo) => {
  await openLab(page);
  await run(page, 'etcdctl put k1 v1');
  await run(page, 'etcdctl put k1 v2');
  await run(page, 'etcdctl put k1 v3');
  const row = page.locator('[data-testid="etcd-key"][data-key="k1"]');
  await expect(row.locator('td').nth(3)).toHaveText('3');
  // The first put's revision, read once the view has all three.
  const r1 = Number(await row.locator('td').nth(1).textContent());
  await row.click();
  await expect(page.getByTestId('history-entry')).toHaveCount(3);

  await page.locator(`[data-testid="timeline-tick"][data-rev="${r1}"]`).click();
  await expect(page.getByTestId('time-travel-rev')).toHaveText(String(r1));
  await expect(row.locator('td')).toHaveText(['k1', String(r1), String(r1), '1']);
  await expect(page.locator('[data-testid="history-entry"].later')).toHaveCount(2);
  await expect(page.locator(`[data-testid="timeline-tick"][data-rev="${r1 + 1}"]`)).toHaveClass(/later/);
  await expect(page.locator(`[data-testid="timeline-tick"][data-rev="${r1}"]`)).toHaveAttribute('aria-current', 'true');
  await shot(page, testInfo, 'time travel');
  await page.getByTestId('time-travel-head').click();
  await expect(page.getByTestId('time-travel-rev')).toHaveText('head');
  await expect(page.locator('[data-testid="history-entry"].later')).toHaveCount(0);

  // Compaction at r1+1: r1 is gone, r1+1 stays readable; the line sits between them.
  await run(page, `etcdctl compaction ${r1 + 1}`);
  await expect(page.getByTestId('compact-revision')).toHaveText(String(r1 + 1));
  const before = page.locator(`[data-testid="timeline-tick"][data-rev="${r1 + 1}"]`);
  await expect(page.getByTestId('compaction-line')).toHaveAttribute('data-rev', String(r1 + 1));
  expect(await before.evaluate((e) => e.previousElementSibling?.getAttribute('data-testid'))).toBe('compaction-line');
  await expect(page.locator(`[data-testid="timeline-tick"][data-rev="${r1}"]`)).toBeDisabled();

  // Compacting at the head leaves the slider at the head, at the far right.
  const head = await shownHead(page);
  await page.getByTestId('compact').click();
  await expect(page.getByTestId('compact-revision')).toHaveText(head);
  const slider = page.getByTestId('time-travel');
  await expect(slider).toHaveAttribute('max', head);
  await expect(slider).toHaveValue(head);
  await expect(page.getByTestId('time-travel-rev')).toHaveText('head');
});

test('the page has an h1 and plain words: no transport jargon, no Stop on an ended stream', async ({ page }) => {
  await openLab(page);
  await expect(page.getByRole('heading', { level: 1 })).toHaveText('rvplay lab');
  await page.getByTestId('watch-start').click();
  const stream = page.getByTestId('stream').first();
  await expect(stream.getByTestId('stream-state')).toHaveText('watching');
  await stream.getByTestId('stream-stop').click();
  await expect(stream.getByTestId('stream-state')).toHaveText('stopped');
  await expect(stream.getByTestId('stream-stop')).toHaveCount(0);
  await expect(stream.getByRole('button', { name: /Remove/ })).toBeVisible();
  await expect(page.locator('body')).not.toContainText(/\(wasm\)|ended: eof|\[object Object\]/);
  await stream.getByRole('button', { name: /Remove/ }).click();
  await expect(page.getByTestId('stream')).toHaveCount(0);
});

test('a server session that cannot reach its server says so, retries, and never throws', async ({ page }, testInfo) => {
  const name = await newSession(page.request);
  const errors = watchErrors(page);
  await openLab(page, `/s/${name}/`);
  await expect(page.getByTestId('conn-status')).toHaveAttribute('data-state', 'ready');
  const down = (route: { abort: (code: string) => Promise<void> }) => route.abort('connectionrefused');
  await page.route(`**/s/${name}/**`, down);
  await page.route('**/healthz', down);

  await page.getByTestId('client-a-get').click();
  await expect(page.getByTestId('conn-status')).toHaveAttribute('data-state', 'lost');
  await expect(page.getByTestId('conn-status')).toContainText('server unreachable');
  // The wait it shows is the current one: it grows as probes fail (it
  // said the first, 1 s, however long the lab then waited).
  await expect(page.getByTestId('conn-status')).toContainText(/retrying in ([2-9]|\d\d) s/);
  await expect(page.getByTestId('client-a-outcome').getByTestId('outcome-status')).toHaveText('0 no answer');
  await page.getByTestId('compact').click();
  await expect(page.getByTestId('notice')).toContainText('could not be reached');
  await shot(page, testInfo, 'server unreachable');

  await page.unroute(`**/s/${name}/**`, down);
  await page.unroute('**/healthz', down);
  await expect(page.getByTestId('conn-status')).toHaveAttribute('data-state', 'ready', { timeout: 10_000 });
  await expect(page.getByTestId('conn-status')).toContainText('live');
  await expect(page.locator('body')).not.toContainText('[object Object]');
  expect(errors).toEqual([]);
});

test('another browser\'s compaction shows without a write; Reset is not offered on a server session', async ({ page }) => {
  const name = await newSession(page.request);
  await openLab(page, `/s/${name}/`);
  await page.getByTestId('lab-menu').click();
  await expect(page.getByTestId('reset')).toBeHidden();
  await expect(page.getByTestId('export')).toBeVisible();
  // kubectl from one's own terminal: the session's kubeconfig.
  await expect(page.getByTestId('kubeconfig')).toHaveAttribute('href', `/s/${name}/kubeconfig`);
  const head = await shownHead(page, name);
  const r = await page.request.post(`/s/${name}/v3/kv/compaction`, { data: { revision: head } });
  expect(r.status()).toBe(200);
  await expect(page.getByTestId('compact-revision')).toHaveText(head, { timeout: 10_000 });
  await expect(page.getByTestId('notice')).toContainText(`compacted the store at revision ${head}`);
});

test('a share link or a lab file opened on a server session opens the offline lab and leaves the session alone', async ({ page }) => {
  const name = await newSession(page.request);
  await openLab(page, `/s/${name}/`);
  const before = await shownHead(page, name);
  await run(page, 'etcdctl put shared-here v');
  await page.getByTestId('lab-menu').click();
  await page.getByTestId('share').click();
  // The link is written once the history is compressed, after the click.
  const link = page.getByTestId('share-link');
  await expect(link).toHaveValue(/#h=/);
  const url = await link.inputValue();
  expect(new URL(url).pathname).toBe('/lab');

  // The same history as a link into the session: it goes to the offline lab.
  const code = new URL(url).hash;
  await page.goto(`/s/${name}/${code}`);
  // The offline lab drops the link's history from its URL once it has
  // loaded the engine and replayed it: as long as openLab allows.
  await expect(page).toHaveURL(/\/lab$/, { timeout: 20_000 });
  await expect(page.getByTestId('lab')).toHaveAttribute('data-replayed', '1');
  await expect(page.getByTestId('mode')).toHaveText('offline');

  // A lab file imported on the session: the offline lab too.
  await openLab(page, `/s/${name}/`);
  const file = { format: 'rvplay-lab-history', version: 1, ops: [{ op: 'cmd', line: 'etcdctl put from-file v' }] };
  await page.getByTestId('import-file').setInputFiles({ name: 'lab.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(file)) });
  await expect(page).toHaveURL(/\/lab$/, { timeout: 20_000 });
  await expect(page.getByTestId('lab')).toHaveAttribute('data-replayed', '1');

  // The session has the one write made in it, nothing replayed.
  const keys = await page.request.post(`/s/${name}/v3/kv/range`, { data: { key: 'AA==', range_end: 'AA==', keys_only: true } });
  const names = ((await keys.json()).kvs || []).map((kv: { key: string }) => Buffer.from(kv.key, 'base64').toString());
  expect(names).toContain('shared-here');
  expect(names).not.toContain('from-file');
  expect(Number(before)).toBeGreaterThan(1);
});

test('on a busy server session the lab watches the recent keyspace, not from revision 1', async ({ page }) => {
  test.setTimeout(60_000);
  const name = await newSession(page.request);
  for (let i = 0; i < 30; i++) {
    await Promise.all(Array.from({ length: 10 }, (_, k) =>
      page.request.post(`/s/${name}/v3/kv/put`, { data: { key: Buffer.from(`busy/${k}`).toString('base64'), value: Buffer.from(String(i)).toString('base64') } })));
  }
  const starts: number[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('/v3/watch')) starts.push(Number(JSON.parse(r.postData() || '{}').create_request?.start_revision || 0));
  });
  await openLab(page, `/s/${name}/`);
  const head = Number(await shownHead(page, name));
  expect(head).toBeGreaterThan(300);
  await expect.poll(() => starts.length).toBeGreaterThan(0);
  for (const s of starts) expect(s === 0 || s > head - 130, `watch from ${s} at head ${head}`).toBeTruthy();
  // The timeline says what it does not know instead of drawing it empty.
  await expect(page.locator('[data-testid="timeline-tick"]').first()).toBeVisible();
});

// headerSpread is how far apart the middles of the header's items are: a
// header on one row keeps them within a few pixels.
async function headerSpread(page: Page) {
  return page.evaluate(() => {
    const middles = [...document.querySelectorAll('header.bar > *')].filter((e) => (e as HTMLElement).offsetParent).map((e) => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2));
    return Math.max(...middles) - Math.min(...middles);
  });
}

for (const [width, height] of [[1280, 720], [1920, 1080]]) {
  test(`presentation mode fits a projector at ${width}x${height}`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width, height });
    await openLab(page);
    await page.getByTestId('present').click();
    await expect(page.locator('html')).toHaveClass(/present/);
    await conflict(page);
    await page.getByTestId('watch-start').click();
    await expect(page.getByTestId('watch-event').first()).toBeVisible();
    await run(page, 'kubectl create configmap a-rather-long-name-for-a-projector --from-literal=x=1');
    await expect(page.locator('[data-testid="etcd-key"][data-key="/registry/configmaps/default/a-rather-long-name-for-a-projector"]')).toBeVisible();

    // The smallest text is readable from the back of a room.
    const sizes = await page.evaluate(() => Object.fromEntries(
      ['ol.log summary', '.events li', '.tick small', '#etcd-keys td', '.console-output', '.outcome p', '.bar'].map((sel) => {
        const e = document.querySelector(sel);
        return [sel, e ? parseFloat(getComputedStyle(e).fontSize) : 0];
      })));
    for (const [sel, px] of Object.entries(sizes)) expect(px, `${sel}: ${px}px`).toBeGreaterThanOrEqual(16);

    // The header stays one row.
    expect(await headerSpread(page)).toBeLessThan(12);
    // At 1920 wide the connection status is whole, offline and beside a
    // guarded session's random id: it gives way with "…" only on smaller
    // screens.
    if (width >= 1920) {
      const conn = page.getByTestId('conn-status');
      await expect(conn).toHaveText('ready · the engine runs in this page');
      expect(await conn.evaluate((c) => c.scrollWidth <= c.clientWidth)).toBe(true);
      const session = await page.context().newPage();
      await session.setViewportSize({ width, height });
      const name = await newSession(page.request);
      await openLab(session, `/s/${name}/`);
      await expect(session.locator('html')).toHaveClass(/present/);
      await expect(session.getByTestId('conn-status')).toHaveText('live · the server answers');
      expect(await session.getByTestId('conn-status').evaluate((c) => c.scrollWidth <= c.clientWidth)).toBe(true);
      // Its server unreachable, the status is whole too (on two lines: one
      // cut it to "server unreachable · ret…"), the header still one row.
      const down = (route: { abort: (code: string) => Promise<void> }) => route.abort('connectionrefused');
      await session.route(`**/s/${name}/**`, down);
      await session.route('**/healthz', down);
      await session.getByTestId('client-a-get').click();
      await expect(session.getByTestId('conn-status')).toHaveAttribute('data-state', 'lost');
      await expect(session.getByTestId('conn-status')).toContainText(/^server unreachable\s·\sretrying/);
      expect(await session.getByTestId('conn-status').evaluate((c) => c.scrollWidth <= c.clientWidth && c.scrollHeight <= c.clientHeight)).toBe(true);
      expect(await headerSpread(session)).toBeLessThan(12);
      await shot(session, testInfo, `presentation mode at ${width}x${height}, the server unreachable`);
      await session.close();
    }

    // The client cards keep their logs.
    for (const id of ['a', 'b']) {
      expect(await clipped(page, `#client-${id}`, '.log')).toEqual([]);
      expect(await clipped(page, `#client-${id}`, '[data-testid="exchange-status"]')).toEqual([]);
    }
    // An etcd key breaks only after a "/".
    const badBreaks = await page.evaluate(() => {
      const out: string[] = [];
      for (const td of document.querySelectorAll('#etcd-keys td.key')) {
        const text = td.textContent || '';
        const range = document.createRange();
        let lineTop = -1;
        let prev = '';
        const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          for (let i = 0; i < (node.textContent || '').length; i++) {
            range.setStart(node, i);
            range.setEnd(node, i + 1);
            const top = Math.round(range.getBoundingClientRect().top);
            if (lineTop >= 0 && top > lineTop + 2 && prev !== '/') out.push(`${text}: breaks after "${prev}"`);
            lineTop = top;
            prev = node.textContent![i];
          }
        }
      }
      return out;
    });
    expect(badBreaks).toEqual([]);
    await shot(page, testInfo, `presentation mode at ${width}x${height}`);
  });
}
