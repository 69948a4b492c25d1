// The UI's languages: negotiation, placeholders, plurals, and the
// per-language files agreeing with English.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { negotiate, format, Catalog } from '../static/js/i18n.js';

const dir = new URL('../static/i18n/', import.meta.url);
const load = (code) => JSON.parse(readFileSync(new URL(`${code}.json`, dir), 'utf8'));

test('the browser language picks the file: exact tag, then the primary subtag, then English', () => {
  const have = ['en', 'ko', 'zh'];
  assert.equal(negotiate(['zh-CN', 'en'], have), 'zh');
  assert.equal(negotiate(['ko-KR'], have), 'ko');
  assert.equal(negotiate(['fr-FR', 'ko'], have), 'ko');
  assert.equal(negotiate(['de'], have), 'en');
  assert.equal(negotiate([], have), 'en');
  assert.equal(negotiate(['zh-TW'], ['en', 'zh', 'zh-TW']), 'zh-TW');
});

test('placeholders are filled; an unknown one stays visible', () => {
  assert.equal(format('revision {rev} of {head}', { rev: 3, head: 9 }), 'revision 3 of 9');
  assert.equal(format('revision {rev}', {}), 'revision {rev}');
  assert.equal(format('{n} ops', { n: 0 }), '0 ops');
});

test('a missing key falls back to English, then to the key itself', () => {
  const en = new Catalog('en', { a: 'A {x}', b: 'B' });
  const ko = new Catalog('ko', { a: '에이 {x}' }, en);
  assert.equal(ko.t('a', { x: 1 }), '에이 1');
  assert.equal(ko.t('b'), 'B');
  assert.equal(ko.t('nope'), 'nope');
});

test('plural forms follow the language\'s rules', () => {
  const en = new Catalog('en', { 'ops.one': '{n} operation', 'ops.other': '{n} operations' });
  assert.equal(en.t('ops', { n: 1 }), '1 operation');
  assert.equal(en.t('ops', { n: 3 }), '3 operations');
  const zh = new Catalog('zh', { 'ops.other': '{n} 个操作' }, en);
  assert.equal(zh.t('ops', { n: 1 }), '1 个操作');
});

test('every language file has every English key, with the same placeholders, and nothing else', () => {
  const en = load('en');
  const codes = readdirSync(dir).filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5));
  assert.ok(codes.includes('zh') && codes.includes('ko'), `languages: ${codes}`);
  const holes = (s) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',');
  for (const code of codes) {
    const s = load(code);
    assert.ok(s._name, `${code}: _name`);
    for (const k of Object.keys(en)) {
      if (k === '_name') continue;
      assert.ok(Object.hasOwn(s, k), `${code}.json lacks "${k}"`);
      assert.equal(holes(s[k]), holes(en[k]), `${code}.json "${k}": placeholders differ from English`);
    }
    for (const k of Object.keys(s)) assert.ok(Object.hasOwn(en, k), `${code}.json has "${k}", which en.json lacks`);
  }
});

test('every English string is used by the page or its modules', () => {
  const js = new URL('../static/js/', import.meta.url);
  const modules = (dir) => readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => readFileSync(new URL(f, dir), 'utf8')).join('\n');
  const src = modules(js) + modules(new URL('console/', js))
    + readFileSync(new URL('../lab.templ', import.meta.url), 'utf8')
    + readFileSync(new URL('../dashboard.templ', import.meta.url), 'utf8')
    + readFileSync(new URL('../landing.templ', import.meta.url), 'utf8');
  // Keys built at run time from a prefix.
  const dynamic = ['reflector.state.', 'settings.line.', 'settings.bookmarkInterval', 'settings.compactionInterval', 'settings.watchCacheDelay', 'stream.ended.', 'dash.detector.'];
  const unused = Object.keys(load('en')).filter((k) => k !== '_name' && !dynamic.some((p) => k.startsWith(p))
    && !new RegExp(`['"\`=]${k.replace(/\./g, '\\.').replace(/\.(one|other)$/, '')}['"\`;]`).test(src));
  assert.deepEqual(unused, []);
});
