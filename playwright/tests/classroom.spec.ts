// A class on one guarded session, in four browser contexts: the teacher
// creates the session and opens the dashboard; three students join with
// its code. The dashboard shows who is connected and where, the teacher's
// push moves every lab, the class's progress counts each step passed, the
// teacher's compaction makes the students' reflectors relist (the
// dashboard shows the 410s and names the relist), and a student's
// compaction is refused. Screenshots of the dashboard at 1440x900 and
// 1920x1080 go into the report.
import { expect, test, type BrowserContext, type Page, type TestInfo } from '@playwright/test';
import { exchange, openLab, run } from './labhelpers';

async function shot(page: Page, testInfo: TestInfo, name: string) {
  await testInfo.attach(name, { body: await page.screenshot({ fullPage: false }), contentType: 'image/png' });
}

// row is a student's row on the dashboard.
const row = (dashboard: Page, id: string) => dashboard.locator(`[data-testid="student"][data-student="${id}"]`);

// openWatches opens a student's list of watches from the keyboard: their
// row shows the one that matters most and "+N"; Enter on it shows the
// others.
async function openWatches(dash: Page, id: string) {
  await row(dash, id).getByTestId('watch-summary').focus();
  await dash.keyboard.press('Enter');
  await expect(row(dash, id).getByTestId('watch-summary')).toHaveAttribute('aria-expanded', 'true');
}

// Names long enough to squeeze the other columns if nothing cut them.
const longNames = ['Maximiliane Alexandra Wolkenstein-Rodenegg', '欧阳慕容·司马长风·诸葛明月·上官婉儿·令狐冲', '김서연박지민이하늘최바다정다은강민준윤서준'];

// rowsFit checks the students table at the page's size, for a class read
// at a glance on a projector: no row is taller than two lines, no text in
// it is smaller than 15 px (dashboard.css's promise), the count of steps
// passed and a watch that is up to date are whole, the findings'
// heading is not broken inside its word, a long name is cut
// with its full text in the title, and the table stays inside its panel.
async function rowsFit(dash: Page) {
  await expect(async () => {
    const m = await dash.evaluate(() => {
      const td = document.querySelector('[data-testid="student"] td')!;
      const cs = getComputedStyle(td);
      const lh = parseFloat(cs.lineHeight);
      const pad = parseFloat(cs.paddingTop) + parseFloat(cs.paddingBottom);
      const panel = document.querySelector('.panel.students')!.getBoundingClientRect();
      const table = document.querySelector('[data-testid="students"]')!.getBoundingClientRect();
      return {
        rows: [...document.querySelectorAll('[data-testid="student"]')].map((r) => r.getBoundingClientRect().height),
        twoLines: 2.5 * lh + pad,
        tableRight: table.right, panelRight: panel.right,
        // The findings column's heading, one word in every language: the
        // lines its text takes.
        findingsHeadLines: (() => {
          const range = document.createRange();
          range.selectNodeContents(document.querySelector('[data-testid="students"] th:nth-child(5)')!);
          return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
        })(),
        // What a teacher reads at a glance stays whole: the count of
        // steps passed in all lessons, and a watch that is up to date.
        cut: [...document.querySelectorAll('[data-testid="student-progress"] small, [data-testid="student-watches"] .watch.current')]
          .filter((e) => e.scrollWidth > e.clientWidth).map((e) => e.textContent),
        smallest: Math.min(...[...document.querySelectorAll('[data-testid="students"] :is(th, td, td *)')]
          .filter((e) => [...e.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim()))
          .map((e) => parseFloat(getComputedStyle(e).fontSize))),
      };
    });
    expect(Math.max(...m.rows)).toBeLessThanOrEqual(m.twoLines);
    expect(m.smallest).toBeGreaterThanOrEqual(15);
    expect(m.cut).toEqual([]);
    expect(m.findingsHeadLines).toBe(1);
    expect(m.tableRight).toBeLessThanOrEqual(m.panelRight);
  }).toPass({ timeout: 10_000 });
  for (const name of longNames) {
    await expect(dash.getByTestId('student-name').filter({ hasText: name })).toHaveAttribute('title', new RegExp(`^${name}`));
  }
}

