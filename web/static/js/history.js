// The lab's history: the list of operations the learner performed (GET,
// PUT, apply, console commands, compactions...). Replaying it against a
// fresh store gives the same revisions, which is what makes reload,
// export/import and share links work without storing the store itself.

const FORMAT = 'rvplay-lab-history';
const VERSION = 1;
const MAX_OPS = 5000;

export class History {
  constructor(storageKey) { this.key = storageKey; this.ops = []; }

  add(op) {
    this.ops.push(op);
    if (this.ops.length > MAX_OPS) this.ops.splice(0, this.ops.length - MAX_OPS);
    this.save();
  }

  replace(ops) { this.ops = [...ops]; this.save(); }

  save() {
    try { localStorage.setItem(this.key, JSON.stringify({ format: FORMAT, version: VERSION, ops: this.ops })); } catch { /* storage full or disabled */ }
  }

  load() {
    try {
      const raw = localStorage.getItem(this.key);
      this.ops = raw ? History.parse(raw) : [];
    } catch { this.ops = []; }
    return this.ops;
  }

  exportJSON() {
    return JSON.stringify({ format: FORMAT, version: VERSION, exported: new Date().toISOString(), ops: this.ops }, null, 1);
  }

  // replaceState drops the share fragment from the address bar once it has
  // been replayed (a reload then restores from storage instead).
  replaceState(url, ops) {
    this.replace(ops);
    window.history.replaceState(null, '', url);
  }

  static parse(text) {
    const j = JSON.parse(text);
    if (!j || j.format !== FORMAT || !Array.isArray(j.ops)) throw new Error('not an rvplay lab history');
    if (j.version !== VERSION) throw new Error(`unsupported history version ${j.version}`);
    return j.ops.filter((o) => o && typeof o.op === 'string');
  }
}

function toB64url(bytes) {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromB64url(s) {
  const b = atob(s.replace(/-/g, '+').replace(/_/g, '/'));
  return Uint8Array.from(b, (c) => c.charCodeAt(0));
}

async function pipe(bytes, stream) {
  const out = new Response(new Blob([bytes]).stream().pipeThrough(stream));
  return new Uint8Array(await out.arrayBuffer());
}

// encodeShare packs the operations into a URL fragment: deflate-raw, base64url.
export async function encodeShare(ops) {
  const json = new TextEncoder().encode(JSON.stringify({ format: FORMAT, version: VERSION, ops }));
  return toB64url(await pipe(json, new CompressionStream('deflate-raw')));
}

export async function decodeShare(code) {
  const bytes = await pipe(fromB64url(code), new DecompressionStream('deflate-raw'));
  return History.parse(new TextDecoder().decode(bytes));
}
