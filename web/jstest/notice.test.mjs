// The notice line says what a notice made with said() says in the language
// the reader picks while it is shown (a dashboard's "Compacted at revision
// 23." switched to Chinese); a notice given as a text stays as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serveLanguages } from './setup.mjs';
import { setLanguage, t } from '../static/js/i18n.js';
import { createNotice, said } from '../static/js/notice.js';

function page() {
  const line = { textContent: '', dataset: {} };
  globalThis.document = { getElementById: (id) => (id === 'notice' ? line : null) };
  serveLanguages();
  return line;
}

const now = { schedule: (_key, fn) => fn() };

// One notice line, as a page has: what it shows when the reader picks a
// language.
test('a said notice is said again in the language the reader picks; a text stays as written', async () => {
  const line = page();
  const { show } = createNotice(now);
  let rev = 23;
  show(said('dash.compact.done', { rev }));
  assert.equal(line.textContent, t('dash.compact.done', { rev: 23 }));
  rev = 30; // what the notice said was about 23, whatever happens since
  await setLanguage('zh', { base: '/static/', root: null });
  try {
    const zh = t('dash.compact.done', { rev: 23 });
    assert.notEqual(zh, 'Compacted at revision 23.');
    assert.match(zh, /23/);
    assert.equal(line.textContent, zh);

    show('etcdserver: mvcc: required revision has been compacted', 'error');
    await setLanguage('ko', { base: '/static/', root: null });
    assert.equal(line.textContent, 'etcdserver: mvcc: required revision has been compacted');
    assert.equal(line.dataset.kind, 'error');
  } finally {
    await setLanguage('en', { base: '/static/', root: null });
  }
});
