// The jq filters the articles pipe etcdctl's JSON into
// (`.kvs[].key|=@base64d`, `.kvs[0].mod_revision`, `.header.revision`) and
// much of jq 1.6 besides, printing values as jq 1.6 prints them. Checked
// against Debian's jq 1.6 in test/consolediff. Left out: function
// definitions, modules, foreach, labels, destructuring, streaming, dates.
//
// Values are jq 1.6's: null, booleans, numbers (doubles, so etcd's 64-bit
// IDs print rounded exactly as the articles show them), strings, arrays and
// objects (JqObject, which keeps keys in insertion order as jq does; a
// plain JS object would move integer-like keys first).

export class JqObject {
  constructor(entries) { this.m = new Map(entries || []); }
  get(k) { return this.m.get(k); }
  has(k) { return this.m.has(k); }
  set(k, v) { this.m.set(k, v); return this; }
  delete(k) { this.m.delete(k); }
  keys() { return [...this.m.keys()]; }
  get size() { return this.m.size; }
  clone() { return new JqObject(this.m); }
}

export class JqError extends Error {
  constructor(value) { super(typeof value === 'string' ? value : format(value, { compact: true }) + ' (not a string)'); this.value = value; }
}
export class CompileError extends Error {}
const STOP = { stop: true };

const errorf = (msg) => new JqError(msg);

function typeName(v) {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return 'number';
  if (typeof v === 'string') return 'string';
  if (Array.isArray(v)) return 'array';
  return 'object';
}

const truthy = (v) => v !== null && v !== false;

function order(v) {
  if (v === null) return 0;
  if (v === false) return 1;
  if (v === true) return 2;
  return { number: 3, string: 4, array: 5, object: 6 }[typeName(v)];
}

function cmpStr(a, b) {
  // jq compares strings by bytes; UTF-16 order agrees outside surrogates.
  const ea = new TextEncoder().encode(a), eb = new TextEncoder().encode(b);
  for (let i = 0; i < ea.length && i < eb.length; i++) if (ea[i] !== eb[i]) return ea[i] < eb[i] ? -1 : 1;
  return ea.length - eb.length === 0 ? 0 : ea.length < eb.length ? -1 : 1;
}

export function compare(a, b) {
  const oa = order(a), ob = order(b);
  if (oa !== ob) return oa < ob ? -1 : 1;
  if (typeof a === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string') return cmpStr(a, b);
  if (Array.isArray(a)) {
    for (let i = 0; i < a.length && i < b.length; i++) { const c = compare(a[i], b[i]); if (c) return c; }
    return a.length === b.length ? 0 : a.length < b.length ? -1 : 1;
  }
  if (a instanceof JqObject) {
    const ka = a.keys().sort(cmpStr), kb = b.keys().sort(cmpStr);
    const c = compare(ka, kb);
    if (c) return c;
    for (const k of ka) { const d = compare(a.get(k), b.get(k)); if (d) return d; }
  }
  return 0;
}

// ---- JSON in and out -------------------------------------------------------

class ParseError extends Error {}

export function parseJSON(text) {
  const p = { s: text, i: 0 };
  ws(p);
  const v = value(p);
  ws(p);
  if (p.i !== p.s.length) throw perr(p, 'Unfinished JSON term');
  return v;
}

function perr(p, msg) {
  let line = 1, col = 0;
  for (const c of p.s.slice(0, p.i)) { col++; if (c === '\n') { line++; col = 0; } }
  return new ParseError(`${msg} at line ${line}, column ${col}`);
}

function ws(p) { while (p.i < p.s.length && ' \t\n\r'.includes(p.s[p.i])) p.i++; }

function value(p) {
  const s = p.s;
  if (p.i >= s.length) throw perr(p, 'Unfinished JSON term at EOF');
  const c = s[p.i];
  if (c === '{') {
    p.i++;
    const o = new JqObject();
    ws(p);
    if (s[p.i] === '}') { p.i++; return o; }
    for (;;) {
      ws(p);
      if (s[p.i] !== '"') throw perr(p, 'Object keys must be strings');
      const k = str(p);
      ws(p);
      if (s[p.i] !== ':') throw perr(p, 'Objects must consist of key:value pairs');
      p.i++;
      ws(p);
      o.set(k, value(p));
      ws(p);
      if (s[p.i] === ',') { p.i++; continue; }
      if (s[p.i] === '}') { p.i++; return o; }
      throw perr(p, 'Expected separator between values');
    }
  }
  if (c === '[') {
    p.i++;
    const a = [];
    ws(p);
    if (s[p.i] === ']') { p.i++; return a; }
    for (;;) {
      ws(p);
      a.push(value(p));
      ws(p);
      if (s[p.i] === ',') { p.i++; continue; }
      if (s[p.i] === ']') { p.i++; return a; }
      throw perr(p, 'Expected separator between values');
    }
  }
  if (c === '"') return str(p);
  for (const [lit, v] of [['true', true], ['false', false], ['null', null]]) {
    if (s.startsWith(lit, p.i)) { p.i += lit.length; return v; }
  }
  if (c === '-' || (c >= '0' && c <= '9')) {
    let j = p.i + 1;
    while (j < s.length && '0123456789.eE+-'.includes(s[j])) j++;
    const n = Number(s.slice(p.i, j));
    if (Number.isNaN(n)) throw perr(p, 'Invalid numeric literal');
    p.i = j;
    return n;
  }
  while (p.i < s.length && !' \t\r\n,]}:'.includes(s[p.i])) p.i++;
  throw perr(p, 'Invalid literal');
}

function str(p) {
  const s = p.s;
  p.i++;
  let b = '';
  while (p.i < s.length) {
    const c = s[p.i];
    if (c === '"') { p.i++; return b; }
    if (c === '\\') {
      const e = s[p.i + 1];
      p.i += 2;
      const esc = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[e];
      if (esc !== undefined) { b += esc; continue; }
      if (e === 'u') {
        const h = s.slice(p.i, p.i + 4);
        if (!/^[0-9a-fA-F]{4}$/.test(h)) throw perr(p, 'Invalid escape');
        b += String.fromCharCode(parseInt(h, 16));
        p.i += 4;
        continue;
      }
      throw perr(p, 'Invalid escape');
    }
    b += c;
    p.i++;
  }
  throw perr(p, 'Unfinished string');
}

// formatNumber prints a number as jq 1.6 does: the shortest digits that
// read back to the same double, plain unless the exponent is below -4 or
// more than 15 past the last digit (then 1e+17, at least two exponent
// digits).
export function formatNumber(f) {
  if (Number.isNaN(f)) return 'null';
  if (f > Number.MAX_VALUE) f = Number.MAX_VALUE;
  if (f < -Number.MAX_VALUE) f = -Number.MAX_VALUE;
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  let e = f.toExponential();
  let sign = '';
  if (e[0] === '-') { sign = '-'; e = e.slice(1); }
  const [mant, exp] = e.split('e');
  const digits = mant.replace('.', '');
  const x = Number(exp);
  const decpt = x + 1;
  const n = digits.length;
  if (decpt <= -4 || decpt > n + 15) {
    const m = n > 1 ? digits[0] + '.' + digits.slice(1) : digits;
    const ax = Math.abs(x);
    return `${sign}${m}e${x < 0 ? '-' : '+'}${ax < 10 ? '0' + ax : ax}`;
  }
  if (decpt <= 0) return sign + '0.' + '0'.repeat(-decpt) + digits;
  if (decpt >= n) return sign + digits + '0'.repeat(decpt - n);
  return sign + digits.slice(0, decpt) + '.' + digits.slice(decpt);
}

function quote(s, ascii) {
  let b = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') b += '\\"';
    else if (ch === '\\') b += '\\\\';
    else if (ch === '\n') b += '\\n';
    else if (ch === '\t') b += '\\t';
    else if (ch === '\r') b += '\\r';
    else if (ch === '\b') b += '\\b';
    else if (ch === '\f') b += '\\f';
    else if (c < 0x20 || c === 0x7f) b += '\\u' + c.toString(16).padStart(4, '0');
    else if (ascii && c > 0x7e) {
      for (let i = 0; i < ch.length; i++) b += '\\u' + ch.charCodeAt(i).toString(16).padStart(4, '0');
    } else b += ch;
  }
  return b + '"';
}

