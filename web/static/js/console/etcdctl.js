// etcdctl as Debian's etcd-client 3.4 (the release rvplay's gateway
// emulates) parses, runs and prints it, against the session's etcd v3 JSON
// gateway instead of a gRPC endpoint. Where 3.5 added a flag the articles
// or lessons use (get --count-only), the console follows 3.5.
//
// The gateway speaks JSON with 64-bit integers as strings; etcdctl -w json
// prints etcd's Go structs with encoding/json (integers as numbers, bytes
// as base64, zero values left out). The JSON here is written field by
// field from the gateway's strings, so 64-bit IDs keep every digit.

import { FlagSet, FlagError, tabwriter, withDefaults } from './flags.js';
import { parseScript } from './shell.js';
import { readAll, lines } from './streams.js';
import { leaseHex } from '../etcd.js';

const exitError = 1, exitBadConnection = 2, exitInvalidInput = 3, exitBadFeature = 4, exitInterrupted = 5, exitBadArgs = 128;
const VERSION = '3.4.23';
const USER_AGENT = 'etcdctl/v3.4.23 (rvplay console)';
const connectionNote = 'console.note.etcdctlConnection';

export const txnPrompts = ['compares:', 'success requests (get, put, del):', 'failure requests (get, put, del):'];

function globalFlags() {
  const conn = (name, def, usage, kind = 'string') => ({ name, kind, def, usage, explain: connectionNote });
  return [
    conn('cacert', '', 'verify certificates of TLS-enabled secure servers using this CA bundle'),
    conn('cert', '', 'identify secure client using this TLS certificate file'),
    conn('command-timeout', '5s', 'timeout for short running command (excluding dial timeout)', 'duration'),
    { name: 'debug', kind: 'bool', usage: 'enable client-side debug logging' },
    conn('dial-timeout', '2s', 'dial timeout for client connections', 'duration'),
    { name: 'discovery-srv', short: 'd', kind: 'string', usage: 'domain name to query for SRV records describing cluster endpoints', explain: connectionNote },
    conn('discovery-srv-name', '', 'service name to query when using DNS discovery'),
    { name: 'endpoints', kind: 'stringSlice', def: '[127.0.0.1:2379]', usage: 'gRPC endpoints', explain: connectionNote },
    { name: 'hex', kind: 'bool', usage: 'print byte strings as hex encoded strings' },
    { name: 'insecure-discovery', kind: 'bool', def: 'true', usage: 'accept insecure SRV records describing cluster endpoints', explain: connectionNote },
    { name: 'insecure-skip-tls-verify', kind: 'bool', usage: 'skip server certificate verification (CAUTION: this option should be enabled only for testing purposes)', explain: connectionNote },
    { name: 'insecure-transport', kind: 'bool', def: 'true', usage: 'disable transport security for client connections', explain: connectionNote },
    conn('keepalive-time', '2s', 'keepalive time for client connections', 'duration'),
    conn('keepalive-timeout', '6s', 'keepalive timeout for client connections', 'duration'),
    conn('key', '', 'identify secure client using this TLS key file'),
    conn('password', '', 'password for authentication (if this option is used, --user option shouldn\'t include password)'),
    conn('user', '', 'username[:password] for authentication (prompt if password is not supplied)'),
    { name: 'write-out', short: 'w', kind: 'string', def: 'simple', usage: 'set the output format (fields, json, protobuf, simple, table)' },
  ];
}

const getFlags = () => [
  { name: 'consistency', kind: 'string', def: 'l', usage: 'Linearizable(l) or Serializable(s)' },
  { name: 'count-only', kind: 'bool', usage: 'Get only the count' },
  { name: 'from-key', kind: 'bool', usage: 'Get keys that are greater than or equal to the given key using byte compare' },
  { name: 'keys-only', kind: 'bool', usage: 'Get only the keys' },
  { name: 'limit', kind: 'int', usage: 'Maximum number of results' },
  { name: 'order', kind: 'string', usage: 'Order of results; ASCEND or DESCEND (ASCEND by default)' },
  { name: 'prefix', kind: 'bool', usage: 'Get keys with matching prefix' },
  { name: 'print-value-only', kind: 'bool', usage: 'Only write values when using the "simple" output format' },
  { name: 'rev', kind: 'int', usage: 'Specify the kv revision' },
  { name: 'sort-by', kind: 'string', usage: 'Sort target; CREATE, KEY, MODIFY, VALUE, or VERSION' },
];
const putFlags = () => [
  { name: 'ignore-lease', kind: 'bool', usage: 'updates the key using its current lease' },
  { name: 'ignore-value', kind: 'bool', usage: 'updates the key using its current value' },
  { name: 'lease', kind: 'string', def: '0', usage: 'lease ID (in hexadecimal) to attach to the key' },
  { name: 'prev-kv', kind: 'bool', usage: 'return the previous key-value pair before modification' },
];
const delFlags = () => [
  { name: 'from-key', kind: 'bool', usage: 'delete keys that are greater than or equal to the given key using byte compare' },
  { name: 'prefix', kind: 'bool', usage: 'delete keys with matching prefix' },
  { name: 'prev-kv', kind: 'bool', usage: 'return deleted key-value pairs' },
];

// leaseFlags are the flags of the lease subcommand on the line: etcdctl
// knows --keys only after timetolive and --once only after keep-alive.
function leaseFlags(args = []) {
  const sub = leaseSubcommand(args)?.[0];
  if (sub === 'timetolive') return [{ name: 'keys', kind: 'bool', usage: 'Get keys attached to this lease' }];
  if (sub === 'keep-alive') return [{ name: 'once', kind: 'bool', usage: 'Resets the keep-alive time to its original value and exits immediately' }];
  return [];
}

// LEASE_SUBCOMMANDS are etcdctl lease's, as its usage lists them: name,
// description, use.
const LEASE_SUBCOMMANDS = [['grant', 'Creates leases', 'grant <ttl>'], ['keep-alive', 'Keeps leases alive (renew)', 'keep-alive [options] <leaseID>'],
  ['list', 'List all active leases', 'list'], ['revoke', 'Revokes leases', 'revoke <leaseID>'], ['timetolive', 'Get lease information', 'timetolive <leaseID> [options]']];

// leaseSubcommand is the lease subcommand named on the line, if any.
function leaseSubcommand(args) {
  const name = args.slice(args.indexOf('lease') + 1).find((a) => !a.startsWith('-'));
  return LEASE_SUBCOMMANDS.find(([n]) => n === name);
}

