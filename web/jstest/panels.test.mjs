// The pure parts of the panels: values, keys, settings, share links,
// shortcuts, stream texts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import './setup.mjs';
import { nextValue, registryKey, KINDS, freshObject } from '../static/js/clients.js';
import { REQUEST_BREAKS, splitKey } from '../static/js/dom.js';
import { isDuration, zero, changed, settingsLine, coalesced } from '../static/js/settings.js';
import { offlineURL, shareCode } from '../static/js/labfile.js';
import { shortcut } from '../static/js/keys.js';
import { endText, describeEvent } from '../static/js/watches.js';
import { findCompaction } from '../static/js/etcdview.js';
import { connectionText } from '../static/js/header.js';
import { decodeKV } from '../static/js/etcd.js';

test('an operator\'s next value differs from the last one written, so the next PUT is not a no-op', () => {
  assert.equal(nextValue('a-1'), 'a-2');
  assert.equal(nextValue('b-9'), 'b-10');
  assert.equal(nextValue('x'), 'x-2');
  assert.equal(nextValue('5'), '5'); // replicas: what the learner typed
});

test('the clients edit data.value of a ConfigMap and spec.replicas of a Deployment', () => {
  const cm = KINDS.configmaps.set(KINDS.configmaps.fresh('demo', 'initial'), 'a-1');
  assert.equal(KINDS.configmaps.get(cm), 'a-1');
  const d = KINDS.deployments.set(KINDS.deployments.fresh('web', '3'), '5');
  assert.equal(d.spec.replicas, 5);
  assert.equal(d.spec.selector.matchLabels.app, 'web');
  assert.equal(registryKey('deployments', 'default', 'web'), '/registry/deployments/default/web');
});

test('the object the lab creates for a subject is in the subject\'s namespace (a student\'s own on a class session)', () => {
  const subject = { kind: 'configmaps', name: 'demo', namespace: 'ada-mrtsc', spec: KINDS.configmaps };
  assert.deepEqual(freshObject(subject).metadata, { name: 'demo', namespace: 'ada-mrtsc' });
  assert.equal(freshObject(subject).data.value, 'initial');
  assert.equal(freshObject({ ...subject, kind: 'deployments', spec: KINDS.deployments }, '5').metadata.namespace, 'ada-mrtsc');
});

test('an etcd key breaks only after a slash', () => {
  assert.deepEqual(splitKey('/registry/namespaces/kube-node-lease'), ['/', 'registry/', 'namespaces/', 'kube-node-lease']);
  // A watch's request breaks between its parts, never inside resourceVersion=9.
  assert.deepEqual(splitKey('/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=9', REQUEST_BREAKS),
    ['/api/', 'v1/', 'namespaces/', 'default/', 'configmaps?', 'watch=true&', 'resourceVersion=9']);
});

test('settings are Go durations; only changed ones are sent', () => {
  for (const ok of ['0s', '5s', '1m30s', '250ms', '0']) assert.ok(isDuration(ok), ok);
  for (const bad of ['', '5', '-1s', 'soon', '1 m']) assert.ok(!isDuration(bad), bad);
  assert.ok(zero('0s') && zero('0') && zero('0m0s') && !zero('1s'));
  assert.deepEqual(changed({ a: '5s', b: '1m0s' }, { a: '5s', b: '30s' }), { b: '30s' });
  assert.equal(settingsLine({ bookmarkInterval: '5s', compactionInterval: '0s', watchCacheDelay: '0s' }),
    'bookmarks every 5s · no automatic compaction · watch-cache lag 0s');
  assert.equal(settingsLine({ bookmarkInterval: '10s', compactionInterval: '5m0s', watchCacheDelay: '0s', watchCache: 'on' }),
    'bookmarks every 10s · compaction every 5m0s · watch-cache lag 0s · watch cache on');
});

test('a share link always points at the offline lab', () => {
  assert.equal(offlineURL('/lab', 'http://h:8080/s/demo/', 'abc'), 'http://h:8080/lab#h=abc');
  assert.equal(offlineURL('lab.html', 'file:///dist/index.html', 'x'), 'file:///dist/lab.html#h=x');
  assert.equal(shareCode('#h=xyz'), 'xyz');
  assert.equal(shareCode('#lesson=lost-update/2'), '');
});

test('shortcuts: digits, Shift+digit on any layout, none with Ctrl', () => {
  assert.equal(shortcut({ key: '1' }), 'get-a');
  assert.equal(shortcut({ key: '!', shiftKey: true, code: 'Digit1' }), 'put-a');
  assert.equal(shortcut({ key: '@', shiftKey: true, code: 'Digit2' }), 'put-b');
  assert.equal(shortcut({ key: 'c', ctrlKey: true }), '');
  assert.equal(shortcut({ key: 'p' }), 'present');
});

