// The settings beside the timeline and the dialog's word on a save are
// said again in the language the reader picks, at once: they are drawn
// again only when the settings change, which may be never.
// The page is a few stand-in elements.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serveLanguages } from './setup.mjs';
import { setLanguage, t } from '../static/js/i18n.js';
import { mountSettings, settingsLine } from '../static/js/settings.js';

// A created element: what dom.js's el() writes, to no one.
globalThis.Node ??= class Node {};
class Element extends globalThis.Node {
  setAttribute() {}
  addEventListener() {}
  append() {}
}

function page() {
  const els = new Map();
  globalThis.document = {
    createElement: () => new Element(),
    createTextNode: () => new Element(),
    getElementById(id) {
      if (!els.has(id)) {
        const listeners = {};
        els.set(id, {
          value: '', textContent: '', dataset: {}, hidden: id === 'settings-overlay', listeners,
          addEventListener(type, fn) { listeners[type] = fn; },
          querySelectorAll: () => [], querySelector: () => null, replaceChildren() {}, focus() {},
        });
      }
      return els.get(id);
    },
  };
  serveLanguages();
  return (id) => globalThis.document.getElementById(id);
}

const settings = { bookmarkInterval: '10s', compactionInterval: '5m0s', watchCacheDelay: '0s', watchCache: 'on' };

test('the settings line and a save\'s result are said again in the language picked', async () => {
  const $ = page();
  const lab = {
    record() {},
    transport: { request: async () => ({ status: 200, body: JSON.stringify(settings) }) },
  };
  const s = mountSettings(lab);
  await s.load();
  assert.equal($('settings-line').textContent, 'bookmarks every 10s · compaction every 5m0s · watch-cache lag 0s · watch cache on');
  await $('settings-form').listeners.submit({ preventDefault() {} });
  assert.equal($('settings-result').textContent, t('settings.saved'));
  try {
    for (const lang of ['zh', 'ko']) {
      await setLanguage(lang, { base: '/static/', root: null });
      assert.equal($('settings-line').textContent, settingsLine(settings));
      assert.match($('settings-line').textContent, /10s/);
      assert.doesNotMatch($('settings-line').textContent, /bookmarks every/);
      assert.equal($('settings-result').textContent, t('settings.saved'));
      assert.notEqual($('settings-result').textContent, 'Saved.');
    }
  } finally {
    await setLanguage('en', { base: '/static/', root: null });
  }
});
