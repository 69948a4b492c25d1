// The teacher's dashboard of a class (/s/<session>/dashboard): who is
// connected and where (live, from the session channel's roster), each
// student's watches and progress and the misconceptions found (GET
// /rvplay/v1/class, every few seconds), and the teacher's controls. The
// session's cookie carries the teacher's token; the server refuses anyone
// else. Every text is the page's language's (static/i18n/); object
// content is inserted as text only.

import { $, el, Frame } from './dom.js';
import { setLanguage, chosenLanguage, t, lang, onLanguageChange } from './i18n.js';
import { createNotice, said } from './notice.js';
import { Backoff } from './connection.js';
import { channelURL } from './channel.js';
import { KNOWN, isDuration, changed, settingsLine } from './settings.js';
import { rankWatches, watchLine, findingsList, misconceptionCount, students, connected, activeLessons, where, whereParts, onStepMinutes, mergeRoster, exchangeRow } from './dashboardview.js';

const cfg = JSON.parse($('dashboard-config').textContent);
const frame = new Frame();
const POLL_MS = 3000;
let cls = null; // the last GET /rvplay/v1/class, and the channel's rosters since
let skew = 0; // the server's clock less this computer's, at the last GET
let ended = false;

const refOf = (slug) => (cfg.lessons || []).find((l) => l.slug === slug);
const titleOf = (slug) => { const r = refOf(slug); return r ? (r.titles?.[lang()] || r.titles?.en || slug) : slug; };

const { show: notice } = createNotice(frame);

// api sends a request to the session with the page's cookie and answers
// the decoded body; a refusal throws with the server's message.
async function api(method, path, body, contentType = 'application/json') {
  const init = { method, headers: {} };
  if (body !== undefined) { init.headers['Content-Type'] = contentType; init.body = JSON.stringify(body); }
  const r = await fetch(path.startsWith('/s/') ? path : cfg.apiBase + path, init);
  const text = await r.text();
  let j = null;
  try { j = JSON.parse(text); } catch { /* not JSON */ }
  if (!r.ok) {
    const e = new Error(j?.message || text || `HTTP ${r.status}`);
    e.status = r.status;
    throw e;
  }
  return j;
}

const guard = (fn) => async (...args) => {
  try { return await fn(...args); } catch (e) { console.error(e); notice(said('notice.error', { message: e.message }), 'error'); return undefined; }
};

// ---- the class, rendered -------------------------------------------------------

function render() {
  if (!cls) return;
  frame.schedule('render', () => {
    const c = connected(cls.people);
    $('dash-connected').textContent = `${c.n} / ${c.total}`;
    $('dash-revision').textContent = String(cls.revision);
    $('dash-compacted').textContent = cls.compactRevision > 0 ? String(cls.compactRevision) : t('header.never');
    // On an etcd cluster compaction is the whole cluster's (the operator's):
    // the button says so instead of compacting.
    const compact = $('dash-compact');
    compact.disabled = !!cls.clusterCompaction;
    compact.dataset.i18n = cls.clusterCompaction ? 'dash.compact.cluster' : 'dash.compact';
    compact.textContent = t(compact.dataset.i18n);
    compact.title = cls.clusterCompaction ? t('dash.compact.cluster.why') : '';
    $('dash-push').textContent = cls.push ? `${titleOf(cls.push.lesson)} · ${cls.push.step ? t('dash.push.stepn', { n: cls.push.step }) : t('dash.intro')}` : '–';
    $('dash-settings').textContent = settingsLine(cls.settings || {});
    $('dash-join-code-new').hidden = !!cls.open; // nobody joins an open session
    renderStudents();
    renderLessons();
    followPush();
    $('dash').dataset.ready = 'true';
  });
}

