// What the console says about a command before (or without) asking the
// session: unknown commands and flags, what the lab does not have, flags
// that have no effect here, a session that cannot be reached. What the
// commands print against a session is compared with the real tools in
// test/consolediff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import './setup.mjs';
import { Console } from '../static/js/console.js';
import { History } from '../static/js/consolehistory.js';

// unreachable is a session that never answers, as a server gone away.
const unreachable = {
  request: async () => { throw new Error('the server could not be reached (connection refused)'); },
  watch: () => { throw new Error('the server could not be reached (connection refused)'); },
};

function run(con, input) {
  return new Promise((resolve) => {
    const r = { stdout: '', stderr: '', notes: [], code: null };
    con.run(input, {
      onOutput: (t, stream) => { r[stream] += t; },
      onNote: (t) => r.notes.push(t),
      onExit: (code) => { r.code = code; resolve(r); },
    });
  });
}

test('an unknown command says which ones the console runs', async () => {
  const r = await run(new Console({ transport: unreachable }), 'helm install x');
  assert.equal(r.code, 127);
  assert.equal(r.stderr, 'rvplay: helm: command not found\n');
  assert.match(r.notes[0], /^the console runs kubectl \(k\), etcdctl, jq, grep, base64, cat, echo, .*; type help$/);
});

test('a shell feature the console lacks fails with status 2 and says what it understands', async () => {
  const r = await run(new Console({ transport: unreachable }), 'kubectl get cm $NAME');
  assert.equal(r.code, 2);
  assert.equal(r.stderr, 'rvplay: unsupported shell syntax: $ (shell variables and substitutions)\n');
  assert.match(r.notes[0], /understands quotes, \|, ;, &&, <<EOF heredocs/);
});

test('kubectl: an unknown command or flag is kubectl\'s error, with what the console accepts', async () => {
  const con = new Console({ transport: unreachable });
  let r = await run(con, 'kubectl frobnicate cm');
  assert.equal(r.stderr, 'error: unknown command "frobnicate" for "kubectl"\n');
  assert.equal(r.code, 1);
  assert.match(r.notes[0], /^the console runs kubectl get, describe, create, apply, replace, patch, scale, edit, /);
  r = await run(con, 'kubectl get cm --frob');
  assert.equal(r.stderr, "error: unknown flag: --frob\nSee 'kubectl get --help' for usage.\n");
  assert.match(r.notes[0], /^kubectl get accepts: .*--output-watch-events.*--watch-only.*-w\/--watch$/);
  r = await run(con, 'kubectl get cm --watch-only=maybe');
  assert.equal(r.stderr, 'error: invalid argument "maybe" for "--watch-only" flag: strconv.ParseBool: parsing "maybe": invalid syntax\n'
    + "See 'kubectl get --help' for usage.\n");
});

test('kubectl -o: what kubectl knows but the console does not print says what it prints', async () => {
  const con = new Console({ transport: unreachable });
  let r = await run(con, "kubectl get cm -o go-template='{{.kind}}'");
  assert.equal(r.stderr, 'error: the console does not print -o go-template; it prints -o json, yaml, wide, name, jsonpath=TEMPLATE and custom-columns=SPEC\n');
  r = await run(con, 'kubectl get cm -o jsonpath=');
  assert.equal(r.stderr, 'error: template format specified but no template given\n');
});

test('kubectl: a session that cannot be reached is kubectl\'s "Unable to connect to the server"', async () => {
  const r = await run(new Console({ transport: unreachable }), 'kubectl get cm');
  assert.equal(r.stderr, 'Unable to connect to the server: the server could not be reached (connection refused)\n');
  assert.equal(r.code, 1);
});

