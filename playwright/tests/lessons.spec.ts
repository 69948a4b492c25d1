// Every lesson, completed in Chromium the way a learner does it: open it
// from the lesson list, start it, and in each step click the step's own
// actions (the Run buttons on its console lines, the buttons of its client
// actions) in the order of its solution; the lab checks the step after
// the actions, and the test waits for the check to pass before it goes
// on. Each lesson's key moment is attached as screenshots at 1440x900 and
// 1920x1080. RVPLAY_LANG=zh (or ko) runs them in that language.
import { expect, test } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { attachShots, keyStep, language, lessons, locale, openLab, runStep } from './lessonlib';
import { brokenHangulWords } from './labhelpers';

const messages: Record<string, string> = JSON.parse(readFileSync(join(__dirname, '..', '..', 'web', 'static', 'i18n', `${language}.json`), 'utf8'));

test.use({ locale });

for (const lesson of lessons) {
  test(`lesson ${lesson.number}: ${lesson.slug}, completed by following its own steps`, async ({ page }, testInfo) => {
    test.setTimeout(120_000);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.setViewportSize({ width: 1440, height: 900 });
    await openLab(page);
    const panel = page.getByTestId('lesson-panel');
    await panel.locator(`[data-testid="lesson-link"][data-lesson="${lesson.slug}"]`).click();
    await panel.getByTestId('lesson-start').click();
    for (const [i, step] of lesson.steps.entries()) {
      const n = i + 1;
      await expect(panel).toHaveAttribute('data-step', String(n));
      await runStep(page, step);
      await expect(panel.getByTestId('lesson-verdict'), `step ${n} (${step.id})`).toHaveAttribute('data-passed', 'true', { timeout: 20_000 });
      if (keyStep[lesson.slug] === step.id) await attachShots(page, testInfo, `lesson ${lesson.number} ${lesson.slug}: ${step.id}`);
      if (lesson.slug === 'retry-on-conflict' && step.id === 'fresh-read') {
        // B's log parts its retry runs: the cached reads' run gave up,
        // and the fresh read's run begins after that, under its backoff.
        const notes = page.getByTestId('client-b-log').getByTestId('log-note');
        const texts = await notes.allInnerTexts();
        const gaveUp = texts.findLastIndex((x) => x === messages['clients.gaveUp'].replace('{n}', '5'));
        const lastRun = texts.findLastIndex((x) => x === messages['clients.retryRun'].replace('{backoff}', 'DefaultBackoff'));
        expect(gaveUp, texts.join('\n')).toBeGreaterThan(-1);
        expect(lastRun, texts.join('\n')).toBeGreaterThan(gaveUp);
      }
      if (lesson.slug === 'compaction-and-410' && step.id === 'the-reflector-relists') {
        // The relist could not replay d's delete: I's log shows client-go's
        // tombstone with the last state it knew of d.
        const tombstone = `DeletedFinalStateUnknown ${messages['reflector.ev.tombstone'].replace('{key}', 'default/d').replace('{rv}', '13')}`;
        await expect(page.getByTestId('client-reflector-log').getByTestId('log-note').filter({ hasText: tombstone })).toHaveCount(1);
        await attachShots(page, testInfo, `lesson ${lesson.number} ${lesson.slug}: ${step.id}`);
      }
      await panel.getByTestId('lesson-next').click();
    }
    await expect(panel.getByTestId('lesson-done')).toBeVisible();
    await panel.getByTestId('lesson-all').last().click();
    await expect(panel.locator(`[data-testid="lesson-link"][data-lesson="${lesson.slug}"]`)).toHaveAttribute('data-complete', 'true');
    expect(errors).toEqual([]);
  });
}

