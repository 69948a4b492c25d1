// Session settings: the bookmark interval, the automatic compaction
// interval and the watch cache's lag, read from and written to the
// session's /rvplay/v1/settings (Go durations such as "5s"). The current
// values stay visible in the timeline panel; the dialog changes them.

import { $, el } from './dom.js';
import { t, onLanguageChange } from './i18n.js';
import { parseStatus } from './kube.js';
import { said } from './notice.js';

const PATH = '/rvplay/v1/settings';
// The settings the lab shows, in this order; others the session reports
// are shown after them under their own names.
export const KNOWN = ['bookmarkInterval', 'compactionInterval', 'watchCacheDelay'];

// isDuration accepts Go's time.Duration syntax ("0s", "1m30s", "250ms").
export const isDuration = (s) => /^(0|(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/.test(String(s).trim());

// zero says a duration is zero ("0", "0s", "0m0s").
export const zero = (s) => /^(0+(\.0+)?(ns|us|µs|ms|s|m|h)?)+$/.test(String(s).trim());

// settingsLine is the summary shown beside the timeline.
export function settingsLine(s) {
  const items = [];
  for (const k of KNOWN) {
    if (!(k in s)) continue;
    if (k === 'compactionInterval' && zero(s[k])) items.push(t('settings.line.compactionInterval.off'));
    else items.push(t(`settings.line.${k}`, { v: s[k] }));
  }
  // Which read path serves watches and cached reads: a lesson that
  // teaches etcd's own answers turns the watch cache off.
  if (s.watchCache === 'on' || s.watchCache === 'off') items.push(t(`settings.line.watchCache.${s.watchCache}`));
  return items.join(' · ');
}

// changed lists the fields whose value differs from what the session has.
export function changed(current, edited) {
  const out = {};
  for (const [k, v] of Object.entries(edited)) if (String(current[k]) !== String(v)) out[k] = v;
  return out;
}

// coalesced runs task one call at a time: calls while it runs make one
// more run after it, so the last run starts after the last call. A burst
// of changes (a lesson's set-up changes the settings twice) then ends
// with the newest answer shown, never an older one that came back late.
// A failed run is dropped (the next change or the start reads again).
export function coalesced(task) {
  let running = null;
  let again = false;
  return function call() {
    if (running) { again = true; return running; }
    running = (async () => {
      do {
        again = false;
        try { await task(); } catch { /* best effort */ }
      } while (again);
      running = null;
    })();
    return running;
  };
}

export function mountSettings(lab) {
  let current = {};
  let result = null; // what the dialog last said of a save: said again in the language picked

  async function read() {
    const r = await lab.transport.request('GET', PATH);
    if (r.status !== 200) return null;
    current = JSON.parse(r.body);
    return current;
  }

  async function load() {
    if (!await read()) return null;
    render();
    return current;
  }

  // refresh reads the settings again when the session channel says they
  // changed (a teacher, the dashboard or a lesson's set-up changed them).
  // An open dialog keeps what the learner is typing.
  const refresh = coalesced(async () => {
    if (await read()) render({ fields: $('settings-overlay').hidden });
  });

  function render({ fields = true } = {}) {
    $('settings-line').textContent = settingsLine(current);
    if (!fields) return;
    const keys = [...KNOWN.filter((k) => k in current), ...Object.keys(current).filter((k) => !KNOWN.includes(k) && typeof current[k] === 'string')];
    $('settings-fields').replaceChildren(...keys.map((k) => {
      const id = `setting-${k}`;
      const known = KNOWN.includes(k);
      return el('div', { class: 'setting' },
        el('label', { for: id, text: known ? t(`settings.${k}`) : k }),
        el('input', { id, name: k, 'data-testid': id, value: current[k], size: 8, 'aria-describedby': `${id}-help` }),
        el('small', { id: `${id}-help`, class: 'muted', text: known ? t(`settings.${k}.help`) : '' }));
    }));
  }

  async function save(edited) {
    for (const [k, v] of Object.entries(edited)) {
      if (KNOWN.includes(k) && !isDuration(v)) throw new Error(`${k}: "${v}" is not a duration (for example 5s, 1m, 250ms)`);
    }
    const diff = changed(current, edited);
    lab.record({ op: 'settings', set: diff });
    if (!Object.keys(diff).length) return current;
    const r = await lab.transport.request('PUT', PATH, { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(diff) });
    if (r.status !== 200) {
      const status = parseStatus(r.body);
      throw Object.assign(new Error(status?.message || `${r.status} ${r.body}`), { status });
    }
    current = JSON.parse(r.body);
    render();
    return current;
  }

  function say(ok, text) {
    result = text;
    const res = $('settings-result');
    if (ok !== undefined) res.dataset.ok = String(ok);
    res.textContent = text ? text() : '';
  }

  // A language picked while the dialog is open relabels its fields and
  // keeps what the learner typed in them (a closed one is drawn on open).
  function relabel() {
    const open = !$('settings-overlay').hidden;
    const typed = open ? [...$('settings-fields').querySelectorAll('input')].map((i) => [i.name, i.value]) : [];
    render({ fields: open });
    for (const [name, value] of typed) {
      const input = $(`setting-${name}`);
      if (input) input.value = value;
    }
    if (result) say(undefined, result);
  }
  onLanguageChange(relabel);

  function open(show = true) {
    const o = $('settings-overlay');
    o.hidden = !show;
    say(undefined, null);
    if (show) { render(); load().catch(() => {}); $('settings-fields').querySelector('input')?.focus(); } else $('settings-open').focus();
  }

  $('settings-open').addEventListener('click', () => open(true));
  $('settings-close').addEventListener('click', () => open(false));
  $('settings-line').addEventListener('click', () => open(true));
  $('settings-form').addEventListener('submit', async (e) => {
    e.preventDefault();
    const edited = Object.fromEntries([...$('settings-fields').querySelectorAll('input')].map((i) => [i.name, i.value.trim()]));
    try {
      await save(edited);
      say(true, said('settings.saved'));
    } catch (err) {
      say(false, said('settings.failed', { message: err.message }));
    }
  });
  return { load, refresh, save, open, isOpen: () => !$('settings-overlay').hidden, current: () => current };
}
