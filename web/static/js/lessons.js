// The lesson panel: the list of lessons with completion marks, and the
// current step: its text, its click-to-run actions, a check after every
// action (and on demand), progressive hints, "show me", back / retry /
// reset, progress kept across reloads and deep links
// (/lab#lesson=<slug>/<step>).
//
// A lesson is data (web/lessons/README.md): its definition and texts are
// static files (the page's configuration lists the lessons), fetched in
// the learner's language while the engine still loads; set-up and verify
// are the session's routes, so they work the same offline (through the
// engine in the page) and on a server session.

import { $, el } from './dom.js';
import { t, lang, onLanguageChange } from './i18n.js';
import { said } from './notice.js';
import { renderMarkdown, splitText } from './markdown.js';
import { resourceForKind } from './kube.js';

const ROUTE = '/rvplay/v1/lessons';

// ---- the pure parts ---------------------------------------------------------

// parseDeepLink reads "#lesson=<slug>/<step>" (step from 1; 0 or none is
// the lesson's introduction).
export function parseDeepLink(hash) {
  const m = String(hash || '').match(/^#lesson=([a-z0-9-]+)(?:\/(\d+))?$/);
  return m ? { slug: m[1], step: m[2] ? Number(m[2]) : 0 } : null;
}

export const deepLink = (slug, step) => `#lesson=${slug}${step ? `/${step}` : ''}`;

// parseDuration reads a Go duration ("6s", "1m30s", "250ms") in ms.
export function parseDuration(s) {
  const units = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let ms = 0;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  let m;
  let used = 0;
  while ((m = re.exec(s))) { ms += Number(m[1]) * units[m[2]]; used += m[0].length; }
  if (!used || used !== String(s).length) throw new Error(`not a duration: ${s}`);
  return ms;
}

// ownWords replaces the words that own names in s, as the server does in a
// lesson's commands for a student of a class (engine/lesson/classnames): a
// word is a run of letters, digits, '-', '_' and '.', so k1 becomes
// k1-ada-x7k2q in "etcdctl get k1", nginx in "deployment/nginx", but not
// k1 in k10.
export function ownWords(s, own) {
  return s.replace(/[A-Za-z0-9_.-]+/g, (w) => (Object.hasOwn(own, w) ? own[w] : w));
}

// ownRevisions resolves a text's revision placeholders: {{6}} names the
// revision that the lesson's class maps from 6 (class.revisions, the
// number its commands quote, etcdctl get k1 --rev=6), so that the prose
// says what the student's commands say: their own number (own["6"], the
// session's mapping, applied to their commands too), or the article's 6
// offline, for the teacher, and until the student's key exists.
// {{store:9}} and the other kinds of RECORDED name a revision the
// learner's own answers in the step showed (seen: their record since the
// step began, seenRevision), on a server session, whose store a class
// shares; the article's 9 offline and until they have such an answer.
export function ownRevisions(md, own, seen = []) {
  return md.replace(/\{\{(?:([a-z-]+)(?:~(\d+))?:)?(\d+)\}\}/g, (_, kind, back, n) => {
    if (kind) return String(seenRevision(seen, kind, Number(back || 0)) || n);
    return own && Object.hasOwn(own, n) ? own[n] : n;
  });
}

// RECORDED finds the placeholders that name a revision the learner's
// answers showed: {{kind:N}}, or {{kind~K:N}} for the answer of that kind
// K before the newest (seenRevision).
export const RECORDED = /\{\{[a-z-]+(?:~\d+)?:\d+\}\}/;

// ownText gives a lesson text a student's own names (own: the map the
// session applied to the lesson's definition, its class.own) in its code:
// inline code and console blocks, whose lines then match the student's
// click-to-run commands; plain blocks, the requests and answers of the
// student's steps (lesson 5's GET /api/v1/namespaces/default/configmaps,
// the path their watch panel shows; lesson 11's 409 on "nginx", which
// names their object), by the same word rule; and a yaml or json block's
// own metadata (its name and namespace, as the server does in a command's
// manifest: labels and images share the object's word but keep it).
// Prose and a block of another language (lesson 4's Go) keep the
// article's words, but for the revisions written as placeholders
// (ownRevisions, with seen), which are resolved after the names: the
// number a placeholder shows ("rv=8" before the learner's bookmark) is
// never taken for a word their class maps (lesson 8's 8, their c's).
export function ownText(md, own, seen = []) {
  const shown = [];
  md = md.replace(/\{\{(?:[a-z-]+(?:~\d+)?:)?\d+\}\}/g, (p) => {
    shown.push(ownRevisions(p, own, seen));
    return `\uE000${String.fromCharCode(0xE000 + shown.length)}`; // no word characters
  });
  const restore = (text) => text.replace(/\uE000([\uE001-\uF8FF])/g, (_, c) => shown[c.charCodeAt(0) - 0xE001]);
  if (!own || !Object.keys(own).length) return restore(md);
  let fence = null;
  let meta = false;
  return restore(md.split('\n').map((line) => {
    const open = line.match(/^\s*```\s*(\S*)/);
    if (open) { fence = fence === null ? open[1] : null; meta = false; return line; }
    if (fence === 'console' || fence === '') return ownWords(line, own);
    if (fence === 'yaml') {
      if (!line.startsWith(' ')) meta = line === 'metadata:';
      const m = meta && line.match(/^( {2}(?:name|namespace): )(\S+)$/);
      return m && Object.hasOwn(own, m[2]) ? m[1] + own[m[2]] : line;
    }
    if (fence === 'json') { // a kubectl replace --raw body, indented by two
      if (!line.startsWith('    ')) meta = line === '  "metadata": {';
      const m = meta && line.match(/^( {4}"(?:name|namespace)": ")([^"]+)(".*)$/);
      return m && Object.hasOwn(own, m[2]) ? m[1] + own[m[2]] + m[3] : line;
    }
    if (fence !== null) return line;
    return line.replace(/`[^`]+`/g, (code) => ownWords(code, own));
  }).join('\n'));
}

// seenRevision is the revision that the newest answer of a kind in a
// session's record (GET /rvplay/v1/exchanges, oldest first: a learner's
// own since their step began) showed, or with back K the one K answers
// of that kind before it; 0 when there is none. The lab's own panels (its
// etcd table reading the store again after a write: the browser's
// User-Agent) and the session's own API are not what the learner did.
// The kinds:
//   store: the store's revision an answer showed: an etcd answer's
//     header.revision, a list's resourceVersion, and for any other answer
//     (a get, a write, a 504's "current: N") the store's revision when it
//     was made; streams answer nothing of the kind.
//   list, get: a successful Kubernetes list's or get's resourceVersion.
//   write: a successful write's resourceVersion (etcd: the revision its
//     header says), the revision it made.
//   sent: the resourceVersion a Kubernetes get, list or watch asked for
//     (a watch's start: R resumes from 10).
//   last: the last resourceVersion a watch delivered (an event's or a
//     bookmark's: where it would resume).
//   bookmark: the last bookmark's resourceVersion of a watch that got one.
//   initial-events-end: the resourceVersion a watch-list's
//     k8s.io/initial-events-end bookmark carried.
export function seenRevision(items, kind = 'store', back = 0) {
  const shown = RECORDS[kind];
  if (!shown) return 0;
  for (let i = (items?.length || 0) - 1; i >= 0; i--) {
    const e = items[i];
    if (e.protocol === 'rvplay' || (e.userAgent || '').startsWith('Mozilla/')) continue;
    const rv = shown(e);
    if (rv > 0 && back-- === 0) return rv;
  }
  return 0;
}

const WRITES = new Set(['create', 'update', 'patch', 'apply', 'delete', 'deletecollection', 'put', 'deleterange', 'txn']);
const succeeded = (e) => e.status < 300;
const isKube = (e) => e.protocol === 'kubernetes';
const RECORDS = {
  store: (e) => {
    if (e.watch) return 0;
    const rv = Number(e.resourceVersion);
    if (succeeded(e) && (e.protocol === 'etcd' || e.verb === 'list') && rv > 0) return rv;
    return Number(e.revision) || 0;
  },
  list: (e) => (isKube(e) && succeeded(e) && e.verb === 'list' ? Number(e.resourceVersion) : 0),
  get: (e) => (isKube(e) && succeeded(e) && e.verb === 'get' ? Number(e.resourceVersion) : 0),
  write: (e) => (succeeded(e) && WRITES.has(e.verb) ? Number(e.resourceVersion) : 0),
  sent: (e) => (isKube(e) && ['get', 'list', 'watch'].includes(e.verb) ? Number(e.resourceVersionSent) : 0),
  last: (e) => Number(e.watch?.lastResourceVersion) || 0,
  bookmark: (e) => Number(e.watch?.bookmarkResourceVersion) || 0,
  'initial-events-end': (e) => Number(e.watch?.initialEventsEndResourceVersion) || 0,
};

// settingsLeft is what a lesson's settings action still applies when the
// session refused only its compactionInterval, as a session stored on an
// etcd cluster does (the cluster compacts every session at once, and the
// lesson goes on with the cluster's compaction), or null when it was
// refused for anything else.
export function settingsLeft(settings, status) {
  const causes = status?.details?.causes;
  if (status?.code !== 422 || !causes?.length || !causes.every((c) => c.field === 'compactionInterval' && c.reason === 'FieldValueForbidden')) return null;
  const { compactionInterval, ...left } = settings;
  return left;
}

// textPath is where a lesson text lives under the static assets.
export const textPath = (dir, language, n) => `lessons/${dir}/${language}/${String(n).padStart(2, '0')}.md`;

// Progress is what a learner has done, kept in localStorage under key:
// per lesson the steps passed and the step reached; the lesson open now.
export class Progress {
  constructor(key, storage = globalThis.localStorage) {
    this.key = key;
    this.storage = storage;
    this.data = { current: null, lessons: {} };
    try {
      const raw = storage?.getItem(key);
      if (raw) this.data = { current: null, lessons: {}, ...JSON.parse(raw) };
    } catch { /* storage disabled or corrupt: start empty */ }
  }

  save() { try { this.storage?.setItem(this.key, JSON.stringify(this.data)); } catch { /* storage full or disabled */ } }

  lesson(slug) { return this.data.lessons[slug] || { passed: [], step: 0, started: false }; }

  update(slug, fn) {
    const l = this.lesson(slug);
    fn(l);
    this.data.lessons[slug] = l;
    this.save();
  }

  pass(slug, step) { this.update(slug, (l) => { if (!l.passed.includes(step)) l.passed.push(step); l.passed.sort((a, b) => a - b); }); }

  at(slug, step) {
    this.update(slug, (l) => { l.step = step; if (step > 0) l.started = true; });
    this.data.current = { slug, step };
    this.save();
  }

  // begin keeps where the learner's step began in the session's record
  // (seq), and began gives it back for that step (null for another): a
  // reload in the middle of a step reads their answers since then again.
  begin(slug, step, seq) { this.update(slug, (l) => { l.began = { step, seq }; }); }

  began(slug, step) {
    const b = this.lesson(slug).began;
    return b && b.step === step && Number.isFinite(b.seq) ? b.seq : null;
  }

  close() { this.data.current = null; this.save(); }

  reset(slug) { delete this.data.lessons[slug]; if (this.data.current?.slug === slug) this.data.current = null; this.save(); }

  // complete: every step passed.
  complete(slug, steps) {
    const l = this.lesson(slug);
    return steps > 0 && Array.from({ length: steps }, (_, i) => i + 1).every((n) => l.passed.includes(n));
  }
}

// actionText says what a click-to-run action does, in the lab's words.
export function actionText(a) {
  if (a.run) return a.run;
  if (a.compact) return t('lessons.action.compact');
  if (a.settings) return t('lessons.action.settings', { what: Object.entries(a.settings).map(([k, v]) => `${k}=${v}`).join(', ') });
  if (a.wait) return t('lessons.action.wait', { d: a.wait });
  if (a.client) {
    const target = [a.resource, a.name].filter(Boolean).join('/');
    const extra = [];
    if (a.set) extra.push(Object.entries(a.set).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', '));
    if (a.resourceVersion === 'drop') extra.push(t('lessons.action.norv'));
    else if (a.resourceVersion) extra.push(`resourceVersion=${a.resourceVersion}`);
    if (a.subresource) extra.push(`/${a.subresource}`);
    if (a.backoff) extra.push(a.backoff);
    if (a.watchList) extra.push('watch-list');
    return t('lessons.action.client', { client: a.client, what: [a.do, target, ...extra].filter(Boolean).join(' ') });
  }
  return JSON.stringify(a);
}

// unmetPart follows the path a failed check reports ("all[1].sequence")
// into the step's predicate and answers the part that did not hold.
export function unmetPart(verify, path) {
  let p = verify;
  for (const m of String(path || '').matchAll(/all\[(\d+)\]/g)) p = p?.all?.[Number(m[1])];
  return p || null;
}

// matchText names what an exchange match asks for: who, what, on which
// object, and the answer ("B update deployments/nginx → 409 Conflict").
export function matchText(m) {
  const what = [m.client || m.userAgent || '', m.verb || '', [m.resource, m.name].filter(Boolean).join('/') || m.key || m.keyPrefix || ''].filter(Boolean).join(' ');
  const answer = m.status ? `${m.status}${m.reason ? ` ${m.reason}` : ''}` : m.success ? '2xx' : m.watch?.error ? `ERROR ${m.watch.error}` : '';
  const extra = [m.sentResourceVersion === 'none' ? 'without resourceVersion' : '', m.from ? `from ${m.from}` : '',
    m.query ? Object.entries(m.query).map(([k, v]) => `${k}=${v}`).join('&') : ''].filter(Boolean).join(', ');
  return `${what}${extra ? ` (${extra})` : ''}${answer ? ` → ${answer}` : ''}`;
}

// predicateText says in a line what a predicate asks for.
export function predicateText(p) {
  if (!p) return '';
  if (p.exchange) return matchText(p.exchange);
  if (p.sequence) return (p.sequence.steps || []).map(matchText).join(', then ');
  if (p.key) {
    const k = p.key;
    return `etcd ${k.key}${k.exists === false ? ' deleted' : ''}${k.version ? ` version ${k.version}` : ''}${k.minVersion ? ` version ≥ ${k.minVersion}` : ''}${k.recreated ? ' recreated' : ''}`;
  }
  if (p.object) return `${p.object.resource}/${p.object.name}${p.object.fields ? ' ' + Object.entries(p.object.fields).map(([f, v]) => `${f}=${JSON.stringify(v)}`).join(', ') : ''}`;
  if (p.compacted !== undefined) return p.compacted ? 'compaction' : 'no compaction';
  if (p.detected) return `${p.detected.client ? `${p.detected.client}: ` : ''}${p.detected.name}`;
  if (p.not) return `not ${predicateText(p.not)}`;
  if (p.any) return p.any.map(predicateText).join(' or ');
  if (p.all) return p.all.map(predicateText).join('; ');
  return '';
}

// focusOf says which part of the lab shows what a step teaches: the card
// of the client its check is about, the etcd view for a key, the console
// for commands.
export function focusOf(step) {
  const s = JSON.stringify(step?.verify || {});
  const client = s.match(/"client":"([^"]+)"/)?.[1];
  if (client) return { client };
  if (/"(key|compacted)":/.test(s)) return { panel: 'etcd-panel' };
  if ((step?.actions || []).some((a) => a.client)) return { client: step.actions.find((a) => a.client).client };
  if (/"watch"/.test(s)) return { panel: 'watches-panel' };
  return { panel: 'console-panel' };
}

