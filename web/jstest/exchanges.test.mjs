// What a client's exchange means to the learner.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { outcomeOf, shortPath, statusLine } from '../static/js/exchanges.js';

const conflict = JSON.stringify({
  kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Conflict', code: 409,
  message: 'Operation cannot be fulfilled on configmaps "demo": the object has been modified; please apply your changes to the latest version and try again',
});
const cm = (rv, v) => JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'demo', resourceVersion: rv }, data: { value: v } });

test('a 409 says Conflict, the Status message and the stale resourceVersion against the current one', () => {
  const o = outcomeOf({ method: 'PUT', status: 409, reqBody: cm('6', 'b'), respBody: conflict, currentRV: 7 });
  assert.equal(o.ok, false);
  assert.equal(o.line, '409 Conflict');
  assert.equal(o.reason, 'Conflict');
  assert.match(o.message, /the object has been modified/);
  assert.equal(o.sentRV, '6');
  assert.equal(o.currentRV, '7');
});

test('a PUT whose resourceVersion did not move is the no-op; one without a resourceVersion is unconditional', () => {
  assert.equal(outcomeOf({ method: 'PUT', status: 200, reqBody: cm('6', 'x'), respBody: cm('6', 'x') }).noop, true);
  assert.equal(outcomeOf({ method: 'PUT', status: 200, reqBody: cm('6', 'y'), respBody: cm('8', 'y') }).noop, false);
  const body = JSON.stringify({ kind: 'ConfigMap', metadata: { name: 'demo' } });
  assert.equal(outcomeOf({ method: 'PUT', status: 200, reqBody: body, respBody: cm('9', 'z') }).unconditional, true);
  // RetryOnConflict's answer comes without the body it sent: nothing to say.
  assert.equal(outcomeOf({ method: 'PUT', status: 200, respBody: cm('9', 'z') }).unconditional, false);
});

test('a request that got no answer is status 0 with the reason', () => {
  const o = outcomeOf({ method: 'GET', status: 0, respBody: 'the server could not be reached (Failed to fetch)' });
  assert.equal(o.ok, false);
  assert.equal(o.line, '0 no answer');
  assert.match(o.message, /could not be reached/);
});

test('a log line starts with the status and names the object, not the API prefix', () => {
  assert.equal(statusLine(409), '409 Conflict');
  assert.equal(shortPath('/api/v1/namespaces/default/configmaps/demo'), 'configmaps/demo');
  assert.equal(shortPath('/apis/apps/v1/namespaces/default/deployments/web'), 'deployments/web');
  assert.equal(shortPath('/api/v1/namespaces/kube-system/configmaps'), 'namespaces/kube-system/configmaps');
});