const COMMANDS = [
  { use: 'get [options] <key> [range_end]', short: 'Gets the key or a range of keys', flags: getFlags, run: cmdGet },
  { use: 'put [options] <key> <value> (<value> can also be given from stdin)', short: 'Puts the given key into the store', flags: putFlags, run: cmdPut },
  { use: 'del [options] <key> [range_end]', short: 'Removes the specified key or range of keys [key, range_end)', flags: delFlags, run: cmdDel },
  { use: 'txn [options]', short: 'Txn processes all the requests in one transaction', flags: () => [{ name: 'interactive', short: 'i', kind: 'bool', usage: 'Input transaction in interactive mode' }], run: cmdTxn },
  { use: 'compaction [options] <revision>', short: 'Compacts the event history in etcd', flags: () => [{ name: 'physical', kind: 'bool', usage: "'true' to wait for compaction to physically remove all old revisions" }], run: cmdCompaction },
  {
    use: 'watch [options] [key or prefix] [range_end] [--] [exec-command arg1 arg2 ...]', short: 'Watches events stream on keys or prefixes', run: cmdWatch,
    flags: () => [{ name: 'interactive', short: 'i', kind: 'bool', usage: 'Interactive mode' }, { name: 'prefix', kind: 'bool', usage: 'Watch on a prefix if prefix is set' },
      { name: 'rev', kind: 'int', usage: 'Revision to start watching' }, { name: 'prev-kv', kind: 'bool', usage: 'get the previous key-value pair before the event happens' },
      { name: 'progress-notify', kind: 'bool', usage: 'get periodic watch progress notification from server' }],
  },
  { use: 'lease <subcommand>', short: 'Lease related commands', flags: leaseFlags, run: cmdLease },
  { use: 'endpoint status', short: 'Prints out the status of endpoints specified in `--endpoints` flag', flags: () => [{ name: 'cluster', kind: 'bool', usage: 'use all endpoints from the cluster member list' }], run: cmdEndpoint },
  { use: 'version', short: 'Prints the version of etcdctl', flags: () => [], run: async (e) => { e.stdout.write(`etcdctl version: ${VERSION}\nAPI version: 3.4\n`); return 0; } },
];

const cmdName = (c) => (c.use === 'endpoint status' ? c.use : c.use.split(' ')[0]);
const findCmd = (name) => COMMANDS.find((c) => c.use.split(' ')[0] === name);

class UsageError extends Error {}
class FeatureError extends Error {}

export async function etcdctl(p) {
  const fs = new FlagSet('etcdctl', globalFlags());
  let cmd = null;
  for (const a of p.args) if (!a.startsWith('-') && (cmd = findCmd(a))) break;
  if (cmd) fs.add(...cmd.flags(p.args));
  let pos;
  try {
    pos = fs.parse(p.args);
  } catch (err) {
    // cobra prints the error and the usage (etcdctl's usage goes to stdout,
    // leaving cobra an empty line), then etcdctl's main prints it again.
    p.stderr.write(`Error: ${err.message}\n`);
    p.stdout.write(cmd ? usage(cmd, p.args) : topUsage());
    p.stderr.write(`\nError: ${err.message}\n`);
    return exitError;
  }
  for (const n of fs.explanations()) p.note(n);
  if (!pos.length) { p.stdout.write(topUsage()); return 0; }
  if (!cmd) {
    const name = pos[0];
    if (['member', 'snapshot', 'auth', 'user', 'role', 'alarm', 'defrag', 'move-leader', 'lock', 'elect', 'make-mirror', 'check', 'migrate'].includes(name)) {
      p.stderr.write(`Error: "etcdctl ${name}" is not available in the lab\n`);
      p.note('console.note.etcdctlMissing', { name, commands: COMMANDS.map(cmdName).join(', ') });
      return exitBadFeature;
    }
    p.stderr.write(`Error: unknown command "${name}" for "etcdctl"\nRun 'etcdctl --help' for usage.\nError: unknown command "${name}" for "etcdctl"\n`);
    p.note('console.note.etcdctlCommands', { commands: COMMANDS.map(cmdName).join(', ') });
    return exitError;
  }
  pos = pos.slice(1);
  if (cmd.use === 'endpoint status') {
    if (!pos.length) { p.stdout.write(usage(cmd)); return 0; }
    if (pos[0] !== 'status') {
      p.stderr.write(`Error: "etcdctl endpoint ${pos[0]}" is not available in the lab\n`);
      p.note('console.note.etcdctlEndpoint');
      return exitBadFeature;
    }
    pos = pos.slice(1);
  }
  const e = { ...p, fs, pos, fail(code, msg) { p.stderr.write(`Error: ${msg}\n`); return code; } };
  e.endpoint = () => fs.strs('endpoints')[0] || '127.0.0.1:2379';
  const w = fs.str('write-out');
  switch (w) {
    case 'simple': e.print = simplePrinter(p, fs.bool('hex')); break;
    case 'json': e.print = jsonPrinter(p); break;
    case 'fields': e.print = fieldsPrinter(p); break;
    case 'table': e.print = tablePrinter(p); break;
    case 'protobuf':
      p.note('console.note.etcdctlProtobuf');
      return e.fail(exitBadFeature, 'protobuf not supported as output format');
    default: return e.fail(exitBadFeature, 'unsupported output format');
  }
  return cmd.run(e);
}

// usage is the text etcdctl prints with a flag error (its own template:
// flags aligned by a tabwriter that pads with tabs), listing the flags the
// console accepts.
function usage(cmd, args = []) {
  let name = cmdName(cmd), use = cmd.use, short = cmd.short;
  const sub = cmd === findCmd('lease') && leaseSubcommand(args);
  if (sub) [name, use, short] = [`lease ${sub[0]}`, `lease ${sub[2]}`, sub[1]];
  const local = [...cmd.flags(args), { name: 'help', short: 'h', kind: 'bool', def: 'false', usage: 'help for ' + name.split(' ').pop() }];
  return `NAME:\n\t${name} - ${short}\n\nUSAGE:\n\tetcdctl ${use} [flags]\n\nOPTIONS:\n${flagUsage(local)}\nGLOBAL OPTIONS:\n${flagUsage(globalFlags())}\n`;
}

function flagUsage(defs) {
  const lines = [...defs].map(withDefaults).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((d) => {
    let line = d.short ? `  -${d.short}, --${d.name}` : `      --${d.name}`;
    if (d.kind === 'bool') line += `[=${d.def}]`;
    else if (d.kind === 'string') line += '=' + JSON.stringify(d.def);
    else line += '=' + d.def;
    return `${line}\t${d.usage}\n`;
  });
  return tabwriter(lines.join(''), { minwidth: 0, tabwidth: 8, padding: 1, padchar: '\t' });
}

function topUsage() {
  const cmds = tabwriter(COMMANDS.map((c) => `\t${cmdName(c)}\t${c.short}\n`).join(''), { padding: 1, padchar: '\t' });
  return `NAME:\n\tetcdctl - A simple command line client for etcd3.\n\nUSAGE:\n\tetcdctl [flags]\n\nVERSION:\n\t${VERSION}\n\nAPI VERSION:\n\t3.4\n\n\nCOMMANDS (in the lab):\n${cmds}\nOPTIONS:\n${flagUsage(globalFlags())}`;
}