function renderStudents() {
  // The server's time now, from the class's answer and this computer's
  // clock since: how long someone has been on a step is the server's.
  const now = Date.now() + skew;
  const rows = students(cls.people).map((p) => {
    const steps = refOf(p.lesson)?.steps;
    const passedHere = (p.passed?.[p.lesson] || []).length;
    const passedAll = Object.values(p.passed || {}).reduce((n, s) => n + s.length, 0);
    const found = findingsList(p.findings, cls.detectors);
    const minutes = onStepMinutes(p, now);
    return el('tr', { 'data-testid': 'student', 'data-student': p.id, 'data-connected': String(p.connections > 0), 'data-lesson': p.lesson || '', 'data-step': String(p.step || 0) },
      el('td', { class: 'who' },
        el('span', { class: `dot${p.connections > 0 ? ' on' : ''}`, 'aria-hidden': 'true' }),
        el('button', { type: 'button', class: 'link', 'data-testid': 'student-name', title: `${p.name || p.id} · ${t('dash.ex.open')}`, onclick: guard(() => showExchanges(p)), text: p.name || p.id })),
      el('td', { class: 'where', 'data-testid': 'student-where', title: where(p, titleOf(p.lesson), steps, now) },
        // A line each; the hidden separator keeps the cell's text where's.
        ...whereParts(p, titleOf(p.lesson), steps).flatMap((text, i) => [i ? el('span', { class: 'visually-hidden', text: ' · ' }) : null,
          // How long on the step ends the lesson's line, whole: the title
          // gives way, which the class's push shows anyway.
          i === 0 && minutes
            ? el('span', { class: 'part line' }, el('span', { class: 'title', text }), el('span', { class: 'onstep', 'data-testid': 'student-onstep', text: t('dash.onstep', { min: minutes }) }))
            : el('span', { class: 'part', text })])),
      el('td', { 'data-testid': 'student-progress' },
        p.lesson && steps ? el('b', { text: t('dash.progress', { n: passedHere, total: steps }) }) : null,
        el('small', { class: 'muted', text: t('dash.progress.all', { n: passedAll }) })),
      el('td', { 'data-testid': 'student-watches' }, watchesOf(p)),
      el('td', { 'data-testid': 'student-findings', 'data-count': String(misconceptionCount(p.findings, cls.detectors)) }, found.length
        ? el('ul', { class: 'finding-list' }, ...found.map((f) => el('li', { class: f.kind, title: f.text }, `${f.kind === 'practice' ? '✓ ' : ''}${f.text} ×${f.n}`)))
        : el('span', { class: 'muted', text: t('dash.none') })));
  });
  // A poll redraws every row: the focus stays on the control it was on.
  const focused = document.activeElement?.closest('#students-body [data-testid]');
  const again = focused && `[data-student="${CSS.escape(focused.closest('tr').dataset.student)}"] [data-testid="${focused.dataset.testid}"]`;
  $('students-body').replaceChildren(...rows);
  $('students-empty').hidden = rows.length > 0;
  if (again) document.querySelector(again)?.focus();
}

// The students whose list of watches the teacher opened, kept open
// across polls.
const watchesOpen = new Set();

// watchesOf is a student's watches in two lines whatever their number (a
// lab open in a browser has four or more): the one that matters most,
// then its client and "+N", a button that shows the others below it (the
// whole list is its title too).
function watchesOf(p) {
  const ranked = rankWatches(p.watches);
  if (!ranked.length) return el('span', { class: 'muted', text: t('dash.nowatches') });
  const item = (tag, x) => el(tag, { class: `watch ${x.s.kind}`, 'data-testid': 'student-watch', 'data-kind': x.s.kind, title: watchLine(x) },
    el('span', { class: 'client', text: x.w.client || '?' }), ' ', x.s.text);
  const [top, ...rest] = ranked;
  if (!rest.length) return item('div', top);
  const open = watchesOpen.has(p.id);
  const list = el('ul', { class: 'watch-list', id: `watches-${p.id}`, hidden: !open }, ...rest.map((x) => item('li', x)));
  const toggle = el('button', {
    type: 'button', class: 'watch-summary', 'data-testid': 'watch-summary', 'aria-expanded': String(open), 'aria-controls': list.id,
    title: ranked.map(watchLine).join('\n'),
    onclick: () => {
      const now = !watchesOpen.has(p.id);
      if (now) watchesOpen.add(p.id); else watchesOpen.delete(p.id);
      toggle.setAttribute('aria-expanded', String(now));
      list.hidden = !now;
    },
  },
  // Its state on a line of its own, so that a narrow column still shows
  // how far behind it is; its client beside "+N".
  el('span', { class: `watch ${top.s.kind}`, 'data-testid': 'student-watch', 'data-kind': top.s.kind, text: top.s.text }),
  el('span', { class: 'watch-of' }, el('span', { class: 'client', text: top.w.client || '?' }), ' ',
    el('span', { class: 'more', 'data-testid': 'watch-more', 'aria-hidden': 'true', text: `+${rest.length}` }),
    el('span', { class: 'visually-hidden', text: t('dash.watch.more', { n: rest.length }) })));
  return el('div', { class: 'student-watches', 'data-testid': 'watch-group' }, toggle, list);
}

