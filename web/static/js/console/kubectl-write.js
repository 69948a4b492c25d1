// kubectl's writes: create (-f, configmap, secret, deployment, namespace),
// apply (client-side, with kubectl's three-way patch and its retries, and
// --server-side), replace, patch, scale (with its preconditions), edit
// (the lab's editor), label and annotate, delete, and rollout status.

import { readAll } from './streams.js';
import { fromYAML, splitDocuments, toYAML } from './yaml.js';
import { goJSON } from './jsonpath.js';
import { PatchSchema, threeWayPatch, twoWayPatch, deepEqual } from './patchgen.js';
import { outputFlags, parseOutput, ObjectPrinter, StatusError, ToolError, withSource, rawURI, isNotFound, parseTimeout, statusFrom, USER_AGENT } from './kubectl.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

const filenameFlags = () => [{ name: 'filename', short: 'f', kind: 'stringArray' }, { name: 'recursive', short: 'R', kind: 'bool' }, { name: 'kustomize', short: 'k', kind: 'string' }];
const writeFlags = (manager) => [...outputFlags(), ...filenameFlags(),
  { name: 'dry-run', kind: 'string', def: 'none', noOpt: 'unchanged' }, { name: 'field-manager', kind: 'string', def: manager },
  { name: 'validate', kind: 'string', def: 'strict', noOpt: 'strict' }, { name: 'save-config', kind: 'bool' }];

export function writeCmdFlags(cmd) {
  switch (cmd) {
    case 'create': return [...writeFlags('kubectl-create'), { name: 'from-literal', kind: 'stringArray' }, { name: 'from-file', kind: 'stringArray' },
      { name: 'image', kind: 'stringArray' }, { name: 'replicas', short: 'r', kind: 'int', def: '1' }, { name: 'port', kind: 'int', def: '-1' },
      { name: 'edit', kind: 'bool' }, { name: 'windows-line-endings', kind: 'bool' }];
    case 'apply': return [...writeFlags('kubectl-client-side-apply'), { name: 'server-side', kind: 'bool' }, { name: 'force-conflicts', kind: 'bool' },
      { name: 'force', kind: 'bool' }, { name: 'overwrite', kind: 'bool', def: 'true' }, { name: 'prune', kind: 'bool' },
      { name: 'selector', short: 'l', kind: 'string' }, { name: 'wait', kind: 'bool' }];
    case 'replace': return [...writeFlags('kubectl-replace'), { name: 'force', kind: 'bool' }, { name: 'subresource', kind: 'string' }, { name: 'raw', kind: 'string' }];
    case 'patch': return [...writeFlags('kubectl-patch'), { name: 'patch', short: 'p', kind: 'string' }, { name: 'patch-file', kind: 'string' },
      { name: 'type', kind: 'string', def: 'strategic' }, { name: 'local', kind: 'bool' }, { name: 'subresource', kind: 'string' }];
    case 'scale': return [...outputFlags(), ...filenameFlags(), { name: 'replicas', kind: 'int', def: '-1' }, { name: 'current-replicas', kind: 'int', def: '-1' },
      { name: 'resource-version', kind: 'string' }, { name: 'timeout', kind: 'string', def: '0s' }, { name: 'dry-run', kind: 'string', def: 'none', noOpt: 'unchanged' },
      { name: 'selector', short: 'l', kind: 'string' }, { name: 'all', kind: 'bool' }];
    case 'edit': return [...writeFlags('kubectl-edit'), { name: 'windows-line-endings', kind: 'bool' }, { name: 'subresource', kind: 'string' }];
    case 'label': case 'annotate': return [...outputFlags(), ...filenameFlags(), { name: 'overwrite', kind: 'bool' }, { name: 'resource-version', kind: 'string' },
      { name: 'all', kind: 'bool' }, { name: 'selector', short: 'l', kind: 'string' }, { name: 'list', kind: 'bool' }, { name: 'local', kind: 'bool' },
      { name: 'dry-run', kind: 'string', def: 'none', noOpt: 'unchanged' }, { name: 'field-manager', kind: 'string', def: 'kubectl-' + cmd }];
    case 'delete': return [...filenameFlags(), { name: 'output', short: 'o', kind: 'string' }, { name: 'selector', short: 'l', kind: 'string' },
      { name: 'field-selector', kind: 'string' }, { name: 'all', kind: 'bool' }, { name: 'all-namespaces', short: 'A', kind: 'bool' },
      { name: 'ignore-not-found', kind: 'bool' }, { name: 'now', kind: 'bool' }, { name: 'force', kind: 'bool' }, { name: 'grace-period', kind: 'int', def: '-1' },
      { name: 'wait', kind: 'bool', def: 'true' }, { name: 'cascade', kind: 'string', def: 'background', noOpt: 'background' },
      { name: 'dry-run', kind: 'string', def: 'none', noOpt: 'unchanged' }, { name: 'timeout', kind: 'string', def: '0s' }, { name: 'interactive', short: 'i', kind: 'bool' }];
    case 'rollout': return [...filenameFlags(), { name: 'watch', short: 'w', kind: 'bool', def: 'true' }, { name: 'timeout', kind: 'string', def: '0s' },
      { name: 'revision', kind: 'int' }, { name: 'selector', short: 'l', kind: 'string' }];
  }
  return [];
}

