// The notice line under the header, and guard(): every click handler runs
// through it, so that a failure becomes a readable notice instead of an
// uncaught error ("Failed to fetch", "[object Object]").

import { $ } from './dom.js';
import { t } from './i18n.js';

export function errorText(e) {
  if (e?.name === 'NetworkError') return t('notice.network');
  if (typeof e === 'string') return e;
  if (e?.message && typeof e.message === 'string') return e.message;
  try { return JSON.stringify(e); } catch { return String(e); }
}

export function createNotice(frame) {
  const show = (text, kind = 'info') => {
    frame.schedule('notice', () => {
      const n = $('notice');
      n.textContent = text;
      n.dataset.kind = kind;
    });
  };
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