function renderLessons() {
  const total = students(cls.people).length || 1;
  const cards = activeLessons(cls.lessons, cls.push).map((l) => {
    const found = findingsList(l.findings, cls.detectors);
    return el('article', { class: 'lesson-card', 'data-testid': 'lesson-summary', 'data-lesson': l.slug },
      el('h3', {}, el('span', { class: 'num', text: `${l.number}.` }), ` ${titleOf(l.slug)} `,
        el('small', { class: 'muted', 'data-testid': 'lesson-here', text: t('dash.here', { n: l.here }) })),
      el('ol', { class: 'step-bars' }, ...l.steps.map((s) => el('li', { 'data-testid': 'step-passed', 'data-step': String(s.n), 'data-passed': String(s.passed) },
        el('span', { class: 'n', text: String(s.n) }),
        el('span', { class: 'meter' }, el('span', { class: 'fill', style: `width:${Math.round((100 * s.passed) / total)}%` })),
        el('span', { class: 'count', text: t('dash.step.passed', { n: s.passed, total: students(cls.people).length }) })))),
      found.length
        ? el('ul', { class: 'finding-list', 'data-testid': 'lesson-findings' }, ...found.map((f) => el('li', { class: f.kind, 'data-detector': f.name },
          el('b', { text: `×${f.n}` }), ` ${f.kind === 'practice' ? '✓ ' : ''}${f.text}`)))
        : el('p', { class: 'muted', text: t('dash.nofindings') }));
  });
  $('lessons-body').replaceChildren(...(cards.length ? cards : [el('p', { class: 'muted', text: t('dash.nolessons') })]));
}

// ---- live: the channel and the poll ---------------------------------------------

async function poll() {
  if (ended) return;
  try {
    // Its people are as of now: newer than the last roster.
    cls = await api('GET', '/rvplay/v1/class');
    skew = cls.now ? Date.parse(cls.now) - Date.now() : 0;
    render();
  } catch (e) {
    if (e.status === 401 || e.status === 403 || e.status === 404) { ended = true; notice(said('dash.ended'), 'error'); return; }
    notice(said('notice.error', { message: e.message }), 'error');
  }
}

function connectChannel() {
  const backoff = new Backoff();
  const conn = $('dash-conn');
  const state = (s, key) => { conn.dataset.state = s; conn.textContent = t(key); conn.dataset.i18n = key; };
  const open = () => {
    if (ended) return;
    const ws = new WebSocket(`${channelURL(location, cfg.apiBase)}?roster=1`);
    ws.addEventListener('message', (e) => {
      let m;
      try { m = JSON.parse(e.data); } catch { return; }
      if (m.type === 'welcome') { backoff.reset(); state('ready', 'dash.live'); }
      if (m.type === 'roster' && cls) {
        cls = { ...cls, people: mergeRoster(cls.people, m.people) };
        render();
      }
      // A new join code asked for on another dashboard (the teacher's
      // laptop): this one, on the projector, shows it too.
      if (m.type === 'joincode' && m.joinCode) { keepCode(m.joinCode); showJoin(m.joinCode); }
      if (m.type === 'ended') { ended = true; notice(said('dash.ended'), 'error'); }
    });
    ws.addEventListener('close', () => {
      if (ended) { state('lost', 'dash.ended'); return; }
      state('lost', 'dash.lost');
      setTimeout(open, backoff.next());
    });
  };
  open();
}

// ---- the teacher's controls ----------------------------------------------------------