// format prints a value as jq does: {indent, compact, sortKeys, ascii, tab}.
export function format(v, o = {}, level = 0) {
  const indent = o.indent ?? 2;
  const nl = (l) => (o.compact ? '' : '\n' + (o.tab ? '\t'.repeat(l) : ' '.repeat(l * indent)));
  if (v === null) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return formatNumber(v);
  if (typeof v === 'string') return quote(v, o.ascii);
  if (Array.isArray(v)) {
    if (!v.length) return '[]';
    return '[' + v.map((e) => nl(level + 1) + format(e, o, level + 1)).join(',') + nl(level) + ']';
  }
  if (!v.size) return '{}';
  const keys = o.sortKeys ? v.keys().sort(cmpStr) : v.keys();
  return '{' + keys.map((k) => nl(level + 1) + quote(k, o.ascii) + ':' + (o.compact ? '' : ' ') + format(v.get(k), o, level + 1)).join(',') + nl(level) + '}';
}

// dump is jq's truncated dump of a value in error messages.
function dump(v) {
  const s = format(v, { compact: true });
  return s.length > 11 ? s.slice(0, 11) + '...' : s;
}

// ---- parsing ---------------------------------------------------------------

const KEYWORDS = new Set(['if', 'then', 'elif', 'else', 'end', 'as', 'def', 'reduce', 'foreach', 'try', 'catch', 'label', 'import', 'include', 'and', 'or', '__loc__']);
const OPS = ['//=', '|=', '+=', '-=', '*=', '/=', '%=', '==', '!=', '<=', '>=', '//', '|', ',', '(', ')', '[', ']', '{', '}', ':', ';', '=', '<', '>', '+', '-', '*', '/', '%', '?'];
const isIdent = (c, first) => /[A-Za-z_]/.test(c || '') || (!first && /[0-9]/.test(c || ''));

function syntaxError(what, src, pad) {
  return new CompileError(`syntax error, unexpected ${what} (Unix shell quoting issues?) at <top-level>, line 1:\n${src}${' '.repeat(pad)}`);
}

function lex(src) {
  const toks = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (' \t\n\r'.includes(c)) { i++; continue; }
    if (c === '#') { while (i < src.length && src[i] !== '\n') i++; continue; }
    if (c === '.') {
      if (src[i + 1] === '.') { toks.push({ kind: '..', pos: i }); i += 2; continue; }
      let j = i + 1;
      if (isIdent(src[j], true)) {
        while (isIdent(src[j], false)) j++;
        toks.push({ kind: 'field', text: src.slice(i + 1, j), pos: i });
        i = j;
        continue;
      }
      toks.push({ kind: '.', pos: i });
      i++;
      continue;
    }
    if (c === '$' || c === '@') {
      let j = i + 1;
      while (isIdent(src[j], j === i + 1) || (c === '$' && src[j] === ':' && src[j + 1] === ':')) j += src[j] === ':' ? 2 : 1;
      if (j === i + 1) throw syntaxError('INVALID_CHARACTER', src, i);
      toks.push({ kind: c === '$' ? 'var' : 'format', text: src.slice(i + 1, j), pos: i });
      i = j;
      continue;
    }
    if (isIdent(c, true)) {
      let j = i;
      while (isIdent(src[j], false) || (src[j] === ':' && src[j + 1] === ':')) j += src[j] === ':' ? 2 : 1;
      const w = src.slice(i, j);
      toks.push({ kind: KEYWORDS.has(w) ? 'kw' : 'ident', text: w, pos: i });
      i = j;
      continue;
    }
    if (c >= '0' && c <= '9') {
      let j = i;
      while (j < src.length && (/[0-9.eE]/.test(src[j]) || ((src[j] === '+' || src[j] === '-') && /[eE]/.test(src[j - 1])))) j++;
      toks.push({ kind: 'num', num: Number(src.slice(i, j)), pos: i });
      i = j;
      continue;
    }
    if (c === '"') {
      const [s, end] = lexString(src, i);
      toks.push({ kind: 'str', str: s, pos: i });
      i = end;
      continue;
    }
    const op = OPS.find((o) => src.startsWith(o, i));
    if (!op) throw syntaxError('INVALID_CHARACTER', src, i);
    toks.push({ kind: op, text: op, pos: i });
    i += op.length;
  }
  toks.push({ kind: 'eof', pos: src.length });
  return toks;
}

function lexString(src, i) {
  const node = { t: 'str', parts: [], format: '' };
  let b = '';
  let j = i + 1;
  while (j < src.length) {
    const c = src[j];
    if (c === '"') {
      if (b || !node.parts.length) node.parts.push({ t: 'lit', v: b });
      return [node, j + 1];
    }
    if (c === '\\') {
      const e = src[j + 1];
      j += 2;
      const esc = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }[e];
      if (esc !== undefined) { b += esc; continue; }
      if (e === 'u') { b += String.fromCharCode(parseInt(src.slice(j, j + 4), 16)); j += 4; continue; }
      if (e === '(') {
        let depth = 1, k = j;
        while (k < src.length && depth > 0) {
          if (src[k] === '(') depth++;
          else if (src[k] === ')') depth--;
          else if (src[k] === '"') { k = lexString(src, k)[1] - 1; }
          k++;
        }
        if (depth) throw syntaxError('$end', src, Math.max(src.length - 1, 0));
        if (b) { node.parts.push({ t: 'lit', v: b }); b = ''; }
        node.parts.push(parseFilter(src.slice(j, k - 1)));
        j = k;
        continue;
      }
      throw new CompileError(`Invalid escape at line 1, column ${j} (while parsing '"${src.slice(i + 1)}') at <top-level>, line 1:\n${src}`);
    }
    b += c;
    j++;
  }
  throw new CompileError(`syntax error, unexpected $end, expecting QQSTRING_TEXT or QQSTRING_INTERP_START or QQSTRING_END (Unix shell quoting issues?) at <top-level>, line 1:\n${src}`);
}

class Parser {
  constructor(src, toks) { this.src = src; this.toks = toks; this.i = 0; }
  peek() { return this.toks[this.i]; }
  next() { const t = this.toks[this.i]; if (t.kind !== 'eof') this.i++; return t; }
  accept(k) { if (this.peek().kind === k) { this.i++; return true; } return false; }
  acceptKw(w) { const t = this.peek(); if (t.kind === 'kw' && t.text === w) { this.i++; return true; } return false; }
  expect(k) { if (!this.accept(k)) throw this.unexpected(this.peek()); }
  expectKw(w) { if (!this.acceptKw(w)) throw this.unexpected(this.peek()); }

  unexpected(t) {
    const what = { eof: '$end', ident: 'IDENT', num: 'LITERAL', str: 'QQSTRING_START', field: 'FIELD', var: "'$'", format: 'FORMAT' }[t.kind] ||
      (t.kind === 'kw' ? t.text : t.kind.length > 1 ? t.kind : `'${t.kind}'`);
    return syntaxError(what, this.src, t.kind === 'eof' && t.pos > 0 ? t.pos - 1 : t.pos);
  }

  pipe() {
    const l = this.comma();
    if (this.acceptKw('as')) {
      const v = this.next();
      if (v.kind !== 'var') throw this.unexpected(v);
      this.expect('|');
      return { t: 'bind', source: l, name: v.text, body: this.pipe() };
    }
    if (this.accept('|')) return { t: 'pipe', l, r: this.pipe() };
    return l;
  }

  comma() {
    let l = this.alt();
    while (this.accept(',')) l = { t: 'comma', l, r: this.alt() };
    return l;
  }

  alt() {
    const l = this.assign();
    if (this.accept('//')) return { t: 'bin', op: '//', l, r: this.alt() };
    return l;
  }

  assign() {
    const l = this.or();
    const t = this.peek();
    if (['=', '|=', '+=', '-=', '*=', '/=', '%=', '//='].includes(t.kind)) { this.i++; return { t: 'assign', op: t.kind, l, r: this.alt() }; }
    return l;
  }

  or() { let l = this.and(); while (this.acceptKw('or')) l = { t: 'bin', op: 'or', l, r: this.and() }; return l; }
  and() { let l = this.cmp(); while (this.acceptKw('and')) l = { t: 'bin', op: 'and', l, r: this.cmp() }; return l; }

  cmp() {
    const l = this.add();
    const t = this.peek();
    if (['==', '!=', '<', '<=', '>', '>='].includes(t.kind)) { this.i++; return { t: 'bin', op: t.kind, l, r: this.add() }; }
    return l;
  }

  add() {
    let l = this.mul();
    for (let t = this.peek(); t.kind === '+' || t.kind === '-'; t = this.peek()) { this.i++; l = { t: 'bin', op: t.kind, l, r: this.mul() }; }
    return l;
  }

  mul() {
    let l = this.unary();
    for (let t = this.peek(); ['*', '/', '%'].includes(t.kind); t = this.peek()) { this.i++; l = { t: 'bin', op: t.kind, l, r: this.unary() }; }
    return l;
  }

