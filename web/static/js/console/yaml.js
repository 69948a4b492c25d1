// kubectl -o yaml prints objects with sigs.k8s.io/yaml: the object's JSON
// (keys sorted) re-encoded by go-yaml v2, whose emitter is libyaml's. This
// is that emitter for JSON values: block style, two-space indentation,
// sequences inside mappings not indented, and libyaml's choice of scalar
// style (plain when the text reads back as the same string, else single
// or double quotes, a literal block for text with line breaks) with its
// folding of long lines at 80 columns.
//
// Reading YAML (manifests, heredocs) is js-yaml's, as the editor does.

import jsyaml from '../../vendor/js-yaml-4.1.0.mjs';

const BEST_WIDTH = 80;

// ---- what a plain scalar would read back as (go-yaml v2's resolve) ----------

const BOOL_NULL = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON',
  'n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF',
  '', '~', 'null', 'Null', 'NULL', '.nan', '.NaN', '.NAN', '.inf', '.Inf', '.INF', '+.inf', '+.Inf', '+.INF',
  '-.inf', '-.Inf', '-.INF', '<<']);
const YAML_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
const BASE60_FLOAT = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const GO_INT = /^[-+]?(0[xX][0-9a-fA-F]+|0[oO][0-7]+|0[bB][01]+|0[0-7]*|[1-9][0-9]*)$/;

function isTimestamp(s) {
  const m = /^(\d{4})-/.exec(s);
  if (!m || s.length === 4) return false;
  return /^\d{4}-\d{1,2}-\d{1,2}([Tt ]\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?)?$/.test(s) &&
    !/ .*(Z|[+-]\d{2}:\d{2})$/.test(s);
}

// resolvesToString says whether s, written plain, reads back as a string.
function resolvesToString(s) {
  if (BOOL_NULL.has(s)) return false;
  const c = s[0];
  if (c === '.') return Number.isNaN(Number(s)) || !/^\.[0-9]/.test(s) ? !YAML_FLOAT.test(s) : false;
  if (c === '+' || c === '-' || (c >= '0' && c <= '9')) {
    if (isTimestamp(s)) return false;
    const plain = s.replaceAll('_', '');
    if (GO_INT.test(plain)) return false;
    if (YAML_FLOAT.test(plain)) return false;
    if (/^-?0[bB][01]+$/.test(plain)) return false;
  }
  return true;
}

// ---- libyaml's scalar analysis and style choice --------------------------------

const isPrintable = (cp) => cp === 0x0a || (cp >= 0x20 && cp <= 0x7e) || cp === 0x85 || (cp >= 0xa0 && cp <= 0xd7ff) ||
  (cp >= 0xe000 && cp <= 0xfffd && cp !== 0xfeff) || (cp >= 0x10000 && cp <= 0x10ffff);
const isBreak = (c) => c === '\n' || c === '\r' || c === '\u0085' || c === '\u2028' || c === '\u2029';
const isBlankz = (c) => c === undefined || c === ' ' || c === '\t' || isBreak(c) || c === '\0';

function analyze(s) {
  const r = { multiline: false, flowPlain: true, blockPlain: true, single: true, block: true };
  if (!s.length) return { multiline: false, flowPlain: false, blockPlain: true, single: true, block: false };
  let flowInd = false, blockInd = false;
  if (s.startsWith('---') || s.startsWith('...')) flowInd = blockInd = true;
  const ch = [...s];
  let precededByWS = true, prevSpace = false, prevBreak = false;
  let leadingSpace = false, leadingBreak = false, trailingSpace = false, trailingBreak = false, breakSpace = false, spaceBreak = false, special = false, lineBreaks = false;
  ch.forEach((c, i) => {
    const followedByWS = isBlankz(ch[i + 1]);
    if (i === 0) {
      if ('#,[]{}&*!|>\'"%@`'.includes(c)) flowInd = blockInd = true;
      else if (c === '?' || c === ':') { flowInd = true; if (followedByWS) blockInd = true; } else if (c === '-' && followedByWS) flowInd = blockInd = true;
    } else if (',?[]{}'.includes(c)) flowInd = true;
    else if (c === ':') { flowInd = true; if (followedByWS) blockInd = true; } else if (c === '#' && precededByWS) flowInd = blockInd = true;
    if (!isPrintable(c.codePointAt(0))) special = true;
    if (isBreak(c)) lineBreaks = true;
    if (c === ' ') {
      if (i === 0) leadingSpace = true;
      if (i === ch.length - 1) trailingSpace = true;
      if (prevBreak) breakSpace = true;
      prevSpace = true; prevBreak = false;
    } else if (isBreak(c)) {
      if (i === 0) leadingBreak = true;
      if (i === ch.length - 1) trailingBreak = true;
      if (prevSpace) spaceBreak = true;
      prevBreak = true; prevSpace = false;
    } else { prevSpace = prevBreak = false; }
    precededByWS = isBlankz(c);
  });
  r.multiline = lineBreaks;
  if (leadingSpace || leadingBreak || trailingSpace || trailingBreak) r.flowPlain = r.blockPlain = false;
  if (trailingSpace) r.block = false;
  if (breakSpace) r.flowPlain = r.blockPlain = r.single = false;
  if (spaceBreak || special) r.flowPlain = r.blockPlain = r.single = r.block = false;
  if (lineBreaks) r.flowPlain = r.blockPlain = false;
  if (flowInd) r.flowPlain = false;
  if (blockInd) r.blockPlain = false;
  return r;
}