const dryRunClient = (k) => ['client', 'unchanged'].includes(k.fs.str('dry-run'));
const dryRunSuffix = (k) => ({ client: ' (dry run)', unchanged: ' (dry run)', server: ' (server dry run)' }[k.fs.str('dry-run')] || '');

function writeQuery(k) {
  const q = {};
  if (k.fs.str('field-manager')) q.fieldManager = k.fs.str('field-manager');
  const v = k.fs.str('validate');
  if (v === 'strict' || v === 'true') q.fieldValidation = 'Strict';
  else if (v === 'warn') q.fieldValidation = 'Warn';
  else if (v === 'ignore' || v === 'false') q.fieldValidation = 'Ignore';
  if (k.fs.str('dry-run') === 'server') q.dryRun = 'All';
  return q;
}

// printResult prints what a write did ("configmap/demo created"), or the
// object with -o.
function printResult(k, r, o, name, operation) {
  const f = parseOutput(k.fs.str('output'));
  if (f.kind === '' || f.kind === 'wide') { k.stdout.write(`${r.kindName}/${name} ${operation}${dryRunSuffix(k)}\n`); return; }
  if (f.kind === 'name') { k.stdout.write(`${r.kindName}/${name}\n`); return; }
  new ObjectPrinter(k, f, r).print(o);
}

// decodeManifests reads YAML or JSON documents and expands kind: List.
function decodeManifests(text, source) {
  const out = [];
  for (const doc of splitDocuments(text)) {
    if (!doc.split('\n').some((l) => l.trim() && !l.trim().startsWith('#'))) continue;
    let o;
    try { o = fromYAML(doc); } catch (e) { throw new Error(`error parsing ${source}: error converting YAML to JSON: ${e.message.split('\n')[0]}`); }
    if (o === null || o === undefined) continue;
    if (typeof o !== 'object' || Array.isArray(o)) throw new Error(`error parsing ${source}: expected a JSON object`);
    if (String(o.kind || '').endsWith('List') && Array.isArray(o.items)) { for (const it of o.items) out.push({ obj: it, source }); continue; }
    if (!o.kind) throw new Error(`unable to decode ${JSON.stringify(source)}: Object 'Kind' is missing in '${JSON.stringify(o)}'`);
    out.push({ obj: o, source });
  }
  return out;
}

// readManifests reads every -f: a console file, a URL (through fetch), or
// "-" (a heredoc, else the lab's editor).
async function readManifests(k) {
  const out = [];
  for (const f of k.fs.strs('filename')) {
    const [text, source] = await readFilename(k, f);
    out.push(...decodeManifests(text, source));
  }
  if (!out.length) throw new Error(`no objects passed to ${k.verb}`);
  return out;
}

// readFilename reads one -f argument: a console file, a URL, or - (the
// command's heredoc, else the lab's editor); it answers the text and the
// source kubectl names in its errors.
async function readFilename(k, f) {
  if (f === '-') {
    if (k.stdin) return [await readAll(k.stdin), 'STDIN'];
    if (!k.c.editor) throw new Error(`no objects passed to ${k.verb} (-f - reads a heredoc, and this console has no editor)`);
    const text = await k.c.editor.text();
    k.note('console.note.kubectlEditorRead');
    return [text, 'STDIN'];
  }
  if (/^https?:\/\//.test(f)) {
    try {
      return [k.c.fetch ? await k.c.fetch(f) : await fetchURL(f), f];
    } catch (e) {
      k.note('console.note.kubectlURL');
      throw new Error(`unable to read URL ${JSON.stringify(f)}, server reported ${e.message}`);
    }
  }
  const text = k.c.readFile(f);
  if (text === null) {
    k.note('console.note.kubectlFiles');
    throw new Error(`the path ${JSON.stringify(f)} does not exist`);
  }
  return [text, f];
}

