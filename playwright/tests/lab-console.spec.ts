// The console panel as a learner types into it: heredocs and etcdctl txn
// typed line by line, ↑/↓ through the history, a watch that streams while
// other commands run and stops on Ctrl+C or the stop button, kubectl edit
// in the lab's editor, and the editor's object given to `-f -` (the lab's
// note on it, and the panels around, said again in the language picked).
// Offline and on a server session (fetch streams instead of the page's
// engine).
import { expect, test, type Page } from '@playwright/test';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { newClass, openLab, run } from './labhelpers';

const output = (page: Page) => page.getByTestId('console-output');
const messages = (lang: string): Record<string, string> => JSON.parse(readFileSync(join(__dirname, '..', '..', 'web', 'static', 'i18n', `${lang}.json`), 'utf8'));

// type enters lines one by one, as typed.
async function type(page: Page, ...lines: string[]) {
  const input = page.getByTestId('console-input');
  for (const l of lines) {
    await input.fill(l);
    await input.press('Enter');
  }
}

test('a heredoc and an etcdctl txn typed line by line; ↑ and ↓ walk the history', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  // The console's commands load after the lab is interactive; a heredoc
  // begun before they are here still continues on the next line. They are
  // held back here until its first line has been entered.
  let release = () => {};
  const held = new Promise<void>((resolve) => { release = resolve; });
  await page.route(/\/js\/console\.js(\?.*)?$/, async (route) => { await held; await route.continue(); });
  await openLab(page);
  const prompt = page.getByTestId('console-prompt');
  const input = page.getByTestId('console-input');

  await type(page, "kubectl apply -f - <<'EOF'");
  release();
  await expect(prompt).toHaveText('>');
  await type(page, 'apiVersion: v1', 'kind: ConfigMap', 'metadata:', '  name: typed', 'data:', '  colour: blue', 'EOF');
  await expect(output(page)).toContainText('configmap/typed created');
  await expect(prompt).toHaveText('$');
  await expect(page.getByTestId('console-line').filter({ hasText: /^> {3}name: typed\n$/ })).toHaveCount(1);

  // etcdctl txn -i prompts for each section, as etcdctl does in a terminal.
  await type(page, 'etcdctl put k1 v1', 'etcdctl txn -i');
  await expect(page.getByTestId('console-line').filter({ hasText: /^compares:\n$/ })).toHaveCount(1);
  await type(page, 'value("k1") = "v1"', '');
  await expect(page.getByTestId('console-line').filter({ hasText: /^success requests \(get, put, del\):\n$/ })).toHaveCount(1);
  await type(page, 'put k1 swapped', '', '');
  await expect(output(page)).toContainText('SUCCESS\n\nOK');
  await run(page, 'etcdctl get k1 --print-value-only');
  await expect(page.getByTestId('console-line').last()).toHaveText('swapped');

  // ↑ recalls, newest first; a heredoc as its first line, which runs whole.
  await input.press('ArrowUp');
  await expect(input).toHaveValue('etcdctl get k1 --print-value-only');
  await input.press('ArrowUp');
  await expect(input).toHaveValue('etcdctl txn -i');
  await input.press('ArrowUp');
  await input.press('ArrowUp');
  await expect(input).toHaveValue("kubectl apply -f - <<'EOF'");
  await input.press('ArrowDown');
  await expect(input).toHaveValue('etcdctl put k1 v1');
  await input.press('ArrowUp');
  await input.press('Enter');
  await expect(output(page)).toContainText('configmap/typed unchanged');

  // Ctrl+C abandons the lines typed so far.
  await type(page, 'cat <<EOF', 'half');
  await input.fill('typed');
  await input.press('Control+c');
  await expect(prompt).toHaveText('$');
  await expect(page.getByTestId('console-line').last()).toHaveText('typed^C');
  expect(errors).toEqual([]);
});

// lastLineShown: the console's newest line is inside its visible area.
const lastLineShown = (page: Page) => output(page).evaluate((o) => {
  const a = o.getBoundingClientRect();
  const b = o.lastElementChild!.getBoundingClientRect();
  return b.top >= a.top - 1 && b.bottom <= a.bottom + 1;
});