  unary() {
    if (this.accept('-')) return { t: 'neg', x: this.unary() };
    return this.postfix();
  }

  postfix() { return this.suffixes(this.term()); }

  suffixes(t) {
    for (;;) {
      const tk = this.peek();
      if (tk.kind === 'field') { this.i++; t = { t: 'index', target: t, key: { t: 'lit', v: tk.text } }; continue; }
      if (tk.kind === '.') {
        const nx = this.toks[this.i + 1];
        if (nx.kind === 'str') { this.i += 2; t = { t: 'index', target: t, key: nx.str }; continue; }
        if (nx.kind === '[') { this.i++; continue; }
        return t;
      }
      if (tk.kind === '[') { this.i++; t = this.bracket(t); continue; }
      if (tk.kind === '?') { this.i++; t = { t: 'opt', body: t }; continue; }
      return t;
    }
  }

  bracket(t) {
    if (this.accept(']')) return { t: 'iter', target: t };
    if (this.accept(':')) { const to = this.pipe(); this.expect(']'); return { t: 'slice', target: t, from: null, to }; }
    const k = this.pipe();
    if (this.accept(':')) {
      if (this.accept(']')) return { t: 'slice', target: t, from: k, to: null };
      const to = this.pipe();
      this.expect(']');
      return { t: 'slice', target: t, from: k, to };
    }
    this.expect(']');
    return { t: 'index', target: t, key: k };
  }

  term() {
    const t = this.next();
    switch (t.kind) {
      case '.': {
        const nx = this.peek();
        if (nx.kind === 'str') { this.i++; return { t: 'index', target: { t: 'id' }, key: nx.str }; }
        if (nx.kind === '[') { this.i++; return this.bracket({ t: 'id' }); }
        return { t: 'id' };
      }
      case '..': return { t: 'recurse' };
      case 'field': return { t: 'index', target: { t: 'id' }, key: { t: 'lit', v: t.text } };
      case 'num': return { t: 'lit', v: t.num };
      case 'str': return t.str;
      case 'format':
        if (this.peek().kind === 'str') return { ...this.next().str, format: t.text };
        return { t: 'format', name: t.text };
      case 'var': return { t: 'var', name: t.text };
      case '(': { const e = this.pipe(); this.expect(')'); return e; }
      case '[': {
        if (this.accept(']')) return { t: 'array', body: null };
        const e = this.pipe();
        this.expect(']');
        return { t: 'array', body: e };
      }
      case '{': return this.object();
      case 'ident': {
        const c = { t: 'call', name: t.text, args: [] };
        if (this.accept('(')) {
          for (;;) {
            c.args.push(this.pipe());
            if (this.accept(';')) continue;
            this.expect(')');
            break;
          }
        }
        return c;
      }
      case 'kw':
        if (t.text === 'if') return this.ifRest();
        if (t.text === 'try') {
          const body = this.postfix();
          return { t: 'try', body, catch: this.acceptKw('catch') ? this.postfix() : null };
        }
        if (t.text === 'reduce') {
          const source = this.postfix();
          this.expectKw('as');
          const v = this.next();
          if (v.kind !== 'var') throw this.unexpected(v);
          this.expect('(');
          const init = this.pipe();
          this.expect(';');
          const update = this.pipe();
          this.expect(')');
          return { t: 'reduce', source, name: v.text, init, update };
        }
    }
    throw this.unexpected(t);
  }

  ifRest() {
    const cond = this.pipe();
    this.expectKw('then');
    const then = this.pipe();
    const n = { t: 'if', cond, then, els: null };
    if (this.acceptKw('elif')) { n.els = this.ifRest(); return n; }
    if (this.acceptKw('else')) n.els = this.pipe();
    this.expectKw('end');
    return n;
  }

  object() {
    const entries = [];
    if (this.accept('}')) return { t: 'object', entries };
    for (;;) {
      const e = { key: null, value: null };
      const t = this.next();
      if (t.kind === 'ident' || t.kind === 'kw') e.key = { t: 'lit', v: t.text };
      else if (t.kind === 'var') { e.key = { t: 'lit', v: t.text }; e.value = { t: 'var', name: t.text }; } else if (t.kind === 'str') e.key = t.str;
      else if (t.kind === 'format') {
        const s = this.next();
        if (s.kind !== 'str') throw this.unexpected(s);
        e.key = { ...s.str, format: t.text };
      } else if (t.kind === '(') {
        e.key = this.pipe();
        this.expect(')');
        if (this.peek().kind !== ':') throw this.unexpected(this.peek());
      } else throw this.unexpected(t);
      if (this.accept(':')) e.value = this.objectValue();
      entries.push(e);
      if (this.accept(',')) continue;
      this.expect('}');
      return { t: 'object', entries };
    }
  }

  // objectValue is jq's ExpD: terms joined by pipes, without commas.
  objectValue() {
    if (this.accept('-')) return { t: 'neg', x: this.objectValue() };
    const l = this.postfix();
    if (this.accept('|')) return { t: 'pipe', l, r: this.objectValue() };
    return l;
  }
}

function parseFilter(src) {
  const p = new Parser(src, lex(src));
  if (p.peek().kind === 'eof') return { t: 'id' };
  const n = p.pipe();
  if (p.peek().kind !== 'eof') throw p.unexpected(p.peek());
  return n;
}

// ---- evaluation -------------------------------------------------------------

// A scope is a chain of {name, value, parent}.
const lookup = (sc, name) => { for (; sc; sc = sc.parent) if (sc.name === name) return { value: sc.value }; return null; };
const withVar = (sc, name, value) => ({ name, value, parent: sc });

function isJqError(e) { return e instanceof JqError; }

function evaluate(n, input, sc, out) {
  switch (n.t) {
    case 'id': return out(input);
    case 'recurse': return recurse(input, out);
    case 'lit': return out(n.v);
    case 'str': return evalString(n, input, sc, out);
    case 'format': return out(applyFormat(n.name, input));
    case 'var': {
      if (n.name === 'ENV' || n.name === '__prog_args') return out(new JqObject());
      const v = lookup(sc, n.name);
      if (!v) throw new CompileError(`$${n.name} is not defined`);
      return out(v.value);
    }
    case 'index':
      return evaluate(n.target, input, sc, (t) => evaluate(n.key, input, sc, (k) => out(index(t, k))));
    case 'slice':
      return evaluate(n.target, input, sc, (t) => evalOpt(n.to, input, sc, (to) => evalOpt(n.from, input, sc, (from) => out(slice(t, from, to)))));
    case 'iter': return evaluate(n.target, input, sc, (t) => each(t, out));
    case 'opt':
      try { return evaluate(n.body, input, sc, out); } catch (e) { if (isJqError(e)) return undefined; throw e; }
    case 'pipe': return evaluate(n.l, input, sc, (v) => evaluate(n.r, v, sc, out));
    case 'comma': evaluate(n.l, input, sc, out); return evaluate(n.r, input, sc, out);
    case 'neg':
      return evaluate(n.x, input, sc, (v) => {
        if (typeof v !== 'number') throw errorf(`${typeName(v)} (${dump(v)}) cannot be negated`);
        return out(-v);
      });
    case 'bin': return evalBinop(n, input, sc, out);
    case 'assign': return evalAssign(n, input, sc, out);
    case 'array': {
      const arr = [];
      if (n.body) evaluate(n.body, input, sc, (v) => { arr.push(v); });
      return out(arr);
    }
    case 'object': return buildObject(n.entries, input, sc, new JqObject(), out);
    case 'if':
      return evaluate(n.cond, input, sc, (c) => {
        if (truthy(c)) return evaluate(n.then, input, sc, out);
        return n.els ? evaluate(n.els, input, sc, out) : out(input);
      });
    case 'try':
      try { return evaluate(n.body, input, sc, out); } catch (e) {
        if (!isJqError(e)) throw e;
        return n.catch ? evaluate(n.catch, e.value, sc, out) : undefined;
      }
    case 'bind': return evaluate(n.source, input, sc, (v) => evaluate(n.body, input, withVar(sc, n.name, v), out));
    case 'reduce':
      return evaluate(n.init, input, sc, (acc) => {
        evaluate(n.source, input, sc, (v) => {
          let last = null, got = false;
          evaluate(n.update, acc, withVar(sc, n.name, v), (u) => { last = u; got = true; });
          acc = got ? last : null;
        });
        return out(acc);
      });
    case 'call': return callBuiltin(n, input, sc, out);
  }
  throw errorf('unsupported filter');
}

