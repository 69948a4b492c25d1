// The lessons where people matter (3, 4 and 6), on a guarded server
// session with two browsers: the teacher plays operator A (and compacts,
// and changes the session's settings, which only a teacher may), a
// student who joined with the class's code plays the other clients. Each
// follows the lesson in their own lab; the teacher's check sees the whole
// class, so it is the teacher's page that must pass every step, while the
// student's page shows the moment from the other side: B's 409, R's 410.
import { expect, test, type Browser, type Page } from '@playwright/test';
import { attachShots, lessons, locale, runStep } from './lessonlib';
import { run, serverHead } from './labhelpers';

test.use({ locale });

const teacherPlays = (a: { client?: string; compact?: string; settings?: unknown; wait?: string }) =>
  a.client === 'A' || !a.client;

async function classroom(browser: Browser) {
  const teacherCtx = await browser.newContext();
  const created = await teacherCtx.request.post('/sessions', { data: {} });
  expect(created.status()).toBe(201);
  const { id, joinCode } = await created.json();
  const studentCtx = await browser.newContext();
  const joined = await studentCtx.request.post(`/s/${id}/join`, { data: { code: joinCode, name: 'Ada' } });
  expect(joined.status()).toBe(201);
  const teacher = await teacherCtx.newPage();
  const student = await studentCtx.newPage();
  for (const p of [teacher, student]) {
    await p.setViewportSize({ width: 1440, height: 900 });
    await p.goto(`/s/${id}/`);
    await expect(p.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 30_000 });
  }
  const studentId = (await joined.json()).id as string;
  return { id, teacher, student, studentId, close: async () => { await teacherCtx.close(); await studentCtx.close(); } };
}

// join has each of names join the class session id with its code, in a
// browser of their own, each lab open at hash (a lesson's deep link).
async function join(browser: Browser, id: string, code: string, names: string[], hash = '') {
  const students = [];
  for (const name of names) {
    const ctx = await browser.newContext();
    const joined = await ctx.request.post(`/s/${id}/join`, { data: { code, name } });
    expect(joined.status()).toBe(201);
    const page = await ctx.newPage();
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`/s/${id}/${hash}`);
    await expect(page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 30_000 });
    students.push({ ctx, page, panel: page.getByTestId('lesson-panel'), id: (await joined.json()).id as string });
  }
  return students;
}

async function open(page: Page, slug: string) {
  const panel = page.getByTestId('lesson-panel');
  await panel.locator(`[data-testid="lesson-link"][data-lesson="${slug}"]`).click();
  await panel.getByTestId('lesson-start').click();
  await expect(panel).toHaveAttribute('data-step', '1');
}

for (const number of [3, 4, 6]) {
  const lesson = lessons.find((l) => l.number === number)!;
  test(`lesson ${number}: ${lesson.slug} on a server session, a teacher and a student`, async ({ browser }, testInfo) => {
    test.setTimeout(150_000);
    const { teacher, student, close } = await classroom(browser);
    await open(teacher, lesson.slug);
    await open(student, lesson.slug);
    const tPanel = teacher.getByTestId('lesson-panel');
    const sPanel = student.getByTestId('lesson-panel');
    for (const [i, step] of lesson.steps.entries()) {
      const n = i + 1;
      await expect(tPanel).toHaveAttribute('data-step', String(n));
      await expect(sPanel).toHaveAttribute('data-step', String(n));
      // The solution in its order, each action in the browser of whoever plays it.
      const byId = new Map((step.actions || []).map((a) => [a.id, a]));
      for (const id of step.solution || []) {
        const a = byId.get(id)!;
        await runStep(teacherPlays(a) ? teacher : student, { ...step, solution: [id] });
      }
      await tPanel.getByTestId('lesson-check').click();
      await expect(tPanel.getByTestId('lesson-verdict'), `step ${n} (${step.id}) in the teacher's check`).toHaveAttribute('data-passed', 'true', { timeout: 20_000 });
      if (n === lesson.steps.length) {
        await attachShots(teacher, testInfo, `lesson ${number} on a session: the teacher`);
        await attachShots(student, testInfo, `lesson ${number} on a session: the student`);
      }
      await tPanel.getByTestId('lesson-next').click();
      await sPanel.getByTestId('lesson-next').click();
    }
    // What the student saw.
    if (number === 3) await expect(student.getByTestId('client-b-outcome').getByTestId('outcome-status')).toHaveText('409 Conflict');
    if (number === 6) await expect(student.locator('[data-testid="watch-event"][data-type="ERROR"]').first()).toContainText('410');
    // The teacher turned automatic compaction on: the student's lab says so.
    if (number === 6) await expect(student.getByTestId('settings-line')).toContainText('compaction every 10s');
    await expect(tPanel.getByTestId('lesson-done')).toBeVisible();
    await close();
  });
}