// confirmDialog asks before an action that changes everyone's session.
function confirmDialog(text) {
  const d = $('confirm-dialog');
  $('confirm-text').textContent = text;
  return new Promise((resolve) => {
    d.addEventListener('close', () => resolve(d.returnValue === 'ok'), { once: true });
    d.returnValue = '';
    d.showModal();
    $('confirm-ok').focus();
  });
}

function fillPushForm() {
  const lessonSel = $('push-lesson');
  const keep = lessonSel.value;
  lessonSel.replaceChildren(...(cfg.lessons || []).map((l) => el('option', { value: l.slug, text: `${l.number}. ${titleOf(l.slug)}` })));
  if (keep) lessonSel.value = keep;
  fillSteps();
}

// followPush shows the class's last push in the push form until the
// teacher picks another step there.
let picked = false;
function followPush() {
  if (picked || !cls.push || !refOf(cls.push.lesson)) return;
  $('push-lesson').value = cls.push.lesson;
  fillSteps();
  $('push-step').value = String(cls.push.step);
}

function fillSteps() {
  const ref = refOf($('push-lesson').value);
  const stepSel = $('push-step');
  const keep = stepSel.value;
  stepSel.replaceChildren(el('option', { value: '0', text: t('dash.intro') }),
    ...Array.from({ length: ref?.steps || 0 }, (_, i) => el('option', { value: String(i + 1), text: t('dash.push.stepn', { n: i + 1 }) })));
  if (keep && Number(keep) <= (ref?.steps || 0)) stepSel.value = keep;
}

function fillSettings() {
  const s = cls?.settings || {};
  $('dash-settings-fields').replaceChildren(...KNOWN.filter((k) => k in s).map((k) => el('div', { class: 'setting' },
    el('label', { for: `dash-setting-${k}`, text: t(`settings.${k}`) }),
    el('input', { id: `dash-setting-${k}`, name: k, 'data-testid': `dash-setting-${k}`, value: s[k], size: 8, 'aria-describedby': `dash-setting-${k}-help` }),
    el('small', { id: `dash-setting-${k}-help`, class: 'muted', text: t(`settings.${k}.help`) }))));
}

async function showExchanges(p) {
  const r = await api('GET', `/rvplay/v1/exchanges?principal=${encodeURIComponent(p.id)}&limit=1000`);
  const items = (r.items || []).slice(-200).reverse();
  $('exchanges-h').textContent = t('dash.ex.title', { name: p.name || p.id });
  $('exchanges-body').replaceChildren(...(items.length ? items.map((e) => {
    const x = exchangeRow(e);
    return el('tr', { class: x.failed ? 'failed' : '', 'data-testid': 'exchange-row' },
      el('td', { text: x.time }), el('td', { text: x.client }), el('td', { class: 'req', text: x.request }), el('td', { text: x.status }), el('td', { text: x.rv }));
  }) : [el('tr', {}, el('td', { colspan: '5', class: 'muted', text: t('dash.ex.none') }))]));
  $('exchanges-dialog').showModal();
}