function evalOpt(n, input, sc, out) { return n ? evaluate(n, input, sc, out) : out(null); }

function evalString(n, input, sc, out) {
  const rec = (i, acc) => {
    if (i === n.parts.length) return out(acc);
    const p = n.parts[i];
    if (p.t === 'lit' && typeof p.v === 'string' && !p.format) return rec(i + 1, acc + p.v);
    return evaluate(p, input, sc, (v) => rec(i + 1, acc + (n.format ? applyFormat(n.format, v) : toString(v))));
  };
  return rec(0, '');
}

function buildObject(entries, input, sc, acc, out) {
  if (!entries.length) return out(acc);
  const [e, ...rest] = entries;
  return evaluate(e.key, input, sc, (k) => {
    if (typeof k !== 'string') throw errorf('Object keys must be strings');
    const value = e.value || { t: 'index', target: { t: 'id' }, key: { t: 'lit', v: k } };
    return evaluate(value, input, sc, (v) => buildObject(rest, input, sc, acc.clone().set(k, v), out));
  });
}

function recurse(v, out) {
  out(v);
  if (Array.isArray(v)) for (const e of v) recurse(e, out);
  else if (v instanceof JqObject) for (const k of v.keys()) recurse(v.get(k), out);
}

const iterError = (v) => errorf(`Cannot iterate over ${typeName(v)} (${dump(v)})`);

function each(v, out) {
  if (Array.isArray(v)) { for (const e of v) out(e); return; }
  if (v instanceof JqObject) { for (const k of v.keys()) out(v.get(k)); return; }
  throw iterError(v);
}

function index(t, k) {
  if (t === null && (typeof k === 'string' || typeof k === 'number' || k === null || k instanceof JqObject)) return null;
  if (t instanceof JqObject && typeof k === 'string') return t.has(k) ? t.get(k) : null;
  if (Array.isArray(t)) {
    if (typeof k === 'number') {
      let i = Math.floor(k);
      if (i < 0) i += t.length;
      return i < 0 || i >= t.length ? null : t[i];
    }
    if (Array.isArray(k)) return indices(t, k);
    if (k instanceof JqObject) return slice(t, k.get('start') ?? null, k.get('end') ?? null);
  }
  if (typeof t === 'string' && k instanceof JqObject) throw errorf('Cannot index string with object');
  if (typeof k === 'string') throw errorf(`Cannot index ${typeName(t)} with ${JSON.stringify(k) === undefined ? '' : 'string ' + JSON.stringify(k)}`);
  throw errorf(`Cannot index ${typeName(t)} with ${typeName(k)}`);
}

function indices(a, sub) {
  if (!sub.length) return null;
  const out = [];
  for (let i = 0; i + sub.length <= a.length; i++) if (sub.every((s, j) => compare(a[i + j], s) === 0)) out.push(i);
  return out;
}

function clampSlice(n, from, to) {
  const bound = (v, def) => {
    if (v === null) return def;
    if (typeof v !== 'number') throw errorf('Start and end indices of an array slice must be numbers');
    let i = Math.floor(v);
    if (i < 0) i += n;
    return Math.min(Math.max(i, 0), n);
  };
  const a = bound(from, 0);
  let b = bound(to, n);
  if (b < a) b = a;
  return [a, b];
}

function slice(t, from, to) {
  if (t === null) return null;
  if (Array.isArray(t)) { const [a, b] = clampSlice(t.length, from, to); return t.slice(a, b); }
  if (typeof t === 'string') { const r = [...t]; const [a, b] = clampSlice(r.length, from, to); return r.slice(a, b).join(''); }
  throw errorf(`Cannot index ${typeName(t)} with object`);
}

function evalBinop(n, input, sc, out) {
  if (n.op === 'and' || n.op === 'or') {
    return evaluate(n.l, input, sc, (l) => {
      if (n.op === 'and' && !truthy(l)) return out(false);
      if (n.op === 'or' && truthy(l)) return out(true);
      return evaluate(n.r, input, sc, (r) => out(truthy(r)));
    });
  }
  if (n.op === '//') {
    let found = false;
    try {
      evaluate(n.l, input, sc, (l) => { if (truthy(l)) { found = true; out(l); } });
    } catch (e) { if (!isJqError(e)) throw e; }
    return found ? undefined : evaluate(n.r, input, sc, out);
  }
  return evaluate(n.r, input, sc, (r) => evaluate(n.l, input, sc, (l) => out(arith(n.op, l, r))));
}

const cannot = (l, r, what) => errorf(`${typeName(l)} (${dump(l)}) and ${typeName(r)} (${dump(r)}) ${what}`);

function deepMerge(a, b) {
  const o = a.clone();
  for (const k of b.keys()) {
    const av = o.get(k), bv = b.get(k);
    o.set(k, av instanceof JqObject && bv instanceof JqObject ? deepMerge(av, bv) : bv);
  }
  return o;
}

function arith(op, l, r) {
  switch (op) {
    case '==': return compare(l, r) === 0;
    case '!=': return compare(l, r) !== 0;
    case '<': return compare(l, r) < 0;
    case '<=': return compare(l, r) <= 0;
    case '>': return compare(l, r) > 0;
    case '>=': return compare(l, r) >= 0;
  }
  const nums = typeof l === 'number' && typeof r === 'number';
  switch (op) {
    case '+':
      if (l === null) return r;
      if (r === null) return l;
      if (nums) return l + r;
      if (typeof l === 'string' && typeof r === 'string') return l + r;
      if (Array.isArray(l) && Array.isArray(r)) return [...l, ...r];
      if (l instanceof JqObject && r instanceof JqObject) { const o = l.clone(); for (const k of r.keys()) o.set(k, r.get(k)); return o; }
      throw cannot(l, r, 'cannot be added');
    case '-':
      if (nums) return l - r;
      if (Array.isArray(l) && Array.isArray(r)) return l.filter((e) => !r.some((f) => compare(e, f) === 0));
      throw cannot(l, r, 'cannot be subtracted');
    case '*':
      if (nums) return l * r;
      if (typeof l === 'string' && typeof r === 'number') return r <= 0 ? null : l.repeat(Math.ceil(r));
      if (l instanceof JqObject && r instanceof JqObject) return deepMerge(l, r);
      throw cannot(l, r, 'cannot be multiplied');
    case '/':
      if (nums) { if (r === 0) throw cannot(l, r, 'cannot be divided because the divisor is zero'); return l / r; }
      if (typeof l === 'string' && typeof r === 'string') return splitString(l, r);
      throw cannot(l, r, 'cannot be divided');
    case '%':
      if (nums) {
        if (Math.trunc(r) === 0) throw cannot(l, r, 'cannot be divided because the divisor is zero');
        return Math.trunc(l) % Math.abs(Math.trunc(r));
      }
      throw cannot(l, r, 'cannot be divided');
  }
  throw errorf(`unknown operator ${op}`);
}

const splitString = (s, sep) => (s === '' ? [] : s.split(sep));

