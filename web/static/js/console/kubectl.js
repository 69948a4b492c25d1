// kubectl as kubectl 1.32 parses, runs and prints it, against the
// session's Kubernetes API through the requests kubectl sends (as JSON).
// Resource types come from the session's discovery documents, table
// columns from its server-side printing (Tables), strategic merge keys from
// its OpenAPI: nothing about a type is known to the console itself.

import { FlagSet } from './flags.js';
import { parse as parseJSONPath, execute as jsonpathExecute, results as jsonpathResults, goJSON, resultText } from './jsonpath.js';
import { toYAML } from './yaml.js';
import { kubectlCreate, kubectlApply, kubectlReplace, kubectlPatch, kubectlScale, kubectlEdit, kubectlLabel, kubectlDelete, kubectlRollout,
  writeCmdFlags } from './kubectl-write.js';
import { kubectlDescribe, describeFlags } from './describe.js';

export const USER_AGENT = 'kubectl/v1.32.4 (rvplay console)';
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const kubeconfigNote = 'console.note.kubectlConnection';

function globalFlags() {
  const conn = (name, short) => ({ name, short, kind: 'string', explain: kubeconfigNote });
  return [
    { name: 'namespace', short: 'n', kind: 'string' },
    conn('kubeconfig'), conn('context'), conn('cluster'), conn('user'), conn('server', 's'), conn('token'), conn('as'),
    conn('certificate-authority'), conn('client-certificate'), conn('client-key'), conn('tls-server-name'), conn('username'),
    conn('password'), conn('cache-dir'),
    { name: 'insecure-skip-tls-verify', kind: 'bool', explain: kubeconfigNote },
    { name: 'request-timeout', kind: 'string', def: '0' },
    { name: 'v', short: 'v', kind: 'int' },
    { name: 'warnings-as-errors', kind: 'bool' },
    { name: 'match-server-version', kind: 'bool' },
  ];
}

export const outputFlags = () => [
  { name: 'output', short: 'o', kind: 'string' }, { name: 'show-managed-fields', kind: 'bool' },
  { name: 'allow-missing-template-keys', kind: 'bool', def: 'true' }, { name: 'template', kind: 'string' },
];

const getFlags = () => [...outputFlags(),
  { name: 'selector', short: 'l', kind: 'string' }, { name: 'field-selector', kind: 'string' },
  { name: 'all-namespaces', short: 'A', kind: 'bool' }, { name: 'watch', short: 'w', kind: 'bool' },
  { name: 'watch-only', kind: 'bool' }, { name: 'output-watch-events', kind: 'bool' },
  { name: 'show-labels', kind: 'bool' }, { name: 'show-kind', kind: 'bool' },
  { name: 'label-columns', short: 'L', kind: 'stringSlice' }, { name: 'no-headers', kind: 'bool' },
  { name: 'sort-by', kind: 'string' }, { name: 'ignore-not-found', kind: 'bool' }, { name: 'raw', kind: 'string' },
  { name: 'chunk-size', kind: 'int', def: '500' }, { name: 'subresource', kind: 'string' },
  { name: 'server-print', kind: 'bool', def: 'true' },
];

const COMMANDS = [
  { name: 'get', flags: getFlags, run: kubectlGet },
  { name: 'describe', flags: describeFlags, run: kubectlDescribe },
  { name: 'create', flags: () => writeCmdFlags('create'), run: kubectlCreate },
  { name: 'apply', flags: () => writeCmdFlags('apply'), run: kubectlApply },
  { name: 'replace', flags: () => writeCmdFlags('replace'), run: kubectlReplace },
  { name: 'patch', flags: () => writeCmdFlags('patch'), run: kubectlPatch },
  { name: 'scale', flags: () => writeCmdFlags('scale'), run: kubectlScale },
  { name: 'edit', flags: () => writeCmdFlags('edit'), run: kubectlEdit },
  { name: 'label', flags: () => writeCmdFlags('label'), run: kubectlLabel },
  { name: 'annotate', flags: () => writeCmdFlags('annotate'), run: kubectlLabel },
  { name: 'delete', flags: () => writeCmdFlags('delete'), run: kubectlDelete },
  { name: 'rollout', flags: () => writeCmdFlags('rollout'), run: kubectlRollout },
  { name: 'version', flags: () => [{ name: 'client', kind: 'bool' }, { name: 'output', short: 'o', kind: 'string' }], run: kubectlVersion },
  { name: 'api-resources', flags: () => [{ name: 'namespaced', kind: 'bool', def: 'true' }, { name: 'output', short: 'o', kind: 'string' }, { name: 'api-group', kind: 'string' }], run: kubectlAPIResources },
];

