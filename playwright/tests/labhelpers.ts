// What the lab's end-to-end tests share: opening a lab, typing a console
// command, clicking a client's button and waiting for its request, a new
// guarded session.
import { expect, type APIRequestContext, type Page } from '@playwright/test';

export async function openLab(page: Page, path = '/lab') {
  await page.goto(path);
  await expect(page.getByTestId('lab')).toHaveAttribute('data-ready', 'true', { timeout: 20_000 });
}

// run types a command into the console; the console echoes each command
// before its output.
export async function run(page: Page, command: string) {
  const input = page.getByTestId('console-input');
  await input.fill(command);
  await input.press('Enter');
  await expect(page.getByTestId('console-line').filter({ hasText: `$ ${command}` }).last()).toBeVisible();
}

// exchange clicks a client's button and waits for the request it makes to
// appear in that client's log; it returns that log entry.
export async function exchange(page: Page, client: string, action: 'get' | 'put') {
  const log = page.getByTestId(`client-${client}-log`).getByTestId('exchange');
  const before = await log.count();
  await page.getByTestId(`client-${client}-${action}`).click();
  await expect(log).toHaveCount(before + 1);
  return log.last();
}

// newClass creates a guarded session whose teacher is the browser context
// of request (page.request or context.request): the answer's cookie
// carries the teacher's token to that context's pages and requests.
export async function newClass(request: APIRequestContext): Promise<{ id: string; joinCode: string }> {
  const r = await request.post('/sessions', { data: {} });
  expect(r.status()).toBe(201);
  return r.json();
}

// serverHead asks the session's etcd API for its store revision: a lab
// learns the head through its watch, some time after a command's answer.
export async function serverHead(request: APIRequestContext, session: string): Promise<number> {
  const r = await request.post(`/s/${session}/v3/kv/range`, { data: { key: Buffer.from('rvplay-head').toString('base64'), count_only: true } });
  expect(r.status()).toBe(200);
  return Number((await r.json()).header.revision);
}

// engineHead asks the offline lab's own store (the engine in the page) for
// its revision.
export async function engineHead(page: Page): Promise<number> {
  return page.evaluate(async () => {
    const r = await (window as any).rvplay.request({
      method: 'POST', path: '/v3/kv/range', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ key: btoa('rvplay-head'), count_only: true }),
    });
    if (r.status !== 200) throw new Error(r.body);
    return Number(JSON.parse(r.body).header.revision);
  });
}

// shownHead reads the store's revision where it is known (the session's
// server, or the offline lab's engine) and waits for the lab's header to
// show it: the lab learns the head by its watch, after a command's answer,
// and draws it on the next frame, so the header can lag both data-ready
// and the row of the last write.
export async function shownHead(page: Page, session?: string): Promise<string> {
  const head = String(session ? await serverHead(page.request, session) : await engineHead(page));
  await expect(page.getByTestId('store-revision')).toHaveText(head);
  return head;
}

// brokenHangulWords answers the Korean words that a line break cuts in
// two inside the element (Korean is set breaking between words): for each
// pair of adjacent Hangul letters in its text, whether the second starts a
// new line.
export async function brokenHangulWords(page: Page, selector: string): Promise<string[]> {
  return page.locator(selector).evaluate((root) => {
    const hangul = /[\uac00-\ud7a3]/;
    const broken: string[] = [];
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const text = node.textContent || '';
      const range = document.createRange();
      let lastTop: number | null = null;
      for (let i = 0; i < text.length; i++) {
        range.setStart(node, i);
        range.setEnd(node, i + 1);
        const rect = range.getClientRects()[0];
        const top = rect ? Math.round(rect.top) : null;
        if (i > 0 && top !== null && lastTop !== null && top > lastTop && hangul.test(text[i]) && hangul.test(text[i - 1])) {
          const start = text.lastIndexOf(' ', i) + 1;
          const end = text.indexOf(' ', i);
          broken.push(text.slice(start, end < 0 ? undefined : end));
        }
        if (top !== null) lastTop = top;
      }
    }
    return broken;
  });
}
