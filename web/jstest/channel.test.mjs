import { test } from 'node:test';
import assert from 'node:assert/strict';
import { serveLanguages } from './setup.mjs';
import { setLanguage, t } from '../static/js/i18n.js';
import { createNotice } from '../static/js/notice.js';
import { presenceOf, shouldApply, channelURL, mountChannel } from '../static/js/channel.js';

test('presence is the lesson and step the lesson panel shows, or the list', () => {
  assert.deepEqual(presenceOf({ view: 'step', lesson: 'watch-resume', step: '3' }), { type: 'presence', lesson: 'watch-resume', step: 3 });
  assert.deepEqual(presenceOf({ view: 'step', lesson: 'watch-resume', step: '0' }), { type: 'presence', lesson: 'watch-resume', step: 0 });
  assert.deepEqual(presenceOf({ view: 'list', lesson: 'watch-resume', step: '3' }), { type: 'presence', lesson: '', step: 0 });
  assert.deepEqual(presenceOf(undefined), { type: 'presence', lesson: '', step: 0 });
});

test('a lab applies a push once: not again after a reload, a second tab or a reconnection', () => {
  assert.equal(shouldApply({ id: 1700000000001 }, 0), true);
  assert.equal(shouldApply({ id: 1700000000001 }, 1700000000001), false);
  assert.equal(shouldApply({ id: 1700000000002 }, '1700000000001'), true);
  assert.equal(shouldApply(null, 0), false);
});

test('the channel is a WebSocket under the session, wss on an https page', () => {
  assert.equal(channelURL({ protocol: 'http:', host: '127.0.0.1:8080' }, '/s/class'), 'ws://127.0.0.1:8080/s/class/rvplay/v1/channel');
  assert.equal(channelURL({ protocol: 'https:', host: 'teacher.lan:8443' }, '/s/c'), 'wss://teacher.lan:8443/s/c/rvplay/v1/channel');
});

// A student's lab follows the teacher's push and says so; the notice names
// the lesson by its title in the language the student picks while it is
// shown. The page, the socket and the lessons are stand-ins.
test('a pushed lesson\'s notice is said again, its title too, in the language picked', async () => {
  const els = new Map();
  globalThis.document = {
    getElementById(id) {
      if (!els.has(id)) els.set(id, { textContent: '', dataset: {} });
      return els.get(id);
    },
  };
  serveLanguages();
  const store = new Map();
  globalThis.localStorage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  globalThis.location = { protocol: 'http:', host: 'class.lan' };
  globalThis.MutationObserver = class { observe() {} };
  let socket = null;
  globalThis.WebSocket = class {
    static OPEN = 1;
    constructor() { socket = this; this.readyState = 1; this.listeners = {}; }
    addEventListener(type, fn) { this.listeners[type] = fn; }
    send() {}
  };
  const { show } = createNotice({ schedule: (_key, fn) => fn() });
  let shown;
  const noticed = new Promise((resolve) => { shown = resolve; });
  mountChannel({
    cfg: { session: 'c', apiBase: '/s/c' },
    ready: Promise.resolve(),
    guard: (fn) => fn,
    notice: (text, kind) => { show(text, kind); shown(); },
    lessons: {
      open: async () => {},
      lessons: () => [{ slug: 'lost-update', titles: { en: 'The lost update', zh: '丢失的更新', ko: '잃어버린 업데이트' } }],
    },
  });
  socket.listeners.message({ data: JSON.stringify({ type: 'push', id: 2, lesson: 'lost-update', step: 3 }) });
  await noticed;
  const line = document.getElementById('notice');
  assert.equal(line.textContent, t('channel.pushed', { lesson: 'The lost update', step: 3 }));
  try {
    await setLanguage('zh', { base: '/static/', root: null });
    assert.equal(line.textContent, t('channel.pushed', { lesson: '丢失的更新', step: 3 }));
    await setLanguage('ko', { base: '/static/', root: null });
    assert.equal(line.textContent, t('channel.pushed', { lesson: '잃어버린 업데이트', step: 3 }));
  } finally {
    await setLanguage('en', { base: '/static/', root: null });
  }
});