async function fetchURL(url) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${r.status} ${r.statusText}, status code=${r.status}`);
  return r.text();
}

// target resolves a manifest's resource and namespace; kubectl's resource
// builder puts the namespace into a namespaced object that has none.
function target(k, d, m) {
  const r = d.byKind(m.obj.apiVersion, m.obj.kind);
  let ns = '';
  if (r.namespaced) {
    m.obj.metadata = m.obj.metadata || {};
    ns = m.obj.metadata.namespace || '';
    if (!ns) { ns = k.ns; m.obj.metadata.namespace = ns; } else if (k.nsSet && ns !== k.ns) {
      throw new ToolError(`the namespace from the provided object ${JSON.stringify(ns)} does not match the namespace ${JSON.stringify(k.ns)}. You must pass '--namespace=${ns}' to perform this operation.`);
    }
  }
  return [r, ns];
}

// wantedKinds is what discover must find for manifests.
const wantedKinds = (ms) => ({ kinds: ms.map((m) => [m.obj.apiVersion, m.obj.kind]) });

async function forEachManifest(k, fn) {
  const ms = await readManifests(k);
  const d = await k.discover(wantedKinds(ms));
  let status = 0;
  for (const m of ms) {
    try { await fn(d, m); } catch (e) { if (k.signal.aborted) return 130; k.fail(e); status = 1; }
  }
  return status;
}

// targets resolves TYPE NAME..., TYPE/NAME... or -f into the objects a
// command acts on.
export async function targets(k, needNames = true) {
  if (k.fs.strs('filename').length) {
    const ms = await readManifests(k);
    const d = await k.discover(wantedKinds(ms));
    return ms.map((m) => { const [r, ns] = target(k, d, m); return { r, ns, name: m.obj.metadata?.name, source: m.source, file: m.obj }; });
  }
  if (!k.pos.length) throw new Error('you must specify the type of resource');
  const d = await k.discover(k.wantedTypes());
  const [r, names] = k.typeArgs(d, k.pos);
  if (!names.length && needNames) throw new Error('resource(s) were provided, but no name was specified');
  return names.map((name) => ({ r, ns: k.nsFor(r), name }));
}

async function create(k, r, ns, o, source) {
  if (dryRunClient(k)) return printResult(k, r, o, o.metadata?.name, 'created');
  let data;
  try { data = await k.do('POST', r.path(ns), { query: writeQuery(k), body: JSON.stringify(o), contentType: 'application/json' }); } catch (e) {
    throw source ? withSource(e, 'creating', source) : e;
  }
  const created = JSON.parse(data);
  return printResult(k, r, created, created.metadata.name, 'created');
}

// generated is how kubectl create's generators report a failed create.
async function generated(k, what, fn) {
  try { await fn(); return 0; } catch (e) { return k.fail(new Error(`failed to create ${what}: ${e.message}`)); }
}

export async function kubectlCreate(k) {
  if (k.fs.strs('filename').length) {
    return forEachManifest(k, (d, m) => {
      const [r, ns] = target(k, d, m);
      if (k.fs.bool('save-config')) setLastApplied(m.obj);
      return create(k, r, ns, m.obj, m.source);
    });
  }
  if (!k.pos.length) return k.errorf('must specify one of -f and -k');
  const [what, ...args] = k.pos;
  const d = await k.discover();
  const one = (help) => {
    if (args.length !== 1) { k.errorf(`exactly one NAME is required, got ${args.length}\nSee 'kubectl create ${help} -h' for help and examples`); return false; }
    return true;
  };
  const literals = () => {
    const data = {};
    for (const lit of k.fs.strs('from-literal')) {
      const i = lit.indexOf('=');
      if (i <= 0) throw new ToolError(`invalid literal source ${lit}, expected key=value`);
      data[lit.slice(0, i)] = lit.slice(i + 1);
    }
    return data;
  };
  switch (what) {
    case 'configmap': case 'cm': {
      if (!one('configmap')) return 1;
      let data;
      try { data = literals(); } catch (e) { return k.fail(e); }
      for (const f of k.fs.strs('from-file')) {
        const i = f.indexOf('=');
        const [key, name] = i >= 0 ? [f.slice(0, i), f.slice(i + 1)] : [f.slice(f.lastIndexOf('/') + 1), f];
        const text = k.c.readFile(name);
        if (text === null) return k.errorf(`error reading ${name}: no such file or directory`);
        data[key] = text;
      }
      const o = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: args[0] } };
      if (Object.keys(data).length) o.data = data;
      if (k.nsSet) o.metadata.namespace = k.ns;
      return generated(k, 'configmap', () => create(k, d.lookup('configmaps'), k.ns, o, ''));
    }
    case 'secret': {
      if (args[0] !== 'generic') {
        k.note('console.note.kubectlSecret');
        return k.errorf(`unknown command ${JSON.stringify(args[0] || '')} for "kubectl create secret"`);
      }
      args.shift();
      if (!one('secret generic')) return 1;
      let data;
      try { data = literals(); } catch (e) { return k.fail(e); }
      for (const key of Object.keys(data)) data[key] = btoa(String.fromCharCode(...new TextEncoder().encode(data[key])));
      const o = { apiVersion: 'v1', kind: 'Secret', metadata: { name: args[0] }, type: 'Opaque' };
      if (Object.keys(data).length) o.data = data;
      return generated(k, 'secret', () => create(k, d.lookup('secrets'), k.ns, o, ''));
    }
    case 'deployment': case 'deploy': {
      if (!one('deployment')) return 1;
      const images = k.fs.strs('image');
      if (!images.length) return k.errorf('required flag(s) "image" not set');
      const name = args[0];
      const seen = new Map();
      const containers = images.map((img) => {
        let n = img.slice(img.lastIndexOf('/') + 1).split(/[:@]/)[0].replaceAll('_', '-');
        const c = seen.get(n) || 0;
        seen.set(n, c + 1);
        if (c) n = `${n}-${c}`;
        const ct = { image: img, name: n, resources: {} };
        if (k.fs.int('port') >= 0) ct.ports = [{ containerPort: k.fs.int('port') }];
        return ct;
      });
      const o = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { labels: { app: name }, name },
        spec: { replicas: k.fs.int('replicas'), selector: { matchLabels: { app: name } }, strategy: {},
          template: { metadata: { labels: { app: name } }, spec: { containers } } }, status: {} };
      return generated(k, 'deployment', () => create(k, d.lookup('deployments.apps'), k.ns, o, ''));
    }
    case 'namespace': case 'ns':
      if (!one('namespace')) return 1;
      return generated(k, 'namespace', () => create(k, d.lookup('namespaces'), '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: args[0] }, spec: {}, status: {} }, ''));
  }
  k.note('console.note.kubectlCreate');
  return k.errorf(`unknown command ${JSON.stringify(what)} for "kubectl create"`);
}

// kubectlReplace is kubectl replace: each object is PUT as resource.Helper's
// Replace does it (overwrite): an object without a resourceVersion gets the
// live object's first, read with a GET (sent as it is if that GET fails),
// so the PUT is conditional on what was just read. --raw PUTs the file's
// bytes as they are to a URI of the session's own API.
export async function kubectlReplace(k) {
  if (!k.fs.strs('filename').length) return k.errorf('must specify --filename to replace');
  if (k.fs.changed('raw')) return replaceRaw(k, k.fs.str('raw'));
  const sub = k.fs.str('subresource') ? [k.fs.str('subresource')] : [];
  return forEachManifest(k, async (d, m) => {
    const [r, ns] = target(k, d, m);
    const name = m.obj.metadata?.name;
    if (!name) throw new Error('name is required to replace an object');
    if (k.fs.bool('force')) k.note('console.note.kubectlReplaceForce');
    if (dryRunClient(k)) return printResult(k, r, m.obj, name, 'replaced');
    let data;
    try {
      if (!m.obj.metadata.resourceVersion) {
        const live = await k.getObject(r.path(ns, name, ...sub)).catch(() => null);
        if (live?.metadata?.resourceVersion) m.obj.metadata.resourceVersion = live.metadata.resourceVersion;
      }
      data = await k.do('PUT', r.path(ns, name, ...sub), { query: writeQuery(k), body: JSON.stringify(m.obj), contentType: 'application/json' });
    } catch (e) {
      throw withSource(e, 'replacing', m.source);
    }
    return printResult(k, r, JSON.parse(data), name, 'replaced');
  });
}

// replaceRaw is kubectl replace --raw (rawhttp.RawPut): the one file's
// bytes, unparsed and without a Content-Type, PUT to the URI; the answer's
// body is printed as it came.
async function replaceRaw(k, raw) {
  const files = k.fs.strs('filename');
  if (files.length !== 1) return k.errorf('--raw can only use a single local file or stdin');
  if (/^https?:\/\//.test(files[0])) return k.errorf('--raw cannot read from a url');
  if (k.fs.bool('recursive')) return k.errorf('--raw and --recursive are mutually exclusive');
  if (k.fs.str('output')) return k.errorf('--raw and --output are mutually exclusive');
  if (!raw.startsWith('/')) return k.errorf(`--raw must be a valid URL path: parse ${JSON.stringify(raw)}: invalid URI for request`);
  try {
    const [body] = await readFilename(k, files[0]);
    const [path, query] = rawURI(raw);
    k.stdout.write(await k.do('PUT', path, { query, body, accept: 'application/json, */*' }));
    return 0;
  } catch (e) { return k.fail(e); }
}


// toJSON is apimachinery's yaml.ToJSON: text that looks like JSON is sent
// as it is (the server says what is wrong with it), anything else is YAML.
function toJSON(s) {
  const t = s.trim();
  if (t.startsWith('{') || t.startsWith('[')) return s;
  return JSON.stringify(fromYAML(s));
}

export async function kubectlPatch(k) {
  let patch = k.fs.str('patch');
  if (k.fs.str('patch-file')) {
    patch = k.c.readFile(k.fs.str('patch-file'));
    if (patch === null) return k.errorf(`unable to read patch file: open ${k.fs.str('patch-file')}: no such file or directory`);
  }
  if (!patch) return k.errorf('must specify -p to patch');
  let body;
  try { body = toJSON(patch); } catch (e) { return k.errorf(`unable to parse ${JSON.stringify(patch)}: ${e.message.split('\n')[0]}`); }
  const ct = { strategic: 'application/strategic-merge-patch+json', merge: 'application/merge-patch+json', json: 'application/json-patch+json' }[k.fs.str('type').toLowerCase()];
  if (!ct) return k.errorf(`--type must be one of [json merge strategic], not ${JSON.stringify(k.fs.str('type'))}`);
  const ts = await targets(k);
  let status = 0;
  for (const t of ts) {
    const sub = k.fs.str('subresource') ? [k.fs.str('subresource')] : [];
    try {
      const live = await k.getObject(t.r.path(t.ns, t.name, ...sub));
      const q = { fieldManager: k.fs.str('field-manager') };
      if (k.fs.str('dry-run') === 'server') q.dryRun = 'All';
      const patched = JSON.parse(await k.do('PATCH', t.r.path(t.ns, t.name, ...sub), { query: q, body, contentType: ct }));
      printResult(k, t.r, patched, t.name, deepEqual(live, patched) ? 'patched (no change)' : 'patched');
    } catch (e) { if (!(e instanceof StatusError)) throw e; k.fail(e); status = 1; }
  }
  return status;
}

export async function kubectlScale(k) {
  const replicas = k.fs.int('replicas');
  if (replicas < 0) {
    if (!k.fs.changed('replicas')) return k.errorf('required flag(s) "replicas" not set');
    return k.errorf('The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0');
  }
  const ts = await targets(k);
  let status = 0;
  for (const t of ts) {
    try {
      await k.getObject(t.r.path(t.ns, t.name));
      await scale(k, t, replicas);
      k.stdout.write(`${t.r.kindName}/${t.name} scaled${dryRunSuffix(k)}\n`);
    } catch (e) { if (!(e instanceof StatusError) && !(e instanceof ToolError)) throw e; k.fail(e); status = 1; }
  }
  return status;
}

// scale is kubectl's ScaleSimple in its retry loop: with a precondition it
// reads the scale subresource, checks it and writes it back (retrying a
// conflict); without, it patches spec.replicas.
async function scale(k, t, replicas) {
  const path = t.r.path(t.ns, t.name, 'scale');
  const current = k.fs.int('current-replicas'), rv = k.fs.str('resource-version');
  if (current < 0 && !rv) {
    if (dryRunClient(k)) return;
    await k.do('PATCH', path, { body: JSON.stringify({ spec: { replicas } }), contentType: 'application/merge-patch+json' });
    return;
  }
  for (let attempt = 0; ; attempt++) {
    const sc = await k.getObject(path);
    const have = sc.spec?.replicas ?? 0;
    if (current >= 0 && current !== have) throw new ToolError(`Expected replicas to be ${current}, was ${have}`);
    if (rv && rv !== sc.metadata?.resourceVersion) throw new ToolError(`Expected resource version to be ${rv}, was ${sc.metadata?.resourceVersion}`);
    if (dryRunClient(k)) return;
    sc.spec = { ...sc.spec, replicas };
    try {
      await k.do('PUT', path, { body: JSON.stringify(sc), contentType: 'application/json' });
      return;
    } catch (e) {
      if (!(e instanceof StatusError) || e.code !== 409 || attempt >= 5) throw e;
      await k.c.sleep(1000, k.signal);
    }
  }
}

export async function kubectlDelete(k) {
  let ts = [];
  if (k.fs.strs('filename').length) ts = await targets(k);
  else {
    if (!k.pos.length) return k.errorf("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'");
    const d = await k.discover(k.wantedTypes());
    const [r, names] = k.typeArgs(d, k.pos);
    const sel = k.fs.str('selector');
    if (!names.length) {
      if (!k.fs.bool('all') && !sel && !k.fs.str('field-selector')) return k.errorf('resource(s) were provided, but no name was specified');
      const ns = k.fs.bool('all-namespaces') ? '' : k.nsFor(r);
      const q = {};
      if (sel) q.labelSelector = sel;
      if (k.fs.str('field-selector')) q.fieldSelector = k.fs.str('field-selector');
      const l = await k.getObject(r.path(ns), q);
      ts = (l.items || []).map((it) => ({ r, ns: it.metadata.namespace || '', name: it.metadata.name }));
      if (!ts.length) { k.stderr.write(ns ? `No resources found in ${ns} namespace.\n` : 'No resources found\n'); return 0; }
    } else ts = names.map((name) => ({ r, ns: k.nsFor(r), name }));
  }
  let status = 0;
  for (const t of ts) {
    if (dryRunClient(k)) { k.stdout.write(`${t.r.kindName} ${JSON.stringify(t.name)} deleted (dry run)\n`); continue; }
    const opts = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background' };
    if (k.fs.bool('now')) opts.gracePeriodSeconds = 1;
    if (k.fs.int('grace-period') >= 0) opts.gracePeriodSeconds = k.fs.int('grace-period');
    const cascade = k.fs.str('cascade');
    if (cascade === 'foreground') opts.propagationPolicy = 'Foreground';
    else if (cascade === 'orphan' || cascade === 'false') opts.propagationPolicy = 'Orphan';
    try {
      await k.do('DELETE', t.r.path(t.ns, t.name), { query: k.fs.str('dry-run') === 'server' ? { dryRun: 'All' } : undefined, body: JSON.stringify(opts), contentType: 'application/json' });
    } catch (e) {
      if (isNotFound(e) && k.fs.bool('ignore-not-found')) continue;
      if (!(e instanceof StatusError)) throw e;
      k.fail(t.source ? withSource(e, 'deleting', t.source) : e);
      status = 1;
      continue;
    }
    if (k.fs.str('output') === 'name') k.stdout.write(`${t.r.kindName}/${t.name}\n`);
    else k.stdout.write(`${t.r.kindName} ${JSON.stringify(t.name)} deleted${dryRunSuffix(k)}\n`);
  }
  return status;
}

// setLastApplied records the object as its own last applied configuration,
// as kubectl's GetModifiedConfiguration does (leaving an annotations map,
// empty or not).
function setLastApplied(o) {
  o.metadata = o.metadata || {};
  o.metadata.annotations = o.metadata.annotations || {};
  delete o.metadata.annotations[LAST_APPLIED];
  o.metadata.annotations[LAST_APPLIED] = goJSON(o) + '\n';
}

export async function kubectlApply(k) {
  if (!k.fs.strs('filename').length) return k.errorf('must specify one of -f and -k');
  if (k.fs.bool('server-side')) {
    if (!k.fs.changed('field-manager')) k.fs.values.set('field-manager', ['kubectl']);
    return forEachManifest(k, (d, m) => { const [r, ns] = target(k, d, m); return serverSideApply(k, r, ns, m); });
  }
  if (k.fs.bool('force-conflicts')) return k.errorf('--force-conflicts only works with --server-side');
  return forEachManifest(k, (d, m) => { const [r, ns] = target(k, d, m); return clientSideApply(k, r, ns, m); });
}

async function serverSideApply(k, r, ns, m) {
  const q = { fieldManager: k.fs.str('field-manager') };
  if (k.fs.bool('force-conflicts')) q.force = 'true';
  if (k.fs.str('dry-run') === 'server') q.dryRun = 'All';
  const name = m.obj.metadata?.name;
  let data;
  try { data = await k.do('PATCH', r.path(ns, name), { query: q, body: JSON.stringify(m.obj), contentType: 'application/apply-patch+yaml' }); } catch (e) {
    if (e instanceof StatusError && e.code === 409) throw new Error(applyConflictMessage(e.message));
    throw withSource(e, 'applying patch', m.source);
  }
  printResult(k, r, JSON.parse(data), name, 'serverside-applied');
}

// applyConflictMessage is kubectl's advice after a server-side apply conflict.
const applyConflictMessage = (msg) => `${msg}
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the \`--force-conflicts\` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts`;