// ---- the panel -----------------------------------------------------------------

export function mountLessons(lab) {
  const { cfg } = lab;
  const defs = new Map(); // dir -> Promise<definition>
  const server = cfg.mode === 'server';
  const progress = new Progress(server ? `rvplay.lessons.session.${cfg.session}` : 'rvplay.lessons.offline');
  const texts = new Map(); // "<dir>/<lang>/<nn>" -> split text
  const refs = cfg.lessons || []; // {dir, number, slug, steps, titles}
  let cur = null; // {lesson, step, since, hints, result, busy}
  let verifyTimer = null;

  const body = () => $('lesson-body');

  async function request(method, path, payload) {
    const r = await lab.transport.request(method, path, payload === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(payload) });
    let j = null;
    try { j = JSON.parse(r.body); } catch { /* not JSON */ }
    if (r.status >= 300) throw new Error(j?.message || `${r.status} ${r.body}`);
    return j;
  }

  // text fetches a lesson text once per language (in the learner's
  // language, else English).
  function text(lesson, n) {
    const language = lang();
    const key = `${lesson.dir}/${language}/${n}`;
    if (!texts.has(key)) {
      texts.set(key, (async () => {
        let r = await fetch(cfg.static + textPath(lesson.dir, language, n));
        if (!r.ok && language !== 'en') r = await fetch(cfg.static + textPath(lesson.dir, 'en', n));
        return splitText(r.ok ? await r.text() : '');
      })());
    }
    return texts.get(key);
  }

  const bySlug = (slug) => refs.find((l) => l.slug === slug);
  const titleOf = (ref) => ref.titles?.[lang()] || ref.titles?.en || ref.slug;

  // definition fetches a lesson's definition once: offline its
  // lesson.json, on a server session the session's (a student of a class
  // gets their own names in it where the lesson gives them their own).
  function definition(ref) {
    if (!defs.has(ref.dir)) {
      const d = server ? request('GET', `${ROUTE}/${ref.slug}`) : fetch(`${cfg.static}lessons/${ref.dir}/lesson.json`).then((r) => {
        if (!r.ok) throw new Error(`${ref.dir}: ${r.status}`);
        return r.json();
      });
      defs.set(ref.dir, d.then((x) => ({ ...x, dir: ref.dir, number: ref.number })).catch((e) => { defs.delete(ref.dir); throw e; }));
    }
    return defs.get(ref.dir);
  }

  // refresh reads a server session's definition again as a step begins:
  // a revision the article quotes (etcdctl get k1 --rev=6) is, for a
  // student of a class, their own key's, known once they made it.
  async function refresh(lesson) {
    if (!server) return;
    try {
      const d = await request('GET', `${ROUTE}/${lesson.slug}`);
      Object.assign(lesson, d, { dir: lesson.dir, number: lesson.number });
    } catch { /* keep the copy we have */ }
  }

  // ownRevisionsChanged reads a student's definition again after a step's
  // actions while a revision their lesson's class maps is not known yet:
  // the action that created their key (lesson 1's first put) fixes the
  // revision the commands and the text's placeholders name, and the text
  // shows it at once.
  async function ownRevisionsChanged() {
    const l = cur?.lesson;
    const o = own(l);
    if (!server || !o || Object.keys(l.class.revisions || {}).every((r) => Object.hasOwn(o, r))) return;
    const before = JSON.stringify(o);
    await refresh(l);
    if (cur?.lesson === l && JSON.stringify(own(l)) !== before) await render();
  }

  // own is the map of the learner's own names in lesson (none: the
  // article's names).
  const own = (lesson) => lesson?.class?.own || null;

  // classNote says, on a server session, whose names the lesson uses.
  function classNote(lesson) {
    const o = own(lesson);
    if (o) return t('lessons.own', { names: Object.entries(o).filter(([k]) => !/^\d+$/.test(k)).map(([, v]) => v).join(', ') });
    if (lesson.class?.shared) return t('lessons.shared');
    return t('lessons.serverSetup');
  }

  // prefetch starts loading the lesson and the text the learner will see
  // first (the list itself needs nothing: the page lists the lessons).
  function prefetch() {
    const first = parseDeepLink(location.hash) || progress.data.current;
    const ref = first && bySlug(first.slug);
    if (ref) definition(ref).then((d) => text(d, first.step || 0)).catch(() => {});
  }
  prefetch();
  // The list needs nothing but the page: show it at once, unless a lesson
  // is to be opened (load() does that once the lab is interactive).
  if (!parseDeepLink(location.hash) && !progress.data.current) renderList();

  // ---- the list ---------------------------------------------------------

  function renderList() {
    cur = null;
    progress.close();
    lab.clients?.showCards(null);
    lab.clients?.setSubject(null, null, 'default');
    setHash('');
    const items = refs.map((l, i) => {
      const p = progress.lesson(l.slug);
      const done = progress.complete(l.slug, l.steps);
      const mark = done ? '✓' : p.passed.length ? '◐' : '○';
      return el('li', { class: done ? 'done' : '' },
        el('button', {
          type: 'button', class: 'lesson-link', 'data-testid': 'lesson-link', 'data-lesson': l.slug, 'data-complete': String(done),
          onclick: lab.guard(() => open(l.slug, done || !p.started ? 0 : p.step || 1)),
        },
        el('span', { class: 'mark', 'aria-hidden': 'true', text: mark }),
        el('span', { class: 'num', text: String(l.number || i + 1) }),
        el('span', { class: 'title', text: titleOf(l) }),
        el('span', { class: 'visually-hidden', text: done ? ` (${t('lessons.complete.mark')})` : '' }),
        p.passed.length && !done ? el('small', { class: 'muted', text: ` ${t('lessons.progress', { n: p.passed.length, total: l.steps })}` }) : null));
    });
    body().replaceChildren(
      el('p', { class: 'muted', text: t('lessons.intro') }),
      el('ol', { class: 'lesson-list', 'data-testid': 'lesson-list' }, ...items));
    $('lesson-panel').dataset.view = 'list';
    performance.mark('lesson-list-rendered');
  }

  // ---- one lesson ---------------------------------------------------------

  async function open(slug, step = 0) {
    const ref = bySlug(slug);
    if (!ref) throw new Error(t('lessons.unknown', { slug }));
    const lesson = await definition(ref);
    const p = progress.lesson(slug);
    if (step > 0 && !p.started) {
      // A deep link into a lesson not started here: set it up first.
      await setup(lesson);
    }
    if (step > 0) await refresh(lesson);
    cur = { lesson, step, since: cur?.lesson === lesson ? cur.since : 0, hints: 0, result: null, busy: false };
    progress.at(slug, step);
    showLessonClients(lesson);
    setHash(deepLink(slug, step));
    // The step shows at once; what counts for it starts now.
    if (step > 0 && !cur.since) cur.since = newestSeq(lesson, step);
    // A reload in the middle of the step: the prose names the store's
    // revision the learner's answers since the step began showed.
    const began = step > 0 ? progress.began(slug, step) : null;
    if (step > 0 && began === null) begin(lesson, step, cur.since);
    await render();
    focus();
    if (began !== null) await seen(began).catch(() => {});
  }

  // begin keeps, with the learner's progress, where their step began in
  // the session's record (since: a seq, or the promise of one).
  function begin(lesson, step, since) {
    Promise.resolve(since).then((seq) => progress.begin(lesson.slug, step, seq)).catch(() => {});
  }

  // setup prepares the store: offline a fresh one when the lesson asks,
  // then the lesson's settings and objects (the session's own route).
  async function setup(lesson) {
    await lab.ready;
    await lab.restored;
    if (lesson.setup?.fresh && !server) {
      await lab.resetLab();
      lab.history.replace([]);
    }
    lab.record({ op: 'lesson', slug: lesson.slug });
    let r;
    try {
      r = await request('POST', `${ROUTE}/${lesson.slug}/setup`);
    } catch (e) {
      // On a shared session someone (the teacher) may have set it up and
      // may alone change its settings: go on with what is there.
      if (!server) throw e;
      lab.notice(said('lessons.setupfailed', { message: e.message }), 'error');
      r = { seq: await newestSeq(lesson, 1) };
    }
    lab.afterWrite();
    await lab.settings.load().catch(() => {});
    progress.update(lesson.slug, (l) => { l.started = true; });
    showLessonClients(lesson);
    return r;
  }

  // showLessonClients shows the cards of the lesson's clients, working on
  // its first object, in the lesson's namespace: a student's own where
  // the session gave them one (the map it applied to the lesson's own
  // actions), so that the cards' buttons act where the steps do. The
  // object editor, which loaded its starting object (freshObject) when
  // the lab opened, starts on the student's own object too: left on the
  // lab's demo in default, it would have them write where every student
  // of the class writes. Elsewhere (open sessions, the teacher, offline)
  // it keeps what it holds, as it always did.
  function showLessonClients(lesson) {
    lab.clients.showCards(lesson?.setup?.clients || []);
    const o = lesson?.setup?.objects?.[0];
    const r = o && resourceForKind(o.apiVersion, o.kind);
    const ns = own(lesson)?.default || 'default';
    if (r && ['configmaps', 'deployments'].includes(r.resource)) lab.clients.setSubject(r.resource, o.metadata?.name, ns);
    else lab.clients.setSubject(null, null, ns);
    if (own(lesson)) lab.editor?.follow().catch(() => {});
  }

  // newestSeq is the record's newest exchange: only what happens after it
  // counts for the step.
  async function newestSeq(lesson, step) {
    const r = await request('POST', `${ROUTE}/${lesson.slug}/steps/${step}/verify`, { since: Number.MAX_SAFE_INTEGER });
    return r.seq;
  }

  async function start() {
    cur.busy = true;
    renderBusy();
    try {
      const r = await setup(cur.lesson);
      cur.since = r.seq;
      cur.step = 1;
      progress.at(cur.lesson.slug, 1);
      begin(cur.lesson, 1, r.seq);
      setHash(deepLink(cur.lesson.slug, 1));
    } finally {
      cur.busy = false;
    }
    await render();
    focus();
  }

  async function go(step) {
    const l = cur.lesson;
    if (step > l.steps.length) { await finish(); return; }
    cur.done = false;
    cur.step = step;
    cur.hints = 0;
    cur.result = null;
    cur.seen = [];
    progress.at(l.slug, step);
    setHash(deepLink(l.slug, step));
    cur.since = step > 0 ? newestSeq(l, step) : 0;
    if (step > 0) begin(l, step, cur.since);
    if (step > 0) await refresh(l);
    await render();
    focus();
  }

  async function finish() {
    progress.at(cur.lesson.slug, cur.lesson.steps.length);
    cur.done = true; // a language picked now says this page again, not the last step
    renderDone();
  }

  function renderDone() {
    const l = cur.lesson;
    const i = refs.findIndex((r) => r.slug === l.slug);
    const next = refs[i + 1];
    const nextTitle = next ? titleOf(next) : '';
    body().replaceChildren(el('div', { class: 'lesson-done', 'data-testid': 'lesson-done', role: 'status' },
      el('h3', { text: t('lessons.finished') }),
      el('p', { text: progress.complete(l.slug, l.steps.length) ? t('lessons.finished.all') : t('lessons.finished.some') }),
      next ? el('button', { type: 'button', class: 'primary', 'data-testid': 'lesson-next-lesson', onclick: lab.guard(() => open(next.slug, 0)), text: t('lessons.nextlesson', { title: nextTitle }) }) : null,
      el('button', { type: 'button', 'data-testid': 'lesson-all', onclick: () => renderList(), text: t('lessons.all') })));
  }

  // ---- actions and checks -------------------------------------------------------

  async function runAction(a) {
    if (a.run) {
      if (a.stdin !== undefined) lab.editor.setText(a.stdin);
      await lab.console.run(a.run);
    } else if (a.compact) {
      await lab.etcd_view.compact(a.compact === 'head' ? 0 : Number(a.compact));
    } else if (a.settings) {
      try {
        await lab.settings.save(a.settings);
      } catch (e) {
        const left = settingsLeft(a.settings, e.status);
        if (!left) throw e;
        lab.notice(e.message, 'info');
        if (Object.keys(left).length) await lab.settings.save(left);
      }
    } else if (a.wait) {
      await wait(parseDuration(a.wait));
    } else if (a.client) {
      if (!lab.clients?.runAction) throw new Error(t('lessons.noclients'));
      await lab.clients.runAction(a);
    }
  }

  // wait finds its line again at each tick: the step drawn again (a
  // language picked meanwhile) has a new one.
  async function wait(ms) {
    const end = performance.now() + ms;
    while (performance.now() < end) {
      const box = $('lesson-wait');
      if (box) box.textContent = t('lessons.waiting', { s: Math.ceil((end - performance.now()) / 1000) });
      await new Promise((r) => setTimeout(r, Math.min(250, end - performance.now())));
    }
    const box = $('lesson-wait');
    if (box) box.textContent = '';
  }

  // act runs actions in order, then checks the step.
  async function act(actions) {
    if (!cur || cur.busy) return;
    cur.busy = true;
    renderBusy();
    try {
      for (const a of actions) {
        await runAction(a);
        focus(a);
      }
      await ownRevisionsChanged();
    } finally {
      cur.busy = false;
      renderBusy();
    }
    const r = await verify();
    if (r && !r.passed) verifyLater();
  }

  async function verify() {
    if (!cur || cur.step < 1) return null;
    const l = cur.lesson;
    const step = cur.step;
    await lab.settled?.();
    const since = await cur.since;
    const r = await request('POST', `${ROUTE}/${l.slug}/steps/${step}/verify`, { since });
    if (!cur || cur.lesson !== l || cur.step !== step) return r;
    const was = cur.result?.passed;
    cur.result = r;
    if (r.passed) progress.pass(l.slug, step);
    renderResult();
    if (r.passed && !was) revealNext();
    await seen(progress.began(l.slug, step) ?? since).catch(() => {}); // the prose keeps the numbers it shows
    return r;
  }

  // A learner's own actions (console, cards, editor) and what the lab's
  // clients do by themselves (a reflector's relist, a watch that ends in
  // 410) are checked too, a moment after they settle.
  function verifySoon() {
    if (!cur || cur.step < 1 || cur.busy || cur.result?.passed) return;
    clearTimeout(verifyTimer);
    verifyTimer = setTimeout(() => verify().catch(() => {}), 400);
  }

  // After a step's actions, what they set going (a reflector backing off
  // before it relists, a controller catching up) may complete the step a
  // little later: check again, less and less often.
  let later = [];
  function verifyLater() {
    for (const id of later) clearTimeout(id);
    const at = { lesson: cur.lesson, step: cur.step };
    later = [1000, 2500, 5000, 10_000].map((ms) => setTimeout(() => {
      if (cur && cur.lesson === at.lesson && cur.step === at.step && !cur.result?.passed && !cur.busy) verify().catch(() => {});
    }, ms));
  }

  // ---- rendering ------------------------------------------------------------------

  async function render() {
    const l = cur.lesson;
    const n = cur.step;
    const s = await text(l, n);
    const intro = n === 0;
    const step = intro ? null : l.steps[n - 1];
    const p = progress.lesson(l.slug);
    const head = el('div', { class: 'lesson-head' },
      el('button', { type: 'button', class: 'link', 'data-testid': 'lesson-all', onclick: () => renderList(), text: `← ${t('lessons.all')}` }),
      el('span', { class: 'muted', 'data-testid': 'lesson-position', text: intro ? t('lessons.lesson', { n: l.number }) : t('lessons.step', { n, total: l.steps.length }) }));
    const dots = el('ol', { class: 'step-dots', 'aria-label': t('lessons.steps') }, ...l.steps.map((_, i) => {
      const k = i + 1;
      const passed = p.passed.includes(k);
      return el('li', {}, el('button', {
        type: 'button', class: `dot${passed ? ' passed' : ''}${k === n ? ' current' : ''}`, 'data-testid': 'lesson-dot', 'data-step': k,
        'aria-label': t('lessons.step', { n: k, total: l.steps.length }) + (passed ? ` (${t('lessons.passed.short')})` : ''),
        'aria-current': k === n ? 'step' : undefined, disabled: !p.started || undefined,
        onclick: lab.guard(() => go(k)), text: passed ? '✓' : String(k),
      }));
    }));
    const title = el('h3', { 'data-testid': 'lesson-title', text: s.title });
    const text_ = el('div', { class: 'lesson-text', id: 'lesson-text', 'data-testid': 'lesson-text' });
    cur.text = s;
    text_.innerHTML = renderMarkdown(ownText(s.body, own(l), cur.seen)); // safe: markdown.js escapes raw HTML and filters URLs
    const parts = [head, intro ? null : dots, title, text_];
    // On a server whose sessions share an etcd cluster, the numbers a
    // text compares are the cluster's: they jump when others write.
    if (server && cfg.store === 'etcd' && s.comparesRevisions) {
      parts.push(el('p', { class: 'muted store-note', 'data-testid': 'lesson-store-note', text: t('lessons.etcdstore') }));
    }

    if (intro) {
      parts.push(el('p', { class: 'muted', 'data-testid': 'lesson-setup-note', text: l.setup?.fresh && !server ? t('lessons.fresh') : server ? classNote(l) : '' }));
      // On a server session, which numbers the texts quote stay the
      // article's (a new store's) where the learner's differ.
      if (server && s.classNote) {
        const note = el('div', { class: 'muted class-note', 'data-testid': 'lesson-class-note' });
        note.innerHTML = renderMarkdown(ownText(s.classNote, own(l))); // safe: as the text
        parts.push(note);
      }
      parts.push(el('div', { class: 'row' },
        el('button', { type: 'button', class: 'primary', 'data-testid': 'lesson-start', onclick: lab.guard(start), text: p.started ? t('lessons.restart') : t('lessons.start') }),
        p.started ? el('button', { type: 'button', 'data-testid': 'lesson-continue', onclick: lab.guard(() => go(Math.max(1, p.step))), text: t('lessons.continue') }) : null));
    } else {
      wireCommands(text_, step);
      const extra = (step.actions || []).filter((a) => !(a.run && text_.querySelector(`[data-command="${CSS.escape(a.run)}"]`)));
      if (extra.length) {
        parts.push(el('div', { class: 'lesson-actions', role: 'group', 'aria-label': t('lessons.try') },
          el('span', { class: 'muted', text: t('lessons.try') }),
          ...extra.map((a) => el('button', { type: 'button', class: 'action', 'data-testid': 'lesson-action', 'data-action': a.id, onclick: lab.guard(() => act([a])), text: `▶ ${actionText(a)}` }))));
      }
      parts.push(el('div', { id: 'lesson-wait', class: 'muted', 'aria-live': 'polite' }));
      parts.push(el('div', { class: 'lesson-check' },
        el('button', { type: 'button', class: 'primary', 'data-testid': 'lesson-check', onclick: lab.guard(verify), text: t('lessons.check') }),
        el('div', { class: 'verdict', id: 'lesson-verdict', 'data-testid': 'lesson-verdict', role: 'status', 'aria-live': 'polite' })));
      const hints = el('div', { class: 'hints', id: 'lesson-hints', 'data-testid': 'lesson-hints' });
      parts.push(hints);
      parts.push(el('div', { class: 'row lesson-help' },
        s.hints.length ? el('button', { type: 'button', 'data-testid': 'lesson-hint', id: 'lesson-hint', onclick: () => showHint(s), text: t('lessons.hint') }) : null,
        (step.solution || []).length ? el('button', { type: 'button', 'data-testid': 'lesson-showme', title: t('lessons.showme.title'), onclick: lab.guard(() => showMe(step)), text: t('lessons.showme') }) : null));
    }
    if (s.realCluster) {
      const d = el('details', { class: 'real-cluster', 'data-testid': 'lesson-real-cluster' }, el('summary', { text: t('lessons.realcluster') }));
      const div = el('div');
      div.innerHTML = renderMarkdown(ownText(s.realCluster, own(l)));
      d.append(div);
      parts.push(d);
    }
    if (!intro) {
      parts.push(el('div', { class: 'row lesson-nav' },
        el('button', { type: 'button', 'data-testid': 'lesson-back', onclick: lab.guard(() => go(n - 1)), text: `← ${t('lessons.back')}` }),
        el('button', { type: 'button', 'data-testid': 'lesson-retry', title: t('lessons.retry.title'), onclick: lab.guard(retry), text: t('lessons.retry') }),
        el('button', { type: 'button', 'data-testid': 'lesson-reset', title: t('lessons.reset.title'), onclick: lab.guard(resetLesson), text: t('lessons.reset') }),
        el('button', { type: 'button', class: 'primary', 'data-testid': 'lesson-next', id: 'lesson-next', onclick: lab.guard(() => go(n + 1)), text: n === l.steps.length ? t('lessons.finish') : `${t('lessons.next')} →` })));
    }
    const opened = openedNotes(l, n);
    body().replaceChildren(...parts.filter(Boolean));
    for (const d of body().querySelectorAll('details[data-testid]')) if (opened.has(d.dataset.testid)) d.open = true;
    renderBusy(); // a render while actions run (ownRevisionsChanged) keeps them disabled
    performance.mark('lesson-rendered');
    $('lesson-panel').dataset.view = 'step';
    $('lesson-panel').dataset.lesson = l.slug;
    $('lesson-panel').dataset.step = String(n);
    if (!intro) {
      if (!step.verify) { cur.result = { passed: true }; progress.pass(l.slug, n); }
      renderResult();
      if (cur.hints) drawHints(s); // the hints asked for stay, said in the step's language
    }
  }

  // openedNotes names the notes (<details>) the learner opened in the
  // step drawn now, when it is the step about to be drawn again (a
  // language picked, Retry): they stay open, where they closed mid-read.
  function openedNotes(l, n) {
    const panel = $('lesson-panel');
    if (panel.dataset.view !== 'step' || panel.dataset.lesson !== l.slug || panel.dataset.step !== String(n)) return new Set();
    return new Set([...body().querySelectorAll('details[open][data-testid]')].map((d) => d.dataset.testid));
  }

  // seen reads, on a server session whose step's text quotes a revision
  // the learner's answers show ({{store:9}}, RECORDED), their answers
  // since the step began (their own: a student's record is theirs alone,
  // and the teacher's principal is "teacher", as on an open session) and
  // shows the text again with the revisions they showed.
  async function seen(since) {
    const at = cur && { lesson: cur.lesson, step: cur.step };
    if (!server || !cur?.text || !RECORDED.test(cur.text.body)) return;
    let items = [];
    for (let after = since, page = 0; page < 20; page++) {
      const r = await lab.transport.request('GET', '/rvplay/v1/exchanges', { query: { since: after, principal: 'teacher', limit: 1000 } });
      if (r.status !== 200) return;
      const j = JSON.parse(r.body);
      items = items.concat(j.items || []);
      if ((j.items || []).length < 1000) break;
      after = j.last;
    }
    if (!cur || cur.lesson !== at.lesson || cur.step !== at.step) return;
    const before = ownText(cur.text.body, own(cur.lesson), cur.seen);
    cur.seen = items;
    if (ownText(cur.text.body, own(cur.lesson), items) !== before) renderText();
  }

  // renderText shows the step's text again once the revisions its
  // placeholders name are known ({{store:9}}: the learner's last answer's).
  function renderText() {
    const box = $('lesson-text');
    if (!box || !cur?.text || !RECORDED.test(cur.text.body)) return;
    box.innerHTML = renderMarkdown(ownText(cur.text.body, own(cur.lesson), cur.seen)); // safe: as in render
    if (cur.step > 0) wireCommands(box, cur.lesson.steps[cur.step - 1]);
    renderBusy();
  }

  // wireCommands puts a Run button on each console line that is one of
  // the step's actions; lines with the same command are the actions with
  // that command in order (lesson 11 applies two files with kubectl apply
  // -f -).
  function wireCommands(root, step) {
    const seen = new Map();
    for (const line of root.querySelectorAll('[data-command]')) {
      const same = (step.actions || []).filter((x) => x.run === line.dataset.command);
      const n = seen.get(line.dataset.command) || 0;
      seen.set(line.dataset.command, n + 1);
      const a = same[Math.min(n, same.length - 1)];
      if (!a) continue;
      line.prepend(el('button', {
        type: 'button', class: 'run', 'data-testid': 'lesson-action', 'data-action': a.id,
        'aria-label': `${t('lessons.run')}: ${a.run}`, title: t('lessons.run'), onclick: lab.guard(() => act([a])), text: '▶',
      }));
    }
  }

  function renderResult() {
    const v = $('lesson-verdict');
    if (!v || !cur) return;
    const r = cur.result;
    const step = cur.lesson.steps[cur.step - 1];
    v.dataset.passed = r ? String(!!r.passed) : '';
    if (!r) v.replaceChildren();
    else if (r.passed) v.replaceChildren(el('b', { text: step.verify ? `✓ ${t('lessons.passed')}` : t('lessons.readonly') }));
    else {
      const missing = predicateText(unmetPart(step.verify, r.unmet));
      v.replaceChildren(el('b', { text: `✗ ${t('lessons.notyet')}`, title: r.unmet || undefined }),
        missing ? el('div', { class: 'missing', 'data-testid': 'lesson-missing' }, t('lessons.missing'), ' ', el('code', { text: missing })) : null);
    }
    const next = $('lesson-next');
    if (next) next.classList.toggle('ready', !!r?.passed);
  }

  // revealNext brings a step's verdict and its Next button into view when
  // the step passes, scrolling as little as it can: the lesson panel, and
  // the page where the panel, sticky under the header, reaches below the
  // window. A long text left them below the fold after the learner's Run
  // (lessons 2, 4, 6 and 11 at 1440x900, most steps in presentation mode),
  // so the step seemed to do nothing.
  function revealNext() {
    $('lesson-next')?.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  function renderBusy() {
    for (const b of body().querySelectorAll('[data-testid="lesson-action"], [data-testid="lesson-showme"], [data-testid="lesson-start"]')) b.disabled = !!cur?.busy;
  }

  function showHint(s) {
    if (!cur) return;
    cur.hints = Math.min(s.hints.length, cur.hints + 1);
    drawHints(s);
  }

  function drawHints(s) {
    const box = $('lesson-hints');
    box.replaceChildren(...s.hints.slice(0, cur.hints).map((h, i) => {
      const d = el('div', { class: 'hint', 'data-testid': 'lesson-hint-text' }, el('b', { text: t('lessons.hint.n', { n: i + 1, total: s.hints.length }) }));
      const div = el('div');
      div.innerHTML = renderMarkdown(ownText(h, own(cur.lesson), cur.seen));
      d.append(div);
      return d;
    }));
    const b = $('lesson-hint');
    if (b) {
      b.textContent = cur.hints < s.hints.length ? t('lessons.hint.more', { n: cur.hints + 1, total: s.hints.length }) : t('lessons.hint.all');
      b.disabled = cur.hints >= s.hints.length;
    }
  }

  async function showMe(step) {
    const byId = new Map((step.actions || []).map((a) => [a.id, a]));
    await act((step.solution || []).map((id) => byId.get(id)).filter(Boolean));
  }

  // retry: the step counts again from now.
  async function retry() {
    cur.since = await newestSeq(cur.lesson, cur.step);
    cur.result = null;
    cur.seen = [];
    begin(cur.lesson, cur.step, cur.since);
    progress.update(cur.lesson.slug, (l) => { l.passed = l.passed.filter((k) => k !== cur.step); });
    await render();
  }

  async function resetLesson() {
    const slug = cur.lesson.slug;
    progress.reset(slug);
    cur = { lesson: cur.lesson, step: 0, since: 0, hints: 0, result: null, busy: false };
    await start();
  }

  function focus(action) {
    if (!cur || cur.step < 1) return;
    const f = action?.client ? { client: action.client } : action?.run ? { panel: 'console-panel' } : focusOf(cur.lesson.steps[cur.step - 1]);
    const target = f.client ? lab.cardFor?.(f.client) : $(f.panel);
    if (!target) return;
    for (const e of document.querySelectorAll('.focus')) e.classList.remove('focus');
    target.classList.add('focus');
    target.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
  }

  function setHash(h) {
    const url = location.pathname + location.search + h;
    if (location.hash !== h && !location.hash.startsWith('#h=')) history.replaceState(history.state, '', url);
  }

  // ---- start-up ---------------------------------------------------------------------

  // serverProgress adds the steps the session recorded as passed (GET
  // /rvplay/v1/lessons/progress: a learner's own; a teacher gets the
  // class's, which are not theirs to mark).
  async function serverProgress() {
    const r = await request('GET', `${ROUTE}/progress`);
    const entries = r?.progress || [];
    if (new Set(entries.map((e) => e.principal)).size !== 1) return;
    for (const e of entries) for (const step of e.steps || []) progress.pass(e.lesson, step);
  }

  async function load() {
    const link = parseDeepLink(location.hash);
    const resume = link || progress.data.current;
    if (resume && bySlug(resume.slug)) await open(resume.slug, resume.step);
    else renderList();
    // Every lesson's definition and introduction, for a click to open at once.
    for (const ref of refs) definition(ref).then((d) => text(d, 0)).catch(() => {});
    // The session's record of passed steps (a server session) comes after.
    if (server) {
      await serverProgress().catch(() => {});
      if (!cur) renderList();
    }
  }

  window.addEventListener('hashchange', lab.guard(async () => {
    const link = parseDeepLink(location.hash);
    if (link && (!cur || cur.lesson.slug !== link.slug || cur.step !== link.step)) await open(link.slug, link.step);
  }));
  onLanguageChange(() => {
    if (cur?.done) renderDone();
    else if (cur) render().catch(() => {});
    else renderList();
  });

  return {
    load, open, verify, verifySoon, act, renderList, progress,
    current: () => (cur ? { slug: cur.lesson.slug, step: cur.step } : null),
    lessons: () => refs,
  };
}
