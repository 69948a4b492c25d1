// The lab's Kubernetes clients: engine/client, the Go REST client,
// reflector, informer store and RetryOnConflict, compiled into the
// WebAssembly engine. The same Go code runs offline (against the session in
// the page) and on a server session (over fetch and WebSocket), so what a
// lesson shows is what client-go does: its requests, its resourceVersions,
// its 409s and 410s, its backoff waits.
//
//   import { Clients } from './goclients.js';
//   const clients = new Clients(engine);                  // offline
//   const clients = new Clients(engine, { base: '/s/demo' }); // a server session
//   const a = await clients.client('a', { label: 'operator-a', onStep: show });
//   const r = await a.get({ resource: 'deployments', name: 'web' });
//   r.object.spec.replicas = 5;
//   await a.update({ resource: 'deployments' }, r.object);          // 409 if stale
//   await a.update({ resource: 'deployments' }, r.object, { withoutResourceVersion: true }); // the lost update
//   await a.retryOnConflict({ resource: 'deployments', name: 'web' }, { set: { 'spec.replicas': 5 } });
//   const inf = await a.informer('cms', { resource: 'configmaps' }); await inf.start();
//
// Every operation resolves with an Answer; an API error (409, 404, 410...)
// is an answer, not a rejection. A promise rejects only on misuse: an
// unknown client, a resource the server does not serve, a broken object.
//
// Names: `resource` is what kubectl accepts ("deployments", "deploy",
// "Deployment", "deployments.apps"), resolved by the server's discovery.
// `namespace` defaults to "default" for namespaced resources (or the
// object's metadata.namespace); `allNamespaces: true` lists across all.

/**
 * @typedef {object} Ref
 * @property {string} resource   e.g. "configmaps", "deploy", "Deployment", "deployments.apps"
 * @property {string} [namespace] default "default" (ignored for cluster-scoped resources)
 * @property {boolean} [allNamespaces] list or watch across namespaces
 * @property {string} [name]      the object's name (get, patch, delete, retryOnConflict)
 * @property {string} [subresource] "status" or "scale" (get, update, patch, retryOnConflict)
 */

/**
 * @typedef {object} Answer
 * @property {number} status  HTTP status (0: no answer, see message)
 * @property {string} body    the answer as the server sent it
 * @property {object} [object] body parsed, when it is JSON
 * @property {string} [reason]  a failure's Status reason ("Conflict", "NotFound", "Expired"...)
 * @property {string} [message] a failure's Status message
 * @property {number} [code]    a failure's Status code
 * @property {string} [resourceVersion] metadata.resourceVersion of a successful answer
 * @property {number} [attempts] retryOnConflict: how many updates it sent
 */

/**
 * One step a client took, as its log shows it. Every step has client, seq
 * (per client, from 1), time (RFC 3339) and kind; informer steps name their
 * informer. Kinds and their fields:
 *  - "exchange": a request and its answer (for a watch, the answer's head):
 *    method, path, query, requestBody, status, body, watch, durationMs,
 *    rvSent (the resourceVersion the request carried), rv (the answer's),
 *    and for a failure reason, message, code.
 *  - reflector steps, with rv: "list" (request), "listed" (items, rv),
 *    "replace" (the store now holds items at rv),
 *    "deleted-final-state-unknown" (key: an object the replace found gone,
 *    whose delete no watch delivered; rv: the last one the store knew it at,
 *    not the reflector's), "watch" (request, from rv),
 *    "event" (type ADDED/MODIFIED/DELETED, key, rv; initial for a watch-list's
 *    initial state), "bookmark" (rv), "initial-events-end" (items, rv),
 *    "watch-closed" (the server ended the stream; resume from rv),
 *    "expired" (410: relist), "too-large" (rv not reached yet: relist),
 *    "fallback" (watch-list refused: LIST instead), "error",
 *    "backoff" (waitMs before the next round), "disconnected" (waiting at rv
 *    for resume), "resumed".
 *  - retryOnConflict: "attempt" (attempt, and reason/code/error when it
 *    failed) and "backoff" (attempt, waitMs) before the next attempt.
 * @typedef {object} Step
 */

/** @typedef {'DefaultRetry'|'DefaultBackoff'|{steps: number, durationMs: number, factor?: number, jitter?: number, capMs?: number}} Backoff */