// ---- the gateway --------------------------------------------------------------

const enc = new TextEncoder();
const dec = new TextDecoder();
const b64 = (bytes) => { let s = ''; for (const b of bytes) s += String.fromCharCode(b); return btoa(s); };
const unb64 = (s) => Uint8Array.from(atob(s || ''), (c) => c.charCodeAt(0));
const strBytes = (s) => enc.encode(s);
const bytesStr = (b) => dec.decode(b);

// prefixEnd is clientv3.GetPrefixRangeEnd.
function prefixEnd(key) {
  const b = Array.from(strBytes(key));
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i] < 0xff) { b[i]++; return Uint8Array.from(b.slice(0, i + 1)); }
  }
  return Uint8Array.of(0);
}

class EtcdError extends Error {}

async function call(p, path, body) {
  let r;
  try {
    r = await p.c.transport.request('POST', path, { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body), userAgent: USER_AGENT });
  } catch (err) {
    // The session could not be reached (a server session gone away).
    throw new EtcdError(err?.message || String(err));
  }
  if (r.status !== 200) throw gatewayError(r.status, r.body);
  return JSON.parse(r.body || '{}');
}

function gatewayError(status, body) {
  try {
    const j = JSON.parse(body);
    const m = j.message || j.error;
    if (m) return new EtcdError(typeof m === 'string' ? m : JSON.stringify(m));
  } catch { /* not JSON */ }
  return new EtcdError(`unexpected answer ${status}: ${String(body).trim()}`);
}

// ---- commands --------------------------------------------------------------------

function usageFail(e, err) {
  if (err instanceof FeatureError) return e.fail(exitBadFeature, err.message);
  if (err instanceof UsageError) return e.fail(exitBadArgs, err.message);
  throw err;
}

function getRequest(fs, args) {
  if (!args.length) throw new UsageError('get command needs one argument as key and an optional argument as range_end');
  const prefix = fs.bool('prefix'), fromKey = fs.bool('from-key');
  if (prefix && fromKey) throw new UsageError('`--prefix` and `--from-key` cannot be set at the same time, choose one');
  if (fs.bool('keys-only') && fs.bool('count-only')) throw new UsageError('`--keys-only` and `--count-only` cannot be set at the same time, choose one');
  const r = {};
  const cons = fs.str('consistency');
  if (cons === 's') r.serializable = true;
  else if (cons !== 'l') throw new FeatureError(`unknown consistency flag ${JSON.stringify(cons)}`);
  let key = args[0];
  if (args.length > 1) {
    if (prefix || fromKey) throw new UsageError('too many arguments, only accept one argument when `--prefix` or `--from-key` is set');
    r.range_end = b64(strBytes(args[1]));
  }
  if (fs.int('limit')) r.limit = String(fs.int('limit'));
  if (fs.int('rev') > 0) r.revision = String(fs.int('rev'));
  let order = fs.str('order').toUpperCase();
  if (!['ASCEND', 'DESCEND', ''].includes(order)) throw new FeatureError(`bad sort order ${fs.str('order')}`);
  const target = fs.str('sort-by').toUpperCase() || 'KEY';
  if (!['CREATE', 'KEY', 'MODIFY', 'VALUE', 'VERSION'].includes(target)) throw new FeatureError(`bad sort target ${fs.str('sort-by')}`);
  if (target === 'KEY' && order === 'ASCEND') order = ''; // the server returns keys in ascending order anyway
  if (order) r.sort_order = order;
  const t = { KEY: '', CREATE: 'CREATE', MODIFY: 'MOD', VALUE: 'VALUE', VERSION: 'VERSION' }[target];
  if (t) r.sort_target = t;
  if (prefix) {
    if (key === '') { key = '\0'; r.range_end = b64(Uint8Array.of(0)); } else r.range_end = b64(prefixEnd(key));
  }
  if (fromKey) { if (key === '') key = '\0'; r.range_end = b64(Uint8Array.of(0)); }
  r.key = b64(strBytes(key));
  if (fs.bool('keys-only')) r.keys_only = true;
  if (fs.bool('count-only')) r.count_only = true;
  return r;
}

async function cmdGet(e) {
  let req;
  try { req = getRequest(e.fs, e.pos); } catch (err) { return usageFail(e, err); }
  let resp;
  try { resp = await call(e, '/v3/kv/range', req); } catch (err) { if (err instanceof EtcdError) return e.fail(exitError, err.message); throw err; }
  if (e.fs.bool('count-only') && e.print.kind !== 'fields') return e.fail(exitBadArgs, '--count-only is only for `--write-out=fields`');
  if (e.fs.bool('print-value-only')) {
    if (e.print.kind !== 'simple') return e.fail(exitBadArgs, 'print-value-only is only for `--write-out=simple`');
    e.print.valueOnly = true;
  }
  return e.print.get(resp);
}

async function putRequest(fs, args, stdin) {
  if (!args.length) throw new UsageError('put command needs 1 argument and input from stdin or 2 arguments');
  if (fs.bool('ignore-value') && args.length > 1) throw new UsageError("put command needs only 1 argument when 'ignore-value' is set");
  let value = '';
  if (!fs.bool('ignore-value')) {
    if (args.length > 1) value = args[1];
    else if (!stdin) throw new UsageError('put command needs 1 argument and input from stdin or 2 arguments');
    else value = await readAll(stdin);
  }
  const lease = fs.str('lease');
  if (!/^[0-9a-fA-F]+$/.test(lease)) throw new UsageError(`bad lease ID (strconv.ParseInt: parsing ${JSON.stringify(lease)}: invalid syntax), expecting ID in Hex`);
  const r = { key: b64(strBytes(args[0])), value: b64(strBytes(value)) };
  const id = BigInt('0x' + lease);
  if (id) r.lease = id.toString();
  if (fs.bool('prev-kv')) r.prev_kv = true;
  if (fs.bool('ignore-value')) r.ignore_value = true;
  if (fs.bool('ignore-lease')) r.ignore_lease = true;
  return r;
}

async function cmdPut(e) {
  let req;
  try { req = await putRequest(e.fs, e.pos, e.stdin); } catch (err) { return usageFail(e, err); }
  try { return e.print.put(await call(e, '/v3/kv/put', req)); } catch (err) { if (err instanceof EtcdError) return e.fail(exitError, err.message); throw err; }
}

function delRequest(fs, args) {
  if (!args.length) throw new UsageError('del command needs one argument as key and an optional argument as range_end');
  const prefix = fs.bool('prefix'), fromKey = fs.bool('from-key');
  if (prefix && fromKey) throw new UsageError('`--prefix` and `--from-key` cannot be set at the same time, choose one');
  const r = {};
  if (fs.bool('prev-kv')) r.prev_kv = true;
  let key = args[0];
  if (args.length > 1) {
    if (prefix || fromKey) throw new UsageError('too many arguments, only accept one argument when `--prefix` or `--from-key` is set');
    r.range_end = b64(strBytes(args[1]));
  }
  if (prefix) { if (key === '') { key = '\0'; r.range_end = b64(Uint8Array.of(0)); } else r.range_end = b64(prefixEnd(key)); }
  if (fromKey) { if (key === '') key = '\0'; r.range_end = b64(Uint8Array.of(0)); }
  r.key = b64(strBytes(key));
  return r;
}

