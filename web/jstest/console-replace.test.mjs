// kubectl replace in the console as kubectl's resource.Helper.Replace
// does it, and kubectl replace --raw as rawhttp.RawPut does, against an
// API that answers as kube-apiserver does for a custom resource (a PUT
// without a resourceVersion is refused: 422 "must be specified for an
// update"). test/kubectl runs the real kubectl for the same rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Console } from '../static/js/console.js';

const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs/daily';

function api() {
  const asked = [];
  let live = { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'daily', namespace: 'default', resourceVersion: '7' }, spec: { cronSpec: '0 1 * * *' } };
  const ok = (o) => ({ status: 200, body: JSON.stringify(o) });
  const status = (code, reason, message, details) => ({ status: code, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details }) });
  return {
    asked,
    request: async (method, path, { headers, body }) => {
      asked.push({ method, path, contentType: headers['Content-Type'], body });
      if (path === '/api') return ok({ versions: ['v1'] });
      if (path === '/apis') return ok({ groups: [{ name: 'stable.example.com', preferredVersion: { groupVersion: 'stable.example.com/v1' } }] });
      if (path === '/api/v1') return ok({ resources: [] });
      if (path === '/apis/stable.example.com/v1') return ok({ resources: [{ name: 'crontabs', singularName: 'crontab', namespaced: true, kind: 'CronTab', verbs: ['get', 'update'] }] });
      if (path !== CT) return status(404, 'NotFound', 'the server could not find the requested resource');
      if (method === 'GET') return ok(live);
      let o;
      try { o = JSON.parse(body); } catch { return status(400, 'BadRequest', "couldn't get version/kind; json parse error"); }
      const rv = o.metadata?.resourceVersion;
      if (!rv) {
        return status(422, 'Invalid', 'CronTab.stable.example.com "daily" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update',
          { name: 'daily', group: 'stable.example.com', kind: 'crontabs', causes: [{ reason: 'FieldValueInvalid', message: 'Invalid value: 0: must be specified for an update', field: 'metadata.resourceVersion' }] });
      }
      if (rv !== live.metadata.resourceVersion) return status(409, 'Conflict', 'Operation cannot be fulfilled on crontabs.stable.example.com "daily": the object has been modified; please apply your changes to the latest version and try again');
      live = { ...o, metadata: { ...o.metadata, resourceVersion: String(Number(rv) + 1) } };
      return ok(live);
    },
    watch: () => { throw new Error('no watch here'); },
  };
}

function run(con, input) {
  return new Promise((resolve) => {
    const r = { stdout: '', stderr: '', code: null };
    con.run(input, { onOutput: (t, stream) => { r[stream] += t; }, onNote: () => {}, onExit: (code) => { r.code = code; resolve(r); } });
  });
}

const manifest = (rv) => `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: daily
${rv ? `  resourceVersion: "${rv}"\n` : ''}spec:
  cronSpec: "0 2 * * *"
`;
const heredoc = (cmd, text) => `${cmd} <<EOF\n${text}EOF`;
const writes = (a) => a.asked.filter((x) => x.path === CT).map((x) => [x.method, x.method === 'PUT' ? (JSON.parse(x.body).metadata.resourceVersion ?? 'none') : '']);

test('kubectl replace of a file without a resourceVersion reads the live one first and sends it', async () => {
  const a = api();
  const r = await run(new Console({ transport: a }), heredoc('kubectl replace -f -', manifest()));
  assert.equal(r.stderr, '');
  assert.equal(r.stdout, 'crontab.stable.example.com/daily replaced\n');
  assert.deepEqual(writes(a), [['GET', ''], ['PUT', '7']]);
});

test('kubectl replace of a file with a resourceVersion sends it as it is: a stale one is a 409', async () => {
  const a = api();
  const r = await run(new Console({ transport: a }), heredoc('kubectl replace -f -', manifest('6')));
  assert.equal(r.stderr, 'Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on crontabs.stable.example.com "daily": the object has been modified; please apply your changes to the latest version and try again\n');
  assert.equal(r.code, 1);
  assert.deepEqual(writes(a), [['PUT', '6']]);
});

test('kubectl replace --raw PUTs the file as it is to the URI and prints the answer; a 422 is worded as kubectl words it', async () => {
  const a = api();
  const body = JSON.stringify(JSON.parse('{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"daily"},"spec":{"cronSpec":"0 3 * * *"}}'));
  let r = await run(new Console({ transport: a }), heredoc(`kubectl replace --raw ${CT} -f -`, body + '\n'));
  assert.equal(r.stderr, 'The crontabs "daily" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update\n');
  assert.equal(r.code, 1);
  const put = a.asked.filter((x) => x.method === 'PUT');
  assert.equal(put.length, 1);
  assert.equal(put[0].body, body + '\n');
  assert.equal(put[0].contentType, undefined);
  assert.deepEqual(writes(a), [['PUT', 'none']]);

  const withRV = JSON.stringify({ ...JSON.parse(body), metadata: { name: 'daily', resourceVersion: '7' } });
  r = await run(new Console({ transport: a }), heredoc(`kubectl replace --raw ${CT} -f -`, withRV + '\n'));
  assert.equal(r.stderr, '');
  assert.equal(JSON.parse(r.stdout).metadata.resourceVersion, '8');
});

test('kubectl replace --raw refuses what kubectl refuses', async () => {
  const con = new Console({ transport: api() });
  for (const [cmd, err] of [
    [`kubectl replace --raw ${CT}`, 'error: must specify --filename to replace\n'],
    [`kubectl replace --raw ${CT} -f a.json -f b.json`, 'error: --raw can only use a single local file or stdin\n'],
    [`kubectl replace --raw ${CT} -f https://example.com/ct.json`, 'error: --raw cannot read from a url\n'],
    [`kubectl replace --raw ${CT} -f a.json -R`, 'error: --raw and --recursive are mutually exclusive\n'],
    [`kubectl replace --raw ${CT} -f a.json -o json`, 'error: --raw and --output are mutually exclusive\n'],
    ['kubectl replace --raw apis/x -f a.json', 'error: --raw must be a valid URL path: parse "apis/x": invalid URI for request\n'],
  ]) {
    const r = await run(con, cmd);
    assert.equal(r.stderr, err, cmd);
    assert.equal(r.code, 1, cmd);
  }
});