test('classroom: a teacher and three students: join by code, presence and progress on the dashboard, the teacher\'s compaction makes the reflectors relist, a student\'s compaction is refused', async ({ browser }, testInfo) => {
  test.setTimeout(300_000);
  const contexts: BrowserContext[] = [];
  const teacherCtx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  contexts.push(teacherCtx);

  // The teacher creates the class on the landing page and opens its
  // dashboard, which shows the join code for the projector.
  const dash = await teacherCtx.newPage();
  await dash.goto('/');
  const session = `class-${Date.now().toString(36)}`;
  await dash.getByTestId('session-name').fill(session);
  await dash.getByTestId('session-open').click();
  await expect(dash.getByTestId('created-code')).toHaveText(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
  const code = (await dash.getByTestId('created-code').textContent())!;
  await dash.getByTestId('created-dashboard').click();
  await expect(dash).toHaveURL(new RegExp(`/s/${session}/dashboard$`));
  await expect(dash.getByTestId('dashboard')).toHaveAttribute('data-ready', 'true');
  await expect(dash.getByTestId('dash-join-code')).toHaveText(code);
  await expect(dash.getByTestId('dash-conn')).toHaveAttribute('data-state', 'ready');
  await expect(dash.getByTestId('dash-connected')).toHaveText('0 / 0');

  // Three students join by code, each in a browser of their own.
  const students: { name: string; id: string; page: Page }[] = [];
  for (const name of ['Ada', 'Bashir', 'Chen']) {
    const ctx = await browser.newContext();
    contexts.push(ctx);
    const page = await ctx.newPage();
    await page.goto(`/?join=${session}`);
    await expect(page.getByTestId('join-session')).toHaveValue(session);
    await page.getByTestId('join-code').fill(code.toLowerCase().replace('-', ''));
    await page.getByTestId('join-name').fill(name);
    await page.getByTestId('join-submit').click();
    await expect(page).toHaveURL(new RegExp(`/s/${session}/$`));
    // The landing page keeps the student's id (their namespace's name).
    const id = await page.evaluate((s) => JSON.parse(localStorage.getItem('rvplay.sessions')!).find((x: { id: string }) => x.id === s).student as string, session);
    students.push({ name, id, page });
  }
  for (const s of students) {
    await expect(s.page.getByTestId('lab')).toHaveAttribute('data-ready', 'true', { timeout: 60_000 });
    await expect(s.page.getByTestId('lab')).toHaveAttribute('data-channel', 'student');
  }

  // Presence: all three connected, in the lesson list.
  await expect(dash.getByTestId('dash-connected')).toHaveText('3 / 3');
  for (const s of students) {
    await expect(row(dash, s.id)).toHaveAttribute('data-connected', 'true');
    await expect(row(dash, s.id).getByTestId('student-name')).toHaveText(s.name);
  }

  // The teacher pushes the class to "List then watch", step 1: every lab
  // opens it, and the dashboard shows each student there.
  await dash.getByTestId('push-lesson').selectOption('list-then-watch');
  await dash.getByTestId('push-step').selectOption('1');
  await dash.getByTestId('push').click();
  await expect(dash.getByTestId('notice')).toContainText('student browsers reached: 3');
  for (const s of students) {
    await expect(s.page.getByTestId('lesson-panel')).toHaveAttribute('data-lesson', 'list-then-watch');
    await expect(s.page.getByTestId('lesson-panel')).toHaveAttribute('data-step', '1');
    await expect(s.page.getByTestId('notice')).toContainText('Your teacher moved the class');
    await expect(row(dash, s.id)).toHaveAttribute('data-lesson', 'list-then-watch');
    await expect(row(dash, s.id)).toHaveAttribute('data-step', '1');
  }

  // Progress: each student does the step ("show me"); the class's count
  // for step 1 reaches three.
  const step1 = dash.locator('[data-testid="lesson-summary"][data-lesson="list-then-watch"] [data-testid="step-passed"][data-step="1"]');
  for (const [i, s] of students.entries()) {
    await s.page.getByTestId('lesson-showme').click();
    await expect(s.page.getByTestId('lesson-verdict')).toHaveAttribute('data-passed', 'true');
    await expect(step1).toHaveAttribute('data-passed', String(i + 1));
  }
  await expect(row(dash, students[0].id).getByTestId('student-progress')).toContainText('1/4');

  // The class moves to "Compaction and 410": its informer card is the
  // reflector each student starts, then drops.
  await dash.getByTestId('push-lesson').selectOption('compaction-and-410');
  await dash.getByTestId('push-step').selectOption('0');
  await dash.getByTestId('push').click();
  for (const s of students) {
    await expect(s.page.getByTestId('lesson-panel')).toHaveAttribute('data-lesson', 'compaction-and-410');
    await s.page.getByTestId('reflector-start').click();
    await expect(s.page.getByTestId('reflector-state')).toHaveText('watching');
  }
  for (const s of students) {
    // The lab's own watch and the informer's: one shown and "+N".
    await expect(row(dash, s.id).getByTestId('watch-more')).toHaveText(/^\+\d+$/);
    await openWatches(dash, s.id);
    await expect(row(dash, s.id).locator('[data-testid="student-watch"][data-kind="current"]').first()).toBeVisible();
  }
  // The next poll redraws every row: the list opened stays open, and the
  // keyboard's focus stays on it.
  const opened = row(dash, students[2].id).getByTestId('watch-summary');
  await expect(opened).toBeFocused();
  await opened.evaluate((e) => e.setAttribute('data-before-poll', ''));
  await expect(opened).not.toHaveAttribute('data-before-poll', '', { timeout: 15_000 });
  await expect(opened).toBeFocused();
  await expect(opened).toHaveAttribute('aria-expanded', 'true');
  // Bashir overwrites a ConfigMap without its resourceVersion: the
  // dashboard names the misconception.
  const bashir = students[1].page;
  await expect(await exchange(bashir, 'a', 'get')).toHaveAttribute('data-status', '200');
  await bashir.getByTestId('client-a-send-rv').uncheck();
  await expect(await exchange(bashir, 'a', 'put')).toHaveAttribute('data-status', '200');
  await expect(row(dash, students[1].id).getByTestId('student-findings')).toContainText('updated without a resourceVersion');
  await expect(row(dash, students[1].id).getByTestId('student-findings')).toHaveAttribute('data-count', '1');

  for (const s of students) {
    await s.page.getByTestId('reflector-disconnect').click();
    await expect(s.page.getByTestId('reflector-state')).toHaveText('disconnected');
  }
  // The class's store moves on: two writes after every reflector's last
  // resourceVersion, so that compacting at the head removes one they need.
  for (const n of ['later-1', 'later-2']) {
    const r = await teacherCtx.request.post(`/s/${session}/api/v1/namespaces/default/configmaps`, { data: { metadata: { name: n } } });
    expect(r.status()).toBe(201);
  }

  // The teacher compacts from the dashboard, after confirming.
  await dash.getByTestId('dash-compact').click();
  await expect(dash.getByTestId('confirm-dialog')).toBeVisible();
  await expect(dash.getByTestId('confirm-text')).toContainText('410 Gone');
  const head = (await dash.getByTestId('confirm-text').textContent())!.match(/revision (\d+)/)![1];
  await dash.getByTestId('confirm-ok').click();
  await expect(dash.getByTestId('notice')).toHaveText(`Compacted at revision ${head}.`);
  await expect(dash.getByTestId('dash-compacted')).toHaveText(head);

  // Each reflector resumes from its compacted resourceVersion: 410, relist.
  for (const s of students) {
    await s.page.getByTestId('reflector-resume').click();
    const stream = s.page.locator('[data-testid="stream"][data-stream="reflector"]');
    await expect(stream.locator('[data-testid="watch-event"][data-type="ERROR"]')).toContainText('410');
    await expect(s.page.getByTestId('reflector-relists')).toHaveText('1');
    await expect(s.page.locator('[data-testid="reflector-item"][data-name="later-2"]')).toBeVisible();
  }
  // The dashboard: each student's watch that ended in 410, a current one
  // after the relist, and the relist named, for each and for the lesson.
  for (const s of students) {
    const r = row(dash, s.id);
    await expect(r.locator('[data-testid="student-watch"][data-kind="gone"]')).toHaveCount(1);
    // The 410 first, in the row's one line; the list stays open.
    await expect(r.getByTestId('watch-summary').getByTestId('student-watch')).toHaveAttribute('data-kind', 'gone');
    await expect(r.locator('[data-testid="student-watch"][data-kind="current"]').first()).toBeVisible();
    await expect(r.getByTestId('student-findings')).toContainText('relisted after a 410');
  }
  const lesson6 = dash.locator('[data-testid="lesson-summary"][data-lesson="compaction-and-410"]');
  await expect(lesson6.locator('[data-detector="relist-after-410"]')).toContainText('×3');
  await expect(lesson6.locator('[data-detector="update-without-resourceversion"]')).toContainText('×1');
  await expect(lesson6.getByTestId('lesson-here')).toHaveText('here now: 3');

  // A student's compaction is refused, in etcd's words, from the console
  // as over the gateway; the dashboard is not theirs either.
  const ada = students[0].page;
  await run(ada, `etcdctl compaction ${head}`);
  await expect(ada.getByTestId('console-output')).toContainText('permission denied');
  // The etcd view's Compact says etcd's refusal, and whose compaction it is.
  await ada.getByTestId('compact').click();
  await expect(ada.getByTestId('notice')).toContainText('permission denied');
  await expect(ada.getByTestId('notice')).toContainText("its compaction is the teacher's");
  await ada.getByTestId('notice').scrollIntoViewIfNeeded();
  await shot(ada, testInfo, "a student's Compact on a class session: etcd's refusal and whose compaction it is");
  const refused = await ada.request.post(`/s/${session}/v3/kv/compaction`, { data: { revision: head } });
  expect(refused.status()).toBe(403);
  expect(await refused.json()).toMatchObject({ error: 'etcdserver: permission denied', code: 7 });
  expect((await ada.request.get(`/s/${session}/dashboard`, { maxRedirects: 0 })).status()).toBe(403);
  expect((await ada.request.get(`/s/${session}/rvplay/v1/results.csv`)).status()).toBe(403);

  // One click shows a student's exchanges.
  await row(dash, students[1].id).getByTestId('student-name').click();
  await expect(dash.getByTestId('exchanges-dialog')).toBeVisible();
  await expect(dash.getByTestId('exchanges-title')).toContainText('Bashir');
  await expect(dash.getByTestId('exchange-row').filter({ hasText: 'update /api/v1/namespaces/default/configmaps/' }).first()).toBeVisible();
  await shot(dash, testInfo, 'dashboard: a student\'s exchanges (1440x900)');
  await dash.keyboard.press('Escape');
  await expect(dash.getByTestId('exchanges-dialog')).toBeHidden();

  // The results export, as the teacher's files.
  const csv = await teacherCtx.request.get(`/s/${session}/rvplay/v1/results.csv`);
  expect(csv.status()).toBe(200);
  const lines = (await csv.text()).trim().split('\n');
  expect(lines[0]).toContain('id,name,lesson,steps,passed,passed_steps,last_passed');
  expect(lines.filter((l) => l.includes(',list-then-watch,4,1,1,'))).toHaveLength(3);

  // What the teacher's projector shows, at two sizes.
  await expect(dash.getByTestId('dash-connected')).toHaveText('3 / 3');
  await shot(dash, testInfo, 'dashboard at 1440x900');
  await dash.setViewportSize({ width: 1920, height: 1080 });
  await shot(dash, testInfo, 'dashboard at 1920x1080');
  await shot(students[1].page, testInfo, 'a student\'s lab after the relist');

  // The class's settings, from the dashboard.
  await dash.getByTestId('dash-settings-open').click();
  await dash.getByTestId('dash-setting-bookmarkInterval').fill('5s');
  await dash.getByTestId('dash-settings-save').click();
  await expect(dash.getByTestId('dash-settings-result')).toHaveText('Saved.');
  await dash.keyboard.press('Escape');
  await expect(dash.getByTestId('dash-settings')).toContainText('bookmarks every 5s');
  // Every student's lab shows them too: the session channel tells it.
  for (const s of students) await expect(s.page.getByTestId('settings-line')).toContainText('bookmarks every 5s');

  // A student leaves: the dashboard shows them disconnected.
  await contexts[3].close();
  await expect(row(dash, students[2].id)).toHaveAttribute('data-connected', 'false');
  await expect(dash.getByTestId('dash-connected')).toHaveText('2 / 3');

  // The teacher ends the session: the labs still open are told.
  await dash.getByTestId('dash-end').click();
  await expect(dash.getByTestId('confirm-text')).toContainText('End the session?');
  await dash.getByTestId('confirm-ok').click();
  await expect(dash).toHaveURL(/\/$/);
  await expect(students[0].page.getByTestId('notice')).toHaveText('The teacher ended the session; its data is deleted.');
  expect((await teacherCtx.request.get(`/s/${session}/rvplay/v1/class`)).status()).toBe(404);
  for (const c of contexts.slice(0, 3)) await c.close();
});

// The dashboard in the class's language: English, Chinese and Korean, read
// at 1440x900 and 1920x1080. Three students join over HTTP only: the
// dashboard lists them, not connected, with what they did (a blind write, a
// passed step); three more with long names only join; one opens the lab in
// a browser, with four watches.
for (const [lang, locale, connected, where] of [['en', 'en-US', 'students connected', 'not connected'], ['zh', 'zh-CN', '已连接的学生', '未连接'], ['ko', 'ko-KR', '연결된 학생', '연결 안 됨']] as const) {
  test(`classroom: the dashboard in ${lang}`, async ({ browser }, testInfo) => {
    // Eight students, one of them with a lab open, and a new join code:
    // 15-20 s on a quiet machine, twice that under the full suite's load.
    test.setTimeout(90_000);
    const ctx = await browser.newContext({ locale, viewport: { width: 1440, height: 900 } });
    const r = await ctx.request.post('/sessions', { data: {} });
    expect(r.status()).toBe(201);
    const { id, joinCode } = await r.json();
    for (const [i, name] of ['王芳', '김민준', 'Ana'].entries()) {
      const other = await browser.newContext();
      const j = await other.request.post(`/s/${id}/join`, { data: { code: joinCode, name } });
      expect(j.status()).toBe(201);
      const cms = `/s/${id}/api/v1/namespaces/default/configmaps`;
      const token = { Authorization: `Bearer ${(await j.json()).token}` };
      expect((await other.request.post(cms, { headers: token, data: { metadata: { name: `cm-${i}` } } })).status()).toBe(201);
      // A blind write: no resourceVersion.
      expect((await other.request.put(`${cms}/cm-${i}`, { headers: token, data: { metadata: { name: `cm-${i}` }, data: { a: '1' } } })).status()).toBe(200);
      await other.close();
    }
    for (const name of longNames) {
      const other = await browser.newContext();
      expect((await other.request.post(`/s/${id}/join`, { data: { code: joinCode, name } })).status()).toBe(201);
      await other.close();
    }
    expect((await ctx.request.post(`/s/${id}/rvplay/v1/push`, { data: { lesson: 'lost-update', step: 1 } })).status()).toBe(200);
    // A student with their lab open: the lab's own watch and three from
    // its watch panel, each one more on the dashboard's row.
    const lab = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const joined = await lab.request.post(`/s/${id}/join`, { data: { code: joinCode, name: 'Lab Lena' } });
    expect(joined.status()).toBe(201);
    const labStudent = (await joined.json()).id as string;
    const labPage = await lab.newPage();
    await openLab(labPage, `/s/${id}/`);
    for (let n = 1; n <= 3; n++) {
      await labPage.getByTestId('watch-start').click();
      await expect(labPage.getByTestId('stream')).toHaveCount(n);
    }
    const dash = await ctx.newPage();
    await dash.goto(`/s/${id}/dashboard`);
    await expect(dash.getByTestId('dashboard')).toHaveAttribute('data-ready', 'true');
    // Their row: four watches, one shown and "+3", all four in its title.
    await expect(row(dash, labStudent).getByTestId('student-watch')).toHaveCount(4);
    await expect(row(dash, labStudent).getByTestId('watch-more')).toHaveText('+3');
    await expect(row(dash, labStudent).getByTestId('watch-summary')).toHaveAttribute('title', /^[^\n]+(\n[^\n]+){3}$/);
    await expect(dash.locator('html')).toHaveAttribute('lang', lang);
    await expect(dash.locator('.stat-box').first()).toContainText(connected);
    await expect(dash.getByTestId('student-where').first()).toHaveText(where);
    await expect(dash.locator('[data-testid="student-findings"][data-count="1"]')).toHaveCount(3);
    // The push form shows where the class is.
    await expect(dash.getByTestId('push-lesson')).toHaveValue('lost-update');
    await expect(dash.getByTestId('push-step')).toHaveValue('1');
    await rowsFit(dash);
    await shot(dash, testInfo, `dashboard in ${lang} at 1440x900`);
    await dash.setViewportSize({ width: 1920, height: 1080 });
    await rowsFit(dash);
    await shot(dash, testInfo, `dashboard in ${lang} at 1920x1080`);
    await lab.close();

    // The session was created over HTTP: this browser has no join code to
    // show until the teacher asks for a new one, shown large; a student
    // joins with it, and the old code admits nobody.
    await expect(dash.getByTestId('dash-join')).toBeHidden();
    // A second dashboard, the projector's: it learns the new code live.
    const projector = await ctx.newPage();
    await projector.goto(`/s/${id}/dashboard`);
    await expect(projector.getByTestId('dash-conn')).toHaveAttribute('data-state', 'ready');
    await dash.getByTestId('dash-join-code-new').click();
    await dash.getByTestId('confirm-ok').click();
    const big = dash.getByTestId('join-code-value');
    await expect(big).toHaveText(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    const renewed = (await big.textContent())!;
    expect(renewed).not.toBe(joinCode);
    await expect(dash.getByTestId('dash-join-code')).toHaveText(renewed);
    await expect(projector.getByTestId('dash-join-code')).toHaveText(renewed);
    await projector.close();
    for (const size of [{ width: 1920, height: 1080 }, { width: 1440, height: 900 }]) {
      await dash.setViewportSize(size);
      // Large enough for the back of the room, and whole.
      await expect(async () => {
        const m = await big.evaluate((e) => ({ px: parseFloat(getComputedStyle(e).fontSize), fits: e.scrollWidth <= e.clientWidth }));
        expect(m.px).toBeGreaterThanOrEqual(80);
        // The address to type, too: large, and on one line.
        const where = await dash.getByTestId('join-code-where').evaluate((e) => ({
          px: parseFloat(getComputedStyle(e).fontSize),
          height: e.getBoundingClientRect().height, lineHeight: parseFloat(getComputedStyle(e).lineHeight),
        }));
        expect(where.px).toBeGreaterThanOrEqual(24);
        expect(where.height).toBeLessThan(1.5 * where.lineHeight);
        expect(m.fits).toBe(true);
      }).toPass({ timeout: 10_000 });
      await shot(dash, testInfo, `new join code in ${lang} at ${size.width}x${size.height}`);
    }
    const student = await browser.newContext();
    expect((await student.request.post(`/s/${id}/join`, { data: { code: joinCode, name: 'Eve' } })).status()).toBe(403);
    expect((await student.request.post(`/s/${id}/join`, { data: { code: renewed, name: 'Dara' } })).status()).toBe(201);
    await student.close();
    // Closed, the code stays in the header, whole with the header's end
    // inside the window, also after a reload.
    await dash.getByTestId('join-code-dialog').getByRole('button').click();
    await expect(dash.getByTestId('join-code-dialog')).toBeHidden();
    for (const size of [{ width: 1440, height: 900 }, { width: 1920, height: 1080 }]) {
      await dash.setViewportSize(size);
      await expect(async () => {
        expect(await dash.getByTestId('lang').evaluate((e) => e.getBoundingClientRect().right <= window.innerWidth)).toBe(true);
      }).toPass({ timeout: 10_000 });
      await shot(dash, testInfo, `the join code in the header in ${lang} at ${size.width}x${size.height}`);
    }
    await dash.reload();
    await expect(dash.getByTestId('dash-join-code')).toHaveText(renewed);
    await ctx.close();
  });
}

// A teacher who created a session with curl (or in another browser) has
// only its token: the landing page's sign-in hands it to this browser as
// the session's cookie and opens the dashboard; a wrong token gets the
// server's refusal, and the page lists the session as the teacher's after.
test('classroom: a session created with curl: the teacher signs a browser in with its token and opens the dashboard', async ({ browser, request }, testInfo) => {
  const created = await request.post('/sessions', { data: {} });
  expect(created.status()).toBe(201);
  const { id, teacherToken } = await created.json();
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await ctx.newPage();
  await page.goto('/');
  await page.getByTestId('sign-in').locator('summary').click();
  await page.getByTestId('sign-in-session').fill(id);
  await page.getByTestId('sign-in-token').fill(`x${teacherToken}`);
  await page.getByTestId('sign-in-submit').click();
  await expect(page.getByTestId('sign-in-error')).toContainText('Unauthorized');
  await page.getByTestId('sign-in-error').scrollIntoViewIfNeeded();
  await shot(page, testInfo, 'sign in with a token: a wrong one (1440x900)');
  await page.getByTestId('sign-in-token').fill(teacherToken);
  await page.getByTestId('sign-in-submit').click();
  await page.waitForURL(`**/s/${id}/dashboard`);
  await expect(page.getByTestId('dashboard')).toHaveAttribute('data-ready', 'true');
  await page.goto('/');
  await expect(page.locator(`[data-testid="session-item"][data-session="${id}"]`)).toContainText('teacher');
  await ctx.close();
});
