// The notice line under the header, and guard(): every click handler runs
// through it, so that a failure becomes a readable notice instead of an
// uncaught error ("Failed to fetch", "[object Object]").

import { $ } from './dom.js';
import { t, onLanguageChange } from './i18n.js';

export function errorText(e) {
  if (e?.name === 'NetworkError') return t('notice.network');
  if (typeof e === 'string') return e;
  if (e?.message && typeof e.message === 'string') return e.message;
  try { return JSON.stringify(e); } catch { return String(e); }
}

// said is a notice's text that is said again in each language the reader
// picks while it is shown: t(key, params), with params as they are when
// the notice is shown (a revision the lab has since moved past stays).
export const said = (key, params) => () => t(key, params);

// createNotice's show takes the notice's text, or a function that says it
// (said): that one is said again in the language the reader picks while
// it is shown, where a text stays as it was written.
export function createNotice(frame) {
  let shown = null; // { text, kind }: the notice on the line
  const render = () => {
    const { text, kind } = shown;
    frame.schedule('notice', () => {
      const n = $('notice');
      n.textContent = typeof text === 'function' ? text() : text;
      n.dataset.kind = kind;
    });
  };
  const show = (text, kind = 'info') => {
    shown = { text, kind };
    render();
  };
  onLanguageChange(() => { if (typeof shown?.text === 'function') render(); });
  // guard(fn) returns a handler that runs fn and shows what it threw.
  const guard = (fn) => async (...args) => {
    try {
      return await fn(...args);
    } catch (e) {
      console.error(e);
      show(errorText(e), 'error');
      return undefined;
    }
  };
  return { show, guard };
}