// Lesson 6's step 4 on a class session, two students at once, the
// teacher compacting when the step says: each student's A creates and
// deletes a d of their own (d-<their id>: the class's names), so neither
// create answers 409 nor does one's delete take the other's d, and each
// student's I, back after the compaction, relists and tells its handlers
// of their own d as DeletedFinalStateUnknown, which the step's text names.
test('lesson 6: compaction-and-410 step 4 on a class session, two students at once, each on their own d', async ({ browser }, testInfo) => {
  test.setTimeout(90_000);
  const lesson = lessons.find((l) => l.number === 6)!;
  const n = lesson.steps.findIndex((s) => s.id === 'the-reflector-relists') + 1;
  const step = lesson.steps[n - 1];
  const teacherCtx = await browser.newContext();
  const created = await teacherCtx.request.post('/sessions', { data: {} });
  expect(created.status()).toBe(201);
  const { id, joinCode } = await created.json();
  const setUp = await teacherCtx.request.post(`/s/${id}/rvplay/v1/lessons/${lesson.slug}/setup`);
  expect(setUp.status(), await setUp.text()).toBe(200);
  const students = await join(browser, id, joinCode, ['Ada', 'Bob'], `#lesson=${lesson.slug}/${n}`);
  // The tombstone of the student's own d (the rest of the line is in the
  // language picked).
  const tombstone = (sid: string) => new RegExp(`DeletedFinalStateUnknown default/d-${sid}[^-\\w]`);
  for (const s of students) {
    await expect(s.panel).toHaveAttribute('data-step', String(n));
    await expect(s.panel.getByTestId('lesson-text').locator('pre')).toContainText(tombstone(s.id));
  }
  const solution = step.solution || [];
  const k = solution.indexOf('compact');
  await Promise.all(students.map((s) => runStep(s.page, { ...step, solution: solution.slice(0, k) })));
  const head = await serverHead(teacherCtx.request, id);
  const compacted = await teacherCtx.request.post(`/s/${id}/v3/kv/compaction`, { data: { revision: String(head) } });
  expect(compacted.status(), await compacted.text()).toBe(200);
  await Promise.all(students.map((s) => runStep(s.page, { ...step, solution: solution.slice(k + 1) })));
  for (const s of students) {
    await expect(s.panel.getByTestId('lesson-verdict'), `${s.id}'s step ${n}`).toHaveAttribute('data-passed', 'true', { timeout: 20_000 });
    const own = s.page.getByTestId('client-reflector-log').getByTestId('log-note').filter({ hasText: tombstone(s.id) });
    await expect(own, `${s.id}'s I`).toHaveCount(1);
  }
  await attachShots(students[0].page, testInfo, `lesson 6 step ${n} on a class session: a student's own d`);
  for (const s of students) await s.ctx.close();
  await teacherCtx.close();
});

