// kubectl's JSONPath (client-go's util/jsonpath, missing keys allowed as
// kubectl allows them): text with {actions}; an action is a path (.a.b,
// ['a.b'], [0], [-1], [1:3], [*], .., [?(@.x == "y")], [a,b]), a quoted
// string, or range ... end. Results print as client-go prints them:
// strings as they are, numbers and booleans as Go prints them, maps and
// lists as compact JSON, several results separated by spaces.

import { goFloat } from './yaml.js';

export class JSONPathError extends Error {}

// goJSON is Go's encoding/json: map keys sorted, <, > and & escaped, and
// with indent (json.MarshalIndent) one line per element.
export function goJSON(v, indent = '', level = 0) {
  const nl = (l) => (indent ? '\n' + indent.repeat(l) : '');
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'boolean') return String(v);
  if (typeof v === 'number') return goJSONNumber(v);
  if (typeof v === 'string') return goJSONString(v);
  if (Array.isArray(v)) {
    if (!v.length) return '[]';
    return '[' + v.map((e) => nl(level + 1) + goJSON(e, indent, level + 1)).join(',') + nl(level) + ']';
  }
  const keys = Object.keys(v).sort(byteOrder);
  if (!keys.length) return '{}';
  return '{' + keys.map((k) => nl(level + 1) + goJSONString(k) + ':' + (indent ? ' ' : '') + goJSON(v[k], indent, level + 1)).join(',') + nl(level) + '}';
}

export const byteOrder = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

function goJSONNumber(f) {
  if (Number.isInteger(f) && Math.abs(f) < 1e21) return String(f);
  const abs = Math.abs(f);
  if (abs !== 0 && (abs < 1e-6 || abs >= 1e21)) return f.toExponential().replace(/e([+-])(\d)$/, 'e$10$2').replace(/e([+-])0(\d)$/, 'e$1$2');
  return String(f);
}

export function goJSONString(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (c < 0x20 || ch === '<' || ch === '>' || ch === '&' || c === 0x2028 || c === 0x2029) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += ch;
  }
  return out + '"';
}

// text is how client-go prints one result.
function text(v) {
  if (v === null || v === undefined) return '<nil>';
  if (typeof v === 'string') return v;
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : goFloat(v);
  if (typeof v === 'boolean') return String(v);
  return goJSON(v);
}

// ---- parsing ----------------------------------------------------------------------

export function parse(template) {
  const nodes = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) { nodes.push({ t: 'text', v: template.slice(i) }); break; }
    if (open > i) nodes.push({ t: 'text', v: template.slice(i, open) });
    let j = open + 1, quote = null;
    for (; j < template.length; j++) {
      const c = template[j];
      if (quote) { if (c === '\\') j++; else if (c === quote) quote = null; continue; }
      if (c === '"' || c === "'") quote = c;
      else if (c === '}') break;
    }
    if (j >= template.length) throw new JSONPathError(`unclosed action`);
    nodes.push(parseAction(template.slice(open + 1, j).trim()));
    i = j + 1;
  }
  return nest(nodes);
}

// nest groups range ... end.
function nest(nodes) {
  const root = [];
  const stack = [root];
  for (const n of nodes) {
    if (n.t === 'range') { const r = { ...n, body: [] }; stack[stack.length - 1].push(r); stack.push(r.body); continue; }
    if (n.t === 'end') {
      if (stack.length === 1) throw new JSONPathError('not in range, nothing to end');
      stack.pop();
      continue;
    }
    stack[stack.length - 1].push(n);
  }
  if (stack.length > 1) throw new JSONPathError('unclosed range');
  return root;
}

function parseAction(s) {
  if (s === 'end') return { t: 'end' };
  if (s.startsWith('range ') || s === 'range') return { t: 'range', path: parsePath(s.slice(5).trim()) };
  if (/^"([^"\\]|\\.)*"$/.test(s)) return { t: 'text', v: JSON.parse(s) };
  if (/^'[^']*'$/.test(s)) return { t: 'text', v: s.slice(1, -1) };
  return { t: 'path', path: parsePath(s) };
}

// parsePath reads .a.b[0]['c'][*]..d[?(@.x=="y")] into segments.
function parsePath(s) {
  const segs = [];
  let i = 0;
  if (s[0] === '$' || s[0] === '@') i = 1;
  while (i < s.length) {
    const c = s[i];
    if (c === ' ') { i++; continue; }
    if (s.startsWith('..', i)) {
      i += 2;
      const [name, ni] = readName(s, i);
      segs.push({ t: 'recursive' });
      if (name) segs.push(name === '*' ? { t: 'wild' } : { t: 'field', names: [name] });
      i = ni;
      continue;
    }
    if (c === '.') {
      const [name, ni] = readName(s, i + 1);
      if (name === '*') segs.push({ t: 'wild' });
      else if (name) segs.push({ t: 'field', names: [name] });
      i = ni;
      continue;
    }
    if (c === '[') {
      let depth = 0, j = i, quote = null;
      for (; j < s.length; j++) {
        const d = s[j];
        if (quote) { if (d === '\\') j++; else if (d === quote) quote = null; continue; }
        if (d === '"' || d === "'") quote = d;
        else if (d === '[') depth++;
        else if (d === ']' && --depth === 0) break;
      }
      if (j >= s.length) throw new JSONPathError(`unterminated array`);
      segs.push(parseBracket(s.slice(i + 1, j).trim()));
      i = j + 1;
      continue;
    }
    const [name, ni] = readName(s, i);
    if (!name) throw new JSONPathError(`unrecognized character in action: ${JSON.stringify(c)}`);
    segs.push({ t: 'field', names: [name] });
    i = ni;
  }
  return segs;
}