// StatusError is an error answer of the Kubernetes API (a Status).
export class StatusError extends Error {
  constructor(code, reason, message, details) { super(message); this.code = code; this.reason = reason; this.details = details; }
  kubectlMessage() {
    if (this.reason === 'Unauthorized') return `error: You must be logged in to the server (${this.message})`;
    if (this.reason === 'Invalid') return this.invalidMessage();
    if (this.reason) return `Error from server (${this.reason}): ${this.message}`;
    return `Error from server: ${this.message}`;
  }

  // invalidMessage is how kubectl's CheckErr words a 422 Invalid: the
  // object and each distinct cause, not "Error from server".
  invalidMessage() {
    const d = this.details;
    let s = 'The request is invalid';
    if (!d) return this.message ? `${s}: ${this.message}` : s;
    const causes = [...new Set((d.causes || []).map((c) => `${c.field ?? ''}: ${c.message ?? ''}`))];
    if (d.kind || d.name) s = `The ${d.kind || ''} ${JSON.stringify(d.name || '')} is invalid`;
    else if (this.message && !causes.length) s += ': ' + this.message;
    if (causes.length === 1) return `${s}: ${causes[0]}`;
    if (causes.length > 1) return `${s}: \n` + causes.map((c) => `* ${c}`).join('\n');
    return s;
  }
}

// ToolError is worded as kubectl words it; NoResources is its notice that
// nothing matched (printed, not an error).
export class ToolError extends Error {}
// LabLimit is an error about what the lab's console does not do: its
// message goes to stderr in English as kubectl's errors do, and its note
// (a key of the lab's strings) says what to do instead in the learner's
// language.
export class LabLimit extends ToolError {
  constructor(message, note, params) {
    super(message);
    this.note = note;
    this.params = params;
  }
}
export class NoResources extends Error {}
// Unreachable is kubectl's line when no answer came at all.
export class Unreachable extends Error {}

// withSource is kubectl's AddSourceToErr: "error when creating "f": ...".
export function withSource(err, verb, source) {
  if (err instanceof StatusError) return new StatusError(err.code, err.reason, `error when ${verb} ${JSON.stringify(source)}: ${err.message}`, err.details);
  return new Error(`error when ${verb} ${JSON.stringify(source)}: ${err.message}`);
}

const REASONS = { 400: 'BadRequest', 401: 'Unauthorized', 403: 'Forbidden', 404: 'NotFound', 405: 'MethodNotAllowed', 406: 'NotAcceptable',
  409: 'Conflict', 410: 'Gone', 415: 'UnsupportedMediaType', 422: 'Invalid', 429: 'TooManyRequests', 500: 'InternalError', 503: 'ServiceUnavailable', 504: 'Timeout' };

// statusFrom reads an error answer as client-go does.
export function statusFrom(code, body) {
  try {
    const s = JSON.parse(body);
    if (s && s.kind === 'Status') return new StatusError(code, s.reason || '', s.message || '', s.details);
  } catch { /* not JSON */ }
  const msgs = { 404: 'the server could not find the requested resource', 409: 'the server reported a conflict',
    405: 'the server does not allow this method on the requested resource', 401: 'the server has asked for the client to provide credentials',
    403: 'the server does not allow access to the requested resource', 429: 'the server has received too many requests and has asked us to try again later',
    500: `an error on the server (${JSON.stringify(String(body).trim())}) has prevented the request from succeeding`,
    503: 'the server is currently unable to handle the request', 504: 'the server was unable to return a response in the time allotted, but may still be processing the request' };
  return new StatusError(code, REASONS[code] || '', msgs[code] || `the server responded with the status code ${code} but did not return more information`);
}

export const isNotFound = (e) => e instanceof StatusError && e.code === 404;

// consoleSession is this console's Kubectl-Session: one random ID for as
// long as the page lives (getRandomValues: also on a plain-http page).
let sessionID = '';
function consoleSession() {
  if (!sessionID) sessionID = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
  return sessionID;
}

// Run is one kubectl invocation: its flags, arguments and helpers.
class Run {
  constructor(p, fs, verb, pos) {
    Object.assign(this, p);
    this.p = p;
    this.fs = fs;
    this.verb = verb;
    // command is what real kubectl sends as Kubectl-Command (KEP-859): the
    // command's path, "kubectl get", "kubectl rollout status".
    this.command = 'kubectl ' + verb;
    this.pos = pos;
    this.ns = 'default';
    this.nsSet = false;
    if (fs.changed('namespace')) { this.ns = fs.str('namespace'); this.nsSet = true; }
  }

  errorf(msg) { this.stderr.write(`error: ${msg}\n`); return 1; }

  fail(err) {
    if (err instanceof StatusError) { this.stderr.write(err.kubectlMessage() + '\n'); return 1; }
    if (err instanceof NoResources) { this.stderr.write(err.message + '\n'); return 0; }
    if (err instanceof Unreachable) { this.stderr.write(err.message + '\n'); return 1; }
    if (!(err instanceof ToolError) && !(err instanceof Error)) throw err;
    if (err instanceof LabLimit) this.note(err.note, err.params);
    const msg = err.message;
    this.stderr.write((msg.startsWith('error: ') ? msg : 'error: ' + msg) + '\n');
    return 1;
  }