test('a stream says in words how it ended', () => {
  assert.equal(endText({ reason: 'eof' }), 'ended: the server closed the stream');
  assert.equal(endText({ reason: 'canceled' }), 'stopped');
  assert.equal(endText({ reason: 'connection lost', code: 1006 }), 'ended: the connection was lost');
  assert.equal(endText({ reason: 'client too slow', code: 1013 }), 'ended: client too slow (code 1013)');
  assert.deepEqual(describeEvent({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '9', annotations: { 'k8s.io/initial-events-end': 'true' } } } }).text,
    'rv=9 (initial-events-end)');
});

test('the compaction revision is found by bisection: the lowest readable revision', async () => {
  for (const compacted of [0, 2, 7, 30, 31]) {
    const reads = [];
    const readable = async (r) => { reads.push(r); return compacted === 0 || r >= compacted; };
    assert.equal(await findCompaction(readable, 0, 31), compacted, `compacted at ${compacted}`);
    assert.ok(reads.length <= 7, `${reads.length} reads`);
  }
  assert.equal(await findCompaction(async (r) => r >= 5, 5, 40), 5); // nothing new
});

test('the connection status is plain words', () => {
  assert.equal(connectionText('live', { mode: 'server', session: 'demo' }), 'live · the server answers');
  // Its second line, where the header is narrow, starts at "retrying".
  assert.equal(connectionText('lost', { mode: 'server', retryIn: 3200 }), 'server unreachable\u00a0· retrying in 3 s');
  assert.equal(connectionText('live', { mode: 'offline' }), 'ready · the engine runs in this page');
});

test('an etcd gateway error reads as its message, also a watch stream\'s nested one', async () => {
  const { GatewayError } = await import('../static/js/etcd.js');
  assert.equal(new GatewayError(503, '{"error":{"grpc_code":14,"http_code":503,"message":"transport is closing","http_status":"Service Unavailable"}}').message, 'transport is closing');
  assert.equal(new GatewayError(400, '{"error":"etcdserver: mvcc: required revision has been compacted","code":11,"message":"etcdserver: mvcc: required revision has been compacted"}').message,
    'etcdserver: mvcc: required revision has been compacted');
  assert.equal(new GatewayError(404, 'Not Found').message, 'Not Found');
});

test('a client\'s User-Agent travels as the WebSocket subprotocol the server restores', async () => {
  const { userAgentProtocol } = await import('../static/js/transport.js');
  // engine/api.UserAgentProtocol("A/rvplay-lab"): unpadded base64url.
  assert.equal(userAgentProtocol('A/rvplay-lab'), 'user-agent.rvplay.dev.QS9ydnBsYXktbGFi');
  assert.equal(userAgentProtocol('kubectl/v1.35 (linux/amd64)?'), 'user-agent.rvplay.dev.' + Buffer.from('kubectl/v1.35 (linux/amd64)?').toString('base64url'));
});

test('the lab reads its settings again one call at a time, and the last read starts after the last change', async () => {
  const started = [];
  const finish = [];
  const read = coalesced(() => new Promise((resolve) => { started.push(started.length); finish.push(resolve); }));
  const first = read();
  // A lesson's set-up changes the settings twice while the first read runs:
  // one more read, after it.
  const second = read();
  const third = read();
  assert.equal(second, third);
  assert.deepEqual(started, [0]);
  finish[0]();
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(started, [0, 1]);
  finish[1]();
  await first;
  await third;
  assert.deepEqual(started, [0, 1]);
  // A failed read does not stop the next one.
  const failing = coalesced(async () => { started.push('x'); throw new Error('offline'); });
  await failing();
  await failing();
  assert.deepEqual(started, [0, 1, 'x', 'x']);
});

test('a key\'s lease shows as etcdctl prints it, exactly, though it does not fit a Number', () => {
  // an ID with the member in its top 16 bits, as the store makes them
  assert.equal(decodeKV({ key: 'YQ==', lease: '7293278123405475971' }).leaseHex, '6536edcfd1b60083');
  assert.equal(decodeKV({ key: 'YQ==', lease: '694' }).leaseHex, '00000000000002b6');
  assert.equal(decodeKV({ key: 'YQ==', lease: '0' }).leaseHex, '');
  assert.equal(decodeKV({ key: 'YQ==' }).leaseHex, '');
});