// A teacher switches to presentation mode and back, or the window
// changes size: the rows rewrap, and the console still follows its
// newest line (it stopped following, so that a lesson's Run seemed to
// print nothing).
test('the console follows its output through presentation mode and a resize', async ({ page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await openLab(page);
  for (let i = 1; i <= 6; i++) await run(page, `etcdctl put k${i} v${i}`);
  for (let i = 1; i <= 6; i++) await run(page, `etcdctl get k${i} -w json`);
  await expect.poll(() => lastLineShown(page)).toBe(true);
  await page.getByTestId('present').click();
  await expect(page.getByTestId('present')).toHaveAttribute('aria-pressed', 'true');
  await run(page, 'etcdctl get k1 --rev=6 -w json');
  await expect.poll(() => lastLineShown(page)).toBe(true);
  await page.getByTestId('present').click();
  await page.setViewportSize({ width: 1440, height: 900 });
  await run(page, 'etcdctl get k2 --rev=7 -w json');
  await expect.poll(() => lastLineShown(page)).toBe(true);
});

test('a watch streams while other commands run; Ctrl+C and the stop button end it', async ({ page }) => {
  await openLab(page);
  const stop = page.getByTestId('console-stop');
  await run(page, 'kubectl create cm first --from-literal=a=1');
  await run(page, 'kubectl get cm -w');
  await expect(output(page)).toContainText(/NAME\s+DATA\s+AGE\nfirst\s+1\s+\d+s/);
  await expect(stop).toBeVisible();
  await run(page, 'kubectl create cm other --from-literal=a=1');
  // The watch's row lines up under its header (kubectl's columns widen for
  // a longer name, as its tabwriter's do).
  const header = await page.getByTestId('console-line').filter({ hasText: /^NAME\s+DATA\s+AGE\n$/ }).first().textContent();
  // Its AGE is 0s or, when the event crosses a second boundary of the
  // creationTimestamp (whole seconds), 1s or more on a loaded machine.
  const row = page.getByTestId('console-line').filter({ hasText: /^other\s+1\s+\d+s\n$/ });
  await expect(row).toHaveCount(1);
  expect((await row.textContent())!.indexOf('1')).toBe(header!.indexOf('DATA'));
  await page.getByTestId('console-input').press('Control+c');
  await expect(stop).toBeHidden();
  await run(page, 'kubectl create cm after --from-literal=a=1');
  await expect(output(page)).toContainText('configmap/after created');
  await expect(page.getByTestId('console-line').filter({ hasText: /^after\s/ })).toHaveCount(0);

  await run(page, 'etcdctl watch --prefix /registry/configmaps/default/ --prev-kv');
  await expect(stop).toBeVisible();
  await run(page, 'kubectl label cm after tier=web');
  await expect(output(page)).toContainText('configmap/after labeled');
  await expect(output(page)).toContainText('PUT\n/registry/configmaps/default/after\n');
  await stop.click();
  await expect(stop).toBeHidden();
});

test('etcdctl lease in the page\'s engine: a key put with a lease goes with it; keep-alive streams until stopped', async ({ page }) => {
  await openLab(page);
  const stop = page.getByTestId('console-stop');
  await run(page, 'etcdctl lease grant 60');
  await expect(output(page)).toContainText(/lease [0-9a-f]{16} granted with TTL\(60s\)/);
  const id = /lease ([0-9a-f]{16}) granted/.exec((await output(page).textContent())!)![1]; // chosen as etcd chooses, from the member's ID
  await run(page, `etcdctl put leased v --lease=${id}`);
  await run(page, `etcdctl lease timetolive ${id} --keys`);
  await expect(output(page)).toContainText(new RegExp(`lease ${id} granted with TTL\\(60s\\), remaining\\(\\d+s\\), attached keys\\(\\[leased\\]\\)`));
  await run(page, `etcdctl lease keep-alive ${id}`);
  await expect(output(page)).toContainText(`lease ${id} keepalived with TTL(60)`);
  await expect(stop).toBeVisible();
  await stop.click();
  await expect(stop).toBeHidden();
  await run(page, `etcdctl lease revoke ${id}`);
  await expect(output(page)).toContainText(`lease ${id} revoked`);
  await run(page, 'etcdctl get leased --count-only -w fields');
  await expect(output(page)).toContainText('"Count" : 0');
});

test('kubectl edit opens the editor; replace -f - takes the editor\'s object', async ({ page }) => {
  await openLab(page);
  await run(page, 'kubectl create cm paint --from-literal=colour=blue');
  await run(page, 'kubectl edit cm paint');
  const editor = page.getByTestId('editor');
  await expect(editor).toHaveValue(/^# Please edit the object below/);
  await expect(page.getByTestId('editor-result')).toContainText('kubectl edit');
  await editor.fill((await editor.inputValue()).replace('colour: blue', 'colour: green'));
  await page.getByTestId('editor-apply').click();
  await expect(output(page)).toContainText('configmap/paint edited');
  await run(page, 'kubectl get cm paint -o jsonpath={.data.colour}');
  await expect(page.getByTestId('console-line').last()).toHaveText('green');

  // Esc leaves the edit unchanged.
  await run(page, 'kubectl edit cm paint');
  await expect(editor).toHaveValue(/colour: green/);
  await editor.press('Escape');
  await expect(output(page)).toContainText('Edit cancelled, no changes made.');

  // A stale resourceVersion from the editor is kubectl's conflict.
  await run(page, 'kubectl get cm paint -o yaml');
  await editor.fill('apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: paint\n  resourceVersion: "1"\ndata:\n  colour: red\n');
  await run(page, 'kubectl replace -f -');
  const conflict = 'Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on configmaps "paint": the object has been modified; please apply your changes to the latest version and try again';
  await expect(output(page)).toContainText(conflict);

  // The lab's note on -f - is said again in the language the reader picks;
  // kubectl's error stays as kubectl prints it.
  const note = page.getByTestId('console-line').filter({ hasText: /^# -f -/ }).last();
  await expect(note).toHaveText(`# ${messages('en')['console.note.kubectlEditorRead']}\n`);
  // So are the panels around the console, without waiting to be drawn
  // again: a card's empty copy, the informer's button and state once
  // stopped (nothing draws them again), its stream's state, button and
  // the lab's words in its rows and in the card's log, a card's outcome (B
  // wrote without reading), the settings, kubectl edit's hint while it
  // waits.
  const say = (lang: string, key: string, params: Record<string, string> = {}) =>
    messages(lang)[key].replace(/\{(\w+)\}/g, (_, k) => params[k]);
  await page.getByTestId('reflector-start').click();
  await expect(page.getByTestId('reflector-state')).toHaveAttribute('data-state', 'watching');
  await page.getByTestId('reflector-start').click();
  await expect(page.getByTestId('reflector-state')).toHaveAttribute('data-state', 'stopped');
  await page.getByTestId('client-a-put').click();
  await expect(page.getByTestId('client-a-outcome').getByTestId('outcome-status')).toHaveText('201 Created');
  await page.getByTestId('client-b-put').click();
  const notRead = page.getByTestId('client-b-outcome').locator('.outcome-note');
  await expect(notRead).toHaveText(say('en', 'outcome.notread'));
  const reflectorStream = page.getByTestId('stream').filter({ has: page.locator('b', { hasText: /^reflector$/ }) });
  await expect(reflectorStream.getByTestId('stream-state')).toHaveText(say('en', 'stream.ended.canceled'));
  const listing = reflectorStream.getByTestId('watch-event').first();
  await expect(listing).toHaveText(`LIST ${say('en', 'reflector.ev.listing')}`);
  const listed = page.getByTestId('client-reflector-log').getByTestId('log-note').first();
  await expect(listed).toHaveText(/^LIST rv=\d+, \d+ objects$/);
  const [, rv, n] = (await listed.textContent())?.match(/rv=(\d+), (\d+)/) ?? [];
  await expect(page.getByTestId('settings-line')).toContainText(/bookmarks every \S+/);
  const bookmarks = (await page.getByTestId('settings-line').textContent())?.match(/bookmarks every (\S+)/)?.[1] ?? '';
  expect(bookmarks).not.toBe('');
  await run(page, 'kubectl edit cm paint');
  await expect(page.getByTestId('editor-result')).toHaveText(messages('en')['editor.editing']);
  for (const lang of ['zh', 'ko']) {
    await page.locator('#lang').selectOption(lang);
    await expect(note).toHaveText(`# ${messages(lang)['console.note.kubectlEditorRead']}\n`);
    await expect(output(page)).toContainText(conflict);
    await expect(page.getByTestId('client-b-copy')).toHaveText(say(lang, 'clients.nothing'));
    await expect(page.getByTestId('reflector-start')).toHaveText(say(lang, 'reflector.start'));
    await expect(page.getByTestId('reflector-state')).toHaveText(say(lang, 'reflector.state.stopped'));
    await expect(reflectorStream.getByTestId('stream-state')).toHaveText(say(lang, 'stream.ended.canceled'));
    await expect(reflectorStream.getByTestId('stream-remove')).toHaveText(say(lang, 'watches.remove'));
    await expect(listing).toHaveText(`LIST ${say(lang, 'reflector.ev.listing')}`);
    await expect(listed).toHaveText(`LIST ${say(lang, 'reflector.ev.list', { rv, n })}`);
    await expect(notRead).toHaveText(say(lang, 'outcome.notread'));
    await expect(page.getByTestId('settings-line')).toContainText(say(lang, 'settings.line.bookmarkInterval', { v: bookmarks }));
    await expect(page.getByTestId('editor-result')).toHaveText(messages(lang)['editor.editing']);
  }
  await editor.press('Escape');
  await expect(page.getByTestId('console-line').filter({ hasText: 'Edit cancelled, no changes made.' })).toHaveCount(2);
  // Korean wraps between words, as Korean is set.
  expect(await output(page).evaluate((e) => getComputedStyle(e).wordBreak)).toBe('keep-all');
});

test('on a server session the console streams a watch over fetch and stops it', async ({ page }) => {
  const { id } = await newClass(page.request);
  await page.goto(`/s/${id}/`);
  await expect(page.getByTestId('lab')).toHaveAttribute('data-ready', 'true', { timeout: 20_000 });
  await run(page, 'kubectl create cm first --from-literal=a=1');
  await run(page, 'kubectl get cm -w --output-watch-events');
  await expect(output(page)).toContainText(/EVENT\s+NAME\s+DATA\s+AGE\nADDED\s+first\s+1\s+\d+s/);
  await run(page, 'kubectl create cm remote --from-literal=a=1');
  await expect(page.getByTestId('console-line').filter({ hasText: /^ADDED\s+remote\s+1\s+\d+s\n$/ })).toHaveCount(1);
  await page.getByTestId('console-stop').click();
  await expect(page.getByTestId('console-stop')).toBeHidden();
  await run(page, "etcdctl get /registry/configmaps/default/remote -w json | jq -r '.kvs[0].key|@base64d'");
  await expect(page.getByTestId('console-line').last()).toHaveText('/registry/configmaps/default/remote');
});