// style picks what go-yaml v2 asks for and what libyaml then allows.
function style(s, simpleKey) {
  let st;
  if (s.includes('\n')) st = 'literal';
  else if (resolvesToString(s) && !BASE60_FLOAT.test(s)) st = 'plain';
  else st = 'double';
  const a = analyze(s);
  if (st === 'plain') {
    if (!a.blockPlain) st = 'single';
    if (!s.length && simpleKey) st = 'single';
  }
  if (st === 'single' && !a.single) st = 'double';
  if (st === 'literal' && (!a.block || simpleKey)) st = 'double';
  return st;
}

// ---- the writer --------------------------------------------------------------------

class Writer {
  constructor() { this.out = ''; this.column = 0; }
  put(s) {
    this.out += s;
    const nl = s.lastIndexOf('\n');
    this.column = nl < 0 ? this.column + [...s].length : [...s.slice(nl + 1)].length;
  }
  // indentTo starts a line at indent (libyaml's write_indent: no new line
  // when a block scalar already ended one).
  indentTo(indent) {
    if (this.out.endsWith('\n')) this.put(' '.repeat(indent));
    else this.put('\n' + ' '.repeat(indent));
  }
}

function escapeDouble(c) {
  const cp = c.codePointAt(0);
  const named = { 0: '0', 7: 'a', 8: 'b', 9: 't', 10: 'n', 11: 'v', 12: 'f', 13: 'r', 27: 'e', 34: '"', 92: '\\', 0x85: 'N', 0xa0: '_', 0x2028: 'L', 0x2029: 'P' }[cp];
  if (named !== undefined) return '\\' + named;
  if (cp <= 0xff) return '\\x' + cp.toString(16).toUpperCase().padStart(2, '0');
  if (cp <= 0xffff) return '\\u' + cp.toString(16).toUpperCase().padStart(4, '0');
  return '\\U' + cp.toString(16).toUpperCase().padStart(8, '0');
}

// scalar writes a string in its style at the given indent (continuation
// lines and block content go there).
function scalar(w, s, indent, simpleKey) {
  const st = style(s, simpleKey);
  const breaks = !simpleKey;
  const ch = [...s];
  if (st === 'plain') {
    let spaces = false;
    ch.forEach((c, i) => {
      if (c === ' ') {
        if (breaks && !spaces && w.column > BEST_WIDTH && ch[i + 1] !== ' ') w.indentTo(indent);
        else w.put(c);
        spaces = true;
      } else { w.put(c); spaces = false; }
    });
    return;
  }
  if (st === 'single') {
    w.put("'");
    let spaces = false;
    ch.forEach((c, i) => {
      if (c === ' ') {
        if (breaks && !spaces && w.column > BEST_WIDTH && i !== 0 && i !== ch.length - 1 && ch[i + 1] !== ' ') w.indentTo(indent);
        else w.put(c);
        spaces = true;
      } else { w.put(c === "'" ? "''" : c); spaces = false; }
    });
    w.put("'");
    return;
  }
  if (st === 'double') {
    w.put('"');
    let spaces = false;
    ch.forEach((c, i) => {
      const cp = c.codePointAt(0);
      if (!isPrintable(cp) || c === '"' || c === '\\' || isBreak(c) || c === '\ufeff' || c === '\t') {
        w.put(escapeDouble(c));
        spaces = false;
      } else if (c === ' ') {
        if (breaks && !spaces && w.column > BEST_WIDTH && i !== 0 && i !== ch.length - 1) {
          w.indentTo(indent);
          if (ch[i + 1] === ' ') w.put('\\');
        } else w.put(c);
        spaces = true;
      } else { w.put(c); spaces = false; }
    });
    w.put('"');
    return;
  }
  // literal block: "|" with libyaml's hints, then the lines at indent
  let hints = '';
  if (s[0] === ' ' || isBreak(s[0])) hints += '2';
  if (!isBreak(s[s.length - 1])) hints += '-';
  else if (s.length === 1 || isBreak(s[s.length - 2])) hints += '+';
  w.put('|' + hints + '\n');
  let atBreak = true;
  for (const c of ch) {
    if (isBreak(c)) {
      if (!atBreak || w.out.endsWith('\n')) w.put('\n');
      atBreak = true;
      continue;
    }
    if (atBreak) { w.put(' '.repeat(indent)); atBreak = false; }
    w.put(c);
  }
}

