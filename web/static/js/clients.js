// The client cards: Operator A and B (read, edit the copy, write it back,
// with or without its resourceVersion) and the controller (update with
// retry on conflict). Each card shows its copy, its request log and, on
// top, the outcome of its last request: a 409 says so at once and plainly.
//
// The clients are engine/client's Go clients in the WebAssembly engine
// (goclients.js), offline and on a server session alike; a card shows
// every step its client reports. A card's client is named by its label
// ("A", "B", "controller"): the session's record, and so a lesson's
// checks, know it by that name. The lesson panel's client actions run
// here too (runAction), on the same clients and copies.
//
// The clients work on one object, the subject: a ConfigMap (they edit
// data.value) or a Deployment (spec.replicas). The lab makes sure the
// subject exists before a card first reads it, so that the natural first
// try (A and B GET, A PUTs, B PUTs) gives the conflict the lab teaches
// rather than a 404 or an AlreadyExists. The subject is in the namespace
// default, or in the lesson's: a student of a class works in their own
// namespace where the lesson gives them one (its class.own's default,
// the same map the session applied to the lesson's own actions).

import { $ } from './dom.js';
import { t, onLanguageChange } from './i18n.js';
import { said } from './notice.js';
import { lookupResource, itemPath, collectionPath } from './kube.js';
import { ExchangeLog, outcomeOf, renderOutcome, statusLine, shortPath } from './exchanges.js';
import { toYAML } from './console/yaml.js';

const NS = 'default';
const JSONH = { 'Content-Type': 'application/json' };

// Each kind the clients can work on: the field an operator edits, how to
// read and set it, the object the lab creates when there is none, and the
// values each card starts with.
export const KINDS = {
  configmaps: {
    field: 'data.value',
    get: (o) => o?.data?.value ?? '',
    set: (o, v) => ({ ...o, data: { ...(o.data || {}), value: String(v) } }),
    fresh: (name, v, namespace = NS) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { value: String(v) } }),
    initial: 'initial', start: { a: 'a-1', b: 'b-1', controller: 'controller-1' },
  },
  deployments: {
    field: 'spec.replicas',
    get: (o) => String(o?.spec?.replicas ?? ''),
    set: (o, v) => ({ ...o, spec: { ...(o.spec || {}), replicas: Number(v) } }),
    fresh: (name, v, namespace = NS) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name, namespace, labels: { app: name } },
      spec: {
        replicas: Number(v), selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27' }] } },
      },
    }),
    initial: '3', start: { a: '5', b: '2', controller: '4' },
  },
};

// freshObject is the object the lab creates for subject when there is none
// (a card's first write, the object editor's starting text): the subject's
// kind and name, in the subject's namespace, which on a class session is
// the student's own and not "default".
export const freshObject = (subject, value = subject.spec.initial) =>
  subject.spec.fresh(subject.name, value, subject.namespace);

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

// kubectlYAML prints an object as `kubectl get -o yaml` does (the
// console's printer), managedFields hidden.
function withoutManagedFields(o) {
  if (!o || typeof o !== 'object') return o;
  if (Array.isArray(o.items)) return { ...o, items: o.items.map(withoutManagedFields) };
  if (!o.metadata?.managedFields) return o;
  const { managedFields, ...md } = o.metadata;
  return { ...o, metadata: md };
}
export const kubectlYAML = (o) => toYAML(withoutManagedFields(o));


// setPath sets a value at a dotted path ("spec.replicas"), making the
// maps on the way: what a lesson's `set` means.
export function setPath(obj, path, value) {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (!o[k] || typeof o[k] !== 'object') o[k] = {};
    o = o[k];
  }
  o[keys[keys.length - 1]] = value;
  return obj;
}

// The cards and the names the session's record knows their clients by.
export const CARDS = [
  { id: 'a', label: 'A' },
  { id: 'b', label: 'B' },
  { id: 'controller', label: 'controller' },
  { id: 'reflector', label: 'I' }, // the informer: reflector.js drives it
];
const OPERATORS = CARDS.slice(0, 3);

