// The console: kubectl-style and etcdctl-style commands translated into
// requests to the session, printed the way those tools print.

import { lookupResource, collectionPath, itemPath, kubectlError, table, columns, singular } from './kube.js';
import { GatewayError, n } from './etcd.js';

export function tokenize(line) {
  const out = [];
  let cur = null;
  let quote = null;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote) {
      if (ch === quote) quote = null;
      else if (ch === '\\' && quote === '"' && i + 1 < line.length) cur += line[++i];
      else cur += ch;
    } else if (ch === '"' || ch === "'") { quote = ch; cur = cur ?? ''; }
    else if (/\s/.test(ch)) { if (cur !== null) { out.push(cur); cur = null; } }
    else cur = (cur ?? '') + ch;
  }
  if (quote) throw new Error('unterminated quote');
  if (cur !== null) out.push(cur);
  return out;
}

// parseFlags splits args into positionals and flags. Value flags take the
// next argument when not written as --flag=value.
function parseFlags(args, valueFlags) {
  const pos = [];
  const flags = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (a === '-' || !a.startsWith('-')) { pos.push(a); continue; }
    let name = a.replace(/^--?/, '');
    let value = true;
    const eq = name.indexOf('=');
    if (eq >= 0) { value = name.slice(eq + 1); name = name.slice(0, eq); }
    else if (valueFlags.includes(name) && i + 1 < args.length) value = args[++i];
    if (name === 'from-literal') (flags[name] = flags[name] || []).push(value);
    else flags[name] = value;
  }
  return { pos, flags };
}

const ETCD_NUMERIC = /"(cluster_id|member_id|revision|raft_term|create_revision|mod_revision|version|count|lease|deleted|compact_revision)":"(-?\d+)"/g;
// etcdctlJSON turns the gateway's JSON (int64 as strings) into etcdctl's
// -w json output (numbers), textually, so 64-bit ids keep every digit.
export const etcdctlJSON = (raw) => raw.trim().replace(ETCD_NUMERIC, '"$1":$2');

export class Console {
  // ctx: {transport, etcd, print(text, cls), apply(obj) -> {line, ok}, editorObject(), afterWrite()}
  constructor(ctx) { this.ctx = ctx; this.watches = new Set(); }

  stopWatches() {
    const had = this.watches.size;
    for (const c of this.watches) c();
    this.watches.clear();
    return had;
  }

  async run(line) {
    const p = this.ctx.print;
    let args;
    try { args = tokenize(line.trim()); } catch (e) { p(`error: ${e.message}`, 'err'); return; }
    if (args.length === 0) return;
    const [cmd, ...rest] = args;
    try {
      if (cmd === 'kubectl' || cmd === 'k') await this.kubectl(rest);
      else if (cmd === 'etcdctl') await this.etcdctl(rest);
      else if (cmd === 'help') this.help();
      else if (cmd === 'clear') this.ctx.clear();
      else if (cmd === 'stop' || cmd === '^C') p(this.stopWatches() ? 'watches stopped' : 'no watch running');
      else if (cmd === 'lab' && rest[0] === 'load') await this.load(Number(rest[1] || 200), Number(rest[2] || 3));
      else p(`${cmd}: command not found (try: help)`, 'err');
    } catch (e) {
      p(e instanceof GatewayError ? `Error: ${e.message}` : `error: ${e.message}`, 'err');
    }
  }

  help() {
    this.ctx.print([
      'kubectl get cm [NAME] [-n NS|-A] [-o yaml|json|name] [-w]',
      'kubectl get --raw /api/v1/namespaces/default/configmaps',
      'kubectl apply -f -            (applies the object in the editor)',
      'kubectl create configmap NAME --from-literal=key=value',
      'kubectl delete cm NAME',
      'etcdctl get KEY [--prefix] [--rev=N] [-w simple|json|fields] [--keys-only] [--print-value-only]',
      'etcdctl put KEY VALUE · etcdctl del KEY [--prefix] · etcdctl compaction REV',
      'etcdctl watch KEY [--prefix] [--rev=N]',
      'stop (or Ctrl+C): stop the console\'s watches · clear',
      'lab load RATE SECONDS: update a ConfigMap RATE times a second (for stress)',
    ].join('\n'), 'muted');
  }