// Lesson 1 on a class's session, two students at once: each works on keys
// of their own (k1-<their id>), which the text, the Run buttons and the
// checks all use, so that one's puts never move the other's version; the
// article's own command, typed by one of them, passes nobody's step.
test('lesson 1: etcd-revisions on a server session, two students at once on their own keys', async ({ browser }, testInfo) => {
  test.setTimeout(150_000);
  const lesson = lessons.find((l) => l.number === 1)!;
  const teacherCtx = await browser.newContext();
  const created = await teacherCtx.request.post('/sessions', { data: {} });
  expect(created.status()).toBe(201);
  const { id, joinCode } = await created.json();
  const students = await join(browser, id, joinCode, ['Ada', 'Bob']);
  const [ada, bob] = students;
  for (const s of students) {
    await s.panel.locator(`[data-testid="lesson-link"][data-lesson="${lesson.slug}"]`).click();
    await expect(s.panel.getByTestId('lesson-setup-note')).toContainText(`k1-${s.id}`);
    await s.panel.getByTestId('lesson-start').click();
    await expect(s.panel).toHaveAttribute('data-step', '1');
  }
  for (const [i, step] of lesson.steps.entries()) {
    const n = i + 1;
    for (const s of students) {
      await expect(s.panel).toHaveAttribute('data-step', String(n));
      // The text's commands are the student's own, each with its Run button.
      const own = s.panel.getByTestId('lesson-text').locator('[data-command]');
      await expect(own.first()).toHaveAttribute('data-command', new RegExp(`k[12]-${s.id}`));
      await expect(own.filter({ hasText: /\bk1 / })).toHaveCount(0);
    }
    if (n === 1) {
      // Bob types the article's command as written: it is nobody's step.
      await run(bob.page, 'etcdctl put k1 v1');
      await ada.panel.getByTestId('lesson-check').click();
      await expect(ada.panel.getByTestId('lesson-verdict')).toHaveAttribute('data-passed', 'false');
    }
    // Action for action, taking turns.
    for (const actionId of step.solution || []) {
      for (const s of students) await runStep(s.page, { ...step, solution: [actionId] });
    }
    for (const s of students) {
      await s.panel.getByTestId('lesson-check').click();
      await expect(s.panel.getByTestId('lesson-verdict'), `step ${n} (${step.id}) for ${s.id}`).toHaveAttribute('data-passed', 'true', { timeout: 20_000 });
    }
    if (n === 1) {
      // Once their k1 exists, the prose names its revision as their
      // commands will (the session's mapping of the article's 6).
      for (const s of students) {
        const served = await s.page.request.get(`/s/${id}/rvplay/v1/lessons/${lesson.slug}`);
        const created = (await served.json()).class.own['6'];
        expect(created, `${s.id}'s k1 has a revision`).toMatch(/^\d+$/);
        await expect(s.panel.getByTestId('lesson-text')).toContainText(`revision ${created}`);
        await expect(s.panel.getByTestId('lesson-text')).not.toContainText(/revision 6\b/);
      }
    }
    if (step.id === 'delete-and-look-back') {
      // The past each reads is their own k1's creation, not revision 6,
      // and the prose says the same revision as the command.
      for (const s of students) {
        const read = s.panel.getByTestId('lesson-text').locator('[data-command*="--rev="]');
        await expect(read).not.toHaveAttribute('data-command', /--rev=6 /);
        const rev = (await read.getAttribute('data-command'))!.match(/--rev=(\d+) /)![1];
        await expect(s.panel.getByTestId('lesson-text')).toContainText(`revision ${rev}`);
        await expect(s.panel.getByTestId('lesson-text')).not.toContainText(/revision 6\b/);
      }
      // The store's revision the prose quotes ("the header still says 9")
      // is the one the student's own last answer showed: the header of
      // their read in the past, as their console printed it, not the
      // article's 9.
      for (const s of students) {
        const created = (await s.panel.getByTestId('lesson-text').locator('[data-command*="--rev="]').getAttribute('data-command'))!.match(/--rev=(\d+) /)![1];
        // v1 (djE=) was read three times: steps 1 and 2, then the past.
        const reads = s.page.getByTestId('console-line').filter({ hasText: '"djE="' });
        await expect(reads).toHaveCount(3);
        const header = (await reads.last().textContent())!.match(/"revision":\s*"?(\d+)/)![1];
        expect(Number(header), `${s.id}'s header`).toBeGreaterThan(9);
        await expect(s.panel.getByTestId('lesson-text')).toContainText(`revision ${header}`);
        // The article's 9 is gone (unless their own k1 was created at 9,
        // which their read in the past then names).
        if (created !== '9') await expect(s.panel.getByTestId('lesson-text')).not.toContainText(/(^|[^\w-])9($|[^\w])/);
      }
      await attachShots(ada.page, testInfo, 'lesson 1 on a class session: a student on her own keys');
      // A reload in the middle of the step keeps the revision her answers
      // since the step began showed, not the article's 9 until the next.
      const header = (await ada.page.getByTestId('console-line').filter({ hasText: '"djE="' }).last().textContent())!.match(/"revision":\s*"?(\d+)/)![1];
      await ada.page.reload();
      await expect(ada.page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 30_000 });
      await expect(ada.panel).toHaveAttribute('data-step', String(n));
      await expect(ada.panel.getByTestId('lesson-text')).toContainText(`revision ${header}`);
    }
    for (const s of students) await s.panel.getByTestId('lesson-next').click();
  }
  for (const s of students) await expect(s.panel.getByTestId('lesson-done')).toBeVisible();
  for (const s of students) await s.ctx.close();
  await teacherCtx.close();
});

// On a class session a lesson that gives each student their own namespace
// (lesson 12: the ConfigMap a in it) has the client cards' own buttons act
// there too, as the lesson's actions do: A's GET reads the student's a,
// B's PUT writes it back, and nothing is read or created in default.
test('lesson 12: get-and-list on a class session, the client cards act in the student\'s namespace', async ({ browser }, testInfo) => {
  test.setTimeout(90_000);
  const lesson = lessons.find((l) => l.number === 12)!;
  const { id, student: page, studentId: ns, close } = await classroom(browser);
  // The introduction's class note names the number that stays the
  // article's on a shared store (a's resourceVersion 8 in step 5).
  const panel = page.getByTestId('lesson-panel');
  await panel.locator(`[data-testid="lesson-link"][data-lesson="${lesson.slug}"]`).click();
  await expect(panel.getByTestId('lesson-class-note')).toBeVisible();
  await expect(panel.getByTestId('lesson-class-note')).toContainText(/\b8\b/);
  await panel.getByTestId('lesson-start').click();
  await expect(panel).toHaveAttribute('data-step', '1');
  const own = `/api/v1/namespaces/${ns}/configmaps/a`;
  await expect(page.getByTestId('subject-namespace')).toHaveText(`/${ns}/`);
  for (const card of ['a', 'b']) {
    await page.getByTestId(`client-${card}-get`).click();
    const got = page.getByTestId(`client-${card}`).getByTestId('exchange').last();
    await expect(got.locator('summary')).toHaveAttribute('title', `GET ${own}`);
    await expect(got).toHaveAttribute('data-status', '200');
  }
  await page.getByTestId('client-b-put').click();
  const put = page.getByTestId('client-b').locator('[data-testid="exchange"][data-method="PUT"]');
  await expect(put.locator('summary')).toHaveAttribute('title', `PUT ${own}`);
  await expect(put).toHaveAttribute('data-status', '200');
  await expect(page.getByTestId('client-b-outcome').getByTestId('outcome-status')).toHaveText('200 OK');
  expect((await page.request.get(`/s/${id}/api/v1/namespaces/default/configmaps/a`)).status()).toBe(404);
  await attachShots(page, testInfo, 'lesson 12 on a class session: the cards in the student\'s namespace');
  await close();
});

// A server whose sessions live on an etcd cluster (--store etcd://) gives
// them the cluster's revisions, which jump when another session writes:
// the lab says so under its revisions, and so do the lesson steps that
// compare revision numbers (lesson 1). On SQLite (this suite's server)
// neither note shows; etcdstore.spec.ts starts a server on a real etcd
// where both do (and RVPLAY_BASE_URL pointing at one runs this test the
// other way).
test('a session on an etcd cluster says its revisions jump when other sessions write, and only there', async ({ browser }, testInfo) => {
  test.setTimeout(60_000);
  const { teacher, close } = await classroom(browser);
  const store = await teacher.evaluate(() => JSON.parse(document.getElementById('lab-config')!.textContent!).store || '');
  const onEtcd = store === 'etcd';
  await expect(teacher.getByTestId('store-note')).toHaveCount(onEtcd ? 1 : 0);
  await open(teacher, 'etcd-revisions');
  const panel = teacher.getByTestId('lesson-panel');
  await expect(panel.getByTestId('lesson-title')).toBeVisible();
  await expect(panel.getByTestId('lesson-store-note')).toHaveCount(onEtcd ? 1 : 0);
  if (onEtcd) {
    await expect(teacher.getByTestId('store-note')).toBeVisible();
    await expect(panel.getByTestId('lesson-store-note')).toBeVisible();
    await attachShots(teacher, testInfo, 'lesson 1 on a session stored on etcd');
  }
  // A lesson whose texts compare no revision numbers says nothing of it.
  await panel.getByTestId('lesson-all').first().click();
  await open(teacher, 'lost-update');
  await expect(panel.getByTestId('lesson-title')).toBeVisible();
  await expect(panel.getByTestId('lesson-store-note')).toHaveCount(0);
  await close();
});

// The lessons that give each student their own namespace and whose
// clients list and watch (5: R's list then watch; 7: R's and S's watches
// with and without bookmarks; 8: R's watch-list and W's informer) are
// completed by a student of a class by their own steps, every stream in
// the student's namespace, none in default. The teacher sets the class up
// for the lesson, as their push does (its settings are the class's:
// lesson 7's bookmarks every 5 s and its watch cache off), and compacts
// where a step does (a student may not): lesson 7's R then resumes from
// its bookmark past the compaction and S, which asked for none, gets 410.
// The revisions a step's text names from the student's own answers
// (placeholders: lessons.js, seenRevision) as their watch panel shows
// them, each past the article's number (the class's store was further on
// before they began): where R's watch started (5), R's and I's bookmarks
// (7), R's and W's initial-events-end bookmarks and the student's c (8).
// The object editor, which the lab opened on its demo in default, starts
// on the student's own a once the lesson is open.
const eventAt = (stream: string, type: string) => (n: string) => `[data-testid="stream"][data-stream^="${stream}"] [data-testid="watch-event"][data-type="${type}"][data-rv="${n}"]`;
const bookmarkAt = (stream: string) => eventAt(stream, 'BOOKMARK');
const ownNumbers: Record<string, { article: number; re: RegExp; shown: (n: string) => string }[]> = {
  'list-then-watch/2': [{ article: 8, re: /resourceVersion=(\d+)/, shown: (n) => `[data-testid="stream"][data-stream^="R:"] header code >> text=/resourceVersion=${n}(&|$)/` }],
  'bookmarks/1': [{ article: 8, re: /"resourceVersion":"(\d+)"/, shown: bookmarkAt('R:') }],
  'bookmarks/3': [{ article: 11, re: /bookmark rv=(\d+)/, shown: bookmarkAt('reflector') }],
  'watch-list/1': [
    { article: 8, re: /"resourceVersion":"(\d+)"/, shown: bookmarkAt('R:') },
    // The student's own c, as its initial event shows it (its first
    // resourceVersion: the class's map of the article's 8).
    { article: 8, re: /ADDED c\s*[(（](\d+)/, shown: eventAt('R:', 'ADDED') },
  ],
  'watch-list/3': [{ article: 8, re: /initial-events-end rv=(\d+)/, shown: bookmarkAt('W:') }],
};
// The steps whose text shows the path R's watch asks for, which reads as
// the student's (a plain block, by the console's word rule: lessons.js,
// ownText), as their watch panel shows it.
const showsPath = new Set(['list-then-watch/2', 'watch-list/1']);

for (const number of [5, 7, 8]) {
  const lesson = lessons.find((l) => l.number === number)!;
  test(`lesson ${number}: ${lesson.slug} on a class session, a student's clients watch their own namespace`, async ({ browser }, testInfo) => {
    test.setTimeout(120_000);
    const { id, teacher, student, studentId, close } = await classroom(browser);
    const setUp = await teacher.request.post(`/s/${id}/rvplay/v1/lessons/${lesson.slug}/setup`);
    expect(setUp.status(), await setUp.text()).toBe(200);
    // The object editor opened on the lab's demo in default; the lesson
    // moves it to the student's own a, which its cards and steps use.
    const editor = student.getByTestId('editor');
    await expect(editor).toHaveValue(/\n {2}name: demo\n {2}namespace: default\n/);
    await open(student, lesson.slug);
    await expect(student.getByTestId('subject-namespace')).toHaveText(`/${studentId}/`);
    await expect(editor).toHaveValue(/\n {2}name: a\n/);
    await expect(editor).toHaveValue(new RegExp(`\\n {2}namespace: ${studentId}\\n`));
    const panel = student.getByTestId('lesson-panel');
    for (const [i, step] of lesson.steps.entries()) {
      await expect(panel).toHaveAttribute('data-step', String(i + 1));
      const solution = step.solution || [];
      const k = solution.findIndex((sid) => (step.actions || []).find((a) => a.id === sid)?.compact);
      if (k < 0) await runStep(student, step);
      else {
        await runStep(student, { ...step, solution: solution.slice(0, k) });
        const head = await serverHead(teacher.request, id);
        const compacted = await teacher.request.post(`/s/${id}/v3/kv/compaction`, { data: { revision: String(head) } });
        expect(compacted.status(), await compacted.text()).toBe(200);
        await runStep(student, { ...step, solution: solution.slice(k + 1) });
      }
      await expect(panel.getByTestId('lesson-verdict'), `step ${i + 1} (${step.id})`).toHaveAttribute('data-passed', 'true', { timeout: 20_000 });
      if (showsPath.has(`${lesson.slug}/${i + 1}`)) await expect(panel.getByTestId('lesson-text').locator('pre', { hasText: 'GET /api/' }), `step ${i + 1}'s path`).toContainText(`GET /api/v1/namespaces/${studentId}/configmaps?`);
      for (const own of ownNumbers[`${lesson.slug}/${i + 1}`] || []) {
        // The text is drawn again once the check read the record.
        const text = panel.getByTestId('lesson-text');
        let n = '';
        await expect.poll(async () => Number(n = ((await text.textContent()) || '').match(own.re)?.[1] || '0'), `step ${i + 1}'s own number`).toBeGreaterThan(own.article);
        await expect(student.locator(own.shown(n)).first(), `step ${i + 1}'s ${n} in the watch panel`).toBeAttached();
        if (own === ownNumbers[`${lesson.slug}/${i + 1}`][0] && (i === 0 || number === 5)) await attachShots(student, testInfo, `lesson ${number} step ${i + 1} on a class session: the student's own revision ${n}`);
      }
      await panel.getByTestId('lesson-next').click();
    }
    await expect(panel.getByTestId('lesson-done')).toBeVisible();
    // Each watch's box names its path (a client's box of plain requests
    // names none).
    const paths = (await student.getByTestId('stream').locator('header code').allTextContents()).filter(Boolean);
    expect(paths.length, 'the lesson\'s watches').toBeGreaterThan(0);
    for (const p of paths) expect(p, 'a watch of the lesson').toContain(`/namespaces/${studentId}/`);
    // W's informer got the student's ConfigMaps a, b and c as its initial
    // events (in default there are none).
    if (number === 8) {
      const w = student.locator('[data-testid="stream"][data-stream="W: reflector"] [data-testid="watch-event"][data-type="ADDED"]');
      await expect(w).toHaveCount(3);
    }
    if (number === 7) {
      await expect(student.locator('[data-testid="watch-event"][data-type="BOOKMARK"]').first()).toBeVisible();
      await expect(student.locator('[data-testid="watch-event"][data-type="ERROR"]').first()).toContainText('410');
    }
    await close();
  });
}
