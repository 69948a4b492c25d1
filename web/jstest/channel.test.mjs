import { test } from 'node:test';
import assert from 'node:assert/strict';
import './setup.mjs';
import { presenceOf, shouldApply, channelURL } from '../static/js/channel.js';

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