// schemaFor reads the OpenAPI v3 document of r's group-version (once per
// console) and finds r's kind.
async function schemaFor(k, r) {
  const path = r.group ? `/openapi/v3/apis/${r.groupVersion}` : `/openapi/v3/api/${r.version}`;
  let doc = k.c.cache.openapi.get(path);
  if (!doc) {
    try { doc = JSON.parse(await k.do('GET', path)).components?.schemas || {}; } catch { return null; }
    k.c.cache.openapi.set(path, doc);
  }
  for (const s of Object.values(doc)) {
    for (const g of s['x-kubernetes-group-version-kind'] || []) {
      if (g.group === r.group && g.version === r.version && g.kind === r.kind) return new PatchSchema(doc, s);
    }
  }
  return null;
}

const describeTarget = (r, name, ns) => `Resource: ${JSON.stringify(`${r.groupVersion}, Resource=${r.name}`)}, GroupVersionKind: ${JSON.stringify(`${r.groupVersion}, Kind=${r.kind}`)}\nName: ${JSON.stringify(name)}, Namespace: ${JSON.stringify(ns)}`;

async function clientSideApply(k, r, ns, m) {
  const name = m.obj.metadata?.name;
  const modified = structuredClone(m.obj);
  setLastApplied(modified);
  let live;
  try { live = await k.getObject(r.path(ns, name)); } catch (e) {
    if (!isNotFound(e)) throw withSource(e, `retrieving current configuration of:\n${describeTarget(r, name, ns)}\nfrom server for`, m.source);
    if (dryRunClient(k)) return printResult(k, r, modified, name, 'created');
    let data;
    try { data = await k.do('POST', r.path(ns), { query: writeQuery(k), body: JSON.stringify(modified), contentType: 'application/json' }); } catch (err) {
      throw withSource(err, 'creating', m.source);
    }
    return printResult(k, r, JSON.parse(data), name, 'created');
  }
  const schema = await schemaFor(k, r);
  for (let attempt = 1; ; attempt++) {
    let original = {};
    const la = live.metadata?.annotations?.[LAST_APPLIED];
    if (la) original = JSON.parse(la);
    else if (attempt === 1) {
      k.stderr.write(`Warning: resource ${r.name}/${name} is missing the ${LAST_APPLIED} annotation which is required by kubectl apply. kubectl apply should only be used on resources created declaratively by either kubectl create --save-config or kubectl apply. The missing annotation will be patched automatically.\n`);
    }
    const patch = threeWayPatch(original, modified, live, schema);
    if (!Object.keys(patch).length) return printResult(k, r, live, name, 'unchanged');
    if (dryRunClient(k)) return printResult(k, r, live, name, 'configured');
    const body = goJSON(patch);
    try {
      const data = await k.do('PATCH', r.path(ns, name), { query: writeQuery(k), body, contentType: 'application/strategic-merge-patch+json' });
      return printResult(k, r, JSON.parse(data), name, 'configured');
    } catch (e) {
      if (e instanceof StatusError && e.code === 409 && attempt < 5) {
        // kubectl re-reads the object and tries again, pausing a second
        // before every try after the second.
        if (attempt > 1) await k.c.sleep(1000, k.signal);
        live = await k.getObject(r.path(ns, name));
        continue;
      }
      throw withSource(withSource(e, 'patching', m.source), `applying patch:\n${body}\nto:\n${describeTarget(r, name, ns)}\nfor:`, m.source);
    }
  }
}