const parse = (a) => {
  if (a && typeof a.body === 'string' && a.body.startsWith('{')) {
    try { a.object = JSON.parse(a.body); } catch { /* not JSON after all */ }
  }
  return a;
};

export class Clients {
  /**
   * @param {object} engine the WebAssembly engine's bridge (globalThis.rvplay)
   * @param {{base?: string, clock?: 'real'|'manual'}} [opts]
   *   base: a server session's URL ("/s/demo"); omitted: the session in the page.
   *   clock "manual": client-go's waits (backoffs) pass only through advance().
   */
  constructor(engine, { base = '', clock = 'real' } = {}) {
    this.engine = engine;
    this.listeners = new Set();
    this.byClient = new Map();
    this.hub = engine.clients.open({ base, clock }, (json) => this.#dispatch(json));
  }

  #dispatch(json) {
    const step = JSON.parse(json);
    for (const fn of this.listeners) fn(step);
    for (const fn of this.byClient.get(step.client) || []) fn(step);
  }

  /** @returns {Promise<any>} */
  async call(req, mutate) {
    return JSON.parse(await this.engine.clients.call(this.hub, JSON.stringify(req), mutate));
  }

  /**
   * Creates a client (or relabels the one with this id). Its User-Agent is
   * "<label>/rvplay-lab", so kube-apiserver's field managers and the
   * session's record of exchanges name it by its label.
   * @param {string} id
   * @param {{label?: string, onStep?: (s: Step) => void}} [opts]
   * @returns {Promise<Client>}
   */
  async client(id, { label = id, onStep } = {}) {
    const info = await this.call({ op: 'client', client: id, label });
    const c = new Client(this, id, info.userAgent);
    if (onStep) c.onStep(onStep);
    return c;
  }

  /** Every client's steps. @param {(s: Step) => void} fn @returns {() => void} unsubscribe */
  onStep(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }

  /** Moves the manual clock (clock: 'manual'). @param {number} ms */
  advance(ms) { return this.call({ op: 'advance', ms }); }

  /** Stops every client's informers. */
  close() { this.engine.clients.close(this.hub); }
}

export class Client {
  constructor(clients, id, userAgent) { this.clients = clients; this.id = id; this.userAgent = userAgent; }

