// The client cards: Operator A and B (read, edit the copy, write it back,
// with or without its resourceVersion) and the controller (update with
// retry on conflict). Each card shows its copy, its request log and, on
// top, the outcome of its last request: a 409 says so at once and plainly.
//
// The clients work on one object, the subject: a ConfigMap (they edit
// data.value) or a Deployment (spec.replicas). The lab makes sure the
// subject exists, so that the natural first try (A and B GET, A PUTs, B
// PUTs) gives the conflict the lab teaches rather than a 404 or an
// AlreadyExists.

import { $ } from './dom.js';
import { t } from './i18n.js';
import { lookupResource, itemPath, collectionPath } from './kube.js';
import { ExchangeLog, outcomeOf, renderOutcome } from './exchanges.js';
import yaml from '../vendor/js-yaml-4.1.0.mjs';

const NS = 'default';
const JSONH = { 'Content-Type': 'application/json' };
const MAX_RETRIES = 5; // client-go's retry.DefaultRetry.Steps

// Each kind the clients can work on: the field an operator edits, how to
// read and set it, the object the lab creates when there is none, and the
// values each card starts with.
export const KINDS = {
  configmaps: {
    field: 'data.value',
    get: (o) => o?.data?.value ?? '',
    set: (o, v) => ({ ...o, data: { ...(o.data || {}), value: String(v) } }),
    fresh: (name, v) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: NS }, data: { value: String(v) } }),
    initial: 'initial', start: { a: 'a-1', b: 'b-1', controller: 'controller-1' },
  },
  deployments: {
    field: 'spec.replicas',
    get: (o) => String(o?.spec?.replicas ?? ''),
    set: (o, v) => ({ ...o, spec: { ...(o.spec || {}), replicas: Number(v) } }),
    fresh: (name, v) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace: NS, labels: { app: name } },
      spec: {
        replicas: Number(v), selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
      },
    }),
    initial: '3', start: { a: '5', b: '2', controller: '4' },
  },
};

// nextValue makes a string value different from the last one written
// ("a-1" -> "a-2"), so that a second PUT changes something and is not
// kube-apiserver's no-op. Numbers are what the learner typed: kept.
export function nextValue(v) {
  if (/^\d+$/.test(v)) return v;
  const m = String(v).match(/^(.*?)(\d+)$/);
  return m ? `${m[1]}${Number(m[2]) + 1}` : `${v}-2`;
}

// registryKey is where kube-apiserver keeps an object in etcd.
export const registryKey = (resource, ns, name) => `/registry/${resource}/${ns}/${name}`;

// kubectlYAML prints an object as `kubectl get -o yaml` does: keys sorted,
// strings double-quoted where YAML needs quotes, managedFields hidden.
export function withoutManagedFields(o) {
  if (!o || typeof o !== 'object') return o;
  if (Array.isArray(o.items)) return { ...o, items: o.items.map(withoutManagedFields) };
  if (!o.metadata?.managedFields) return o;
  const { managedFields, ...md } = o.metadata;
  return { ...o, metadata: md };
}
export const kubectlYAML = (o) => yaml.dump(withoutManagedFields(o), { noRefs: true, lineWidth: -1, sortKeys: true, quotingType: '"' });