const EDIT_HEADER = `# Please edit the object below. Lines beginning with a '#' will be ignored,
# and an empty file will abort the edit. If an error occurs while saving this file will be
# reopened with the relevant failures.
#
`;

const stripComments = (s) => s.split(/(?<=\n)/).filter((l) => !l.trim().startsWith('#')).join('');

export async function kubectlEdit(k) {
  if (!k.c.editor) return k.errorf("kubectl edit opens the lab's editor, and this console has none");
  const ts = await targets(k);
  let status = 0;
  for (const t of ts) {
    let live;
    try { live = await k.getObject(t.r.path(t.ns, t.name)); } catch (e) { if (!(e instanceof StatusError)) throw e; k.fail(e); status = 1; continue; }
    let shown = live;
    if (!k.fs.bool('show-managed-fields') && live.metadata && 'managedFields' in live.metadata) {
      const { managedFields, ...md } = live.metadata;
      shown = { ...live, metadata: md };
    }
    const text = k.fs.str('output') === 'json' ? goJSON(shown, '    ') + '\n' : EDIT_HEADER + toYAML(shown);
    k.streaming();
    const edited = await k.c.editor.edit(text, k.signal);
    if (k.signal?.aborted) return 130;
    if (edited === null || edited === undefined) { k.stderr.write('Edit cancelled, no changes made.\n'); continue; }
    const body = stripComments(edited);
    if (!body.trim()) { k.stderr.write('Edit cancelled, saved file was empty.\n'); continue; }
    if (body === stripComments(text)) { k.stderr.write('Edit cancelled, no changes made.\n'); continue; }
    let modified;
    try { modified = fromYAML(body); } catch (e) { k.errorf(e.message.split('\n')[0]); status = 1; continue; }
    if (modified?.apiVersion !== shown.apiVersion || modified?.kind !== shown.kind || modified?.metadata?.name !== shown.metadata?.name) {
      k.errorf('At least one of apiVersion, kind and name was changed');
      status = 1;
      continue;
    }
    const patch = twoWayPatch(shown, modified, await schemaFor(k, t.r));
    if (!Object.keys(patch).length) { k.stderr.write('Edit cancelled, no changes made.\n'); continue; }
    try {
      await k.do('PATCH', t.r.path(t.ns, t.name), { query: { fieldManager: k.fs.str('field-manager') }, body: goJSON(patch), contentType: 'application/strategic-merge-patch+json' });
    } catch (e) { if (!(e instanceof StatusError)) throw e; k.fail(e); status = 1; continue; }
    k.stdout.write(`${t.r.kindName}/${t.name} edited\n`);
  }
  return status;
}