async function cmdDel(e) {
  let req;
  try { req = delRequest(e.fs, e.pos); } catch (err) { return usageFail(e, err); }
  try { return e.print.del(await call(e, '/v3/kv/deleterange', req)); } catch (err) { if (err instanceof EtcdError) return e.fail(exitError, err.message); throw err; }
}

async function cmdCompaction(e) {
  if (e.pos.length !== 1) return e.fail(exitBadArgs, 'compaction command needs 1 argument');
  if (!/^[+-]?\d+$/.test(e.pos[0])) return e.fail(exitError, `strconv.ParseInt: parsing ${JSON.stringify(e.pos[0])}: invalid syntax`);
  const body = { revision: BigInt(e.pos[0]).toString() };
  if (e.fs.bool('physical')) body.physical = true;
  try { await call(e, '/v3/kv/compaction', body); } catch (err) { if (err instanceof EtcdError) return e.fail(exitError, err.message); throw err; }
  e.stdout.write(`compacted revision ${BigInt(e.pos[0])}\n`);
  return 0;
}

async function cmdEndpoint(e) {
  if (e.fs.bool('cluster')) e.note('console.note.etcdctlCluster');
  let resp;
  try { resp = await call(e, '/v3/maintenance/status', {}); } catch (err) {
    if (!(err instanceof EtcdError)) throw err;
    e.stderr.write(`Failed to get the status of endpoint ${e.endpoint()} (${err.message})\n`);
    return e.fail(exitError, err.message);
  }
  return e.print.status([{ ep: e.endpoint(), resp }]);
}


function leaseUsage() {
  const cmds = tabwriter(LEASE_SUBCOMMANDS.map(([n, d]) => `\t${n}\t${d}\n`).join(''), { padding: 1, padchar: '\t' });
  const help = flagUsage([{ name: 'help', short: 'h', kind: 'bool', def: 'false', usage: 'help for lease' }]);
  return `NAME:\n\tlease - Lease related commands\n\nUSAGE:\n\tetcdctl lease <subcommand> [flags]\n\nAPI VERSION:\n\t3.4\n\n\nCOMMANDS:\n${cmds}\nOPTIONS:\n${help}\nGLOBAL OPTIONS:\n${flagUsage(globalFlags())}\n`;
}

// leaseID is etcdctl's leaseFromArgs: a lease ID in hexadecimal.
function leaseID(e, arg) {
  if (!/^[+-]?[0-9a-fA-F]+$/.test(arg)) throw new UsageError(`bad lease ID arg (strconv.ParseInt: parsing ${JSON.stringify(arg)}: invalid syntax), expecting ID in Hex`);
  const id = BigInt((arg[0] === '-' ? '-0x' : '0x') + arg.replace(/^[+-]/, ''));
  if (id > 0x7fffffffffffffffn || id < -0x8000000000000000n) throw new UsageError(`bad lease ID arg (strconv.ParseInt: parsing ${JSON.stringify(arg)}: value out of range), expecting ID in Hex`);
  return id.toString();
}

async function cmdLease(e) {
  const [sub, ...args] = e.pos;
  if (sub === undefined) { e.stdout.write(leaseUsage()); return 0; }
  const known = LEASE_SUBCOMMANDS.map(([n]) => n);
  if (!known.includes(sub)) {
    // cobra runs the parent, which prints its usage, for an unknown subcommand.
    e.stdout.write(leaseUsage());
    e.note('console.note.etcdctlLease', { subcommands: known.join(', ') });
    return 0;
  }
  const rpc = async (path, body, code, wrap = (m) => m) => {
    try { return { resp: await call(e, path, body) }; } catch (err) {
      if (err instanceof EtcdError) return { code: e.fail(code, wrap(err.message)) };
      throw err;
    }
  };
  try {
    switch (sub) {
      case 'grant': {
        if (args.length !== 1) return e.fail(exitBadArgs, 'lease grant command needs TTL argument');
        if (!/^[+-]?\d+$/.test(args[0])) return e.fail(exitBadArgs, `bad TTL (strconv.ParseInt: parsing ${JSON.stringify(args[0])}: invalid syntax)`);
        const { resp, code } = await rpc('/v3/lease/grant', { TTL: BigInt(args[0]).toString() }, exitError, (m) => `failed to grant lease (${m})`);
        return code ?? e.print.lease('grant', resp);
      }
      case 'revoke': {
        if (args.length !== 1) return e.fail(exitBadArgs, 'lease revoke command needs 1 argument');
        const id = leaseID(e, args[0]);
        const { resp, code } = await rpc('/v3/lease/revoke', { ID: id }, exitError, (m) => `failed to revoke lease (${m})`);
        return code ?? e.print.lease('revoke', resp, id);
      }
      case 'timetolive': {
        if (args.length !== 1) return e.fail(exitBadArgs, 'lease timetolive command needs lease ID as argument');
        const keys = e.fs.bool('keys');
        const body = { ID: leaseID(e, args[0]) };
        if (keys) body.keys = true;
        const { resp, code } = await rpc('/v3/lease/timetolive', body, exitBadConnection);
        return code ?? e.print.lease('timetolive', resp, keys);
      }
      case 'list': {
        const { resp, code } = await rpc('/v3/lease/leases', {}, exitBadConnection, (m) => `failed to list leases (${m})`);
        return code ?? e.print.lease('list', resp);
      }
      case 'keep-alive': {
        if (args.length !== 1) return e.fail(exitBadArgs, 'lease keep-alive command needs lease ID as argument');
        return leaseKeepAlive(e, leaseID(e, args[0]));
      }
    }
  } catch (err) { return usageFail(e, err); }
  return 0;
}

// leaseKeepAlive is clientv3's keep-alive loop as etcdctl drives it: renew
// now, then a third of the TTL later, until the lease is gone (a TTL of 0)
// or the line is interrupted; --once renews once, and a lease that is gone
// is then an error.
async function leaseKeepAlive(e, id) {
  const once = e.fs.bool('once');
  if (!once) e.streaming?.();
  for (;;) {
    let resp;
    try { resp = (await call(e, '/v3/lease/keepalive', { ID: id })).result || {}; } catch (err) {
      if (err instanceof EtcdError) return e.fail(exitBadConnection, err.message);
      throw err;
    }
    const ttl = Number(int(resp.TTL));
    if (ttl <= 0) {
      if (once) return e.fail(exitBadConnection, 'etcdserver: requested lease not found');
      break;
    }
    e.print.lease('keepalive', resp);
    if (once) return 0;
    try { await e.c.sleep(Math.max(ttl / 3, 0.5) * 1000, e.signal); } catch { return 130; }
    if (e.signal?.aborted) return 130;
  }
  if (e.print.kind === 'simple') e.stdout.write(`lease ${hex16(id)} expired or revoked.\n`);
  return 0;
}