test('a wrong action does not pass a lesson step: writing without reading back', async ({ page }) => {
  await openLab(page);
  const panel = page.getByTestId('lesson-panel');
  await panel.locator('[data-testid="lesson-link"][data-lesson="etcd-revisions"]').click();
  await panel.getByTestId('lesson-start').click();
  // The step asks to put k1 and read it back; the learner only writes.
  const input = page.getByTestId('console-input');
  await input.fill('etcdctl put k1 v1');
  await input.press('Enter');
  await expect(page.getByTestId('console-output')).toContainText('OK');
  await panel.getByTestId('lesson-check').click();
  await expect(panel.getByTestId('lesson-verdict')).toHaveAttribute('data-passed', 'false');
  // Hints come one at a time.
  await panel.getByTestId('lesson-hint').click();
  await expect(panel.getByTestId('lesson-hint-text')).toHaveCount(1);
  await panel.getByTestId('lesson-hint').click();
  await expect(panel.getByTestId('lesson-hint-text')).toHaveCount(2);
  // Reading it back passes.
  await input.fill('etcdctl get k1 -w json');
  await input.press('Enter');
  await expect(panel.getByTestId('lesson-verdict')).toHaveAttribute('data-passed', 'true', { timeout: 10_000 });
});

// A step that passes shows it: its verdict and Next come into the lesson
// panel's view, where lesson 11's first step (a long manifest above its
// Run) left them below the fold at 1440x900.
test('a step that passes brings its verdict and Next into view', async ({ page }) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await openLab(page, '/lab#lesson=inside-update/1');
  const panel = page.getByTestId('lesson-panel');
  await expect(panel).toHaveAttribute('data-step', '1');
  await runStep(page, lessons.find((l) => l.slug === 'inside-update')!.steps[0]);
  await expect(panel.getByTestId('lesson-verdict')).toHaveAttribute('data-passed', 'true', { timeout: 20_000 });
  await expect(panel.getByTestId('lesson-verdict')).toBeInViewport({ ratio: 1 });
  await expect(panel.getByTestId('lesson-next')).toBeInViewport({ ratio: 1 });
});

// A lesson's update without a resourceVersion shows it on the client's
// card: B's "send its resourceVersion" is unticked beside "sent no
// resourceVersion" (lesson 3 step 3), and ticked again for step 4's
// conditional PUT.
test('a lesson\'s PUT without a resourceVersion unticks the card\'s box', async ({ page }) => {
  await openLab(page);
  const panel = page.getByTestId('lesson-panel');
  await panel.locator('[data-testid="lesson-link"][data-lesson="lost-update"]').click();
  await panel.getByTestId('lesson-start').click();
  const steps = lessons.find((l) => l.slug === 'lost-update')!.steps;
  const box = page.getByTestId('client-b-send-rv');
  for (const [i, step] of steps.entries()) {
    await expect(panel).toHaveAttribute('data-step', String(i + 1));
    await runStep(page, step);
    await expect(panel.getByTestId('lesson-verdict')).toHaveAttribute('data-passed', 'true', { timeout: 20_000 });
    if (step.id === 'b-overwrites') await expect(box).not.toBeChecked();
    if (step.id === 'b-conflicts') await expect(box).toBeChecked();
    await panel.getByTestId('lesson-next').click();
  }
});

test('lesson progress survives a reload, and a deep link opens a step', async ({ page }) => {
  await openLab(page);
  const panel = page.getByTestId('lesson-panel');
  await panel.locator('[data-testid="lesson-link"][data-lesson="etcd-revisions"]').click();
  await panel.getByTestId('lesson-start').click();
  await runStep(page, lessons[0].steps[0]);
  await expect(panel.getByTestId('lesson-verdict')).toHaveAttribute('data-passed', 'true', { timeout: 20_000 });
  await panel.getByTestId('lesson-next').click();
  await expect(page).toHaveURL(/#lesson=etcd-revisions\/2$/);
  const started = Date.now();
  await page.reload();
  await expect(page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 20_000 });
  await expect(panel).toHaveAttribute('data-step', '2');
  await expect(panel.locator('[data-testid="lesson-dot"][data-step="1"]')).toHaveClass(/passed/);
  // The store came back too: the reload replayed the lab's history.
  await expect(page.locator('[data-testid="etcd-key"][data-key="k1"]')).toBeVisible({ timeout: 15_000 });
  console.log(`reload to lesson step: ${Date.now() - started} ms`);

  // A deep link to a step of another lesson sets that lesson up and opens the step.
  await page.goto('/lab#lesson=lost-update/2');
  await expect(page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 20_000 });
  await expect(panel).toHaveAttribute('data-lesson', 'lost-update');
  await expect(panel).toHaveAttribute('data-step', '2');
  await expect(page.locator('[data-testid="etcd-key"][data-key="/registry/deployments/default/nginx"]')).toBeVisible({ timeout: 15_000 });
});