  async do(method, path, { query, body, contentType, accept = 'application/json' } = {}) {
    const headers = { Accept: accept, ...this.commandHeaders() };
    if (contentType) headers['Content-Type'] = contentType;
    let r;
    try {
      r = await this.c.transport.request(method, path, { query, headers, body, userAgent: USER_AGENT });
    } catch (err) {
      throw new Unreachable(`Unable to connect to the server: ${err?.message || err}`);
    }
    if (r.status < 200 || r.status > 299) throw statusFrom(r.status, r.body);
    return r.body;
  }

  // commandHeaders are the headers real kubectl adds to every request:
  // the command, and an ID that ties a session's requests together.
  commandHeaders() { return { 'Kubectl-Command': this.command, 'Kubectl-Session': consoleSession() }; }

  async getObject(path, query) { return JSON.parse(await this.do('GET', path, { query })); }

  // watch opens a watch and calls onEvent(type, object) for each event
  // until the stream ends, onEvent throws, or Ctrl+C.
  watch(path, query, accept, onEvent) {
    return new Promise((resolve, reject) => {
      // A transport may call back before watch() returns (the engine in
      // the page can): finish then cancels once it has the cancel function.
      let done = false;
      let cancel = null;
      const finish = (f) => { if (!done) { done = true; cancel?.(); f(); } };
      cancel = this.c.transport.watch(path, query, (ev) => {
        if (done) return;
        if (ev.type === 'open') {
          if (ev.status !== 200) finish(() => reject(statusFrom(ev.status, ev.body)));
          else this.streaming();
          return;
        }
        if (ev.type === 'end') { finish(() => resolve('ended')); return; }
        if (ev.type !== 'frame') return;
        let e;
        try { e = JSON.parse(ev.data); } catch { return; }
        try {
          if (onEvent(e.type, e.object) === 'stop') finish(() => resolve('stopped'));
        } catch (err) { finish(() => reject(err)); }
      }, { headers: { Accept: accept, ...this.commandHeaders() }, transport: 'http', userAgent: USER_AGENT });
      if (done) cancel();
      this.signal.addEventListener('abort', () => finish(() => resolve('interrupted')), { once: true });
      if (this.signal.aborted) finish(() => resolve('interrupted'));
    });
  }

  // discover reads the session's resource types once per console, as
  // kubectl caches them, and again when a kind or a type the command
  // names is not among them: kubectl's RESTMapper resets its cache on a
  // miss, so a resource a CustomResourceDefinition added since is found.
  // want: { kinds: [[apiVersion, kind]...], types: ["crontabs"...] }.
  async discover(want = {}) {
    const cached = this.c.cache.discovery;
    if (cached && cached.has(want)) return cached;
    const gvs = [...JSON.parse(await this.do('GET', '/api')).versions];
    for (const g of JSON.parse(await this.do('GET', '/apis')).groups || []) gvs.push(g.preferredVersion.groupVersion);
    const resources = [];
    for (const gv of gvs) {
      const path = gv.includes('/') ? '/apis/' + gv : '/api/' + gv;
      const [group, version] = gv.includes('/') ? gv.split('/') : ['', gv];
      for (const r of JSON.parse(await this.do('GET', path)).resources || []) {
        if (r.name.includes('/')) continue;
        resources.push(new Resource({ ...r, group, version }));
      }
    }
    this.c.cache.discovery = new Discovery(resources);
    return this.c.cache.discovery;
  }

  // typeArgs reads TYPE NAME... or TYPE/NAME... arguments.
  typeArgs(d, args) {
    if (!args.length) throw new Error('you must specify the type of resource to get');
    if (args[0].includes('/')) {
      const [t, n] = split2(args[0], '/');
      const r = d.lookup(t);
      const names = [n];
      for (const a of args.slice(1)) {
        if (!a.includes('/')) throw new Error("there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'kubectl get resource/<resource_name>' instead of 'kubectl get resource resource/<resource_name>'");
        const [t2, n2] = split2(a, '/');
        if (d.lookup(t2).name !== r.name) throw new LabLimit('the console handles one resource type per command', 'console.note.kubectlOneType');
        names.push(n2);
      }
      return [r, names];
    }
    if (args[0].includes(',')) throw new LabLimit('the console handles one resource type per command (no TYPE1,TYPE2)', 'console.note.kubectlOneType');
    return [d.lookup(args[0]), args.slice(1)];
  }

  nsFor(r) { return r.namespaced ? this.ns : ''; }

  // wantedTypes is what discover must find for typeArgs: the type of
  // TYPE NAME... or TYPE/NAME....
  wantedTypes() {
    const t = (this.pos[0] || '').split('/')[0];
    return { types: t && !t.includes(',') ? [t] : [] };
  }
}