// argify splits a txn line as etcdctl's Argify does.
function argify(s) {
  const out = [];
  for (let i = 0; i < s.length;) {
    const c = s[i];
    if (' \t\n\r'.includes(c)) { i++; continue; }
    if (c === '"') {
      let j = i + 1;
      while (j < s.length && s[j] !== '"') { if (s[j] === '\\') j++; j++; }
      if (j >= s.length) throw new Error('unexpected EOF');
      out.push(goUnquote(s.slice(i, j + 1)));
      i = j + 1;
    } else if (c === "'") {
      let j = s.indexOf("'", i + 1);
      if (j < 0) j = s.length;
      out.push(s.slice(i + 1, j));
      i = j + 1;
    } else {
      let j = i;
      while (j < s.length && s[j] !== ' ' && s[j] !== '\t') j++;
      out.push(s.slice(i, j));
      i = j;
    }
  }
  return out;
}

// goUnquote is strconv.Unquote for a double-quoted string.
function goUnquote(q) {
  const body = q.slice(1, -1);
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\') { out += c; continue; }
    const e = body[++i];
    const simple = { a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"', "'": "'" }[e];
    if (simple !== undefined) { out += simple; continue; }
    if (e === 'x') { out += String.fromCharCode(parseInt(body.slice(i + 1, i + 3), 16)); i += 2; continue; }
    if (e === 'u') { out += String.fromCharCode(parseInt(body.slice(i + 1, i + 5), 16)); i += 4; continue; }
    if (e === 'U') { out += String.fromCodePoint(parseInt(body.slice(i + 1, i + 9), 16)); i += 8; continue; }
    if (/[0-7]/.test(e)) { out += String.fromCharCode(parseInt(body.slice(i, i + 3), 8)); i += 2; continue; }
    throw new Error('invalid syntax');
  }
  return out;
}

// scanQuoted reads a Go double-quoted string at the start of s.
function scanQuoted(s) {
  if (!s.startsWith('"')) throw new Error('expected quoted string');
  for (let j = 1; j < s.length; j++) {
    if (s[j] === '\\') { j++; continue; }
    if (s[j] === '"') return [goUnquote(s.slice(0, j + 1)), s.slice(j + 1)];
  }
  throw new Error('unexpected EOF');
}

// parseCompare reads one compare line: target("key") op "value".
function parseCompare(line) {
  const lp = line.indexOf('(');
  if (lp < 0) throw new Error(`malformed comparison: ${line}`);
  const target = line.slice(0, lp);
  let key = '', op = '', val = '', n = 0, rest;
  try {
    [key, rest] = scanQuoted(line.slice(lp + 1));
    if (!rest.startsWith(')')) throw new Error('input does not match format');
    n = 1;
    const fields = rest.slice(1).replace(/^[ \t]+/, '');
    const sp = fields.indexOf(' ');
    op = sp < 0 ? fields : fields.slice(0, sp);
    if (op) {
      n = 2;
      [val] = scanQuoted((sp < 0 ? '' : fields.slice(sp + 1)).replace(/^[ \t]+/, ''));
      n = 3;
    }
  } catch { /* n says how far it got */ }
  if (n !== 3) throw new Error(`malformed comparison: ${line}; got ${target}(${JSON.stringify(key)}) ${op} ${JSON.stringify(val)}`);
  const result = { '=': 'EQUAL', '!=': 'NOT_EQUAL', '<': 'LESS', '>': 'GREATER' }[op];
  if (!result) throw new Error(`invalid txn compare request: ${line} (unknown operator ${op}: use =, !=, < or >)`);
  const cmp = { result, key: b64(strBytes(key)) };
  const num = (base) => {
    if (!(base === 10 ? /^[+-]?\d+$/ : /^[+-]?[0-9a-fA-F]+$/).test(val)) throw new Error(`invalid txn compare request: ${line}`);
    return (base === 10 ? BigInt(val) : BigInt('0x' + val)).toString();
  };
  switch (target) {
    case 'ver': case 'version': cmp.target = 'VERSION'; cmp.version = num(10); break;
    case 'c': case 'create': cmp.target = 'CREATE'; cmp.create_revision = num(10); break;
    case 'm': case 'mod': cmp.target = 'MOD'; cmp.mod_revision = num(10); break;
    case 'val': case 'value': cmp.target = 'VALUE'; cmp.value = b64(strBytes(val)); break;
    case 'lease': cmp.target = 'LEASE'; cmp.lease = num(16); break;
    default: throw new Error(`malformed comparison: ${line} (unknown target ${target})`);
  }
  return cmp;
}

async function parseRequestOp(line) {
  let args;
  try { args = argify(line); } catch { args = []; }
  if (args.length < 2) throw new Error(`invalid txn compare request: ${line}`);
  const defs = { get: getFlags, put: putFlags, del: delFlags }[args[0]];
  if (!defs) throw new Error(`invalid txn request: ${line}`);
  const fs = new FlagSet(args[0], defs());
  let pos;
  try { pos = fs.parse(args.slice(1)); } catch { throw new Error(`invalid txn request: ${line}`); }
  if (args[0] === 'get') return { request_range: getRequest(fs, pos) };
  if (args[0] === 'put') return { request_put: await putRequest(fs, pos, null) };
  return { request_delete_range: delRequest(fs, pos) };
}

export const txnSectionsDone = (stdin) => stdin.split(/(?<=\n)/).filter((l) => l.endsWith('\n') && l.trim() === '').length;

// txnStage reports whether line is a lone `etcdctl txn` that reads its
// requests from the lines typed after it: null if not, else whether it
// is interactive (-i, which prompts for each section).
export function txnStage(c, line) {
  let sc;
  try { sc = parseScript(line); } catch { return null; }
  if (sc.pipelines.length !== 1 || !sc.pipelines[0].length) return null;
  const st = sc.pipelines[0][0];
  if (st.heredoc !== null || st.stdinFile) return null;
  let args;
  try { args = c.expandAliases(st); } catch { return null; }
  if (args.length < 2 || args[0] !== 'etcdctl') return null;
  const fs = new FlagSet('etcdctl', [...globalFlags(), { name: 'interactive', short: 'i', kind: 'bool' }]);
  try {
    const pos = fs.parse(args.slice(1));
    return pos.length === 1 && pos[0] === 'txn' ? { interactive: fs.bool('interactive') } : null;
  } catch { return null; }
}