function wireControls() {
  $('dash-export-json').href = `${cfg.apiBase}/rvplay/v1/results.json`;
  $('dash-export-csv').href = `${cfg.apiBase}/rvplay/v1/results.csv`;
  $('push-lesson').addEventListener('change', () => { picked = true; fillSteps(); });
  $('push-step').addEventListener('change', () => { picked = true; });
  $('push-form').addEventListener('submit', guard(async (e) => {
    e.preventDefault();
    const lesson = $('push-lesson').value;
    const step = Number($('push-step').value);
    const r = await api('POST', '/rvplay/v1/push', { lesson, step });
    notice(() => t('dash.push.done', { n: r.delivered, lesson: titleOf(lesson), where: step ? t('dash.push.stepn', { n: step }) : t('dash.intro') }));
    await poll();
  }));
  $('dash-compact').addEventListener('click', guard(async () => {
    await poll();
    const rev = cls?.revision;
    if (!rev || !(await confirmDialog(t('dash.compact.confirm', { rev })))) return;
    await api('POST', '/v3/kv/compaction', { revision: String(rev) });
    notice(said('dash.compact.done', { rev }));
    await poll();
  }));
  // A new join code, for a teacher without the code (the session was
  // created elsewhere) or whose code went where it should not: shown large,
  // and in the header from then on.
  $('dash-join-code-new').addEventListener('click', guard(async () => {
    if (!(await confirmDialog(t('dash.joincode.confirm')))) return;
    const r = await api('POST', '/rvplay/v1/join-code');
    keepCode(r.joinCode);
    showJoin(r.joinCode);
    $('join-code-where').textContent = joinWhere();
    $('join-code-value').textContent = r.joinCode;
    $('join-code-dialog').showModal();
  }));
  $('dash-reset').addEventListener('click', guard(async () => {
    if (!(await confirmDialog(t('dash.reset.confirm')))) return;
    await api('POST', '/rvplay/v1/reset');
    notice(said('dash.reset.done'));
    await poll();
  }));
  $('dash-end').addEventListener('click', guard(async () => {
    if (!(await confirmDialog(t('dash.end.confirm')))) return;
    await api('DELETE', `/s/${encodeURIComponent(cfg.session)}`);
    ended = true;
    location.href = cfg.home;
  }));
  $('dash-settings-open').addEventListener('click', () => {
    fillSettings();
    $('dash-settings-result').textContent = '';
    $('settings-dialog').showModal();
  });
  $('dash-settings-close').addEventListener('click', () => $('settings-dialog').close());
  $('dash-settings-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const edited = Object.fromEntries([...$('dash-settings-fields').querySelectorAll('input')].map((i) => [i.name, i.value.trim()]));
    const res = $('dash-settings-result');
    try {
      for (const [k, v] of Object.entries(edited)) if (!isDuration(v)) throw new Error(`${k}: "${v}" is not a duration (for example 5s, 1m, 250ms)`);
      const diff = changed(cls?.settings || {}, edited);
      if (Object.keys(diff).length) await api('PATCH', '/rvplay/v1/settings', diff, 'application/merge-patch+json');
      res.dataset.ok = 'true';
      res.textContent = t('settings.saved');
      await poll();
    } catch (err) {
      res.dataset.ok = 'false';
      res.textContent = t('settings.failed', { message: err.message });
    }
  });
  $('lang').addEventListener('change', guard(async (e) => { await setLanguage(e.target.value, { base: cfg.static, remember: true }); }));
}

// The join code is on the projector: the one this browser was given (the
// landing page keeps the code of a session it created; New join code, a
// code it asked for). The server keeps only its hash.
const SESSIONS = 'rvplay.sessions';
const joinWhere = () => `${location.host}/?join=${cfg.session}`;

function keptCode() {
  try {
    const mine = JSON.parse(localStorage.getItem(SESSIONS) || '[]').find((s) => s?.id === cfg.session);
    return mine?.joinCode || sessionStorage.getItem(`rvplay.joinCode.${cfg.session}`);
  } catch { return null; /* storage disabled */ }
}

// keepCode keeps a new code where keptCode looks: in the landing page's
// entry of the session if this browser created it, else for this tab.
function keepCode(code) {
  try {
    const all = JSON.parse(localStorage.getItem(SESSIONS) || '[]');
    const mine = Array.isArray(all) ? all.find((s) => s?.id === cfg.session) : null;
    if (mine) {
      mine.joinCode = code;
      localStorage.setItem(SESSIONS, JSON.stringify(all));
    } else {
      sessionStorage.setItem(`rvplay.joinCode.${cfg.session}`, code);
    }
  } catch { /* storage disabled: shown until the page reloads */ }
}

function showJoin(code = keptCode()) {
  if (!code) return;
  $('dash-join-where').textContent = joinWhere();
  $('dash-join-code').textContent = code;
  $('dash-join').hidden = false;
}

async function start() {
  const codes = (cfg.languages || []).map((l) => l.code);
  try {
    await setLanguage(chosenLanguage(codes.length ? codes : ['en']), { base: cfg.static });
  } catch (e) { console.error(e); }
  $('lang').value = lang();
  onLanguageChange(() => { fillPushForm(); render(); });
  showJoin();
  fillPushForm();
  wireControls();
  connectChannel();
  await poll();
  setInterval(poll, POLL_MS);
}

start();