// A language picked while a step shows its hints keeps them, said in that
// language, and the Hint button counts on from them; one picked on the
// finished page says that page again (it showed the last step instead).
test('the hints asked for and the finished page stay through a language switch', async ({ page }) => {
  const say = (lang: string, key: string, params: Record<string, string> = {}) =>
    JSON.parse(readFileSync(join(__dirname, '..', '..', 'web', 'static', 'i18n', `${lang}.json`), 'utf8'))[key].replace(/\{(\w+)\}/g, (_: string, k: string) => params[k]);
  await page.goto('/lab#lesson=etcd-revisions/1');
  await expect(page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 20_000 });
  const panel = page.getByTestId('lesson-panel');
  await expect(panel).toHaveAttribute('data-step', '1');
  await page.locator('#lang').selectOption('en');
  await panel.getByTestId('lesson-hint').click();
  await expect(panel.getByTestId('lesson-hint-text')).toHaveCount(1);
  for (const lang of ['zh', 'ko']) {
    await page.locator('#lang').selectOption(lang);
    await expect(panel.getByTestId('lesson-hint-text').locator('b')).toHaveText(say(lang, 'lessons.hint.n', { n: '1', total: '2' }));
    await expect(panel.getByTestId('lesson-hint')).toHaveText(say(lang, 'lessons.hint.more', { n: '2', total: '2' }));
  }
  // Korean wraps between words, in the text and its hints.
  await expect.poll(() => brokenHangulWords(page, '#lesson-body')).toEqual([]);
  const last = lessons[0].steps.length;
  await page.goto(`/lab#lesson=etcd-revisions/${last}`);
  await expect(panel).toHaveAttribute('data-step', String(last));
  await panel.getByTestId('lesson-next').click();
  await expect(panel.getByTestId('lesson-done')).toBeVisible();
  await page.locator('#lang').selectOption('zh');
  await expect(panel.getByTestId('lesson-done').locator('h3')).toHaveText(say('zh', 'lessons.finished'));
});

// A note the learner opened (a step's "in a real cluster") stays open
// when the step is drawn again in another language, or by Retry; it
// closed with each switch, mid-read. Another step starts with it closed.
test('an opened real-cluster note stays open through a language switch and a retry', async ({ page }) => {
  const say = (lang: string, key: string) =>
    JSON.parse(readFileSync(join(__dirname, '..', '..', 'web', 'static', 'i18n', `${lang}.json`), 'utf8'))[key];
  await page.goto('/lab#lesson=inside-update/5');
  await expect(page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 20_000 });
  const panel = page.getByTestId('lesson-panel');
  await expect(panel).toHaveAttribute('data-step', '5');
  await page.locator('#lang').selectOption('en');
  const note = panel.getByTestId('lesson-real-cluster');
  await note.locator('summary').click();
  await expect(note).toHaveAttribute('open', '');
  for (const lang of ['zh', 'ko']) {
    await page.locator('#lang').selectOption(lang);
    await expect(note.locator('summary')).toHaveText(say(lang, 'lessons.realcluster'));
    await expect(note).toHaveAttribute('open', '');
  }
  // Retry draws the step anew: the marked note gives way to a new one.
  await note.evaluate((d) => d.setAttribute('data-drawn-before', ''));
  await panel.getByTestId('lesson-retry').click();
  await expect(note).not.toHaveAttribute('data-drawn-before');
  await expect(note).toHaveAttribute('open', '');
  await panel.getByTestId('lesson-back').click();
  await expect(panel).toHaveAttribute('data-step', '4');
  await panel.getByTestId('lesson-next').click();
  await expect(panel).toHaveAttribute('data-step', '5');
  await expect(note).not.toHaveAttribute('open');
});