async function cmdTxn(e) {
  if (e.pos.length) return e.fail(exitBadArgs, 'txn command does not accept argument');
  const interactive = e.fs.bool('interactive');
  if (!e.stdin) e.note('console.note.etcdctlTxnStdin');
  const it = lines(e.stdin)[Symbol.asyncIterator]();
  // Each section ends with an empty line; the end of input before it is
  // etcdctl's "EOF".
  const section = async () => {
    const out = [];
    for (;;) {
      const r = await it.next();
      if (r.done) throw new EtcdError('EOF');
      const l = r.value.trim();
      if (!l) return out;
      out.push(l);
    }
  };
  const req = { compare: [], success: [], failure: [] };
  // Typed at the console, the prompts showed as the lines were typed.
  const prompt = (s) => { if (interactive && !e.typed) e.stdout.write(s + '\n'); };
  try {
    prompt(txnPrompts[0]);
    for (const l of await section()) req.compare.push(parseCompare(l));
    for (const [i, k] of [[1, 'success'], [2, 'failure']]) {
      prompt(txnPrompts[i]);
      for (const l of await section()) {
        try { req[k].push(await parseRequestOp(l)); } catch (err) {
          if (err instanceof UsageError || err instanceof FeatureError) return usageFail(e, err);
          throw err;
        }
      }
    }
  } catch (err) {
    if (err instanceof UsageError || err instanceof FeatureError) return usageFail(e, err);
    return e.fail(exitInvalidInput, err.message);
  }
  for (const k of ['compare', 'success', 'failure']) if (!req[k].length) delete req[k];
  try { return e.print.txn(await call(e, '/v3/kv/txn', req)); } catch (err) { if (err instanceof EtcdError) return e.fail(exitError, err.message); throw err; }
}

async function cmdWatch(e) {
  if (e.fs.bool('interactive')) {
    e.note('console.note.etcdctlWatchInteractive');
    return e.fail(exitBadFeature, 'interactive watch is not available in the lab');
  }
  let args = e.pos;
  const dd = args.indexOf('--');
  if (dd >= 0) {
    e.note('console.note.etcdctlWatchExec');
    args = args.slice(0, dd);
  }
  if (!args.length) return e.fail(exitBadArgs, 'bad number of arguments');
  const req = { key: b64(strBytes(args[0])) };
  if (e.fs.int('rev')) req.start_revision = String(e.fs.int('rev'));
  if (e.fs.bool('prev-kv')) req.prev_kv = true;
  if (args.length === 2) {
    if (e.fs.bool('prefix')) return e.fail(exitBadArgs, '`range_end` and `--prefix` are mutually exclusive');
    req.range_end = b64(strBytes(args[1]));
  }
  if (e.fs.bool('prefix')) {
    if (args[0] === '') { req.key = b64(Uint8Array.of(0)); req.range_end = b64(Uint8Array.of(0)); } else req.range_end = b64(prefixEnd(args[0]));
  }
  if (e.fs.bool('progress-notify')) e.note('console.note.etcdctlProgressNotify');
  const ended = await new Promise((resolve) => {
    // A transport may call back before watch() returns (the engine in the
    // page can): finish then cancels once it has the cancel function.
    let done = false;
    let cancel = null;
    const finish = (v) => { if (!done) { done = true; cancel?.(); resolve(v); } };
    cancel = e.c.transport.watch('/v3/watch', '', (ev) => {
      if (ev.type === 'open' && ev.status !== 200) { finish({ err: gatewayError(ev.status, ev.body).message }); return; }
      if (ev.type === 'end') { finish({}); return; }
      if (ev.type !== 'frame') return;
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.error) { finish({ err: msg.error.message || String(msg.error) }); return; }
      const r = msg.result || {};
      if (r.created) { e.streaming(); return; }
      if (r.canceled) {
        const reason = r.compact_revision ? 'etcdserver: mvcc: required revision has been compacted' : r.cancel_reason || '';
        e.stderr.write(`watch was canceled (${reason})\n`);
      }
      e.print.watch(r);
      if (r.canceled) finish({});
    }, { method: 'POST', body: JSON.stringify({ create_request: req }), headers: { 'Content-Type': 'application/json' }, transport: 'http', userAgent: USER_AGENT });
    if (done) cancel();
    e.signal.addEventListener('abort', () => finish({ interrupted: true }), { once: true });
    if (e.signal.aborted) finish({ interrupted: true });
  });
  if (ended.interrupted) return 130;
  if (ended.err) e.stderr.write(`Error: ${ended.err}\n`);
  return e.fail(exitInterrupted, 'watch is canceled by the server');
}

// ---- printers --------------------------------------------------------------------

// The gateway's integers are strings; these write them as Go's encoding/json
// writes etcd's structs.
const int = (v) => (v === undefined || v === null ? '0' : String(v));
const nonzero = (v) => v !== undefined && v !== null && String(v) !== '0' && v !== '';

function jsonObj(fields) {
  const parts = [];
  for (const [k, v, always] of fields) if (always || (v !== undefined && v !== null && v !== '' && v !== false)) parts.push(`"${k}":${v}`);
  return '{' + parts.join(',') + '}';
}

const jnum = (v) => (nonzero(v) ? int(v) : undefined);
const jbytes = (v) => (v ? JSON.stringify(v) : undefined);
const jheader = (h) => (h ? jsonObj([['cluster_id', jnum(h.cluster_id)], ['member_id', jnum(h.member_id)], ['revision', jnum(h.revision)], ['raft_term', jnum(h.raft_term)]]) : undefined);
const jkv = (kv) => (kv ? jsonObj([['key', jbytes(kv.key)], ['create_revision', jnum(kv.create_revision)], ['mod_revision', jnum(kv.mod_revision)],
  ['version', jnum(kv.version)], ['value', jbytes(kv.value)], ['lease', jnum(kv.lease)]]) : undefined);
const jkvs = (l) => (l && l.length ? '[' + l.map(jkv).join(',') + ']' : undefined);
const jrange = (r) => jsonObj([['header', jheader(r.header)], ['kvs', jkvs(r.kvs)], ['more', r.more ? 'true' : undefined], ['count', jnum(r.count)]]);
const jput = (r) => jsonObj([['header', jheader(r.header)], ['prev_kv', jkv(r.prev_kv)]]);
const jdel = (r) => jsonObj([['header', jheader(r.header)], ['deleted', jnum(r.deleted)], ['prev_kvs', jkvs(r.prev_kvs)]]);

// jtxn writes a txn response as etcdctl -w json does: the Go struct's
// oneof wrappers appear as {"Response":{"ResponsePut":{...}}}.
function jtxn(r) {
  const ops = (r.responses || []).map((o) => {
    if (o.response_range) return `{"Response":{"ResponseRange":${jrange(o.response_range)}}}`;
    if (o.response_put) return `{"Response":{"ResponsePut":${jput(o.response_put)}}}`;
    if (o.response_delete_range) return `{"Response":{"ResponseDeleteRange":${jdel(o.response_delete_range)}}}`;
    if (o.response_txn) return `{"Response":{"ResponseTxn":${jtxn(o.response_txn)}}}`;
    return '{"Response":null}';
  });
  return jsonObj([['header', jheader(r.header)], ['succeeded', r.succeeded ? 'true' : undefined], ['responses', ops.length ? '[' + ops.join(',') + ']' : undefined]]);
}