// evalPaths produces the paths a path expression designates, with the
// value found at each.
function evalPaths(n, path, cur, sc, out) {
  const ext = (p, k) => [...p, k];
  switch (n.t) {
    case 'id': return out(path, cur);
    case 'recurse': {
      const rec = (p, v) => {
        out(p, v);
        if (Array.isArray(v)) v.forEach((e, i) => rec(ext(p, i), e));
        else if (v instanceof JqObject) for (const k of v.keys()) rec(ext(p, k), v.get(k));
      };
      return rec(path, cur);
    }
    case 'index':
      return evalPaths(n.target, path, cur, sc, (p, t) => evaluate(n.key, cur, sc, (k) => out(ext(p, k), index(t, k))));
    case 'slice':
      return evalPaths(n.target, path, cur, sc, (p, t) => evalOpt(n.to, cur, sc, (to) => evalOpt(n.from, cur, sc, (from) =>
        out(ext(p, new JqObject([['start', from], ['end', to]])), slice(t, from, to)))));
    case 'iter':
      return evalPaths(n.target, path, cur, sc, (p, t) => {
        if (Array.isArray(t)) { t.forEach((e, i) => out(ext(p, i), e)); return; }
        if (t instanceof JqObject) { for (const k of t.keys()) out(ext(p, k), t.get(k)); return; }
        throw iterError(t);
      });
    case 'opt':
      try { return evalPaths(n.body, path, cur, sc, out); } catch (e) { if (isJqError(e)) return undefined; throw e; }
    case 'pipe': return evalPaths(n.l, path, cur, sc, (p, v) => evalPaths(n.r, p, v, sc, out));
    case 'comma': evalPaths(n.l, path, cur, sc, out); return evalPaths(n.r, path, cur, sc, out);
    case 'if':
      return evaluate(n.cond, cur, sc, (c) => {
        if (truthy(c)) return evalPaths(n.then, path, cur, sc, out);
        return n.els ? evalPaths(n.els, path, cur, sc, out) : out(path, cur);
      });
    case 'bin':
      if (n.op === '//') {
        let found = false;
        evalPaths(n.l, path, cur, sc, (p, v) => { if (truthy(v)) { found = true; out(p, v); } });
        return found ? undefined : evalPaths(n.r, path, cur, sc, out);
      }
      break;
    case 'bind': return evaluate(n.source, cur, sc, (v) => evalPaths(n.body, path, cur, withVar(sc, n.name, v), out));
    case 'try':
      try { return evalPaths(n.body, path, cur, sc, out); } catch (e) { if (isJqError(e) && !n.catch) return undefined; throw e; }
    case 'call':
      if (n.name === 'empty' && !n.args.length) return undefined;
      if (n.name === 'select' && n.args.length === 1) return evaluate(n.args[0], cur, sc, (c) => (truthy(c) ? out(path, cur) : undefined));
      if (n.name === 'recurse' && !n.args.length) return evalPaths({ t: 'recurse' }, path, cur, sc, out);
      if (n.name === 'first' && n.args.length === 1) {
        try { evalPaths(n.args[0], path, cur, sc, (p, v) => { out(p, v); throw STOP; }); } catch (e) { if (e !== STOP) throw e; }
        return undefined;
      }
      if (n.name === 'getpath' && n.args.length === 1) {
        return evaluate(n.args[0], cur, sc, (pv) => {
          if (!Array.isArray(pv)) throw errorf('Path must be specified as an array');
          return out([...path, ...pv], getpath(cur, pv));
        });
      }
      break;
  }
  let first, got = false;
  try { evaluate(n, cur, sc, (v) => { first = v; got = true; throw STOP; }); } catch (e) { if (e !== STOP && !isJqError(e)) throw e; }
  throw errorf(got ? `Invalid path expression with result ${dump(first)}` : 'Invalid path expression');
}

function getpath(v, path) {
  for (const k of path) {
    if (v === null) return null;
    v = index(v, k);
  }
  return v;
}

function setpath(v, path, nv) {
  if (!path.length) return nv;
  const [k, ...rest] = path;
  if (typeof k === 'string') {
    let o;
    if (v === null) o = new JqObject();
    else if (v instanceof JqObject) o = v.clone();
    else throw errorf(`Cannot index ${typeName(v)} with ${JSON.stringify(k) === undefined ? '' : 'string ' + JSON.stringify(k)}`);
    return o.set(k, setpath(o.has(k) ? o.get(k) : null, rest, nv));
  }
  if (typeof k === 'number') {
    let a;
    if (v === null) a = [];
    else if (Array.isArray(v)) a = [...v];
    else throw errorf(`Cannot index ${typeName(v)} with number`);
    let i = Math.trunc(k);
    if (i < 0) { i += a.length; if (i < 0) throw errorf('Out of bounds negative array index'); }
    while (a.length <= i) a.push(null);
    a[i] = setpath(a[i], rest, nv);
    return a;
  }
  if (k instanceof JqObject) {
    if (v !== null && !Array.isArray(v)) throw errorf(`Cannot update field at object index of ${typeName(v)}`);
    const arr = v || [];
    const [a, b] = clampSlice(arr.length, k.get('start') ?? null, k.get('end') ?? null);
    const c = setpath(arr.slice(a, b), rest, nv);
    if (!Array.isArray(c)) throw errorf('A slice of an array can only be assigned another array');
    return [...arr.slice(0, a), ...c, ...arr.slice(b)];
  }
  throw errorf('Invalid path component');
}

function delpaths(v, paths) {
  paths.sort((a, b) => compare(b, a));
  for (const p of paths) v = delpath(v, p);
  return v;
}

function delpath(v, path) {
  if (!path.length || v === null) return null;
  const [k, ...rest] = path;
  if (rest.length) return setpath(v, [k], delpath(index(v, k), rest));
  if (v instanceof JqObject) {
    if (typeof k !== 'string') throw errorf(`Cannot delete field at ${typeName(k)} index of object`);
    const o = v.clone();
    o.delete(k);
    return o;
  }
  if (Array.isArray(v)) {
    if (typeof k === 'number') {
      let i = Math.trunc(k);
      if (i < 0) i += v.length;
      return i < 0 || i >= v.length ? v : [...v.slice(0, i), ...v.slice(i + 1)];
    }
    if (k instanceof JqObject) {
      const [a, b] = clampSlice(v.length, k.get('start') ?? null, k.get('end') ?? null);
      return [...v.slice(0, a), ...v.slice(b)];
    }
    throw errorf('Cannot delete field at object index of array');
  }
  throw errorf(`Cannot delete field at index of ${typeName(v)}`);
}

function collectPaths(n, input, sc) {
  const ps = [];
  evalPaths(n, [], input, sc, (p) => { ps.push(p); });
  return ps;
}

function evalAssign(n, input, sc, out) {
  if (n.op === '|=') {
    let v = input;
    const dels = [];
    for (const p of collectPaths(n.l, input, sc)) {
      const old = getpath(v, p);
      let nv, got = false;
      try { evaluate(n.r, old, sc, (u) => { nv = u; got = true; throw STOP; }); } catch (e) { if (e !== STOP) throw e; }
      if (!got) { dels.push(p); continue; }
      v = setpath(v, p, nv);
    }
    if (dels.length) v = delpaths(v, dels);
    return out(v);
  }
  if (n.op === '=') {
    return evaluate(n.r, input, sc, (rv) => {
      let v = input;
      for (const p of collectPaths(n.l, input, sc)) v = setpath(v, p, rv);
      return out(v);
    });
  }
  const op = n.op.slice(0, -1);
  return evaluate(n.r, input, sc, (rv) => {
    let v = input;
    for (const p of collectPaths(n.l, input, sc)) {
      const old = getpath(v, p);
      v = setpath(v, p, op === '//' ? (truthy(old) ? old : rv) : arith(op, old, rv));
    }
    return out(v);
  });
}

// ---- builtins -------------------------------------------------------------

export function toString(v) { return typeof v === 'string' ? v : format(v, { compact: true }); }

const asciiMap = (s, lower) => s.replace(lower ? /[A-Z]/g : /[a-z]/g, (c) => (lower ? c.toLowerCase() : c.toUpperCase()));

function contains(a, b) {
  if (a instanceof JqObject) return b instanceof JqObject && b.keys().every((k) => a.has(k) && contains(a.get(k), b.get(k)));
  if (Array.isArray(a)) return Array.isArray(b) && b.every((be) => a.some((ae) => contains(ae, be)));
  if (typeof a === 'string') return typeof b === 'string' && a.includes(b);
  return compare(a, b) === 0;
}

function stringFunc(name, input, b, out) {
  const s = typeof input === 'string', t = typeof b === 'string';
  switch (name) {
    case 'startswith': case 'endswith':
      if (!s || !t) throw errorf(`${name}() requires string inputs`);
      return out(name === 'startswith' ? input.startsWith(b) : input.endsWith(b));
    case 'ltrimstr': return out(s && t && input.startsWith(b) ? input.slice(b.length) : input);
    case 'rtrimstr': return out(s && t && b && input.endsWith(b) ? input.slice(0, input.length - b.length) : input);
    case 'split':
      if (!s || !t) throw errorf('split input and separator must be strings');
      return out(splitString(input, b));
    case 'join': {
      if (!Array.isArray(input)) throw iterError(input);
      if (!t) throw errorf(`${typeName(b)} (${dump(b)}) and string ("") cannot be added`);
      return out(input.map((e) => {
        if (e === null) return '';
        if (typeof e === 'string') return e;
        if (typeof e === 'number' || typeof e === 'boolean') return toString(e);
        throw errorf(`Cannot join with ${typeName(e)}`);
      }).join(b));
    }
    case 'test': return regexTest(input, b, null, out);
    case 'indices': case 'index': case 'rindex': {
      let idx;
      if (s && t) {
        if (b === '') return out(null);
        idx = [];
        for (let i = input.indexOf(b); i >= 0; i = input.indexOf(b, i + 1)) idx.push(new TextEncoder().encode(input.slice(0, i)).length);
      } else {
        if (!Array.isArray(input)) throw errorf(`Cannot index ${typeName(input)} with ${typeName(b)}`);
        idx = indices(input, Array.isArray(b) ? b : [b]) || [];
      }
      if (name === 'indices') return out(idx);
      if (!idx.length) return out(null);
      return out(name === 'index' ? idx[0] : idx[idx.length - 1]);
    }
  }
  return undefined;
}

