// The etcd v3 JSON gateway as the lab uses it: keys and values travel
// base64-encoded, 64-bit integers as decimal strings (omitted when zero).

const enc = new TextEncoder();
const dec = new TextDecoder();

export function b64(s) {
  const bytes = typeof s === 'string' ? enc.encode(s) : s;
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

export function unb64(s) {
  if (!s) return '';
  return dec.decode(Uint8Array.from(atob(s), (c) => c.charCodeAt(0)));
}

// n reads a gateway integer ("42", 42 or absent) as a Number.
export const n = (x) => (x === undefined || x === null ? 0 : Number(x));

// prefixEnd is etcd's range end for "every key starting with p".
export function prefixEnd(p) {
  const bytes = Array.from(enc.encode(p));
  for (let i = bytes.length - 1; i >= 0; i--) {
    if (bytes[i] < 0xff) { bytes[i]++; return new Uint8Array(bytes.slice(0, i + 1)); }
  }
  return new Uint8Array([0]);
}

export class GatewayError extends Error {
  constructor(status, body) {
    let msg = body;
    // A unary error is {"error": "...", "message": "..."}; a watch stream's
    // is {"error": {"message": "...", ...}}.
    try { const j = JSON.parse(body); msg = j.message || j.error?.message || (typeof j.error === 'string' ? j.error : '') || body; } catch { /* not JSON */ }
    super(msg);
    this.status = status;
    this.body = body;
  }
}

export class Etcd {
  constructor(transport) { this.t = transport; }

  async call(path, req) {
    const r = await this.t.request('POST', path, { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(req) });
    if (r.status !== 200) throw new GatewayError(r.status, r.body);
    return { json: JSON.parse(r.body || '{}'), raw: r.body };
  }

  // range(key, {prefix, all, rev, keysOnly, limit}) -> {header, kvs, count, raw}
  async range(key, opts = {}) {
    const req = { key: b64(key) };
    if (opts.all) { req.key = b64('\0'); req.range_end = b64('\0'); }
    else if (opts.prefix) req.range_end = b64(prefixEnd(key));
    if (opts.rev) req.revision = String(opts.rev);
    if (opts.keysOnly) req.keys_only = true;
    if (opts.limit) req.limit = String(opts.limit);
    const { json, raw } = await this.call('/v3/kv/range', req);
    return { header: json.header || {}, kvs: (json.kvs || []).map(decodeKV), count: n(json.count), more: !!json.more, raw };
  }

  async compact(rev) {
    return this.call('/v3/kv/compaction', { revision: String(rev), physical: true });
  }

  // watch(key, {prefix, all, rev}, onResult, onEnd) -> cancel. onResult
  // gets each decoded {header, created, canceled, compactRevision, events}.
  watch(key, opts, onResult, onEnd) {
    const create = { key: b64(key) };
    if (opts.all) { create.key = b64('\0'); create.range_end = b64('\0'); }
    else if (opts.prefix) create.range_end = b64(prefixEnd(key));
    if (opts.rev) create.start_revision = String(opts.rev);
    if (opts.prevKv) create.prev_kv = true;
    return this.t.watch('/v3/watch', '', (e) => {
      if (e.type === 'open' && e.status !== 200) { onEnd(new GatewayError(e.status, e.body)); return; }
      if (e.type === 'end') { onEnd(e.reason === 'eof' || e.reason === 'canceled' ? null : new Error(e.reason)); return; }
      if (e.type !== 'frame') return;
      let msg;
      try { msg = JSON.parse(e.data); } catch { return; }
      if (msg.error) { onEnd(new GatewayError(n(msg.code) || 500, e.data)); return; }
      const r = msg.result || {};
      onResult({
        header: r.header || {}, created: !!r.created, canceled: !!r.canceled,
        compactRevision: n(r.compact_revision), cancelReason: r.cancel_reason || '',
        events: (r.events || []).map((ev) => ({ type: ev.type || 'PUT', kv: decodeKV(ev.kv || {}), prevKv: ev.prev_kv ? decodeKV(ev.prev_kv) : null })),
        raw: e.data,
      });
    }, { method: 'POST', body: JSON.stringify({ create_request: create }), headers: { 'Content-Type': 'application/json' }, transport: 'http' });
  }
}

// leaseHex is a lease ID as etcdctl prints it, Go's %016x; the decimal
// string of etcd's JSON is read as a BigInt, since an ID does not fit a
// Number's 53 bits.
export const leaseHex = (id) => BigInt(id).toString(16).padStart(16, '0');

export function decodeKV(kv) {
  return {
    key: unb64(kv.key), value: unb64(kv.value),
    keyB64: kv.key || '', valueB64: kv.value || '',
    createRevision: n(kv.create_revision), modRevision: n(kv.mod_revision),
    version: n(kv.version), lease: n(kv.lease),
    leaseHex: kv.lease && kv.lease !== '0' ? leaseHex(kv.lease) : '',
  };
}