// kubectlLabel is kubectl label and annotate: KEY=VALUE adds or (with
// --overwrite) changes, KEY- removes, in a merge patch that carries the
// resourceVersion as a precondition when one is given.
export async function kubectlLabel(k) {
  const field = k.verb === 'annotate' ? 'annotations' : 'labels';
  const past = k.verb === 'annotate' ? 'annotated' : 'labeled';
  const objArgs = [], set = new Map(), remove = [];
  for (const a of k.pos) {
    if (a.includes('=')) { const i = a.indexOf('='); set.set(a.slice(0, i), a.slice(i + 1)); } else if (a.endsWith('-') && objArgs.length) remove.push(a.slice(0, -1));
    else objArgs.push(a);
  }
  if (!set.size && !remove.length) return k.errorf(`at least one ${field.slice(0, -1)} update is required`);
  k.pos = objArgs;
  const ts = await targets(k);
  let status = 0;
  for (const t of ts) {
    let live;
    try { live = await k.getObject(t.r.path(t.ns, t.name)); } catch (e) { if (!(e instanceof StatusError)) throw e; k.fail(e); status = 1; continue; }
    const cur = live.metadata?.[field] || {};
    let bad = false;
    for (const key of [...set.keys()].sort()) {
      if (key in cur && !k.fs.bool('overwrite') && cur[key] !== set.get(key)) { k.errorf(`'${key}' already has a value (${cur[key]}), and --overwrite is false`); bad = true; }
    }
    if (bad) { status = 1; continue; }
    const change = {};
    for (const [key, v] of set) if (cur[key] !== v) change[key] = v;
    for (const key of remove) {
      if (key in cur) change[key] = null;
      else k.stderr.write(`${field.slice(0, -1)} ${JSON.stringify(key)} not found.\n`);
    }
    const md = {};
    if (Object.keys(change).length) md[field] = change;
    if (k.fs.str('resource-version')) md.resourceVersion = k.fs.str('resource-version');
    if (Object.keys(md).length) {
      try {
        await k.do('PATCH', t.r.path(t.ns, t.name), { query: { fieldManager: k.fs.str('field-manager') }, body: JSON.stringify({ metadata: md }), contentType: 'application/merge-patch+json' });
      } catch (e) { if (!(e instanceof StatusError)) throw e; k.fail(e); status = 1; continue; }
      k.stdout.write(`${t.r.kindName}/${t.name} ${past}\n`);
    } else k.stdout.write(`${t.r.kindName}/${t.name} not ${past}\n`);
  }
  return status;
}