const split2 = (s, sep) => { const i = s.indexOf(sep); return [s.slice(0, i), s.slice(i + 1)]; };

// Resource is one entry of the session's discovery.
export class Resource {
  constructor(r) {
    this.name = r.name; this.singularName = r.singularName; this.namespaced = r.namespaced; this.kind = r.kind;
    this.shortNames = r.shortNames || []; this.group = r.group; this.version = r.version;
  }
  get groupVersion() { return this.group ? `${this.group}/${this.version}` : this.version; }
  path(ns, name = '', ...sub) {
    let p = this.group ? `/apis/${this.group}/${this.version}` : `/api/${this.version}`;
    if (this.namespaced && ns) p += `/namespaces/${ns}`;
    p += '/' + this.name;
    if (name) p += '/' + name;
    for (const s of sub) p += '/' + s;
    return p;
  }
  // kindName is how kubectl names the type: "configmap", "deployment.apps".
  get kindName() { return this.kind.toLowerCase() + (this.group ? '.' + this.group : ''); }
  get groupResource() { return this.name + (this.group ? '.' + this.group : ''); }
}

class Discovery {
  constructor(resources) { this.resources = resources; }

  // has says whether every kind and type of want resolves.
  has({ kinds = [], types = [] }) {
    try {
      for (const [apiVersion, kind] of kinds) this.byKind(apiVersion, kind);
      for (const t of types) this.lookup(t);
      return true;
    } catch { return false; }
  }

  // lookup resolves a type as kubectl's RESTMapper: plural, singular, short
  // name or kind, optionally with .group or .version.group.
  lookup(arg) {
    const a = arg.toLowerCase();
    let [name, group] = split2(a + '.', '.');
    group = group.replace(/\.$/, '');
    let version = '';
    const m = /^(v\d[^.]*)\.(.*)$/.exec(group);
    if (m) { version = m[1]; group = m[2]; }
    for (const r of this.resources) {
      if (group && r.group !== group) continue;
      if (version && r.version !== version) continue;
      if (r.name === name || r.singularName === name || r.kind.toLowerCase() === name || r.shortNames.includes(name)) return r;
    }
    throw new Error(`the server doesn't have a resource type ${JSON.stringify(arg)}`);
  }

  byKind(apiVersion, kind) {
    const r = this.resources.find((x) => x.groupVersion === apiVersion && x.kind === kind);
    if (r) return r;
    throw new Error(`resource mapping not found for name: "" namespace: "" from "": no matches for kind ${JSON.stringify(kind)} in version ${JSON.stringify(apiVersion)}\nensure CRDs are installed first`);
  }
}

export async function kubectl(p) {
  let cmd = null;
  const probe = new FlagSet('kubectl', globalFlags());
  for (let i = 0; i < p.args.length; i++) {
    const a = p.args[i];
    if (a.startsWith('-')) {
      const name = a.replace(/^-+/, '');
      if (!name.includes('=')) {
        const d = probe.byName.get(name) || (name.length === 1 ? probe.short.get(name) : undefined);
        if (d && d.kind !== 'bool') i++;
      }
      continue;
    }
    cmd = COMMANDS.find((c) => c.name === a);
    if (!cmd) {
      // kubectl's own wording (util.CheckErr): "error:"; gcloud's
      // dispatcher, installed as kubectl, says "Error:" as cobra does.
      p.stderr.write(`error: unknown command ${JSON.stringify(a)} for "kubectl"\n`);
      p.note('console.note.kubectlCommands', { commands: COMMANDS.map((c) => c.name).join(', ') });
      return 1;
    }
    break;
  }
  if (!cmd) {
    p.stdout.write('kubectl controls the Kubernetes cluster manager.\n\nCommands in the lab:\n' + COMMANDS.map((c) => `  ${c.name}\n`).join('') + '\nUsage:\n  kubectl [flags] [options]\n');
    return 0;
  }
  const fs = new FlagSet('kubectl ' + cmd.name, [...globalFlags(), ...cmd.flags()]);
  fs.normalize = (n) => n.replaceAll('_', '-');
  let pos;
  try { pos = fs.parse(p.args); } catch (e) {
    p.stderr.write(`error: ${e.message}\nSee 'kubectl ${cmd.name} --help' for usage.\n`);
    if (cmd.name === 'get' && e.message.includes('resource-version')) {
      p.note('console.note.kubectlGetResourceVersion', { command: "kubectl get --raw '/api/v1/namespaces/default/configmaps?resourceVersion=5&resourceVersionMatch=Exact'" });
    } else p.note('console.note.kubectlFlags', { command: cmd.name, flags: fs.names() });
    return 1;
  }
  for (const n of fs.explanations()) p.note(n);
  const i = pos.indexOf(cmd.name);
  if (i >= 0) pos.splice(i, 1);
  const k = new Run(p, fs, cmd.name, pos);
  const t = fs.str('request-timeout');
  let timer = null;
  if (t && t !== '0') {
    const ms = parseTimeout(t);
    if (ms === null) return k.errorf('invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)');
    if (ms > 0) {
      const ac = new AbortController();
      p.signal.addEventListener('abort', () => ac.abort(), { once: true });
      timer = setTimeout(() => { k.timedOut = true; ac.abort(); }, ms);
      k.signal = ac.signal;
    }
  }
  try {
    return await cmd.run(k);
  } catch (e) {
    if (p.signal.aborted) return 130;
    return k.fail(e);
  } finally {
    if (timer) clearTimeout(timer);
  }
}

