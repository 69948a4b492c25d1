// The header: what the lab is connected to and whether it is reachable,
// the store's revision and compaction, and the lab's commands: lessons,
// settings, the lab file menu, presentation mode, language, help.

import { $ } from './dom.js';
import { t, lang, setLanguage, onLanguageChange } from './i18n.js';

const PRESENT_KEY = 'rvplay.present';
const LESSONS_KEY = 'rvplay.lessons.hidden';

export function connectionText(state, { mode, detail, retryIn }) {
  if (state === 'loading') return t('conn.loading');
  if (state === 'error') return t('conn.error', { message: detail });
  if (state === 'lost') return retryIn ? t('conn.lost', { seconds: Math.max(1, Math.round(retryIn / 1000)) }) : t('conn.lost.now');
  return mode === 'server' ? t('conn.live') : t('conn.ready.offline');
}

export function mountHeader(lab) {
  const { frame, revisions: revs, cfg } = lab;

  function showConnection() {
    const c = lab.connection;
    frame.schedule('conn', () => {
      const el = $('conn-status');
      el.dataset.state = c.state === 'live' || c.state === 'ready' ? 'ready' : c.state;
      el.textContent = connectionText(c.state === 'ready' ? 'live' : c.state, { mode: cfg.mode, detail: c.detail, retryIn: c.nextProbeIn });
      $('lab').dataset.conn = c.state;
    });
  }

  function showRevision() {
    $('store-revision').textContent = revs.head ? String(revs.head) : '–';
    $('compact-revision').textContent = revs.compacted > 1 ? String(revs.compacted) : t('header.never');
  }

  // ---- presentation mode ----------------------------------------------------

  function present(on = !document.documentElement.classList.contains('present')) {
    document.documentElement.classList.toggle('present', on);
    $('present').setAttribute('aria-pressed', String(on));
    try { localStorage.setItem(PRESENT_KEY, on ? '1' : ''); } catch { /* storage disabled */ }
  }

  // ---- the lesson panel's visibility ----------------------------------------

  function showLessons(on = $('lesson-panel').hidden) {
    $('lesson-panel').hidden = !on;
    $('lessons-toggle').setAttribute('aria-expanded', String(on));
    $('lab').classList.toggle('no-lessons', !on);
    try { localStorage.setItem(LESSONS_KEY, on ? '' : '1'); } catch { /* storage disabled */ }
  }

  // ---- help ------------------------------------------------------------------

  function help(show) {
    const o = $('help-overlay');
    const open = show ?? o.hidden;
    o.hidden = !open;
    if (open) $('help-close').focus();
    else $('help').focus();
  }

  lab.connection.addEventListener('change', showConnection);
  lab.connection.addEventListener('retry', showConnection);
  revs.addEventListener('change', () => frame.schedule('header-rev', showRevision));
  onLanguageChange(() => { showConnection(); showRevision(); });

  $('present').addEventListener('click', () => present());
  $('present').setAttribute('aria-pressed', String(document.documentElement.classList.contains('present')));
  $('lessons-toggle').addEventListener('click', () => showLessons());
  let hidden = false;
  try { hidden = !!localStorage.getItem(LESSONS_KEY); } catch { /* storage disabled */ }
  if (hidden) showLessons(false);
  $('help').addEventListener('click', () => help());
  $('help-close').addEventListener('click', () => help(false));
  // The menu closes once one of its commands ran.
  $('lab-menu').addEventListener('click', (e) => { if (e.target.closest('button')) $('lab-menu').open = false; });

  const select = $('lang');
  select.value = lang();
  select.addEventListener('change', lab.guard(async () => {
    await setLanguage(select.value, { base: cfg.static, remember: true });
  }));
  onLanguageChange((code) => { select.value = code; });

  showConnection();
  return { present, showLessons, help, showConnection };
}
