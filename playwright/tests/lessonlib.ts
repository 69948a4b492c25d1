// What the lesson tests share: the lessons as the repository holds them,
// and how a learner opens the lab, follows a step and takes screenshots.
import { expect, type Page, type TestInfo } from '@playwright/test';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

type Action = { id?: string; run?: string; client?: string; do?: string; compact?: string };
type Step = { id: string; actions?: Action[]; solution?: string[]; verify?: unknown };
type Lesson = { dir: string; number: number; slug: string; steps: Step[] };

export type { Action, Step, Lesson };

const root = join(__dirname, '..', '..', 'web', 'lessons');
export const lessons: Lesson[] = readdirSync(root)
  .filter((d) => /^\d\d-/.test(d))
  .sort()
  .map((dir) => ({ dir, number: Number(dir.slice(0, 2)), ...JSON.parse(readFileSync(join(root, dir, 'lesson.json'), 'utf8')) }));

// The step whose outcome is the point of the lesson: its screenshots.
export const keyStep: Record<string, string> = {
  'etcd-revisions': 'delete-and-look-back',
  'resourceversion-is-mod-revision': 'find-the-key',
  'lost-update': 'b-conflicts',
  'retry-on-conflict': 'reread-and-retry',
  'list-then-watch': 'resume-from-an-item',
  'compaction-and-410': 'watch-after-compaction',
  bookmarks: 'resume-past-a-compaction',
  'watch-list': 'initial-events',
  'status-and-generation': 'rollout-status',
  'patches-and-apply': 'an-apply-conflict',
  'inside-update': 'no-op',
  'get-and-list': 'exact',
};

export const language = process.env.RVPLAY_LANG || 'en';
export const locale = { en: 'en-US', zh: 'zh-CN', ko: 'ko-KR' }[language] || language;

export async function openLab(page: Page, path = '/lab') {
  await page.goto(path);
  await expect(page.getByTestId('lab')).toHaveAttribute('data-ready', 'true', { timeout: 20_000 });
  await expect(page.getByTestId('lab')).toHaveAttribute('data-lessons-ready', 'true', { timeout: 20_000 });
}

// attachShots attaches the page at both sizes.
export async function attachShots(page: Page, testInfo: TestInfo, name: string) {
  const size = page.viewportSize();
  for (const [width, height] of [[1440, 900], [1920, 1080]]) {
    await page.setViewportSize({ width, height });
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    await testInfo.attach(`${name} (${width}x${height}, ${language})`, { body: await page.screenshot(), contentType: 'image/png' });
  }
  if (size) await page.setViewportSize(size);
}

// runStep clicks the step's solution, one action at a time, each once the
// previous one has finished (the panel disables its buttons meanwhile).
export async function runStep(page: Page, step: Step, only?: (a: Action) => boolean) {
  const byId = new Map((step.actions || []).map((a) => [a.id, a]));
  const panel = page.getByTestId('lesson-panel');
  for (const id of step.solution || []) {
    const a = byId.get(id)!;
    if (only && !only(a)) continue;
    const button = panel.locator(`[data-testid="lesson-action"][data-action="${id}"]`).first();
    await expect(button).toBeEnabled({ timeout: 30_000 });
    await button.click();
  }
  if ((step.solution || []).length) await expect(panel.locator('[data-testid="lesson-action"]').first()).toBeEnabled({ timeout: 60_000 });
}