// parseTimeout reads "30", "30s", "1m", "2h", "500ms".
export function parseTimeout(s) {
  if (/^\d+$/.test(s)) return Number(s) * 1000;
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(s);
  if (!m) return null;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60000, h: 3600000 }[m[2]];
}

async function kubectlVersion(k) {
  k.stdout.write('Client Version: v1.32.4 (rvplay console)\n');
  if (k.fs.bool('client')) return 0;
  const v = JSON.parse(await k.do('GET', '/version'));
  k.stdout.write(`Server Version: ${v.gitVersion}\n`);
  return 0;
}

async function kubectlAPIResources(k) {
  const d = await k.discover();
  const tw = new TableWriter(k.stdout);
  tw.row(['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
  for (const r of d.resources) tw.row([r.name, r.shortNames.join(','), r.groupVersion, String(r.namespaced), r.kind]);
  tw.flush();
  return 0;
}

// ---- printing ------------------------------------------------------------------------

// TableWriter is kubectl's tabwriter (printers.GetNewTabWriter): cells
// padded to the column's widest cell plus three spaces, at least six wide,
// the last cell of a row not padded, and (RememberWidths) the widths kept
// across flushes, so that the rows a watch prints later line up with the
// header printed first.
export class TableWriter {
  constructor(w) { this.w = w; this.widths = []; this.rows = []; }
  row(cells) { this.rows.push(cells); }
  flush() {
    const len = (s) => [...s].length;
    for (const r of this.rows) {
      r.slice(0, -1).forEach((c, i) => { this.widths[i] = Math.max(this.widths[i] || 0, Math.max(len(c) + 3, 6)); });
    }
    let out = '';
    for (const r of this.rows) out += r.map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(this.widths[i] - len(c)))).join('') + '\n';
    this.rows = [];
    this.w.write(out);
  }
}

const cellString = (c) => (c === null || c === undefined ? '<none>' : typeof c === 'string' ? c : typeof c === 'number' ? resultText(c) : String(c));

export function labelString(labels) {
  const keys = Object.keys(labels || {}).sort();
  return keys.length ? keys.map((k) => `${k}=${labels[k]}`).join(',') : '<none>';
}

// HumanPrinter prints Tables as kubectl's human-readable printer does,
// remembering whether it printed the header.
class HumanPrinter {
  constructor(w, opts) { this.tw = new TableWriter(w); Object.assign(this, opts); this.printedHeader = false; }

  print(t, event = '') {
    const cols = t.columnDefinitions.map((c, i) => [c, i]).filter(([c]) => c.priority === 0 || this.wide).map(([, i]) => i);
    if (!this.printedHeader && !this.noHeaders) {
      const hdr = [];
      if (this.watchEvents) hdr.push('EVENT'.padEnd(8));
      if (this.withNamespace) hdr.push('NAMESPACE');
      for (const i of cols) hdr.push(t.columnDefinitions[i].name.toUpperCase());
      for (const l of this.labelColumns || []) hdr.push(l.slice(l.lastIndexOf('/') + 1).toUpperCase());
      if (this.showLabels) hdr.push('LABELS');
      this.tw.row(hdr);
    }
    this.printedHeader = true;
    for (const row of t.rows || []) {
      const cells = [];
      if (this.watchEvents) cells.push(event.padEnd(8));
      if (this.withNamespace) cells.push(row.object?.metadata?.namespace || '');
      for (const i of cols) {
        let s = cellString(row.cells[i]);
        if (t.columnDefinitions[i].name === 'Name' && this.showKind) s = this.showKind + s;
        cells.push(s);
      }
      const labels = row.object?.metadata?.labels || {};
      for (const l of this.labelColumns || []) cells.push(labels[l] || '');
      if (this.showLabels) cells.push(labelString(labels));
      this.tw.row(cells);
    }
    this.tw.flush();
  }
}

// withoutManagedFields is what kubectl prints unless --show-managed-fields.
export function withoutManagedFields(o) {
  if (!o || typeof o !== 'object') return o;
  if (Array.isArray(o.items)) return { ...o, items: o.items.map(withoutManagedFields) };
  if (!o.metadata || !('managedFields' in o.metadata)) return o;
  const { managedFields, ...md } = o.metadata;
  return { ...o, metadata: md };
}