export function mountClients(lab) {
  const { frame } = lab;
  const ids = ['a', 'b', 'controller'];
  const cards = {};
  for (const id of ids) {
    cards[id] = { id, copy: null, log: new ExchangeLog($(`client-${id}-log`), frame) };
  }

  const subject = {
    get kind() { return $('subject-kind').value; },
    get name() { return $('subject-name').value.trim() || 'demo'; },
    get resource() { return lookupResource(this.kind); },
    get path() { return itemPath(this.resource, NS, this.name); },
    get key() { return registryKey(this.resource.resource, NS, this.name); },
    get spec() { return KINDS[this.kind]; },
  };

  function showCopy(c) {
    frame.schedule('copy-' + c.id, () => {
      $(`client-${c.id}-copy`).textContent = c.copy ? kubectlYAML(c.copy) : t('clients.nothing');
      $(`client-${c.id}-rv`).textContent = c.copy?.metadata?.resourceVersion || '–';
    });
  }

  function showOutcome(c, o) {
    frame.schedule('outcome-' + c.id, () => {
      const box = $(`client-${c.id}-outcome`);
      renderOutcome(box, o);
      const card = $(`client-${c.id}`);
      card.dataset.status = String(o.status);
      // What the lab teaches is a failed write: bring that card into view.
      if (!o.ok) {
        card.classList.remove('flash');
        void card.offsetWidth;
        card.classList.add('flash');
        card.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
      }
    });
  }

  // currentRV asks etcd (not the client) which revision the object has now.
  async function currentRV() {
    try {
      const r = await lab.etcd.range(subject.key);
      return r.kvs[0] ? String(r.kvs[0].modRevision) : '';
    } catch { return ''; }
  }

  // exchange performs one request for a card and logs it.
  async function exchange(c, method, path, { body, note } = {}) {
    let r;
    try {
      r = await lab.transport.request(method, path, body === undefined ? {} : { headers: JSONH, body });
    } catch (e) {
      r = { status: 0, body: e.message };
    }
    c.log.add({ method, path, status: r.status, reqBody: body || '', respBody: r.body, note });
    lab.revisions.see(resourceVersionIn(r.body));
    if (method !== 'GET' && r.status > 0 && r.status < 300) lab.afterWrite();
    return r;
  }

  async function report(c, method, reqBody, r) {
    const o = outcomeOf({ method, status: r.status, reqBody, respBody: r.body });
    if (r.status === 409 || (o.sentRV && !o.ok)) o.currentRV = await currentRV();
    showOutcome(c, o);
    return o;
  }

  function valueOf(id) { return $(`client-${id}-value`).value; }

  async function get(id) {
    const c = cards[id];
    lab.record({ op: 'get', c: id, kind: subject.kind, name: subject.name });
    const r = await exchange(c, 'GET', subject.path);
    if (r.status === 200) c.copy = JSON.parse(r.body);
    else if (r.status === 404) c.copy = null;
    showCopy(c);
    await report(c, 'GET', '', r);
    return r;
  }

  // put writes the card's copy back with the value set, with its
  // resourceVersion (a conditional update) or without (unconditional).
  async function put(id, value = valueOf(id), sendRV = $(`client-${id}-send-rv`)?.checked ?? true) {
    const c = cards[id];
    lab.record({ op: 'put', c: id, kind: subject.kind, name: subject.name, v: value, rv: sendRV });
    const spec = subject.spec;
    if (!c.copy || c.copy.metadata?.name !== subject.name || c.copy.kind !== subject.resource.kind) {
      // Nothing read yet: create the object (POST), as kubectl create would.
      const body = JSON.stringify(spec.fresh(subject.name, value));
      const r = await exchange(c, 'POST', collectionPath(subject.resource, NS), { body });
      if (r.status === 201 || r.status === 200) { c.copy = JSON.parse(r.body); showCopy(c); }
      const o = await report(c, 'POST', body, r);
      if (!o.ok && r.status === 409) showOutcome(c, { ...o, extra: t('outcome.notread') });
      return r;
    }
    const next = spec.set(structuredClone(c.copy), value);
    if (!sendRV) delete next.metadata.resourceVersion;
    const body = JSON.stringify(next);
    const r = await exchange(c, 'PUT', subject.path, { body });
    if (r.status === 200) {
      c.copy = JSON.parse(r.body);
      showCopy(c);
      bumpValue(id, value);
    }
    await report(c, 'PUT', body, r);
    return r;
  }

  function bumpValue(id, value) {
    const input = $(`client-${id}-value`);
    if (input.value === value) input.value = nextValue(value);
  }

  // update is client-go's retry.RetryOnConflict(retry.DefaultRetry, ...):
  // read the latest version, apply the change, write it; on 409 read again
  // and retry, at most five times.
  async function update(value = valueOf('controller')) {
    lab.record({ op: 'update', c: 'controller', kind: subject.kind, name: subject.name, v: value });
    const c = cards.controller;
    const spec = subject.spec;
    let last;
    for (let attempt = 1; attempt <= MAX_RETRIES; attempt++) {
      if (!c.copy || c.copy.metadata?.name !== subject.name) {
        const g = await exchange(c, 'GET', subject.path);
        if (g.status !== 200) { c.copy = null; showCopy(c); await report(c, 'GET', '', g); return g; }
        c.copy = JSON.parse(g.body);
      }
      const body = JSON.stringify(spec.set(structuredClone(c.copy), value));
      last = await exchange(c, 'PUT', subject.path, { body, note: attempt > 1 ? t('outcome.retry', { n: attempt, max: MAX_RETRIES }) : '' });
      if (last.status === 200) { c.copy = JSON.parse(last.body); bumpValue('controller', value); break; }
      if (last.status !== 409) break;
      c.copy = null; // conflict: re-read and retry
    }
    showCopy(c);
    await report(c, 'PUT', '', last);
    return last;
  }

  // ensureSubject creates the subject when it does not exist yet.
  async function ensureSubject() {
    const r = await lab.transport.request('GET', subject.path);
    if (r.status !== 404) return false;
    const body = JSON.stringify(subject.spec.fresh(subject.name, subject.spec.initial));
    const c = await lab.transport.request('POST', collectionPath(subject.resource, NS), { headers: JSONH, body });
    if (c.status === 201) lab.afterWrite();
    return c.status === 201;
  }

  function applyKind() {
    const spec = subject.spec;
    for (const id of ids) {
      $(`client-${id}-field`).textContent = spec.field;
      $(`client-${id}-value`).value = spec.start[id];
    }
  }

  async function setSubject(kind, name) {
    if (kind && $('subject-kind').value !== kind) { $('subject-kind').value = kind; applyKind(); }
    if (name) $('subject-name').value = name;
  }

  function reset() {
    for (const c of Object.values(cards)) {
      c.copy = null;
      c.log.clear();
      showCopy(c);
      const box = $(`client-${c.id}-outcome`);
      box.replaceChildren();
      delete box.dataset.status;
    }
  }

  for (const id of ['a', 'b']) {
    $(`client-${id}-get`).addEventListener('click', lab.guard(() => get(id)));
    $(`client-${id}-put`).addEventListener('click', lab.guard(() => put(id)));
  }
  $('client-controller-get').addEventListener('click', lab.guard(() => get('controller')));
  $('client-controller-put').addEventListener('click', lab.guard(() => update()));
  $('subject-kind').addEventListener('change', lab.guard(async () => {
    applyKind();
    lab.record({ op: 'subject', kind: subject.kind, name: subject.name });
    if (await ensureSubject()) lab.notice(t('clients.created', { ref: `${subject.resource.kind.toLowerCase()}/${subject.name}` }));
  }));
  for (const c of Object.values(cards)) showCopy(c);

  return { subject, get, put, update, ensureSubject, setSubject, reset, cards };
}

function resourceVersionIn(body) {
  try { return JSON.parse(body)?.metadata?.resourceVersion; } catch { return undefined; }
}