  // ---- kubectl ----------------------------------------------------------

  async kubectl(args) {
    const { pos, flags } = parseFlags(args, ['n', 'namespace', 'o', 'output', 'f', 'filename', 'from-literal', 'raw', 'l', 'selector']);
    const verb = pos.shift();
    const ns = flags.n || flags.namespace || 'default';
    const t = this.ctx.transport;
    const p = this.ctx.print;
    if (verb === 'get' && flags.raw) {
      const r = await t.request('GET', flags.raw);
      if (r.status >= 400) { p(kubectlError(r.status, r.body), 'err'); return; }
      p(r.body.trim());
      return;
    }
    if (verb === 'apply' || (verb === 'create' && (flags.f || flags.filename))) {
      const f = flags.f || flags.filename;
      if (f !== '-' && f !== 'editor') throw new Error('only -f - is supported: it applies the object in the editor');
      const obj = this.ctx.editorObject();
      const res = await this.ctx.apply(obj, verb === 'create' ? 'create' : 'apply');
      p(res.line, res.ok ? '' : 'err');
      return;
    }
    if (verb === 'create' && (pos[0] === 'configmap' || pos[0] === 'cm')) {
      const name = pos[1];
      if (!name) throw new Error('exactly one NAME is required');
      const data = {};
      for (const kv of flags['from-literal'] || []) {
        const i = kv.indexOf('=');
        if (i <= 0) throw new Error(`invalid literal source ${kv}, expected key=value`);
        data[kv.slice(0, i)] = kv.slice(i + 1);
      }
      const r = lookupResource('configmaps');
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: ns }, data });
      const resp = await t.request('POST', collectionPath(r, ns), { headers: { 'Content-Type': 'application/json' }, body });
      this.ctx.afterWrite();
      p(resp.status < 300 ? `configmap/${name} created` : kubectlError(resp.status, resp.body), resp.status < 300 ? '' : 'err');
      return;
    }
    const r = pos[0] && lookupResource(pos[0]);
    if (!r) throw new Error(pos[0] ? `the server doesn't have a resource type "${pos[0]}"` : 'You must specify the type of resource to get.');
    const name = pos[1];
    const allNs = flags.A || flags['all-namespaces'];
    const nsForPath = allNs ? '' : ns;
    if (verb === 'delete') {
      if (!name) throw new Error('resource(s) were provided, but no name was specified');
      const resp = await t.request('DELETE', itemPath(r, nsForPath, name));
      this.ctx.afterWrite();
      p(resp.status < 300 ? `${singular(r)} "${name}" deleted` : kubectlError(resp.status, resp.body), resp.status < 300 ? '' : 'err');
      return;
    }
    if (verb !== 'get') throw new Error(`unknown command "${verb}" for "kubectl" (supported: get, apply, create, delete)`);
    const out = flags.o || flags.output || '';
    const watch = flags.w || flags.watch || flags['watch-only'];
    const query = {};
    if (flags.l || flags.selector) query.labelSelector = flags.l || flags.selector;
    const path = name && !watch ? itemPath(r, nsForPath, name) : collectionPath(r, nsForPath);
    if (name && watch) query.fieldSelector = `metadata.name=${name}`;
    const resp = await t.request('GET', path, { query });
    if (resp.status >= 400) { p(kubectlError(resp.status, resp.body), 'err'); return; }
    const obj = JSON.parse(resp.body);
    const items = name && !watch ? [obj] : obj.items || [];
    const cols = columns(r, allNs);
    if (!flags['watch-only']) {
      if (out === 'json') p(JSON.stringify(sortKeys(this.ctx.withoutManagedFields(name && !watch ? obj : listOf(obj, r))), null, 4));
      else if (out === 'yaml') p(this.ctx.toYAML(name && !watch ? obj : listOf(obj, r)).trimEnd());
      else if (out === 'name') p(items.map((o) => `${singular(r)}/${o.metadata.name}`).join('\n'));
      else if (items.length === 0) p(allNs ? 'No resources found' : `No resources found in ${ns} namespace.`);
      else p(table([cols.header, ...items.map(cols.row)]));
    }
    if (!watch) return;
    const rv = obj.metadata?.resourceVersion;
    let printedHeader = items.length > 0 && !flags['watch-only'];
    const cancel = t.watch(path, { ...query, watch: 'true', resourceVersion: rv }, (e) => {
      if (e.type === 'open' && e.status !== 200) { p(kubectlError(e.status, e.body), 'err'); return; }
      if (e.type === 'end') { this.watches.delete(cancel); if (e.reason !== 'canceled') p(`(watch ended: ${e.reason})`, 'muted'); return; }
      if (e.type !== 'frame') return;
      let ev;
      try { ev = JSON.parse(e.data); } catch { return; }
      if (ev.type === 'ERROR') { p(kubectlError(ev.object?.code, JSON.stringify(ev.object)), 'err'); return; }
      if (ev.type === 'BOOKMARK') return;
      if (out === 'json') { p(JSON.stringify(sortKeys(this.ctx.withoutManagedFields(ev.object)), null, 4)); return; }
      if (out === 'yaml') { p('---\n' + this.ctx.toYAML(ev.object).trimEnd()); return; }
      if (out === 'name') { p(`${singular(r)}/${ev.object.metadata.name}`); return; }
      const rows = printedHeader ? [cols.row(ev.object)] : [cols.header, cols.row(ev.object)];
      printedHeader = true;
      // kubectl pads watch rows to the widths of the first table; close enough.
      p(table(rows));
    });
    this.watches.add(cancel);
  }

  // ---- etcdctl ----------------------------------------------------------

  async etcdctl(args) {
    const { pos, flags } = parseFlags(args, ['w', 'write-out', 'rev', 'limit']);
    const verb = pos.shift();
    const etcd = this.ctx.etcd;
    const p = this.ctx.print;
    const format = flags.w || flags['write-out'] || 'simple';
    if (verb === 'get') {
      const key = pos[0];
      if (key === undefined) throw new Error('get command needs one argument as key and an optional argument as range_end');
      const opts = { rev: flags.rev ? Number(flags.rev) : 0, prefix: !!flags.prefix, keysOnly: !!flags['keys-only'], limit: flags.limit ? Number(flags.limit) : 0 };
      if (flags['from-key']) opts.all = key === '' || key === '\0';
      const res = await etcd.range(key, opts);
      if (format === 'json') { p(etcdctlJSON(res.raw)); return; }
      if (format === 'fields') { p(fields(res)); return; }
      const lines = [];
      for (const kv of res.kvs) {
        if (flags['print-value-only']) lines.push(kv.value);
        else if (flags['keys-only']) lines.push(kv.key, '');
        else lines.push(kv.key, kv.value);
      }
      if (lines.length) p(lines.join('\n'));
      return;
    }
    if (verb === 'put') {
      if (pos.length < 2) throw new Error('put command needs 1 argument and input from stdin or 2 arguments');
      const r = await etcd.put(pos[0], pos[1], { prevKv: !!flags['prev-kv'] });
      this.ctx.afterWrite();
      p(format === 'json' ? etcdctlJSON(r.raw) : 'OK');
      return;
    }
    if (verb === 'del' || verb === 'delete') {
      if (pos.length < 1) throw new Error('del command needs one argument as key and an optional argument as range_end');
      const r = await etcd.del(pos[0], { prefix: !!flags.prefix });
      this.ctx.afterWrite();
      p(format === 'json' ? etcdctlJSON(r.raw) : String(n(r.json.deleted)));
      return;
    }
    if (verb === 'compaction' || verb === 'compact') {
      const rev = Number(pos[0]);
      if (!pos[0] || !Number.isInteger(rev)) throw new Error('compaction command needs 1 argument');
      await etcd.compact(rev);
      this.ctx.afterWrite();
      p(`compacted revision ${rev}`);
      return;
    }
    if (verb === 'watch') {
      const key = pos[0];
      if (key === undefined) throw new Error('watch command needs a key');
      const cancel = etcd.watch(key, { prefix: !!flags.prefix, rev: flags.rev ? Number(flags.rev) : 0, prevKv: !!flags['prev-kv'] }, (res) => {
        if (res.canceled) {
          p(res.compactRevision ? 'watch was canceled (etcdserver: mvcc: required revision has been compacted)\nError: watch is canceled by the server' : 'Error: watch is canceled by the server', 'err');
          return;
        }
        if (format === 'json') { if (!res.created) p(etcdctlJSON(res.raw.replace(/^\{"result":/, '').replace(/\}$/, ''))); return; }
        for (const ev of res.events) {
          const lines = [ev.type, ev.kv.key];
          if (ev.type === 'PUT') lines.push(ev.kv.value);
          p(lines.join('\n'));
        }
      }, (err) => {
        this.watches.delete(cancel);
        if (err) p(`Error: ${err.message}`, 'err');
      });
      this.watches.add(cancel);
      return;
    }
    throw new Error(`unknown command "${verb}" for "etcdctl" (supported: get, put, del, compaction, watch)`);
  }

  // lab load RATE SECONDS updates the ConfigMap "load" RATE times a second.
  async load(rate, seconds) {
    const t = this.ctx.transport;
    const path = '/api/v1/namespaces/default/configmaps';
    const body = (i) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'load' }, data: { i: String(i) } });
    let r = await t.request('POST', path, { headers: { 'Content-Type': 'application/json' }, body: body(0) });
    const total = Math.round(rate * seconds);
    const start = performance.now();
    for (let i = 1; i <= total; i++) {
      const due = start + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((res) => setTimeout(res, wait));
      r = await t.request('PUT', `${path}/load`, { headers: { 'Content-Type': 'application/json' }, body: body(i) });
      if (r.status >= 300) { this.ctx.print(kubectlError(r.status, r.body), 'err'); return; }
    }
    this.ctx.afterWrite();
    const secs = (performance.now() - start) / 1000;
    this.ctx.print(`load: ${total} updates in ${secs.toFixed(2)}s (${(total / secs).toFixed(0)}/s)`);
  }
}

// sortKeys orders object keys as kubectl's JSON printer does (it prints
// unstructured maps, whose keys Go's encoder sorts).
function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!v || typeof v !== 'object') return v;
  return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
}

function listOf(list, r) {
  return { apiVersion: 'v1', items: (list.items || []).map((o) => ({ apiVersion: r.group ? `${r.group}/${r.version}` : r.version, kind: r.kind, ...o })), kind: 'List', metadata: { resourceVersion: '' } };
}

function fields(res) {
  const h = res.header;
  const lines = [
    `"ClusterID" : ${h.cluster_id ?? 0}`, `"MemberID" : ${h.member_id ?? 0}`,
    `"Revision" : ${h.revision ?? 0}`, `"RaftTerm" : ${h.raft_term ?? 0}`,
  ];
  for (const kv of res.kvs) {
    lines.push(`"Key" : ${JSON.stringify(kv.key)}`, `"CreateRevision" : ${kv.createRevision}`, `"ModRevision" : ${kv.modRevision}`,
      `"Version" : ${kv.version}`, `"Value" : ${JSON.stringify(kv.value)}`, `"Lease" : ${kv.lease}`);
  }
  lines.push(`"More" : ${res.more}`, `"Count" : ${res.count}`);
  return lines.join('\n');
}