// ---- rollout status ------------------------------------------------------------------

// deploymentStatus is kubectl's DeploymentStatusViewer.
function deploymentStatus(d, revision) {
  const name = d.metadata?.name;
  if (revision > 0) {
    const rev = d.metadata?.annotations?.['deployment.kubernetes.io/revision'] || '';
    if (rev !== String(revision)) throw new Error(`desired revision (${revision}) is different from the running revision (${rev})`);
  }
  const st = d.status || {};
  if ((d.metadata?.generation || 0) > (st.observedGeneration || 0)) return ['Waiting for deployment spec update to be observed...\n', false];
  for (const c of st.conditions || []) {
    if (c.type === 'Progressing' && c.reason === 'ProgressDeadlineExceeded') throw new Error(`deployment ${JSON.stringify(name)} exceeded its progress deadline`);
  }
  const updated = st.updatedReplicas || 0, replicas = st.replicas || 0, available = st.availableReplicas || 0;
  const spec = d.spec?.replicas;
  if (spec !== undefined && updated < spec) return [`Waiting for deployment ${JSON.stringify(name)} rollout to finish: ${updated} out of ${spec} new replicas have been updated...\n`, false];
  if (replicas > updated) return [`Waiting for deployment ${JSON.stringify(name)} rollout to finish: ${replicas - updated} old replicas are pending termination...\n`, false];
  if (available < updated) return [`Waiting for deployment ${JSON.stringify(name)} rollout to finish: ${available} of ${updated} updated replicas are available...\n`, false];
  return [`deployment ${JSON.stringify(name)} successfully rolled out\n`, true];
}