export async function mountClients(lab) {
  const { frame } = lab;
  const cards = {};
  const byLabel = new Map();
  const ensured = new Set();
  let namespace = NS;

  const subject = {
    get kind() { return $('subject-kind').value; },
    get name() { return $('subject-name').value.trim() || 'demo'; },
    get namespace() { return namespace; },
    get resource() { return lookupResource(this.kind); },
    get path() { return itemPath(this.resource, namespace, this.name); },
    get key() { return registryKey(this.resource.resource, namespace, this.name); },
    get spec() { return KINDS[this.kind]; },
    get ref() { return { resource: this.kind, namespace, name: this.name }; },
  };

  // A lesson may use clients beyond the cards ("alice"); they get a
  // client and a copy, and log into the console.
  async function clientFor(label) {
    if (byLabel.has(label)) return byLabel.get(label);
    const card = CARDS.find((c) => c.label === label);
    const c = { id: card?.id || label, label, copy: null, listRV: '', listItems: [], listCont: '', lastRV: '', watch: null, card: !!card };
    c.log = card ? new ExchangeLog($(`client-${c.id}-log`), frame) : null;
    byLabel.set(label, c);
    if (card) cards[c.id] = c;
    c.client = await lab.goclients.client(c.id, { label, onStep: (s) => onStep(c, s) });
    return c;
  }

  function onStep(c, s) {
    if (s.kind === 'exchange') lab.lessons?.verifySoon();
    if (s.kind === 'exchange') {
      const path = s.path + (s.query ? `?${s.query}` : '');
      if (c.log) c.log.add({ method: s.method, path, status: s.status, reqBody: s.requestBody || '', respBody: s.watch ? t('reflector.log.watch') : s.body || '' });
      else requestsOf(c).add(s.method, `${statusLine(s.status)} ${shortPath(path)}`, { rv: s.rv, detail: s.status >= 300 ? s.body : undefined });
      if (s.status === 0) lab.connection?.failed(s.body || 'no answer');
      lab.revisions.see(s.rv);
      if (s.method !== 'GET' && s.status > 0 && s.status < 300) lab.afterWrite();
    } else if (s.kind === 'attempt' && s.error && c.log) {
      c.log.note(said('clients.attempt', { n: s.attempt, reason: s.reason || s.error }));
    } else if (s.kind === 'backoff' && !s.informer && c.log) {
      c.log.note(said('clients.backoff', { ms: Math.round(s.waitMs) }));
    }
  }

  // The operator cards show a copy and an outcome; the informer's card
  // (reflector.js) shows its store instead.
  const hasCopy = (c) => c.card && $(`client-${c.id}-copy`);

  // A client without a card (a lesson's watcher R, S, W) shows its
  // requests in a box of the watch panel, beside its watches.
  function requestsOf(c) {
    if (!c.requests || c.requests.removed) {
      c.requests = lab.watches.open(() => `${c.label}: ${t('clients.requests')}`, '', {}, { stoppable: false });
      c.requests.setState('open', '');
    }
    return c.requests;
  }

  function showCopy(c) {
    if (!hasCopy(c)) return;
    frame.schedule('copy-' + c.id, () => {
      $(`client-${c.id}-copy`).textContent = c.copy ? kubectlYAML(c.copy) : t('clients.nothing');
      $(`client-${c.id}-rv`).textContent = c.copy?.metadata?.resourceVersion || '–';
    });
  }

  function showOutcome(c, o, { flash = true } = {}) {
    if (!hasCopy(c)) return;
    c.outcome = o;
    frame.schedule('outcome-' + c.id, () => {
      renderOutcome($(`client-${c.id}-outcome`), o);
      const card = $(`client-${c.id}`);
      card.dataset.status = String(o.status);
      // What the lab teaches is a failed write: bring that card into view.
      if (!o.ok && flash) {
        card.classList.remove('flash');
        void card.offsetWidth;
        card.classList.add('flash');
        card.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
      }
    });
  }

  // currentRV asks etcd (not the client) which revision an object has now.
  async function currentRV(resource, ns, name) {
    try {
      const r = await lab.etcd.range(registryKey(resource, ns || NS, name));
      return r.kvs[0] ? String(r.kvs[0].modRevision) : '';
    } catch { return ''; }
  }

  // report turns a client's answer into its card's outcome.
  async function report(c, method, answer, { sent = '', ref = {}, extra = '' } = {}) {
    const o = outcomeOf({ method, status: answer.status, reqBody: sent, respBody: answer.status ? answer.body : answer.message || answer.body });
    if ((answer.status === 409 || (o.sentRV && !o.ok)) && ref.name) {
      const m = lookupResource(ref.resource || subject.kind);
      o.currentRV = await currentRV(m ? m.resource : ref.resource, ref.namespace, ref.name);
    }
    if (extra) o.extra = extra;
    showOutcome(c, o);
    return o;
  }

  // answer waits for a client's operation; one that could not reach the
  // server (the Go client rejects: discovery failed) is an answer with
  // status 0 and the reason, like a request that got no answer.
  async function answer(op) {
    try {
      return await op;
    } catch (e) {
      const message = String(e?.message || e);
      if (/fetch|network|connect/i.test(message)) lab.connection?.failed(message);
      return { status: 0, body: '', message };
    }
  }

  const keep = (c, answer) => {
    if (answer.status >= 200 && answer.status < 300 && answer.object?.metadata) {
      c.copy = answer.object;
      showCopy(c);
    }
  };

  function valueOf(id) {
    const v = $(`client-${id}-value`).value;
    return subject.kind === 'deployments' ? Number(v) : v;
  }

  // ensureSubject creates the subject when it does not exist yet (once per
  // subject and lab), through the lab's own connection, not a card's.
  async function ensureSubject() {
    const k = `${subject.kind}/${namespace}/${subject.name}`;
    if (ensured.has(k)) return false;
    let r;
    try {
      r = await lab.transport.request('GET', subject.path);
    } catch {
      return false; // unreachable: the card's own request will say so
    }
    ensured.add(k);
    if (r.status !== 404) return false;
    const body = JSON.stringify(freshObject(subject));
    const c = await lab.transport.request('POST', collectionPath(subject.resource, namespace), { headers: JSONH, body });
    if (c.status !== 201) return false;
    lab.afterWrite();
    lab.notice(said('clients.created', { ref: `${subject.resource.kind.toLowerCase()}/${subject.name}` }));
    return true;
  }

  // ---- the cards' buttons ----------------------------------------------------

  async function get(id) {
    const c = cards[id];
    lab.record({ op: 'get', c: id, kind: subject.kind, name: subject.name });
    await ensureSubject();
    const ref = subject.ref;
    const a = await answer(c.client.get(ref));
    if (a.status === 404) { c.copy = null; showCopy(c); }
    keep(c, a);
    await report(c, 'GET', a, { ref });
    return a;
  }

  // put writes the card's copy back with the value set, with its
  // resourceVersion (a conditional update) or without (unconditional).
  async function put(id, value = $(`client-${id}-value`).value, sendRV = $(`client-${id}-send-rv`)?.checked ?? true) {
    const c = cards[id];
    lab.record({ op: 'put', c: id, kind: subject.kind, name: subject.name, v: value, rv: sendRV });
    const spec = subject.spec;
    const ref = subject.ref;
    const v = subject.kind === 'deployments' ? Number(value) : value;
    if (!c.copy || c.copy.metadata?.name !== subject.name || c.copy.kind !== subject.resource.kind || (c.copy.metadata?.namespace || NS) !== namespace) {
      // Nothing read yet: create the object (POST), as kubectl create would.
      const obj = freshObject(subject, v);
      const a = await answer(c.client.create({ resource: subject.kind, namespace }, obj));
      keep(c, a);
      await report(c, 'POST', a, { sent: JSON.stringify(obj), ref, extra: a.status === 409 ? said('outcome.notread') : '' });
      return a;
    }
    const next = spec.set(structuredClone(c.copy), v);
    if (!sendRV) delete next.metadata.resourceVersion;
    const a = await answer(c.client.update({ resource: subject.kind, namespace }, next, { withoutResourceVersion: !sendRV }));
    keep(c, a);
    if (a.status === 200) bumpValue(id, value);
    await report(c, 'PUT', a, { sent: JSON.stringify(next), ref });
    return a;
  }

  function bumpValue(id, value) {
    const input = $(`client-${id}-value`);
    if (input.value === String(value)) input.value = nextValue(String(value));
  }

  // update is client-go's retry.RetryOnConflict(retry.DefaultRetry, ...):
  // read the latest version, apply the change, write it; on 409 read again
  // and retry, up to five attempts 10 ms apart.
  async function update(value = $('client-controller-value').value) {
    lab.record({ op: 'update', c: 'controller', kind: subject.kind, name: subject.name, v: value });
    const c = cards.controller;
    await ensureSubject();
    const ref = subject.ref;
    const a = await retry(c, ref, { set: { [subject.spec.field]: valueOf('controller') } }, { backoff: 'DefaultRetry' });
    keep(c, a);
    if (a.status === 200) bumpValue('controller', value);
    await report(c, 'PUT', a, { ref, extra: a.attempts > 1 ? said('clients.attempts', { n: a.attempts }) : '' });
    return a;
  }

  // retry runs client-go's retry.RetryOnConflict and marks in the card's
  // log where the run begins and, when every attempt got a 409, that it
  // gave up: one run's last failed attempt and the next run's first read
  // otherwise read as one story in the log.
  async function retry(c, ref, change, opts) {
    c.log?.note(said('clients.retryRun', { backoff: opts.backoff }), 'run');
    const a = await answer(c.client.retryOnConflict(ref, change, opts));
    if (a.status === 409 && a.attempts > 0) c.log?.note(said('clients.gaveUp', { n: a.attempts }));
    return a;
  }

  // ---- a lesson's client actions ---------------------------------------------

  // runAction performs one client action of a lesson step
  // (web/lessons/README.md) with the named client.
  async function runAction(act) {
    lab.record({ op: 'lesson-action', action: act });
    const c = await clientFor(act.client);
    if (['startReflector', 'stopReflector'].includes(act.do) || (['disconnect', 'reconnect'].includes(act.do) && lab.reflector.has(c))) {
      await lab.reflector.runAction(act, c);
      return null;
    }
    const ref = { resource: act.resource, namespace: act.namespace, name: act.name, subresource: act.subresource };
    let a;
    let sent = '';
    let method = 'GET';
    let listed = '';
    switch (act.do) {
      case 'watch':
        watch(c, act);
        return null;
      case 'stopWatch':
      case 'disconnect':
        stopWatch(c);
        return null;
      case 'reconnect':
        return null;
      case 'get':
        a = await answer(c.client.get(ref, { resourceVersion: rvFor(c, act) }));
        keep(c, a);
        break;
      case 'list': {
        a = await answer(c.client.list(ref, {
          resourceVersion: rvFor(c, act), resourceVersionMatch: act.resourceVersionMatch, limit: act.limit,
          continue: act.continue === 'last' ? c.listCont : act.continue,
        }));
        if (a.status === 200 && a.object) {
          c.listRV = a.object.metadata?.resourceVersion || '';
          c.listItems = a.object.items || [];
          c.listCont = a.object.metadata?.continue || '';
          listed = said('outcome.list', listParams(a.object));
        }
        break;
      }
      case 'update': {
        if (!c.copy) throw new Error(t('clients.noread', { client: act.client }));
        const obj = structuredClone(c.copy);
        for (const [p, v] of Object.entries(act.set || {})) setPath(obj, p, v);
        const drop = act.resourceVersion === 'drop';
        if (drop) delete obj.metadata.resourceVersion;
        // The card's "send its resourceVersion" says what this PUT sent
        // (it stayed ticked beside "sent no resourceVersion"), and the
        // card's own PUT then does the same.
        const sendRV = c.card && $(`client-${c.id}-send-rv`);
        if (sendRV) sendRV.checked = !drop;
        method = 'PUT';
        sent = JSON.stringify(obj);
        a = await answer(c.client.update(ref, obj, { withoutResourceVersion: drop, fieldManager: act.fieldManager }));
        keep(c, a);
        break;
      }
      case 'create':
        method = 'POST';
        sent = JSON.stringify(act.object);
        a = await answer(c.client.create(ref, act.object, { fieldManager: act.fieldManager }));
        keep(c, a);
        break;
      case 'delete':
        method = 'DELETE';
        a = await answer(c.client.delete(ref));
        break;
      case 'patch':
        method = 'PATCH';
        a = await answer(c.client.patch(ref, act.patch, { type: act.patchType || 'merge', fieldManager: act.fieldManager }));
        keep(c, a);
        break;
      case 'apply':
        method = 'PATCH';
        a = await answer(c.client.patch({ ...ref, name: act.object?.metadata?.name || act.name }, act.object, { type: 'apply', fieldManager: act.fieldManager, force: act.force }));
        keep(c, a);
        break;
      case 'retryOnConflict':
        method = 'PUT';
        a = await retry(c, ref, { set: act.set || {} }, { backoff: act.backoff || 'DefaultRetry', read: act.read });
        keep(c, a);
        break;
      default:
        throw new Error(t('clients.unsupported', { do: act.do }));
    }
    await report(c, method, a, { sent, ref, extra: listed || (a.attempts > 1 ? said('clients.attempts', { n: a.attempts }) : '') });
    return a;
  }

  // listParams says what a list answered: its resourceVersion and each
  // item's (the first few).
  function listParams(l) {
    const items = (l.items || []).map((o) => `${o.metadata?.name}@${o.metadata?.resourceVersion}`);
    const shown = items.slice(0, 6).join(', ') + (items.length > 6 ? ', …' : '');
    return { rv: l.metadata?.resourceVersion || '?', n: items.length, items: shown || '–' };
  }

  // watch opens a lesson client's watch (one per client; a new one
  // replaces it) from a resourceVersion: a value, the client's last list's
  // ("list"), where its previous watch got to ("last": a resume), or the
  // oldest listed item's ("item": the mistake that replays history). Its
  // events show as a stream in the watch panel. It is sent with the
  // client's User-Agent, so that the session's record names the client.
  function watch(c, act) {
    stopWatch(c);
    const r = lookupResource(act.resource || 'configmaps');
    const path = collectionPath(r, act.namespace || NS);
    const rv = act.resourceVersion === 'last' ? c.lastRV : rvFor(c, act);
    const query = {
      watch: 'true', resourceVersion: rv, resourceVersionMatch: act.resourceVersionMatch,
      allowWatchBookmarks: act.allowWatchBookmarks ? 'true' : undefined,
      sendInitialEvents: act.sendInitialEvents === undefined ? undefined : String(act.sendInitialEvents),
    };
    const s = lab.watches.open(`${c.label}: watch ${r.resource}`, path, query);
    c.lastRV = rv || c.lastRV;
    const w = { stream: s, cancel: null };
    c.watch = w;
    const qs = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined && v !== '')).toString();
    w.cancel = lab.watches.follow(s, path, query, {
      userAgent: `${c.label}/rvplay-lab`,
      onOpen: (e) => {
        if (c.log) c.log.add({ method: 'GET', path: `${path}?${qs}`, status: e.status, respBody: e.status === 200 ? t('reflector.log.watch') : e.body });
        else requestsOf(c).add('GET', `${statusLine(e.status)} ${shortPath(`${path}?${qs}`)}`);
      },
      onEvent: (ev, d) => { if (d.rv) c.lastRV = d.rv; },
      onEnd: () => { if (c.watch === w) c.watch = null; lab.lessons?.verifySoon(); },
    });
  }

  function stopWatch(c) {
    if (!c.watch) return;
    c.watch.cancel();
    c.watch = null;
  }

  // rvFor resolves a lesson action's resourceVersion: a value, the
  // client's last list's ("list"), the oldest listed item's ("item").
  function rvFor(c, act) {
    const rv = act.resourceVersion;
    if (rv === 'list') return c.listRV;
    if (rv === 'item') {
      const rvs = c.listItems.map((o) => Number(o.metadata?.resourceVersion)).filter(Boolean).sort((x, y) => x - y);
      return rvs.length ? String(rvs[0]) : '';
    }
    return rv || undefined;
  }

  // ---- the subject and the cards' values --------------------------------------

  function applyKind() {
    const spec = subject.spec;
    for (const { id } of OPERATORS) {
      $(`client-${id}-field`).textContent = spec.field;
      $(`client-${id}-value`).value = spec.start[id];
    }
  }

  // setSubject sets the subject's kind, name and namespace (each when
  // given): a lesson's object in the lesson's namespace, back to default
  // when the lesson closes.
  async function setSubject(kind, name, ns) {
    if (kind && $('subject-kind').value !== kind) { $('subject-kind').value = kind; applyKind(); }
    if (name) $('subject-name').value = name;
    if (ns) {
      namespace = ns;
      $('subject-namespace').textContent = `/${ns}/`;
    }
  }

  function reset() {
    ensured.clear();
    for (const c of byLabel.values()) {
      stopWatch(c);
      c.requests = null;
      c.lastRV = '';
      c.copy = null;
      c.listRV = '';
      c.listItems = [];
      c.listCont = '';
      c.outcome = null;
      if (!c.card) continue;
      c.log.clear();
      if (!hasCopy(c)) continue;
      showCopy(c);
      const box = $(`client-${c.id}-outcome`);
      box.replaceChildren();
      delete box.dataset.status;
      delete $(`client-${c.id}`).dataset.status;
    }
  }

  await Promise.all(CARDS.map(({ label }) => clientFor(label)));
  for (const id of ['a', 'b']) {
    $(`client-${id}-get`).addEventListener('click', lab.guard(() => get(id)));
    $(`client-${id}-put`).addEventListener('click', lab.guard(() => put(id)));
  }
  $('client-controller-get').addEventListener('click', lab.guard(() => get('controller')));
  $('client-controller-put').addEventListener('click', lab.guard(() => update()));
  $('subject-kind').addEventListener('change', lab.guard(async () => {
    applyKind();
    lab.record({ op: 'subject', kind: subject.kind, name: subject.name });
    await ensureSubject();
  }));
  for (const c of Object.values(cards)) showCopy(c);
  // A card's copy and outcome are said in the language the reader picks
  // (an outcome's words, its Status message as the server wrote it); its
  // log's exchanges are the requests as they were sent and answered.
  onLanguageChange(() => {
    for (const c of Object.values(cards)) {
      showCopy(c);
      if (c.outcome) showOutcome(c, c.outcome, { flash: false });
    }
  });

  // showCards shows the cards of a lesson's clients; a lesson without
  // clients hides the panel; null (the free lab) shows every card.
  function showCards(names) {
    for (const { id, label } of CARDS) $(`client-${id}`).hidden = !!names && !names.includes(label);
    $('clients-panel').hidden = !!names && !CARDS.some(({ label }) => names.includes(label));
  }

  return { subject, get, put, update, runAction, ensureSubject, setSubject, reset, cards, clientFor, showCards };
}