function compileRegex(re, flags) {
  if (typeof re !== 'string') throw errorf(`${typeName(re)} (${dump(re)}) cannot be matched, as it is not a string`);
  let f = '';
  let global = false;
  if (typeof flags === 'string') {
    for (const c of flags) {
      if (c === 'g') global = true;
      else if (c === 'i') f += 'i';
      else if (c === 's') f += 's';
      else if (!'xnlp'.includes(c)) throw errorf(`${flags} is not a valid modifier string`);
    }
  }
  try { return [new RegExp(re, f + 'u'), global]; } catch (e) { throw errorf(`${re} (at offset 0) is not a valid regex: ${e.message}`); }
}

function regexTest(input, re, flags, out) {
  if (typeof input !== 'string') throw errorf(`${typeName(input)} (${dump(input)}) cannot be matched, as it is not a string`);
  return out(compileRegex(re, flags)[0].test(input));
}

function byFunc(name, f, input, sc, out) {
  if (!Array.isArray(input)) throw iterError(input);
  const items = input.map((v) => { const keys = []; evaluate(f, v, sc, (k) => { keys.push(k); }); return { key: keys, v }; });
  if (name === 'min_by' || name === 'max_by') {
    if (!items.length) return out(null);
    let best = items[0];
    for (const it of items.slice(1)) {
      const c = compare(it.key, best.key);
      if ((name === 'min_by' && c < 0) || (name === 'max_by' && c >= 0)) best = it;
    }
    return out(best.v);
  }
  const sorted = items.map((it, i) => ({ ...it, i })).sort((a, b) => compare(a.key, b.key) || a.i - b.i);
  if (name === 'sort_by') return out(sorted.map((it) => it.v));
  if (name === 'unique_by') return out(sorted.filter((it, i) => i === 0 || compare(it.key, sorted[i - 1].key) !== 0).map((it) => it.v));
  const groups = [];
  sorted.forEach((it, i) => {
    if (i === 0 || compare(it.key, sorted[i - 1].key) !== 0) groups.push([]);
    groups[groups.length - 1].push(it.v);
  });
  return out(groups);
}

const B64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const utf8 = (s) => new TextEncoder().encode(s);
const fromUTF8 = (bytes) => new TextDecoder('utf-8', { fatal: false }).decode(bytes);

function base64Encode(s) {
  const b = utf8(s);
  let out = '';
  for (let i = 0; i < b.length; i += 3) {
    const rem = b.length - i;
    const n = (b[i] << 16) | ((rem > 1 ? b[i + 1] : 0) << 8) | (rem > 2 ? b[i + 2] : 0);
    for (let j = 0; j < 4; j++) out += j <= rem ? B64[(n >> (18 - 6 * j)) & 63] : '=';
  }
  return out;
}

// base64Decode is jq 1.6's @base64d: up to the first '=', whole groups of
// four and a final group of two or three; a single trailing character or
// one outside the alphabet is an error.
function base64Decode(v) {
  const s = toString(v);
  const out = [];
  let code = 0, n = 0;
  for (let i = 0; i < s.length && s[i] !== '='; i++) {
    const d = B64.indexOf(s[i]);
    if (d < 0) throw errorf(`string (${dump(s)}) is not valid base64 data`);
    code = code * 64 + d;
    if (++n === 4) { out.push((code >> 16) & 255, (code >> 8) & 255, code & 255); n = 0; code = 0; }
  }
  if (n === 3) out.push((code >> 10) & 255, (code >> 2) & 255);
  else if (n === 2) out.push((code >> 4) & 255);
  else if (n === 1) throw errorf(`string (${dump(s)}) trailing base64 byte found`);
  return fromUTF8(new Uint8Array(out));
}

export function applyFormat(name, v) {
  switch (name) {
    case 'text': return toString(v);
    case 'json': return format(v, { compact: true });
    case 'html': return toString(v).replace(/[<>&'"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', "'": '&#39;', '"': '&quot;' }[c]));
    case 'uri': return [...utf8(toString(v))].map((c) => (/[A-Za-z0-9\-_.~]/.test(String.fromCharCode(c)) ? String.fromCharCode(c) : '%' + c.toString(16).toUpperCase().padStart(2, '0'))).join('');
    case 'csv': case 'tsv': {
      if (!Array.isArray(v)) throw errorf(`${typeName(v)} (${dump(v)}) cannot be ${name}-formatted, only an array can be`);
      return v.map((e) => {
        if (typeof e === 'number') return formatNumber(e);
        if (typeof e === 'boolean') return String(e);
        if (e === null) return '';
        if (typeof e === 'string') return name === 'csv' ? '"' + e.replaceAll('"', '""') + '"' : e.replace(/[\\\t\n\r]/g, (c) => ({ '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' }[c]));
        throw errorf(`${typeName(e)} (${dump(e)}) is not valid in a csv row`);
      }).join(name === 'csv' ? ',' : '\t');
    }
    case 'sh': {
      const q = (e) => {
        if (typeof e === 'string') return "'" + e.replaceAll("'", "'\\''") + "'";
        if (Array.isArray(e) || e instanceof JqObject) throw errorf(`${typeName(e)} (${dump(e)}) can not be escaped for shell`);
        return toString(e);
      };
      return Array.isArray(v) ? v.map(q).join(' ') : q(v);
    }
    case 'base64': return base64Encode(toString(v));
    case 'base64d': return base64Decode(v);
  }
  throw new CompileError(`${name} is not a valid format`);
}

function flattenValue(v, depth) {
  if (!Array.isArray(v)) throw iterError(v);
  const rec = (a, d) => a.flatMap((e) => (Array.isArray(e) && d > 0 ? rec(e, d - 1) : [e]));
  return rec(v, depth);
}

function rangeGen(from, to, by, out) {
  if (typeof from !== 'number' || typeof to !== 'number' || typeof by !== 'number') throw errorf('Range bounds must be numeric');
  if (by > 0) for (let x = from; x < to; x += by) out(x);
  else if (by < 0) for (let x = from; x > to; x += by) out(x);
}

function paths(v, leafOnly, out) {
  const rec = (p, x) => {
    const kids = Array.isArray(x) ? x.map((e, i) => [i, e]) : x instanceof JqObject ? x.keys().map((k) => [k, x.get(k)]) : [];
    for (const [k, e] of kids) {
      const np = [...p, k];
      if (!leafOnly || !(Array.isArray(e) || e instanceof JqObject)) out(np);
      rec(np, e);
    }
  };
  rec([], v);
}

const first = (n, input, sc) => { let r; evaluate(n, input, sc, (v) => { r = v; throw STOP; }); return r; };