const ALLOWED = 'custom-columns,custom-columns-file,go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,name,template,templatefile,wide,yaml';

export function parseOutput(o) {
  const i = o.indexOf('=');
  const kind = i < 0 ? o : o.slice(0, i);
  const arg = i < 0 ? '' : o.slice(i + 1);
  if (['', 'wide', 'json', 'yaml', 'name'].includes(kind)) return { kind };
  if (kind === 'jsonpath' || kind === 'custom-columns') {
    if (!arg) throw new Error(kind === 'jsonpath' ? 'template format specified but no template given' : 'custom-columns format specified but no custom columns given');
    return { kind, arg };
  }
  if (ALLOWED.split(',').includes(kind)) {
    throw new LabLimit(`the console does not print -o ${kind}; it prints -o json, yaml, wide, name, jsonpath=TEMPLATE and custom-columns=SPEC`, 'console.note.kubectlOutput', { format: kind });
  }
  throw new Error(`unable to match a printer suitable for the output format ${JSON.stringify(o)}, allowed formats are: ${ALLOWED}`);
}

// relaxedJSONPath is kubectl's RelaxedJSONPathExpression (custom-columns,
// --sort-by): ".a.b", "a.b" or "{.a.b}".
function relaxedJSONPath(expr) {
  if (expr.startsWith('{') && expr.endsWith('}')) return expr;
  if (!expr) throw new Error('jsonpath expression cannot be empty');
  return '{' + (expr.startsWith('.') ? expr : '.' + expr) + '}';
}

// ObjectPrinter prints whole objects: -o json|yaml|name|jsonpath|custom-columns.
export class ObjectPrinter {
  constructor(k, format, r) {
    this.k = k; this.format = format; this.r = r; this.count = 0;
    this.managed = k.fs.bool('show-managed-fields');
    this.watchEvents = false;
    if (format.kind === 'jsonpath') {
      try { this.jp = parseJSONPath(format.arg); } catch (e) { throw new Error(`error parsing jsonpath ${format.arg}, ${e.message}`); }
    }
    if (format.kind === 'custom-columns') {
      this.cc = format.arg.split(',').map((part) => {
        const i = part.indexOf(':');
        if (i < 0) throw new Error(`unexpected custom-columns spec: ${part}, expected <header>:<json-path-expr>`);
        return { header: part.slice(0, i), jp: parseJSONPath(relaxedJSONPath(part.slice(i + 1))) };
      });
      this.tw = new TableWriter(k.stdout);
    }
  }

  print(o) {
    const w = this.k.stdout;
    if (!this.managed && (this.format.kind === 'json' || this.format.kind === 'yaml')) {
      o = this.watchEvents && o.object ? { type: o.type, object: withoutManagedFields(o.object) } : withoutManagedFields(o);
    }
    const isList = (x) => Array.isArray(x?.items) && String(x.kind || '').endsWith('List');
    switch (this.format.kind) {
      case 'json': w.write(goJSON(o, '    ') + '\n'); break;
      case 'yaml': if (this.count) w.write('---\n'); w.write(toYAML(o)); break;
      case 'name': {
        const target = this.watchEvents ? o.object : o;
        for (const it of isList(target) ? target.items : [target]) w.write(`${this.r.kindName}/${it.metadata?.name}\n`);
        break;
      }
      case 'jsonpath': w.write(jsonpathExecute(this.jp, o)); break;
      case 'custom-columns': {
        if (!this.count && !this.k.fs.bool('no-headers')) this.tw.row(this.cc.map((c) => c.header));
        for (const it of isList(o) ? o.items : [o]) {
          this.tw.row(this.cc.map((c) => {
            const vals = jsonpathResults(c.jp, it);
            return vals.length ? vals.map(resultText).join(',') : '<none>';
          }));
        }
        this.tw.flush();
        break;
      }
    }
    this.count++;
  }
}

export const listOf = (items) => ({ apiVersion: 'v1', items, kind: 'List', metadata: { resourceVersion: '' } });

// withTypeMeta sets apiVersion and kind on a list's item, as unstructured
// list decoding does.
export function withTypeMeta(o, r) {
  return { apiVersion: r.groupVersion, kind: r.kind, ...o };
}

// ---- get ----------------------------------------------------------------------------

