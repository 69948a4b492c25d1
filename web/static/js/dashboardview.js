// The teacher's dashboard's reading of a class (GET /rvplay/v1/class and
// the channel's roster): what each watch's state is, which misconceptions
// to name and in what order, which lessons the class is in. Pure
// functions, tested under node --test; dashboard.js renders them.

import { t } from './i18n.js';

// watchState says where a watch is, against the store's revision: kind is
// one of current, behind, waiting (no event yet), gone (410), closed (by
// the server: a slow watcher, a timeout, the session closing) and ended
// (by its client).
export function watchState(w) {
  const rv = w.lastResourceVersion || 0;
  if (w.ended) {
    if (w.errorCode === 410) return { kind: 'gone', text: t('dash.watch.gone', { from: w.from || '0' }) };
    if (w.endedBy === 'server') return { kind: 'closed', text: t('dash.watch.closed', { rv }) };
    return { kind: 'ended', text: t('dash.watch.ended', { rv }) };
  }
  if (!rv) return { kind: 'waiting', text: t('dash.watch.waiting', { from: w.from || '–' }) };
  if (w.behind > 0) return { kind: 'behind', text: t('dash.watch.behind', { rv, n: w.behind }) };
  return { kind: 'current', text: t('dash.watch.current', { rv }) };
}

// watchRank orders the kinds by how much they need the teacher's eye:
// a watch that failed (410, closed by the server) first, then one behind
// the store, one with nothing yet, one up to date, one its client ended.
const watchRank = { gone: 0, closed: 1, behind: 2, waiting: 3, current: 4, ended: 5 };

// rankWatches says each watch's state, the one that matters most first:
// by kind (watchRank), then the furthest behind; otherwise in the class's
// order (newest first).
export function rankWatches(watches) {
  return (watches || []).map((w) => ({ w, s: watchState(w) }))
    .sort((a, b) => watchRank[a.s.kind] - watchRank[b.s.kind] || (b.w.behind || 0) - (a.w.behind || 0));
}

// watchLine is a watch in one line of text: its client, state and path.
export const watchLine = ({ w, s }) => `${w.client || '?'} · ${s.text} · ${w.path}`;

// findingsList names what was found, misconceptions first (most frequent
// first), then good practices; detectors that found nothing are left out.
export function findingsList(counts, detectors) {
  const out = [];
  for (const d of detectors || []) {
    const n = counts?.[d.name] || 0;
    if (n > 0) out.push({ name: d.name, kind: d.kind, n, text: t(`dash.detector.${d.name}`) });
  }
  const rank = (x) => (x.kind === 'misconception' ? 0 : 1);
  return out.sort((a, b) => rank(a) - rank(b) || b.n - a.n || a.name.localeCompare(b.name));
}

// misconceptionCount counts a person's misconceptions (not practices).
export function misconceptionCount(counts, detectors) {
  return (detectors || []).filter((d) => d.kind === 'misconception').reduce((n, d) => n + (counts?.[d.name] || 0), 0);
}

// students are the people of the roster who joined as students.
export const students = (people) => (people || []).filter((p) => p.role === 'student');

// connected counts the students with a browser connected, of all.
export function connected(people) {
  const s = students(people);
  return { n: s.filter((p) => p.connections > 0).length, total: s.length };
}

// activeLessons are the lessons the dashboard shows: the one the class
// was pushed to, and those someone is in, passed a step of, or made a
// mistake in; in lesson order.
export function activeLessons(lessons, push) {
  return (lessons || []).filter((l) => l.slug === push?.lesson || l.here > 0
    || l.steps.some((s) => s.passed > 0) || Object.values(l.findings || {}).some((n) => n > 0));
}

// stuckAfter is how long on one step the dashboard says so: a step takes
// a learner a few minutes; past that, the teacher may want to look.
export const stuckAfter = 5 * 60 * 1000;

// onStepMinutes is how many whole minutes p has been on their lesson's
// step at now (ms, on the server's clock: the class's now), once that is
// stuckAfter or more; else 0 (not connected, not in a lesson, not long).
export function onStepMinutes(p, now) {
  if (!p.connections || !p.lesson || !p.since || !now) return 0;
  const ms = now - Date.parse(p.since);
  return ms >= stuckAfter ? Math.floor(ms / 60000) : 0;
}

// whereParts says where a person is: their lesson and step, the lesson
// list, or not connected; the lesson's title and its step apart, so that
// the dashboard can cut a long title and still show the step; the step
// with how long they have been on it, once that is long (onStepMinutes).
export function whereParts(p, title, steps, now) {
  if (!p.connections) return [t('dash.offline')];
  if (!p.lesson) return [t('dash.lessonlist')];
  const step = p.step ? t('dash.stepof', { n: p.step, total: steps || '?' }) : t('dash.intro');
  const min = onStepMinutes(p, now);
  return [title, min ? `${step} · ${t('dash.onstep', { min })}` : step];
}

// where is whereParts in one line.
export const where = (p, title, steps, now) => whereParts(p, title, steps, now).join(' · ');

// mergeRoster takes the channel's newest roster into the class's people:
// presence from the roster, everything else from the last GET.
export function mergeRoster(people, roster) {
  const byId = new Map((people || []).map((p) => [p.id, p]));
  return roster.map((r) => ({ passed: {}, findings: {}, watches: [], ...byId.get(r.id), ...r }));
}

// exchangeRow is one exchange of a person's record as the dashboard lists
// it.
export function exchangeRow(e) {
  const q = e.query ? `?${e.query}` : '';
  const rv = e.resourceVersionSent || e.resourceVersion ? `${e.resourceVersionSent || '–'} → ${e.resourceVersion || '–'}` : '';
  const ua = e.userAgent || '';
  const client = ua.startsWith('Mozilla/') ? 'browser' : ua.replace(/\/rvplay-lab$/, '').split(' ')[0];
  return {
    time: (e.time || '').slice(11, 19),
    client,
    request: `${e.verb || e.method} ${e.path}${q}`,
    status: `${e.status}${e.reason ? ` ${e.reason}` : ''}${e.watch?.errorCode ? ` · ${e.watch.errorCode} ${e.watch.errorReason || ''}`.trimEnd() : ''}`,
    rv,
    failed: e.status >= 400 || (e.watch?.errorCode || 0) >= 400,
  };
}