const jevent = (ev) => jsonObj([['type', ev.type === 'DELETE' ? '1' : undefined], ['kv', jkv(ev.kv)], ['prev_kv', jkv(ev.prev_kv)]]);

function jstatus(eps) {
  return '[' + eps.map(({ ep, resp: s }) => `{"Endpoint":${JSON.stringify(ep)},"Status":${jsonObj([['header', jheader(s.header)], ['version', s.version ? JSON.stringify(s.version) : undefined],
    ['dbSize', jnum(s.dbSize)], ['leader', jnum(s.leader)], ['raftIndex', jnum(s.raftIndex)], ['raftTerm', jnum(s.raftTerm)],
    ['raftAppliedIndex', jnum(s.raftAppliedIndex)], ['errors', s.errors?.length ? JSON.stringify(s.errors) : undefined], ['dbSizeInUse', jnum(s.dbSizeInUse)],
    ['isLearner', s.isLearner ? 'true' : undefined]])}}`).join(',') + ']';
}

// jlease writes what etcdctl -w json prints for a lease command: clientv3's
// structs, their header embedded (its fields inline), but revoke's, which
// is the protobuf message.
function jlease(what, r) {
  const h = r.header || {};
  const hdr = [['cluster_id', jnum(h.cluster_id)], ['member_id', jnum(h.member_id)], ['revision', jnum(h.revision)], ['raft_term', jnum(h.raft_term)]];
  switch (what) {
    case 'grant': return jsonObj([...hdr, ['ID', int(r.ID), true], ['TTL', int(r.TTL), true], ['Error', '""', true]]);
    case 'keepalive': return jsonObj([...hdr, ['ID', int(r.ID), true], ['TTL', int(r.TTL), true]]);
    case 'timetolive': return jsonObj([...hdr, ['id', int(r.ID), true], ['ttl', int(r.TTL), true], ['granted-ttl', int(r.grantedTTL), true],
      ['keys', r.keys ? JSON.stringify(r.keys) : 'null', true]]);
    case 'list': return jsonObj([...hdr, ['leases', '[' + (r.leases || []).map((l) => `{"id":${int(l.ID)}}`).join(',') + ']', true]]);
    default: return jsonObj([['header', jheader(r.header)]]);
  }
}

function jsonPrinter(p) {
  const line = (s) => { p.stdout.write(s + '\n'); return 0; };
  return {
    kind: 'json',
    get: (r) => line(jrange(r)), put: (r) => line(jput(r)), del: (r) => line(jdel(r)), txn: (r) => line(jtxn(r)), status: (eps) => line(jstatus(eps)),
    // watch prints clientv3.WatchResponse: exported Go names, no omitempty.
    lease: (what, r) => line(jlease(what, r)),
    watch: (r) => line(`{"Header":${jheader(r.header || {})},"Events":${r.events?.length ? '[' + r.events.map(jevent).join(',') + ']' : 'null'},"CompactRevision":${int(r.compact_revision)},"Canceled":${!!r.canceled},"Created":${!!r.created}}`),
  };
}

// goQuote is strconv.Quote on the bytes of a key or value.
function goQuote(bytes) {
  let out = '"';
  for (let i = 0; i < bytes.length;) {
    const b = bytes[i];
    let cp, size;
    if (b < 0x80) { cp = b; size = 1; } else if ((b & 0xe0) === 0xc0 && i + 1 < bytes.length) { cp = ((b & 0x1f) << 6) | (bytes[i + 1] & 0x3f); size = 2; } else if ((b & 0xf0) === 0xe0 && i + 2 < bytes.length) {
      cp = ((b & 0x0f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f); size = 3;
    } else if ((b & 0xf8) === 0xf0 && i + 3 < bytes.length) {
      cp = ((b & 0x07) << 18) | ((bytes[i + 1] & 0x3f) << 12) | ((bytes[i + 2] & 0x3f) << 6) | (bytes[i + 3] & 0x3f); size = 4;
    } else { cp = -1; size = 1; }
    const valid = cp >= 0 && (size === 1 || [...bytes.slice(i + 1, i + size)].every((c) => (c & 0xc0) === 0x80));
    if (!valid) { out += '\\x' + b.toString(16).padStart(2, '0'); i++; continue; }
    i += size;
    const ch = String.fromCodePoint(cp);
    const esc = { 7: '\\a', 8: '\\b', 12: '\\f', 10: '\\n', 13: '\\r', 9: '\\t', 11: '\\v', 34: '\\"', 92: '\\\\' }[cp];
    if (esc) out += esc;
    else if (cp < 0x20 || cp === 0x7f) out += '\\x' + cp.toString(16).padStart(2, '0');
    else if (cp === 0x20 || /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch)) out += ch;
    else if (cp < 0x10000) out += '\\u' + cp.toString(16).padStart(4, '0');
    else out += '\\U' + cp.toString(16).padStart(8, '0');
  }
  return out + '"';
}

function fieldsPrinter(p) {
  const w = (s) => p.stdout.write(s + '\n');
  const hdr = (h = {}) => {
    w(`"ClusterID" : ${int(h.cluster_id)}`);
    w(`"MemberID" : ${int(h.member_id)}`);
    w(`"Revision" : ${int(h.revision)}`);
    w(`"RaftTerm" : ${int(h.raft_term)}`);
  };
  const kv = (pfx, k = {}) => {
    w(`"${pfx}Key" : ${goQuote(unb64(k.key))}`);
    w(`"${pfx}CreateRevision" : ${int(k.create_revision)}`);
    w(`"${pfx}ModRevision" : ${int(k.mod_revision)}`);
    w(`"${pfx}Version" : ${int(k.version)}`);
    w(`"${pfx}Value" : ${goQuote(unb64(k.value))}`);
    w(`"${pfx}Lease" : ${int(k.lease)}`);
  };
  const pr = {
    kind: 'fields',
    get(r) { hdr(r.header); for (const k of r.kvs || []) kv('', k); w(`"More" : ${!!r.more}`); w(`"Count" : ${int(r.count)}`); return 0; },
    put(r) { hdr(r.header); if (r.prev_kv) kv('Prev', r.prev_kv); return 0; },
    del(r) { hdr(r.header); w(`"Deleted" : ${int(r.deleted)}`); for (const k of r.prev_kvs || []) kv('Prev', k); return 0; },
    txn(r) {
      hdr(r.header);
      w(`"Succeeded" : ${!!r.succeeded}`);
      for (const o of r.responses || []) {
        if (o.response_delete_range) pr.del(o.response_delete_range);
        else if (o.response_put) pr.put(o.response_put);
        else if (o.response_range) pr.get(o.response_range);
      }
      return 0;
    },
    watch(r) {
      hdr(r.header);
      for (const ev of r.events || []) {
        w(`"Type" : ${ev.type || 'PUT'}`);
        if (ev.prev_kv) kv('Prev', ev.prev_kv);
        kv('', ev.kv);
      }
    },
    lease(what, r) {
      hdr(r.header);
      if (what === 'list') for (const l of r.leases || []) w(`"ID" : ${int(l.ID)}`);
      if (what === 'grant' || what === 'keepalive' || what === 'timetolive') { w(`"ID" : ${int(r.ID)}`); w(`"TTL" : ${int(r.TTL)}`); }
      if (what === 'timetolive') {
        w(`"GrantedTTL" : ${int(r.grantedTTL)}`);
        for (const k of r.keys || []) w(`"Key" : ${goQuote(unb64(k))}`);
      }
      return 0;
    },
    status(eps) {
      for (const { ep, resp: s } of eps) {
        hdr(s.header);
        w(`"Version" : ${JSON.stringify(s.version || '')}`);
        w(`"DBSize" : ${int(s.dbSize)}`);
        w(`"Leader" : ${int(s.leader)}`);
        w(`"IsLearner" : ${!!s.isLearner}`);
        w(`"RaftIndex" : ${int(s.raftIndex)}`);
        w(`"RaftTerm" : ${int(s.raftTerm)}`);
        w(`"RaftAppliedIndex" : ${int(s.raftAppliedIndex)}`);
        w(`"Errors" : [${(s.errors || []).join(' ')}]`);
        w(`"Endpoint" : ${JSON.stringify(ep)}`);
        w('');
      }
      return 0;
    },
  };
  return pr;
}