async function kubectlGet(k) {
  if (k.fs.changed('raw')) return getRaw(k, k.fs.str('raw'));
  let format;
  try { format = parseOutput(k.fs.str('output')); } catch (e) { return k.fail(e); }
  if (k.fs.bool('show-labels') && format.kind !== '' && format.kind !== 'wide') return k.errorf(`--show-labels option cannot be used with ${format.kind} printer`);
  const watching = k.fs.bool('watch') || k.fs.bool('watch-only');
  if (k.fs.bool('output-watch-events') && !watching) return k.errorf("--output-watch-events option can only be used with --watch or --watch-only\nSee 'kubectl get -h' for help and examples");
  if (!k.pos.length) {
    k.stderr.write('You must specify the type of resource to get. Use "kubectl api-resources" for a complete list of supported resources.\n\nerror: Required resource not specified.\nUse "kubectl explain <resource>" for a detailed description of that resource (e.g. kubectl explain pods).\nSee \'kubectl get -h\' for help and examples\n');
    return 1;
  }
  const d = await k.discover(k.wantedTypes());
  const [r, names] = k.typeArgs(d, k.pos);
  const allNs = k.fs.bool('all-namespaces');
  if (allNs && names.length) return k.errorf('a resource cannot be retrieved by name across all namespaces');
  const ns = allNs ? '' : k.nsFor(r);
  if (watching) {
    if (names.length > 1) return k.errorf('watch is only supported on individual resources and resource collections - more than 1 resource was found');
    return watch(k, r, ns, names, format);
  }
  if (format.kind === '' || format.kind === 'wide') return getTable(k, r, ns, names, format.kind === 'wide', allNs && r.namespaced);
  return getObjects(k, r, ns, names, format);
}

function listQuery(k, limit) {
  const q = {};
  if (k.fs.str('selector')) q.labelSelector = k.fs.str('selector');
  if (k.fs.str('field-selector')) q.fieldSelector = k.fs.str('field-selector');
  if (limit && k.fs.int('chunk-size') > 0 && !k.fs.str('sort-by')) q.limit = String(k.fs.int('chunk-size'));
  return q;
}

// rawURI splits a --raw URI into its path and its query.
export function rawURI(raw) {
  const [path, qs] = split2(raw + '?', '?');
  return [path, Object.fromEntries(new URLSearchParams(qs.replace(/\?$/, '')))];
}

async function getRaw(k, raw) {
  if (k.pos.length) return k.errorf('arguments may not be passed when --raw is specified');
  if (k.fs.changed('output')) return k.errorf("--raw and --output are mutually exclusive\nSee 'kubectl get -h' for help and examples");
  if (k.fs.bool('watch') || k.fs.bool('watch-only') || k.fs.str('selector')) return k.errorf('--raw may not be specified with other flags that filter the server request or alter the output');
  if (!raw.startsWith('/')) return k.errorf(`--raw must be a valid URL path: parse ${JSON.stringify(raw)}: invalid URI for request\nSee 'kubectl get -h' for help and examples`);
  const [path, q] = rawURI(raw);
  if (q.watch === 'true' || q.watch === '1') {
    const how = await k.watch(path, q, 'application/json', (type, object) => { k.stdout.write(JSON.stringify({ type, object }) + '\n'); });
    return how === 'interrupted' && !k.timedOut ? 130 : 0;
  }
  k.stdout.write(await k.do('GET', path, { query: q, accept: 'application/json, */*' }));
  return 0;
}

// sortOrder returns the indexes of objs sorted by a --sort-by expression,
// comparing strings naturally as kubectl does ("9" before "23").
function sortOrder(objs, expr) {
  const jp = parseJSONPath(relaxedJSONPath(expr));
  const keys = objs.map((o) => jsonpathResults(jp, o)[0]);
  return objs.map((_, i) => i).sort((a, b) => (lessValue(keys[a], keys[b]) ? -1 : lessValue(keys[b], keys[a]) ? 1 : a - b));
}

function lessValue(a, b) {
  if (typeof a === 'number' && typeof b === 'number') return a < b;
  if (typeof a === 'string' && typeof b === 'string') return naturalLess(a, b);
  return (a === undefined || a === null) && b !== undefined && b !== null;
}

export function naturalLess(a, b) {
  const isD = (c) => c >= '0' && c <= '9';
  while (a && b) {
    if (isD(a[0]) && isD(b[0])) {
      let i = 0, j = 0;
      while (i < a.length && isD(a[i])) i++;
      while (j < b.length && isD(b[j])) j++;
      const x = a.slice(0, i).replace(/^0+/, ''), y = b.slice(0, j).replace(/^0+/, '');
      if (x.length !== y.length) return x.length < y.length;
      if (x !== y) return x < y;
      a = a.slice(i); b = b.slice(j);
      continue;
    }
    if (a[0] !== b[0]) return a[0] < b[0];
    a = a.slice(1); b = b.slice(1);
  }
  return a.length < b.length;
}