test('etcdctl: connection and TLS flags are accepted and explained; the lab talks to its own session', async () => {
  const r = await run(new Console({ transport: unreachable }),
    'etcdctl --endpoints=https://10.0.0.1:2379 --cacert=/etc/kubernetes/pki/etcd/ca.crt --cert=c.crt --key=c.key get /registry --prefix --keys-only');
  assert.deepEqual(r.notes, ['the console always talks to this lab\'s session: --endpoints, --cert, --key, --cacert and the other connection flags are accepted and have no effect']);
  assert.equal(r.stderr, 'Error: the server could not be reached (connection refused)\n');
  assert.equal(r.code, 1);
});

test('etcdctl: a missing key, an unknown flag or output format is etcdctl\'s own error', async () => {
  const con = new Console({ transport: unreachable });
  let r = await run(con, 'etcdctl get');
  assert.equal(r.stderr, 'Error: get command needs one argument as key and an optional argument as range_end\n');
  assert.equal(r.code, 128);
  r = await run(con, 'etcdctl get k --frob');
  assert.equal(r.stderr, 'Error: unknown flag: --frob\n\nError: unknown flag: --frob\n');
  assert.match(r.stdout, /^NAME:\n\tget - Gets the key or a range of keys\n/);
  r = await run(con, 'etcdctl get k -w xml');
  assert.equal(r.stderr, 'Error: unsupported output format\n');
});

test('etcdctl: what the lab\'s etcd does not have is named, with what it has', async () => {
  const r = await run(new Console({ transport: unreachable }), 'etcdctl member list');
  assert.equal(r.stderr, 'Error: "etcdctl member" is not available in the lab\n');
  assert.match(r.notes[0], /^the lab's etcd has no member; the console runs etcdctl get, put, del, txn, /);
});

test('2>&1 sends errors down the pipe; 2>/dev/null drops them; the status is the last stage\'s', async () => {
  const con = new Console({ transport: unreachable });
  let r = await run(con, 'etcdctl get 2>&1 | grep -c argument');
  assert.deepEqual([r.stdout, r.stderr, r.code], ['1\n', '', 0]);
  r = await run(con, 'etcdctl get 2>/dev/null');
  assert.deepEqual([r.stdout, r.stderr, r.code], ['', '', 128]);
  r = await run(con, 'etcdctl get 2>err.txt; cat err.txt');
  assert.equal(r.stdout, 'Error: get command needs one argument as key and an optional argument as range_end\n');
});

test('files written with > are read back with < and cat, and listed by ls', async () => {
  const con = new Console({ transport: unreachable });
  await run(con, "cat > cm.yaml <<'EOF'\nkind: ConfigMap\nEOF");
  assert.equal((await run(con, 'cat < cm.yaml')).stdout, 'kind: ConfigMap\n');
  assert.equal((await run(con, 'ls')).stdout, 'cm.yaml\n');
  assert.equal((await run(con, 'cat nope.yaml')).stderr, 'cat: nope.yaml: No such file or directory\n');
});

test('aliases: k is kubectl; alias defines more, as bash does', async () => {
  const con = new Console({ transport: unreachable });
  assert.equal((await run(con, 'alias')).stdout, "alias k='kubectl'\n");
  await run(con, "alias e='etcdctl --endpoints=x'");
  assert.equal((await run(con, 'e get')).stderr, 'Error: get command needs one argument as key and an optional argument as range_end\n');
});

test('the history walks back and forward, keeps the line being typed, and survives a reload', () => {
  const store = new Map();
  const storage = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const h = new History(storage, 'h', 3);
  for (const c of ['a', 'b', 'b', 'c', 'd']) h.add(c);
  assert.deepEqual(h.entries, ['b', 'c', 'd']);
  assert.equal(h.back('typing'), 'd');
  assert.equal(h.back(), 'c');
  assert.equal(h.back(), 'b');
  assert.equal(h.back(), null);
  assert.equal(h.forward(), 'c');
  assert.equal(h.forward(), 'd');
  assert.equal(h.forward(), 'typing');
  assert.equal(h.forward(), null);
  assert.deepEqual(new History(storage, 'h', 3).entries, ['b', 'c', 'd']);
  store.set('h', '{not json');
  assert.deepEqual(new History(storage, 'h').entries, []);
});