function callBuiltin(n, input, sc, out) {
  const a = n.args;
  const key = `${n.name}/${a.length}`;
  const typeCheck = (pred, msg) => { if (!pred) throw errorf(msg); };
  switch (key) {
    case 'empty/0': return undefined;
    case 'not/0': return out(!truthy(input));
    case 'length/0':
      if (input === null) return out(0);
      if (typeof input === 'boolean') throw errorf(`boolean (${dump(input)}) has no length`);
      if (typeof input === 'number') return out(Math.abs(input));
      if (typeof input === 'string') return out([...input].length);
      return out(Array.isArray(input) ? input.length : input.size);
    case 'utf8bytelength/0':
      typeCheck(typeof input === 'string', `${typeName(input)} (${dump(input)}) only strings have UTF-8 byte length`);
      return out(utf8(input).length);
    case 'keys/0': case 'keys_unsorted/0':
      if (input instanceof JqObject) return out(n.name === 'keys' ? input.keys().sort(cmpStr) : input.keys());
      if (Array.isArray(input)) return out(input.map((_, i) => i));
      throw errorf(`${typeName(input)} (${dump(input)}) has no keys`);
    case 'values/0': return input === null ? undefined : out(input);
    case 'type/0': return out(typeName(input));
    case 'tostring/0': return out(toString(input));
    case 'tonumber/0':
      if (typeof input === 'number') return out(input);
      if (typeof input === 'string') {
        const f = Number(input.trim());
        if (input.trim() === '' || Number.isNaN(f)) throw errorf(`Cannot parse '${input}' as JSON`);
        return out(f);
      }
      throw errorf(`${typeName(input)} (${dump(input)}) cannot be parsed as a number`);
    case 'tojson/0': return out(format(input, { compact: true }));
    case 'fromjson/0':
      typeCheck(typeof input === 'string', `${typeName(input)} (${dump(input)}) cannot be parsed as JSON`);
      try { return out(parseJSON(input)); } catch (e) { if (e instanceof ParseError) throw errorf(`${e.message} (while parsing '${input}')`); throw e; }
    case 'ascii_downcase/0': case 'ascii_upcase/0':
      typeCheck(typeof input === 'string', `${typeName(input)} (${dump(input)}) cannot be case-converted`);
      return out(asciiMap(input, n.name === 'ascii_downcase'));
    case 'to_entries/0':
      typeCheck(input instanceof JqObject, `${typeName(input)} (${dump(input)}) has no keys`);
      return out(input.keys().map((k) => new JqObject([['key', k], ['value', input.get(k)]])));
    case 'from_entries/0': {
      if (!Array.isArray(input)) throw iterError(input);
      const o = new JqObject();
      for (const e of input) {
        if (!(e instanceof JqObject)) throw errorf(`Cannot index ${typeName(e)} with "key"`);
        const kn = ['key', 'k', 'name', 'Name', 'Key', 'K'].find((x) => e.has(x) && truthy(e.get(x)));
        const k = kn ? e.get(kn) : null;
        const vn = ['value', 'v', 'Value', 'V'].find((x) => e.has(x));
        const v = vn ? e.get(vn) : null;
        if (typeof k === 'string') o.set(k, v);
        else if (typeof k === 'number') o.set(formatNumber(k), v);
        else if (typeof k === 'boolean') o.set(String(k), v);
        else throw errorf(`Cannot use ${typeName(k)} (${dump(k)}) as object key`);
      }
      return out(o);
    }
    case 'add/0': { let acc = null; each(input, (v) => { acc = arith('+', acc, v); }); return out(acc); }
    case 'any/0': case 'all/0': {
      const all = n.name === 'all';
      let res = all;
      try { each(input, (v) => { if (truthy(v) !== all) { res = !all; throw STOP; } }); } catch (e) { if (e !== STOP) throw e; }
      return out(res);
    }
    case 'flatten/0': return out(flattenValue(input, Infinity));
    case 'floor/0': case 'ceil/0': case 'round/0': case 'sqrt/0': case 'fabs/0':
      typeCheck(typeof input === 'number', `${typeName(input)} (${dump(input)}) number required`);
      return out({ floor: Math.floor, ceil: Math.ceil, round: Math.round, sqrt: Math.sqrt, fabs: Math.abs }[n.name](input));
    case 'sort/0': case 'unique/0': case 'min/0': case 'max/0': case 'reverse/0': {
      if (!Array.isArray(input)) {
        if (n.name === 'reverse') {
          if (input === null || input === '' || (input instanceof JqObject && !input.size)) return out([]);
          throw errorf(`Cannot index ${typeName(input)} with number`);
        }
        if (n.name === 'unique') throw iterError(input);
        if (n.name === 'min' || n.name === 'max') throw errorf(`${typeName(input)} (${dump(input)}) and ${typeName(input)} (${dump(input)}) cannot be iterated over`);
        throw errorf(`${typeName(input)} (${dump(input)}) cannot be sorted, as it is not an array`);
      }
      if (n.name === 'reverse') return out([...input].reverse());
      if (n.name === 'min' || n.name === 'max') {
        if (!input.length) return out(null);
        let best = input[0];
        for (const v of input.slice(1)) { const c = compare(v, best); if ((n.name === 'min' && c < 0) || (n.name === 'max' && c >= 0)) best = v; }
        return out(best);
      }
      const s = input.map((v, i) => [v, i]).sort((x, y) => compare(x[0], y[0]) || x[1] - y[1]).map((x) => x[0]);
      return out(n.name === 'unique' ? s.filter((v, i) => i === 0 || compare(v, s[i - 1]) !== 0) : s);
    }
    case 'first/0': case 'last/0':
      if (!Array.isArray(input)) throw errorf(`Cannot index ${typeName(input)} with number`);
      return out(input.length ? input[n.name === 'first' ? 0 : input.length - 1] : null);
    case 'paths/0': return paths(input, false, out);
    case 'leaf_paths/0': return paths(input, true, out);
    case 'recurse/0': return recurse(input, out);
    case 'env/0': return out(new JqObject());
    case 'explode/0':
      typeCheck(typeof input === 'string', `${typeName(input)} (${dump(input)}) cannot be exploded`);
      return out([...input].map((c) => c.codePointAt(0)));
    case 'implode/0':
      if (!Array.isArray(input)) throw iterError(input);
      return out(input.map((c) => { if (typeof c !== 'number') throw errorf('Unicode codepoint must be numeric'); return String.fromCodePoint(c); }).join(''));
    case 'ascii/0': return out(String.fromCharCode(input));
    case 'infinite/0': return out(Infinity);
    case 'nan/0': return out(NaN);
    case 'isnan/0': return out(Number.isNaN(input));
    case 'null/0': return out(null);
    case 'true/0': return out(true);
    case 'false/0': return out(false);
    case 'error/0': throw new JqError(input);
    case 'input_line_number/0': return out(0);
    case 'builtins/0': return out([...KNOWN].filter((b) => !b.startsWith('_')));
    case 'objects/0': case 'arrays/0': case 'strings/0': case 'numbers/0': case 'booleans/0': case 'nulls/0': case 'iterables/0': case 'scalars/0': {
      const t = typeName(input);
      const keep = { objects: t === 'object', arrays: t === 'array', strings: t === 'string', numbers: t === 'number', booleans: t === 'boolean', nulls: t === 'null', iterables: t === 'array' || t === 'object', scalars: t !== 'array' && t !== 'object' }[n.name];
      return keep ? out(input) : undefined;
    }
    case 'select/1': return evaluate(a[0], input, sc, (c) => (truthy(c) ? out(input) : undefined));
    case 'map/1': return evaluate({ t: 'array', body: { t: 'pipe', l: { t: 'iter', target: { t: 'id' } }, r: a[0] } }, input, sc, out);
    case 'map_values/1': return evalAssign({ op: '|=', l: { t: 'iter', target: { t: 'id' } }, r: a[0] }, input, sc, out);
    case 'with_entries/1': return evaluate({ t: 'pipe', l: { t: 'call', name: 'to_entries', args: [] }, r: { t: 'pipe', l: { t: 'call', name: 'map', args: [a[0]] }, r: { t: 'call', name: 'from_entries', args: [] } } }, input, sc, out);
    case 'recurse/1': { const rec = (v) => { out(v); evaluate(a[0], v, sc, rec); }; return rec(input); }
    case 'has/1':
      return evaluate(a[0], input, sc, (k) => {
        if (input === null) return out(false);
        if (input instanceof JqObject && typeof k === 'string') return out(input.has(k));
        if (Array.isArray(input) && typeof k === 'number') return out(k >= 0 && k < input.length);
        throw errorf(`Cannot check whether ${typeName(input)} has a ${typeName(k)} key`);
      });
    case 'in/1': return evaluate(a[0], input, sc, (o) => callBuiltin({ name: 'has', args: [{ t: 'lit', v: input }] }, o, sc, out));
    case 'contains/1': case 'inside/1':
      return evaluate(a[0], input, sc, (b) => {
        if (n.name === 'inside') return out(contains(b, input));
        if (typeName(input) !== typeName(b)) throw errorf(`${typeName(input)} (${dump(input)}) and ${typeName(b)} (${dump(b)}) cannot have their containment checked`);
        return out(contains(input, b));
      });
    case 'startswith/1': case 'endswith/1': case 'ltrimstr/1': case 'rtrimstr/1': case 'split/1': case 'join/1': case 'test/1': case 'indices/1': case 'index/1': case 'rindex/1':
      return evaluate(a[0], input, sc, (b) => stringFunc(n.name, input, b, out));
    case 'error/1': return evaluate(a[0], input, sc, (v) => { throw new JqError(v); });
    case 'path/1': return evalPaths(a[0], [], input, sc, (p) => out(p));
    case 'paths/1': return paths(input, false, (p) => evaluate(a[0], getpath(input, p), sc, (c) => (truthy(c) ? out(p) : undefined)));
    case 'del/1': return out(delpaths(input, collectPaths(a[0], input, sc)));
    case 'delpaths/1':
      return evaluate(a[0], input, sc, (pv) => {
        if (!Array.isArray(pv)) throw errorf('Paths must be specified as an array');
        return out(delpaths(input, pv.map((p) => { if (!Array.isArray(p)) throw errorf('Path must be specified as an array'); return p; })));
      });
    case 'getpath/1':
      return evaluate(a[0], input, sc, (pv) => {
        if (!Array.isArray(pv)) throw errorf('Path must be specified as an array');
        let v;
        try { v = getpath(input, pv); } catch (e) { if (isJqError(e)) return undefined; throw e; }
        return out(v);
      });
    case 'first/1':
      try { evaluate(a[0], input, sc, (v) => { out(v); throw STOP; }); } catch (e) { if (e !== STOP) throw e; }
      return undefined;
    case 'last/1': { let last, got = false; evaluate(a[0], input, sc, (v) => { last = v; got = true; }); return got ? out(last) : undefined; }
    case 'isempty/1': {
      let empty = true;
      try { evaluate(a[0], input, sc, () => { empty = false; throw STOP; }); } catch (e) { if (e !== STOP) throw e; }
      return out(empty);
    }
    case 'any/1': case 'all/1': return callBuiltin({ name: n.name, args: [{ t: 'iter', target: { t: 'id' } }, a[0]] }, input, sc, out);
    case 'flatten/1':
      return evaluate(a[0], input, sc, (d) => {
        if (typeof d !== 'number' || d < 0) throw errorf('flatten depth must not be negative');
        return out(flattenValue(input, d));
      });
    case 'range/1': return evaluate(a[0], input, sc, (to) => rangeGen(0, to, 1, out));
    case 'sort_by/1': case 'group_by/1': case 'unique_by/1': case 'min_by/1': case 'max_by/1': return byFunc(n.name, a[0], input, sc, out);
    case 'nth/1': return evaluate(a[0], input, sc, (k) => out(index(input, k)));
    case 'walk/1': {
      const walk = (v) => {
        let nv = v;
        if (Array.isArray(v)) nv = v.map((e) => first({ t: 'call', name: 'walk', args: [a[0]] }, e, sc));
        else if (v instanceof JqObject) { nv = new JqObject(); for (const k of v.keys()) nv.set(k, first({ t: 'call', name: 'walk', args: [a[0]] }, v.get(k), sc)); }
        return evaluate(a[0], nv, sc, out);
      };
      return walk(input);
    }
    case 'splits/1': return evaluate(a[0], input, sc, (sep) => stringFunc('split', input, sep, (v) => each(v, out)));
    case 'limit/2':
      return evaluate(a[0], input, sc, (nv) => {
        if (typeof nv !== 'number' || nv <= 0) return undefined;
        let count = 0;
        try { evaluate(a[1], input, sc, (v) => { out(v); if (++count >= nv) throw STOP; }); } catch (e) { if (e !== STOP) throw e; }
        return undefined;
      });
    case 'range/2': return evaluate(a[0], input, sc, (from) => evaluate(a[1], input, sc, (to) => rangeGen(from, to, 1, out)));
    case 'range/3': return evaluate(a[0], input, sc, (from) => evaluate(a[1], input, sc, (to) => evaluate(a[2], input, sc, (by) => rangeGen(from, to, by, out))));
    case 'nth/2':
      return evaluate(a[0], input, sc, (nv) => {
        if (nv < 0) throw errorf('Out of bounds negative array index');
        let i = 0;
        try { evaluate(a[1], input, sc, (v) => { if (i++ === nv) { out(v); throw STOP; } }); } catch (e) { if (e !== STOP) throw e; }
        return undefined;
      });
    case 'setpath/2':
      return evaluate(a[1], input, sc, (v) => evaluate(a[0], input, sc, (pv) => {
        if (!Array.isArray(pv)) throw errorf('Path must be specified as an array');
        return out(setpath(input, pv, v));
      }));
    case 'test/2': return evaluate(a[1], input, sc, (flags) => evaluate(a[0], input, sc, (re) => regexTest(input, re, flags, out)));
    case 'any/2': case 'all/2': {
      const all = n.name === 'all';
      let res = all;
      try {
        evaluate(a[0], input, sc, (v) => evaluate(a[1], v, sc, (c) => { if (truthy(c) !== all) { res = !all; throw STOP; } }));
      } catch (e) { if (e !== STOP) throw e; }
      return out(res);
    }
    case 'sub/2': case 'gsub/2':
      return evaluate(a[1], input, sc, (rep) => evaluate(a[0], input, sc, (re) => {
        if (typeof input !== 'string') throw errorf(`${typeName(input)} (${dump(input)}) cannot be matched, as it is not a string`);
        if (typeof rep !== 'string') throw errorf(`${typeName(rep)} (${dump(rep)}) cannot be added to a string`);
        const [r] = compileRegex(re, n.name === 'gsub' ? 'g' : '');
        return out(input.replace(new RegExp(r.source, r.flags + (n.name === 'gsub' ? 'g' : '')), () => rep));
      }));
  }
  throw new CompileError(`${key} is not defined`);
}