// goFloat is strconv.FormatFloat(f, 'g', -1, 64) (and fmt's %v): the
// shortest digits, in exponent form below 1e-4 or from 1e+06 on.
export function goFloat(f) {
  if (Number.isNaN(f)) return 'NaN';
  if (!Number.isFinite(f)) return f > 0 ? '+Inf' : '-Inf';
  const [mant, exp] = f.toExponential().split('e');
  const x = Number(exp);
  if (x < -4 || x >= 6) return `${mant}e${x < 0 ? '-' : '+'}${Math.abs(x) < 10 ? '0' : ''}${Math.abs(x)}`;
  return String(f);
}

// num writes a JSON number: integers as integers (JSON's integers are
// int64 to go-yaml), other numbers as go-yaml writes a float64.
function num(v) {
  if (Number.isInteger(v)) return String(v);
  const g = goFloat(v);
  return { NaN: '.nan', '+Inf': '.inf', '-Inf': '-.inf' }[g] || g;
}

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

// node writes a value that follows "key:" or "- " on the current line.
function node(w, v, indent, inSeq) {
  if (v === null || v === undefined) { w.put(' null'); return; }
  if (typeof v === 'boolean') { w.put(' ' + v); return; }
  if (typeof v === 'number') { w.put(' ' + num(v)); return; }
  if (typeof v === 'string') { w.put(' '); scalar(w, v, indent + 2, false); return; }
  if (Array.isArray(v)) {
    if (!v.length) { w.put(' []'); return; }
    sequence(w, v, inSeq ? indent + 2 : indent, true);
    return;
  }
  const keys = Object.keys(v).sort();
  if (!keys.length) { w.put(' {}'); return; }
  mapping(w, v, keys, indent + 2, true);
}

function mapping(w, v, keys, indent, newLine) {
  keys.forEach((k, i) => {
    if (i > 0 || newLine) w.indentTo(indent);
    scalar(w, k, indent, true);
    w.put(':');
    node(w, v[k], indent, false);
  });
}

function sequence(w, v, indent, newLine) {
  v.forEach((e, i) => {
    if (i > 0 || newLine) w.indentTo(indent);
    w.put('-');
    if (isMap(e) && Object.keys(e).length) {
      w.put(' ');
      mapping(w, e, Object.keys(e).sort(), indent + 2, false);
    } else if (Array.isArray(e) && e.length) {
      w.put(' ');
      sequence(w, e, indent + 2, false);
    } else node(w, e, indent, true);
  });
}

// toYAML prints a JSON value as kubectl -o yaml does.
export function toYAML(v) {
  const w = new Writer();
  if (isMap(v)) {
    const keys = Object.keys(v).sort();
    if (!keys.length) return '{}\n';
    mapping(w, v, keys, 0, false);
  } else if (Array.isArray(v)) {
    if (!v.length) return '[]\n';
    sequence(w, v, 0, false);
  } else {
    const tmp = new Writer();
    node(tmp, v, -2, false);
    return tmp.out.slice(1) + '\n';
  }
  return w.out.replace(/^\n/, '') + '\n';
}

// fromYAML reads one YAML (or JSON) document.
export function fromYAML(text) {
  return jsyaml.load(text);
}

// splitDocuments cuts a stream of YAML documents at "---" lines.
export function splitDocuments(text) {
  const docs = [];
  let cur = '';
  for (const line of text.split(/(?<=\n)/)) {
    if (line.replace(/[ \t\r\n]+$/, '') === '---') { docs.push(cur); cur = ''; continue; }
    cur += line;
  }
  docs.push(cur);
  return docs;
}