// The lessons that turn the session's watch cache off, away from
// kube-apiserver's default, say so: the settings line once the lesson is
// set up, and the introduction's "in a real cluster" note, which names
// --watch-cache and what would differ with it on.
for (const number of [4, 12]) {
  const lesson = lessons.find((l) => l.number === number)!;
  test(`lesson ${number}: ${lesson.slug} says in a real-cluster note why it turns the watch cache off`, async ({ page }, testInfo) => {
    await page.setViewportSize({ width: 1440, height: 900 });
    await openLab(page);
    const panel = page.getByTestId('lesson-panel');
    await panel.locator(`[data-testid="lesson-link"][data-lesson="${lesson.slug}"]`).click();
    await panel.getByTestId('lesson-start').click();
    await expect(panel).toHaveAttribute('data-step', '1');
    await panel.getByTestId('lesson-back').click();
    await expect(panel).toHaveAttribute('data-step', '0');
    await expect(page.getByTestId('settings-line')).toContainText(messages['settings.line.watchCache.off']);
    const note = panel.getByTestId('lesson-real-cluster');
    await note.locator('summary').click();
    await expect(note).toHaveAttribute('open', '');
    await expect(note).toContainText('--watch-cache');
    // The class note is a class session's: offline the introduction
    // reads as before.
    await expect(panel.getByTestId('lesson-class-note')).toHaveCount(0);
    await note.scrollIntoViewIfNeeded();
    await attachShots(page, testInfo, `lesson ${number} ${lesson.slug}: the watch cache note`);
  });
}

// Lesson 12's introduction has a table of resourceVersion values whose
// code (resourceVersionMatch=Exact) breaks only after its = and &, never
// mid-word, in every language at the sizes of the report; a table wider
// than the panel scrolls instead.
test('lesson 12\'s introduction table breaks its code only after = and &', async ({ page }, testInfo) => {
  await page.setViewportSize({ width: 1440, height: 900 });
  await openLab(page, '/lab#lesson=get-and-list');
  const panel = page.getByTestId('lesson-panel');
  for (const l of ['en', 'zh', 'ko']) {
    await page.locator('#lang').selectOption(l);
    const title = readFileSync(join(__dirname, '..', '..', 'web', 'lessons', '12-get-and-list', l, '00.md'), 'utf8').split('\n')[0].slice(2);
    await expect(panel.getByTestId('lesson-title')).toHaveText(title);
    for (const [width, height] of [[1440, 900], [1920, 1080]]) {
      await page.setViewportSize({ width, height });
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
      const table = panel.getByTestId('lesson-text').locator('table');
      await expect(table.locator('code').filter({ hasText: 'resourceVersionMatch=Exact' })).toBeVisible();
      // Where a character of a code starts a new line, the one before it
      // must be = or &.
      const broken = await table.evaluate((t) => {
        const bad: string[] = [];
        for (const code of t.querySelectorAll('code')) {
          let prev: { ch: string; top: number } | null = null;
          const walk = document.createTreeWalker(code, NodeFilter.SHOW_TEXT);
          for (let n = walk.nextNode(); n; n = walk.nextNode()) {
            for (let i = 0; i < n.textContent!.length; i++) {
              const r = document.createRange();
              r.setStart(n, i);
              r.setEnd(n, i + 1);
              const top = r.getClientRects()[0]?.top ?? 0;
              const ch = n.textContent![i];
              if (prev && top > prev.top + 2 && !['=', '&'].includes(prev.ch)) bad.push(`${code.textContent} before ${ch}`);
              prev = { ch, top };
            }
          }
        }
        return bad;
      });
      expect(broken, `${l} at ${width}x${height}`).toEqual([]);
      const fits = await table.evaluate((t) => t.scrollWidth <= t.clientWidth + 1 || getComputedStyle(t).overflowX === 'auto');
      expect(fits, `${l} at ${width}x${height}: the table fits or scrolls`).toBe(true);
      await testInfo.attach(`lesson 12's introduction (${width}x${height}, ${l})`, { body: await panel.screenshot(), contentType: 'image/png' });
    }
  }
});
