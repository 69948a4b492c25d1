// A replayed lab's notice names where the lab came from ("share link",
// "file lab.json") in the language the reader picks while it is shown,
// as the rest of the notice. The page is a few stand-in elements.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serveLanguages } from './setup.mjs';
import { setLanguage, t } from '../static/js/i18n.js';
import { createNotice } from '../static/js/notice.js';
import { encodeShare } from '../static/js/history.js';
import { mountLabFile } from '../static/js/labfile.js';

function page() {
  const els = new Map();
  globalThis.window = { addEventListener() {} };
  globalThis.document = {
    getElementById(id) {
      if (!els.has(id)) els.set(id, { value: '', textContent: '', dataset: {}, addEventListener() {} });
      return els.get(id);
    },
  };
  serveLanguages();
  return (id) => globalThis.document.getElementById(id);
}

test('a share link\'s replayed lab: its notice names the link in the language picked', async () => {
  const $ = page();
  const ops = [{ op: 'put' }, { op: 'put' }];
  globalThis.location = { hash: `#h=${await encodeShare(ops)}`, pathname: '/lab', search: '' };
  const { show } = createNotice({ schedule: (_key, fn) => fn() });
  const lab = {
    cfg: { mode: 'offline' },
    notice: show,
    guard: (fn) => fn,
    resetLab: async () => {},
    replay: async () => {},
    history: { replace() {}, replaceState() {} },
    revisions: { head: 4 },
  };
  await mountLabFile(lab).restore();
  assert.equal($('notice').textContent, 'share link: replayed 2 operations; store revision 4');
  try {
    for (const lang of ['zh', 'ko']) {
      await setLanguage(lang, { base: '/static/', root: null });
      assert.equal($('notice').textContent, t('notice.replayed', { label: t('label.sharelink'), n: 2, rev: 4 }));
      assert.doesNotMatch($('notice').textContent, /share link/);
    }
  } finally {
    await setLanguage('en', { base: '/static/', root: null });
  }
});