// kubectlRollout is `kubectl rollout status`: it prints the deployment's
// progress on every change until the rollout completes. Without a
// controller writing the status nothing changes, so it waits (Ctrl+C).
export async function kubectlRollout(k) {
  if (!k.pos.length) {
    k.note('console.note.kubectlRolloutStatus');
    return k.errorf('you must specify a subcommand: the lab has kubectl rollout status');
  }
  const sub = k.pos.shift();
  k.command = 'kubectl rollout ' + sub;
  if (sub !== 'status') {
    k.note('console.note.kubectlRollout', { subcommand: JSON.stringify(sub) });
    return k.errorf(`unknown command ${JSON.stringify(sub)} for "kubectl rollout"`);
  }
  const ts = await targets(k);
  let timedOut = false;
  const t0 = k.fs.str('timeout');
  if (t0 && t0 !== '0s' && t0 !== '0') {
    const ms = parseTimeout(t0);
    if (ms === null) return k.errorf(`invalid argument ${JSON.stringify(t0)} for "--timeout" flag: time: invalid duration ${JSON.stringify(t0)}`);
    const ac = new AbortController();
    k.signal.addEventListener('abort', () => ac.abort(), { once: true });
    setTimeout(() => { timedOut = true; ac.abort(); }, ms);
    k.signal = ac.signal;
  }
  let status = 0;
  for (const t of ts) {
    if (t.r.kind !== 'Deployment') { k.errorf(`no status viewer has been implemented for ${t.r.kind}`); status = 1; continue; }
    let live;
    try { live = await k.getObject(t.r.path(t.ns, t.name)); } catch (e) { if (!(e instanceof StatusError)) throw e; k.fail(e); status = 1; continue; }
    const check = (o) => {
      const [msg, done] = deploymentStatus(o, k.fs.int('revision'));
      k.stdout.write(msg);
      return done || !k.fs.bool('watch') ? 'stop' : undefined;
    };
    try {
      if (check(live) === 'stop') continue;
      const how = await k.watch(t.r.path(t.ns), { fieldSelector: 'metadata.name=' + t.name, resourceVersion: live.metadata.resourceVersion, watch: 'true' }, 'application/json', (type, o) => {
        if (type === 'ADDED' || type === 'MODIFIED') return check(o);
        if (type === 'DELETED') throw new Error('object has been deleted');
        if (type === 'BOOKMARK') return undefined;
        if (type === 'ERROR') throw statusFrom(o?.code || 500, JSON.stringify(o));
        throw new Error(`internal error: unexpected event ${type}`);
      });
      if (how === 'interrupted') return timedOut ? k.errorf('timed out waiting for the condition') : 130;
    } catch (e) { return k.fail(e); }
  }
  return status;
}

export { USER_AGENT };