function readName(s, i) {
  let name = '';
  while (i < s.length) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length) { name += s[i + 1]; i += 2; continue; }
    if (c === '.' || c === '[' || c === ' ') break;
    name += c;
    i++;
  }
  return [name, i];
}

function parseBracket(b) {
  if (b === '*') return { t: 'wild' };
  if (b.startsWith('?(') && b.endsWith(')')) return { t: 'filter', cond: parseCondition(b.slice(2, -1).trim()) };
  const parts = splitTop(b, ',');
  if (parts.length > 1) return { t: 'union', parts: parts.map((p) => parseBracket(p.trim())) };
  if (/^['"]/.test(b)) return { t: 'field', names: [b.slice(1, -1)] };
  if (b.includes(':')) {
    const [a, z, st] = b.split(':').map((x) => (x.trim() === '' ? null : Number(x)));
    return { t: 'slice', a, z, st };
  }
  if (/^-?\d+$/.test(b)) return { t: 'index', i: Number(b) };
  return { t: 'field', names: [b] };
}

function splitTop(s, sep) {
  const out = [];
  let cur = '', quote = null, depth = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote) { cur += c; if (c === quote) quote = null; continue; }
    if (c === '"' || c === "'") quote = c;
    if (c === '(' || c === '[') depth++;
    if (c === ')' || c === ']') depth--;
    if (c === sep && depth === 0) { out.push(cur); cur = ''; continue; }
    cur += c;
  }
  out.push(cur);
  return out;
}

function parseCondition(c) {
  const m = /^(.*?)\s*(==|!=|<=|>=|<|>|=~)\s*(.*)$/.exec(c);
  if (!m) return { left: parseOperand(c) };
  return { left: parseOperand(m[1]), op: m[2], right: parseOperand(m[3]) };
}

function parseOperand(s) {
  s = s.trim();
  if (s.startsWith('@') || s.startsWith('.') || s.startsWith('$')) return { path: parsePath(s) };
  if (/^['"].*['"]$/.test(s)) return { value: s.slice(1, -1) };
  if (s === 'true' || s === 'false') return { value: s === 'true' };
  if (s !== '' && !Number.isNaN(Number(s))) return { value: Number(s) };
  return { value: s };
}

// ---- evaluation -------------------------------------------------------------------

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function step(values, seg) {
  const out = [];
  for (const v of values) {
    switch (seg.t) {
      case 'field':
        for (const n of seg.names) if (isMap(v) && Object.hasOwn(v, n)) out.push(v[n]);
        break;
      case 'wild':
        if (Array.isArray(v)) out.push(...v);
        else if (isMap(v)) for (const k of Object.keys(v).sort(byteOrder)) out.push(v[k]);
        break;
      case 'index':
        if (Array.isArray(v)) {
          const i = seg.i < 0 ? v.length + seg.i : seg.i;
          if (i < 0 || i >= v.length) throw new JSONPathError(`array index out of bounds: index ${seg.i}, length ${v.length}`);
          out.push(v[i]);
        }
        break;
      case 'slice':
        if (Array.isArray(v)) {
          let a = seg.a ?? 0, z = seg.z ?? v.length;
          const st = seg.st ?? 1;
          if (a < 0) a += v.length;
          if (z < 0) z += v.length;
          a = Math.max(0, Math.min(a, v.length));
          z = Math.max(0, Math.min(z, v.length));
          for (let i = a; i < z; i += st) out.push(v[i]);
        }
        break;
      case 'union':
        for (const p of seg.parts) out.push(...step([v], p));
        break;
      case 'recursive': {
        const rec = (x) => {
          out.push(x);
          if (Array.isArray(x)) x.forEach(rec);
          else if (isMap(x)) for (const k of Object.keys(x).sort(byteOrder)) rec(x[k]);
        };
        rec(v);
        break;
      }
      case 'filter':
        if (Array.isArray(v)) for (const e of v) if (holds(seg.cond, e)) out.push(e);
        break;
    }
  }
  return out;
}

function evalPath(path, data) {
  let values = [data];
  for (const seg of path) values = step(values, seg);
  return values;
}

function operand(o, data) {
  if ('value' in o) return [o.value];
  return evalPath(o.path, data);
}

function holds(cond, data) {
  const l = operand(cond.left, data);
  if (!cond.op) return l.length > 0 && l[0] !== false && l[0] !== null;
  const r = operand(cond.right, data);
  if (!l.length || !r.length) return false;
  const a = l[0], b = r[0];
  switch (cond.op) {
    case '==': return a === b || (typeof a === 'number' && typeof b === 'number' && a === b);
    case '!=': return a !== b;
    case '<': return a < b;
    case '>': return a > b;
    case '<=': return a <= b;
    case '>=': return a >= b;
    case '=~': return new RegExp(b).test(String(a));
  }
  return false;
}

// execute prints a parsed template against data.
export function execute(nodes, data) {
  let out = '';
  for (const n of nodes) {
    if (n.t === 'text') out += n.v;
    else if (n.t === 'path') out += evalPath(n.path, data).map(text).join(' ');
    else if (n.t === 'range') for (const item of evalPath(n.path, data)) out += execute(n.body, item);
  }
  return out;
}

// results returns the values a path template finds (custom-columns, --sort-by).
export function results(nodes, data) {
  const out = [];
  for (const n of nodes) if (n.t === 'path') out.push(...evalPath(n.path, data));
  return out;
}

export { text as resultText };