async function getTable(k, r, ns, names, wide, withNs) {
  const hp = new HumanPrinter(k.stdout, { wide, withNamespace: withNs, showLabels: k.fs.bool('show-labels'), noHeaders: k.fs.bool('no-headers'),
    labelColumns: k.fs.strs('label-columns'), showKind: k.fs.bool('show-kind') ? r.kindName + '/' : '' });
  let status = 0;
  if (names.length) {
    for (const n of names) {
      try {
        hp.print(JSON.parse(await k.do('GET', r.path(ns, n), { accept: TABLE_ACCEPT })));
      } catch (e) {
        if (isNotFound(e) && k.fs.bool('ignore-not-found')) continue;
        if (!(e instanceof StatusError)) throw e;
        k.fail(e);
        status = 1;
      }
    }
    return status;
  }
  const q = listQuery(k, true);
  if (k.fs.str('sort-by')) q.includeObject = 'Object';
  const all = { columnDefinitions: [], rows: [] };
  for (;;) {
    const t = JSON.parse(await k.do('GET', r.path(ns), { query: q, accept: TABLE_ACCEPT }));
    all.columnDefinitions = t.columnDefinitions;
    all.rows.push(...(t.rows || []));
    if (!t.metadata?.continue) break;
    q.continue = t.metadata.continue;
  }
  if (k.fs.str('sort-by') && all.rows.length) {
    const order = sortOrder(all.rows.map((row) => row.object), k.fs.str('sort-by'));
    all.rows = order.map((i) => all.rows[i]);
  }
  if (all.rows.length) hp.print(all);
  else if (!k.fs.bool('ignore-not-found')) k.stderr.write(ns ? `No resources found in ${ns} namespace.\n` : 'No resources found\n');
  return status;
}

async function getObjects(k, r, ns, names, format) {
  let p;
  try { p = new ObjectPrinter(k, format, r); } catch (e) { return k.errorf(e.message); }
  let status = 0;
  let items = [];
  if (names.length) {
    for (const n of names) {
      try { items.push(await k.getObject(r.path(ns, n))); } catch (e) {
        if (isNotFound(e) && k.fs.bool('ignore-not-found')) continue;
        if (!(e instanceof StatusError)) throw e;
        k.fail(e);
        status = 1;
      }
    }
    if (names.length === 1) {
      if (items.length) p.print(items[0]);
      return status;
    }
  } else {
    const q = listQuery(k, true);
    for (;;) {
      const l = await k.getObject(r.path(ns), q);
      items.push(...(l.items || []).map((it) => withTypeMeta(it, r)));
      if (!l.metadata?.continue) break;
      q.continue = l.metadata.continue;
    }
    if (k.fs.str('sort-by')) items = sortOrder(items, k.fs.str('sort-by')).map((i) => items[i]);
  }
  if (format.kind === 'name' && !items.length) return status;
  p.print(listOf(items));
  return status;
}

// watch is kubectl get -w / --watch-only.
async function watch(k, r, ns, names, format) {
  const human = format.kind === '' || format.kind === 'wide';
  const events = k.fs.bool('output-watch-events');
  const accept = human ? TABLE_ACCEPT : 'application/json';
  let hp, op;
  if (human) {
    hp = new HumanPrinter(k.stdout, { wide: format.kind === 'wide', withNamespace: !ns && r.namespaced, showLabels: k.fs.bool('show-labels'),
      noHeaders: k.fs.bool('no-headers'), watchEvents: events, labelColumns: k.fs.strs('label-columns') });
  } else {
    try { op = new ObjectPrinter(k, format, r); } catch (e) { return k.errorf(e.message); }
    op.watchEvents = events;
  }
  const printOne = (type, o) => {
    if (human) hp.print(o, type);
    else op.print(events ? { type, object: o } : o);
  };
  const q = listQuery(k, false);
  let rv = '0';
  let initial = [];
  if (names.length === 1) {
    initial = [JSON.parse(await k.do('GET', r.path(ns, names[0]), { accept }))];
    q.fieldSelector = 'metadata.name=' + names[0];
  } else {
    const l = JSON.parse(await k.do('GET', r.path(ns), { query: listQuery(k, true), accept }));
    rv = l.metadata?.resourceVersion || '0';
    initial = human ? (l.rows || []).map((row) => ({ columnDefinitions: l.columnDefinitions, rows: [row] }))
      : (l.items || []).map((it) => withTypeMeta(it, r));
  }
  if (!k.fs.bool('watch-only')) for (const o of initial) printOne('ADDED', o);
  // A watch of one object starts at resourceVersion 0, whose first event
  // is a synthetic ADDED of the object just printed: kubectl skips it.
  let skip = names.length === 1;
  const how = await k.watch(r.path(ns), { ...q, resourceVersion: rv, watch: 'true' }, accept, (type, o) => {
    if (skip) { skip = false; return undefined; }
    if (type === 'ERROR') throw statusFrom(o?.code || 500, JSON.stringify(o));
    if (type === 'BOOKMARK') return undefined;
    printOne(type, o);
    return undefined;
  });
  return how === 'interrupted' && !k.timedOut ? 130 : 0;
}