  #op(op, ref, extra = {}, mutate) {
    return this.clients.call({ op, client: this.id, ...ref, ...extra }, mutate).then(parse);
  }

  /** This client's steps. @param {(s: Step) => void} fn @returns {() => void} unsubscribe */
  onStep(fn) {
    const m = this.clients.byClient;
    if (!m.has(this.id)) m.set(this.id, new Set());
    m.get(this.id).add(fn);
    return () => m.get(this.id)?.delete(fn);
  }

  /** GET one object. @param {Ref} ref @param {{resourceVersion?: string}} [opts] @returns {Promise<Answer>} */
  get(ref, opts = {}) { return this.#op('get', ref, opts); }

  /**
   * LIST. @param {Ref} ref
   * @param {{labelSelector?: string, fieldSelector?: string, resourceVersion?: string,
   *   resourceVersionMatch?: 'Exact'|'NotOlderThan', limit?: number, continue?: string}} [opts]
   * @returns {Promise<Answer>}
   */
  list(ref, opts = {}) { return this.#op('list', ref, opts); }

  /** POST a new object. @param {Ref} ref @param {object} object @param {{fieldManager?: string, dryRun?: boolean}} [opts] @returns {Promise<Answer>} */
  create(ref, object, opts = {}) { return this.#op('create', ref, { ...opts, object }); }

  /**
   * PUT an object (its metadata.name). Its metadata.resourceVersion is the
   * precondition: a stale one gets 409 Conflict. withoutResourceVersion
   * removes it first, which makes the update unconditional: it overwrites
   * whatever is stored (the lost update).
   * @param {Ref} ref @param {object} object
   * @param {{withoutResourceVersion?: boolean, fieldManager?: string, dryRun?: boolean}} [opts]
   * @returns {Promise<Answer>}
   */
  update(ref, object, opts = {}) { return this.#op('update', ref, { ...opts, object }); }

  /**
   * PATCH. type: "merge" (default), "json", "strategic" or "apply"
   * (server-side apply; fieldManager defaults to the label; patch may be YAML text).
   * @param {Ref} ref @param {object|Array|string} patch
   * @param {{type?: 'merge'|'json'|'strategic'|'apply', fieldManager?: string, force?: boolean, dryRun?: boolean}} [opts]
   * @returns {Promise<Answer>}
   */
  patch(ref, patch, { type, ...opts } = {}) { return this.#op('patch', ref, { ...opts, patch, patchType: type }); }

  /** DELETE, optionally with preconditions. @param {Ref} ref @param {{resourceVersion?: string, uid?: string, propagationPolicy?: string}} [opts] @returns {Promise<Answer>} */
  delete(ref, opts = {}) { return this.#op('delete', ref, opts); }

  /**
   * client-go's RetryOnConflict around get, change, update: on 409 it
   * waits the backoff's next step, reads again and re-applies the change,
   * up to backoff.steps attempts (DefaultRetry: 5 attempts 10ms apart;
   * DefaultBackoff: 4 attempts waiting 10, 50, 250ms; both with 10% jitter).
   * change: {set: {"spec.replicas": 5}} sets values at dotted paths; a
   * function (object) => object may change anything (it must not await).
   * @param {Ref} ref
   * @param {{set: Object<string, any>}|((o: object) => object)} change
   * read: "cache" makes each attempt's GET resourceVersion=0 (the watch
   * cache: possibly stale, as an informer's cache is).
   * @param {{backoff?: Backoff, withoutResourceVersion?: boolean, fieldManager?: string, read?: 'cache'}} [opts]
   * @returns {Promise<Answer>} the last update's answer, with attempts
   */
  retryOnConflict(ref, change, { backoff = 'DefaultRetry', ...opts } = {}) {
    if (typeof change === 'function') {
      return this.#op('retryOnConflict', ref, { ...opts, backoff }, (json) => JSON.stringify(change(JSON.parse(json))));
    }
    return this.#op('retryOnConflict', ref, { ...opts, backoff, set: change.set });
  }

  /**
   * An informer: a reflector (LIST then WATCH from the list's
   * resourceVersion, or one watch-list stream) keeping a store. Created
   * stopped; call start().
   * @param {string} id
   * @param {Ref} ref
   * @param {{watchList?: boolean, bookmarks?: boolean, labelSelector?: string, fieldSelector?: string}} [opts]
   *   watchList (default false): KEP-3157 streaming instead of LIST;
   *   bookmarks (default true): allowWatchBookmarks, as client-go always asks.
   * @returns {Promise<Informer>}
   */
  async informer(id, ref, opts = {}) {
    await this.clients.call({ op: 'informer', client: this.id, informer: id, ...ref, ...opts });
    return new Informer(this, id);
  }

  /** Stops this client's informers and forgets the client. */
  close() {
    this.clients.byClient.delete(this.id);
    return this.clients.call({ op: 'close', client: this.id });
  }
}

/**
 * @typedef {object} InformerState
 * @property {string} informer
 * @property {string} resource
 * @property {string} [namespace]
 * @property {boolean} running
 * @property {boolean} disconnected waiting for resume()
 * @property {boolean} synced      has had a complete list
 * @property {boolean} watchList
 * @property {boolean} bookmarks
 * @property {string} resourceVersion the revision the store is synced to
 * @property {number} items
 * @property {object[]} [objects]  store(): the store's objects
 */

export class Informer {
  constructor(client, id) { this.client = client; this.id = id; }
  #op(op, extra = {}) { return this.client.clients.call({ op, client: this.client.id, informer: this.id, ...extra }); }
  /** Runs the reflector (list, then watch). @returns {Promise<InformerState>} */
  start() { return this.#op('start'); }
  /** Ends the reflector; the store keeps what it had. @returns {Promise<InformerState>} */
  stop() { return this.#op('stop'); }
  /** Closes the watch as a dropped connection would and waits there, at the revision it reached. @returns {Promise<InformerState>} */
  disconnect() { return this.#op('disconnect'); }
  /** Watches again from that revision: nothing is missed, or a 410 makes it relist. @returns {Promise<InformerState>} */
  resume() { return this.#op('resume'); }
  /** Changes watch-list and bookmarks for the next round. @param {{watchList?: boolean, bookmarks?: boolean}} opts @returns {Promise<InformerState>} */
  configure(opts) { return this.#op('configure', opts); }
  /** The store's contents. @returns {Promise<InformerState>} */
  store() { return this.#op('store').then((s) => ({ ...s, objects: (s.objects || []) })); }
  /** Stops and forgets the informer. */
  remove() { return this.#op('remove'); }
}
