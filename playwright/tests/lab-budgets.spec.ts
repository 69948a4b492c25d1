// The lab's budgets (issue 11), measured in Chromium: a lesson opens in
// under 300 ms once the lab is interactive, and the lab stays responsive
// (no long task over 50 ms in Chromium's performance timeline) while 200
// events a second stream in. The figures are printed and attached; they
// are recorded in BENCHMARKS.md.
import { expect, test, type Page } from '@playwright/test';
import { cpus, loadavg } from 'node:os';

// busy says the machine is too loaded for a timing budget to mean
// anything: more runnable work than cores (shared CI machines). The
// figures are still measured and attached; the budget is then not asserted.
const busy = () => loadavg()[0] / cpus().length > 1;

async function ready(page: Page) {
  await expect(page.getByTestId('lab')).toHaveAttribute('data-ready', 'true', { timeout: 20_000 });
  await expect(page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 20_000 });
}

// between is how long after mark `from` mark `to` came (0 when it came
// first: the lesson list shows before the lab is interactive); -1 when one
// is missing.
const between = (page: Page, from: string, to: string) => page.evaluate(([a, b]) => {
  const ma = performance.getEntriesByName(a).at(-1);
  const mb = performance.getEntriesByName(b).at(-1);
  return ma && mb ? Math.max(0, Math.round(mb.startTime - ma.startTime)) : -1;
}, [from, to]);

test('a lesson opens in under 300 ms after the lab is interactive', async ({ page }, testInfo) => {
  // A first visit fills the caches; the figures are a learner's later visit.
  await page.goto('/lab');
  await ready(page);
  await page.reload();
  await ready(page);
  const list = await between(page, 'lab-interactive', 'lesson-list-rendered');

  // From a click in the list to the lesson's first page.
  const panel = page.getByTestId('lesson-panel');
  const click = await page.evaluate(() => new Promise<number>((resolve) => {
    const t0 = performance.now();
    new MutationObserver((_, obs) => {
      if (document.getElementById('lesson-panel')!.dataset.view === 'step') { obs.disconnect(); resolve(Math.round(performance.now() - t0)); }
    }).observe(document.getElementById('lesson-panel')!, { attributes: true, subtree: true, childList: true });
    (document.querySelector('[data-lesson="lost-update"]') as HTMLButtonElement).click();
  }));
  await expect(panel.getByTestId('lesson-start')).toBeVisible();

  // A deep link to a step of a lesson in progress: interactive, then the step.
  await panel.getByTestId('lesson-start').click();
  await expect(panel).toHaveAttribute('data-step', '1');
  await page.reload();
  await ready(page);
  await expect(panel).toHaveAttribute('data-step', '1');
  const deep = await between(page, 'lab-interactive', 'lesson-rendered');

  const load = `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`;
  const line = `lesson list ${list} ms after interactive; a click opens a lesson in ${click} ms; a step in progress shows ${deep} ms after interactive (${load})`;
  console.log(line);
  testInfo.annotations.push({ type: 'lesson-open', description: line });
  // The list and a click need no request: always within the budget.
  expect(list).toBeGreaterThanOrEqual(0);
  expect(list).toBeLessThan(300);
  expect(click).toBeLessThan(300);
  expect(deep).toBeGreaterThanOrEqual(0);
  // A step fetches its text: on a machine busier than its cores the
  // figure is recorded, not asserted.
  if (!busy()) expect(deep).toBeLessThan(300);
});

// longTasks collects the main thread's long tasks from page load on.
async function watchLongTasks(page: Page) {
  await page.addInitScript(() => {
    const w = window as unknown as { __long: { start: number; duration: number }[] };
    w.__long = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) w.__long.push({ start: e.startTime, duration: e.duration }); })
      .observe({ type: 'longtask', buffered: true });
  });
}

test('no long task over 50 ms while 200 events a second stream into a server session lab', async ({ page }, testInfo) => {
  test.setTimeout(90_000);
  await watchLongTasks(page);
  const created = await page.request.post('/sessions', { data: {} });
  const name = (await created.json()).id;
  await page.goto(`/s/${name}/`);
  await ready(page);
  // Everything that follows writes: a watch, the reflector, the etcd view.
  await page.getByTestId('watch-start').click();
  const stream = page.locator('[data-testid="stream"][data-stream="watch configmaps"]');
  await expect(stream).toHaveAttribute('data-state', 'open');
  await page.getByTestId('reflector-start').click();
  await expect(page.getByTestId('reflector-state')).toHaveAttribute('data-state', 'watching');
  const url = `/s/${name}/api/v1/namespaces/default/configmaps`;
  expect((await page.request.post(url, { data: { metadata: { name: 'load' }, data: { i: '0' } } })).status()).toBe(201);
  const from = await page.evaluate(() => performance.now());

  const total = 600;
  const started = Date.now();
  for (let i = 1; i <= total; i += 10) {
    const due = started + ((i - 1) / 200) * 1000;
    const wait = due - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    await Promise.all(Array.from({ length: 10 }, (_, k) =>
      page.request.put(`${url}/load`, { data: { metadata: { name: 'load' }, data: { i: String(i + k) } } })));
  }
  const seconds = (Date.now() - started) / 1000;
  await expect(stream).toHaveAttribute('data-changes', String(total + 1), { timeout: 30_000 });
  const tasks = await page.evaluate((t0) => (window as unknown as { __long: { start: number; duration: number }[] }).__long.filter((e) => e.start >= t0), from);
  const longest = Math.round(Math.max(0, ...tasks.map((e) => e.duration)));
  const line = `${total} updates in ${seconds.toFixed(2)} s (${(total / seconds).toFixed(0)}/s) to a watch, the reflector and the etcd view: ${tasks.length} long tasks, the longest ${longest} ms`;
  const load = `load average ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`;
  console.log(`server session: ${line} (${load})`);
  testInfo.annotations.push({ type: 'longtasks', description: `${line} (${load})` });
  if (busy()) {
    testInfo.annotations.push({ type: 'budget not asserted', description: `the machine is busy: ${load}` });
    return;
  }
  expect(tasks.filter((e) => e.duration > 50)).toEqual([]);
});