const hexPrefixed = (bytes) => [...bytes].map((b) => '\\x' + b.toString(16).padStart(2, '0')).join('');

function simplePrinter(p, hex) {
  const pr = {
    kind: 'simple',
    valueOnly: false,
    kv(k = {}) {
      const kb = unb64(k.key), vb = unb64(k.value);
      if (!pr.valueOnly) p.stdout.write((hex ? hexPrefixed(kb) : bytesStr(kb)) + '\n');
      p.stdout.write((hex ? hexPrefixed(vb) : bytesStr(vb)) + '\n');
    },
    get(r) { for (const k of r.kvs || []) pr.kv(k); return 0; },
    put(r) { p.stdout.write('OK\n'); if (r.prev_kv) pr.kv(r.prev_kv); return 0; },
    del(r) { p.stdout.write(`${int(r.deleted)}\n`); for (const k of r.prev_kvs || []) pr.kv(k); return 0; },
    txn(r) {
      p.stdout.write(r.succeeded ? 'SUCCESS\n' : 'FAILURE\n');
      for (const o of r.responses || []) {
        p.stdout.write('\n');
        if (o.response_delete_range) pr.del(o.response_delete_range);
        else if (o.response_put) pr.put(o.response_put);
        else if (o.response_range) pr.get(o.response_range);
      }
      return 0;
    },
    watch(r) {
      for (const ev of r.events || []) {
        p.stdout.write((ev.type || 'PUT') + '\n');
        if (ev.prev_kv) pr.kv(ev.prev_kv);
        pr.kv(ev.kv);
      }
    },
    status(eps) { for (const row of statusRows(eps)) p.stdout.write(row.join(', ') + '\n'); return 0; },
    lease(what, r, arg) {
      const out = (s) => p.stdout.write(s + '\n');
      switch (what) {
        case 'grant': out(`lease ${hex16(r.ID)} granted with TTL(${int(r.TTL)}s)`); break;
        case 'revoke': out(`lease ${hex16(arg)} revoked`); break;
        case 'keepalive': out(`lease ${hex16(r.ID)} keepalived with TTL(${int(r.TTL)})`); break;
        case 'list': out(`found ${(r.leases || []).length} leases`); for (const l of r.leases || []) out(hex16(l.ID)); break;
        case 'timetolive': {
          if (!nonzero(r.grantedTTL) && int(r.TTL) === '-1') { out(`lease ${hex16(r.ID)} already expired`); break; }
          let txt = `lease ${hex16(r.ID)} granted with TTL(${int(r.grantedTTL)}s), remaining(${int(r.TTL)}s)`;
          if (arg) txt += `, attached keys([${(r.keys || []).map((k) => bytesStr(unb64(k))).join(' ')}])`;
          out(txt);
          break;
        }
      }
      return 0;
    },
  };
  return pr;
}

// hex16 is Go's %016x of a lease ID.
const hex16 = (id) => leaseHex(int(id));

const STATUS_HEADER = ['endpoint', 'ID', 'version', 'db size', 'is leader', 'is learner', 'raft term', 'raft index', 'raft applied index', 'errors'];

function statusRows(eps) {
  return eps.map(({ ep, resp: s }) => {
    const member = BigInt(int(s.header?.member_id));
    return [ep, member.toString(16), s.version || '', humanizeBytes(Number(int(s.dbSize))), String(BigInt(int(s.leader)) === member),
      String(!!s.isLearner), int(s.raftTerm), int(s.raftIndex), int(s.raftAppliedIndex), (s.errors || []).join(', ')];
  });
}

// humanizeBytes is go-humanize's Bytes (SI units), as etcdctl shows the db size.
function humanizeBytes(s) {
  if (s < 10) return `${s} B`;
  const sizes = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  const e = Math.floor(Math.log(s) / Math.log(1000));
  const val = Math.floor((s / 1000 ** e) * 10 + 0.5) / 10;
  return val < 10 ? `${val.toFixed(1)} ${sizes[e]}` : `${val.toFixed(0)} ${sizes[e]}`;
}

function tablePrinter(p) {
  const unsupported = () => { p.stderr.write('Error: table not supported as output format\n'); return exitBadFeature; };
  return {
    kind: 'table', get: unsupported, put: unsupported, del: unsupported, txn: unsupported, watch: unsupported, lease: unsupported,
    status(eps) { p.stdout.write(borderedTable(STATUS_HEADER.map((h) => h.toUpperCase()), statusRows(eps))); return 0; },
  };
}

// borderedTable is olekukonko/tablewriter with a header and right
// alignment, as etcdctl's -w table.
function borderedTable(header, rows) {
  const w = header.map((h, i) => Math.max([...h].length, ...rows.map((r) => [...r[i]].length)));
  const border = '+' + w.map((n) => '-'.repeat(n + 2)).join('+') + '+\n';
  const head = '|' + header.map((h, i) => {
    const pad = w[i] - [...h].length, left = Math.floor(pad / 2);
    return ' ' + ' '.repeat(left) + h + ' '.repeat(pad - left) + ' |';
  }).join('') + '\n';
  const body = rows.map((r) => '|' + r.map((c, i) => ' ' + ' '.repeat(w[i] - [...c].length) + c + ' |').join('') + '\n').join('');
  return border + head + border + body + border;
}

export { FlagError };
