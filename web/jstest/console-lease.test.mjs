// etcdctl lease in the console against a gateway that answers as etcd
// 3.4.23 did (its answers and etcdctl's output recorded from Debian's etcd
// and etcdctl; test/consolediff compares the rest with the real tools,
// lease IDs blanked): etcd's IDs are 63-bit and must keep every digit, and
// keep-alive renews a third of the TTL later until the lease is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Console } from '../static/js/console.js';

const header = { cluster_id: '14841639068965178418', member_id: '10276657743932975437', revision: '4', raft_term: '2' };
const ID = '7587899158347194131'; // 694da21504c51f13

function gateway(keepalives) {
  const asked = [];
  return {
    asked,
    request: async (method, path, { body }) => {
      asked.push([path, JSON.parse(body)]);
      const answer = {
        '/v3/lease/grant': { header: { ...header, revision: '3' }, ID: '7587899158347194129', TTL: '60' },
        '/v3/lease/timetolive': { header, ID, TTL: '59', grantedTTL: '60', keys: ['aw=='] },
        '/v3/lease/leases': { header: { ...header, revision: '3' }, leases: [{ ID: '7587899158347194127' }, { ID: '7587899158347194129' }, { ID }] },
        '/v3/lease/keepalive': { result: keepalives.length ? { header, ID, TTL: keepalives.shift() } : { header, ID } },
      }[path];
      return { status: 200, body: JSON.stringify(answer) };
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

test('etcdctl lease grant, list and timetolive print what etcdctl 3.4 prints, 63-bit IDs intact', async () => {
  const con = new Console({ transport: gateway([]) });
  assert.equal((await run(con, 'etcdctl lease grant 60')).stdout, 'lease 694da21504c51f11 granted with TTL(60s)\n');
  assert.equal((await run(con, 'etcdctl lease grant 60 -w json')).stdout,
    '{"cluster_id":14841639068965178418,"member_id":10276657743932975437,"revision":3,"raft_term":2,"ID":7587899158347194129,"TTL":60,"Error":""}\n');
  assert.equal((await run(con, 'etcdctl lease list')).stdout, 'found 3 leases\n694da21504c51f0f\n694da21504c51f11\n694da21504c51f13\n');
  assert.equal((await run(con, 'etcdctl lease list -w json')).stdout,
    '{"cluster_id":14841639068965178418,"member_id":10276657743932975437,"revision":3,"raft_term":2,"leases":[{"id":7587899158347194127},{"id":7587899158347194129},{"id":7587899158347194131}]}\n');
  assert.equal((await run(con, 'etcdctl lease timetolive 694da21504c51f13 --keys')).stdout,
    'lease 694da21504c51f13 granted with TTL(60s), remaining(59s), attached keys([k])\n');
  assert.equal((await run(con, 'etcdctl lease timetolive 694da21504c51f13 --keys -w json')).stdout,
    '{"cluster_id":14841639068965178418,"member_id":10276657743932975437,"revision":4,"raft_term":2,"id":7587899158347194131,"ttl":59,"granted-ttl":60,"keys":["aw=="]}\n');
});

test('etcdctl lease keep-alive renews a third of the TTL later until the lease is gone; --once renews once', async () => {
  const gw = gateway(['60', '60']);
  const slept = [];
  const con = new Console({ transport: gw, sleep: async (ms) => { slept.push(ms); } });
  const r = await run(con, 'etcdctl lease keep-alive 694da21504c51f13');
  assert.equal(r.stdout, 'lease 694da21504c51f13 keepalived with TTL(60)\n'.repeat(2) + 'lease 694da21504c51f13 expired or revoked.\n');
  assert.equal(r.code, 0);
  assert.deepEqual(slept, [20000, 20000]);
  assert.deepEqual(gw.asked.map(([path, body]) => [path, body.ID]), Array(3).fill(['/v3/lease/keepalive', ID]));

  const once = await run(new Console({ transport: gateway(['60']) }), 'etcdctl lease keep-alive --once 694da21504c51f13 -w json');
  assert.equal(once.stdout, '{"cluster_id":14841639068965178418,"member_id":10276657743932975437,"revision":4,"raft_term":2,"ID":7587899158347194131,"TTL":60}\n');
  const gone = await run(new Console({ transport: gateway([]) }), 'etcdctl lease keep-alive --once 694da21504c51f13');
  assert.equal(gone.stderr, 'Error: etcdserver: requested lease not found\n');
  assert.equal(gone.code, 2);
});