// KNOWN are the filters this jq has.
const KNOWN = new Set(('empty/0 not/0 length/0 utf8bytelength/0 keys/0 keys_unsorted/0 values/0 type/0 tostring/0 tonumber/0 tojson/0 ' +
  'fromjson/0 ascii_downcase/0 ascii_upcase/0 to_entries/0 from_entries/0 add/0 any/0 all/0 flatten/0 floor/0 ceil/0 round/0 ' +
  'sqrt/0 fabs/0 sort/0 unique/0 min/0 max/0 reverse/0 first/0 last/0 paths/0 leaf_paths/0 recurse/0 env/0 explode/0 implode/0 ' +
  'ascii/0 infinite/0 nan/0 isnan/0 null/0 true/0 false/0 error/0 input_line_number/0 builtins/0 objects/0 arrays/0 strings/0 ' +
  'numbers/0 booleans/0 nulls/0 iterables/0 scalars/0 select/1 map/1 map_values/1 with_entries/1 recurse/1 has/1 in/1 contains/1 ' +
  'inside/1 startswith/1 endswith/1 ltrimstr/1 rtrimstr/1 split/1 join/1 test/1 indices/1 index/1 rindex/1 error/1 path/1 paths/1 ' +
  'del/1 delpaths/1 getpath/1 first/1 last/1 isempty/1 any/1 all/1 flatten/1 range/1 sort_by/1 group_by/1 unique_by/1 min_by/1 ' +
  'max_by/1 nth/1 walk/1 splits/1 limit/2 range/2 range/3 nth/2 setpath/2 test/2 any/2 all/2 sub/2 gsub/2').split(' '));

// check finds what jq reports before running: undefined functions and
// variables.
function check(n, sc, src) {
  if (!n) return;
  const undefinedErr = (what) => new CompileError(`${what} is not defined at <top-level>, line 1:\n${src}`);
  switch (n.t) {
    case 'call':
      if (!KNOWN.has(`${n.name}/${n.args.length}`)) throw undefinedErr(`${n.name}/${n.args.length}`);
      n.args.forEach((x) => check(x, sc, src));
      return;
    case 'var': if (!lookup(sc, n.name)) throw undefinedErr('$' + n.name); return;
    case 'format': try { applyFormat(n.name, ''); } catch (e) { if (e instanceof CompileError) throw new CompileError(`${n.name} is not a valid format at <top-level>, line 1:\n${src}`); } return;
    case 'str': if (n.format) check({ t: 'format', name: n.format }, sc, src); n.parts.forEach((x) => check(x, sc, src)); return;
    case 'bind': check(n.source, sc, src); check(n.body, withVar(sc, n.name, null), src); return;
    case 'reduce': check(n.source, sc, src); check(n.init, sc, src); check(n.update, withVar(sc, n.name, null), src); return;
    case 'object': n.entries.forEach((e) => { check(e.key, sc, src); check(e.value, sc, src); }); return;
  }
  for (const k of ['target', 'key', 'from', 'to', 'body', 'l', 'r', 'x', 'cond', 'then', 'els', 'catch']) if (n[k] && typeof n[k] === 'object') check(n[k], sc, src);
}

// compile parses a filter whose free variables are vars (--arg names).
export function compile(filter, vars = []) {
  const root = parseFilter(filter);
  let sc = null;
  for (const v of [...vars, 'ENV', '__loc__']) sc = withVar(sc, v, null);
  check(root, sc, filter);
  return {
    // run calls out with each result; a runtime error throws JqError.
    run(input, values = {}) {
      let s = null;
      for (const [k, v] of Object.entries(values)) s = withVar(s, k, v);
      const results = [];
      try { evaluate(root, input, s, (v) => { results.push(v); }); } catch (e) {
        if (e === STOP) return results;
        e.results = results;
        throw e;
      }
      return results;
    },
  };
}

export { ParseError };
