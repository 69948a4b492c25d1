// The small Unix tools the articles pipe into: grep (line by line, so it
// works on a watch), base64, cat, echo, and ls and rm for the console's
// files.

import { FlagSet } from './flags.js';
import { readAll, lines } from './streams.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

function b64encode(bytes) {
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function b64decode(s) {
  const bin = atob(s);
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

// grep is GNU grep: basic regular expressions by default, -E extended, -F
// fixed strings.
async function grep(p) {
  const fs = new FlagSet('grep', [
    { name: 'ignore-case', short: 'i', kind: 'bool' }, { name: 'invert-match', short: 'v', kind: 'bool' },
    { name: 'count', short: 'c', kind: 'bool' }, { name: 'line-number', short: 'n', kind: 'bool' },
    { name: 'extended-regexp', short: 'E', kind: 'bool' }, { name: 'fixed-strings', short: 'F', kind: 'bool' },
    { name: 'word-regexp', short: 'w', kind: 'bool' }, { name: 'only-matching', short: 'o', kind: 'bool' },
    { name: 'regexp', short: 'e', kind: 'stringArray' }, { name: 'after-context', short: 'A', kind: 'int' },
    { name: 'before-context', short: 'B', kind: 'int' }, { name: 'context', short: 'C', kind: 'int' },
  ]);
  let pos;
  try { pos = fs.parse(p.args); } catch (e) {
    p.stderr.write(`grep: ${e.message}\nUsage: grep [OPTION]... PATTERNS [FILE]...\n`);
    return 2;
  }
  let patterns = fs.strs('regexp');
  if (!patterns.length) {
    if (!pos.length) { p.stderr.write("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n"); return 2; }
    patterns = pos[0].split('\n');
    pos = pos.slice(1);
  }
  const exprs = patterns.map((pat) => {
    if (fs.bool('fixed-strings')) return pat.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    return posixClasses(fs.bool('extended-regexp') ? pat : basicToExtended(pat));
  });
  let expr = '(?:' + exprs.join(')|(?:') + ')';
  if (fs.bool('word-regexp')) expr = '(?<![\\w])(?:' + expr + ')(?![\\w])';
  let re;
  try { re = new RegExp(expr, fs.bool('ignore-case') ? 'iu' : 'u'); } catch (e) { p.stderr.write(`grep: ${e.message}\n`); return 2; }
  let after = fs.int('after-context'), before = fs.int('before-context');
  if (fs.changed('context')) after = before = fs.int('context');
  let input = p.stdin;
  if (pos.length && pos[0] !== '-') {
    const data = p.c.readFile(pos[0]);
    if (data === null) { p.stderr.write(`grep: ${pos[0]}: No such file or directory\n`); return 2; }
    input = { async *chunks() { yield data; } };
  }
  const invert = fs.bool('invert-match'), count = fs.bool('count'), number = fs.bool('line-number'), only = fs.bool('only-matching');
  let matches = 0, lineNo = 0, lastPrinted = 0, afterLeft = 0;
  let held = [];
  const print = (n, line, sep) => {
    if (lastPrinted > 0 && n > lastPrinted + 1 && (before > 0 || after > 0)) p.stdout.write('--\n');
    p.stdout.write((number ? `${n}${sep}` : '') + line + '\n');
    lastPrinted = n;
  };
  for await (const line of lines(input)) {
    lineNo++;
    if (re.test(line) !== invert) {
      matches++;
      if (count) continue;
      held.forEach((h, i) => print(lineNo - held.length + i, h, '-'));
      held = [];
      if (only && !invert) for (const m of line.match(new RegExp(re.source, re.flags + 'g')) || []) print(lineNo, m, ':');
      else print(lineNo, line, ':');
      afterLeft = after;
    } else if (!count) {
      if (afterLeft > 0) { print(lineNo, line, '-'); afterLeft--; } else if (before > 0) {
        held.push(line);
        if (held.length > before) held.shift();
      }
    }
  }
  if (count) p.stdout.write(`${matches}\n`);
  return matches ? 0 : 1;
}

// basicToExtended rewrites a POSIX basic regular expression as an
// extended one: in BRE, + ? | ( ) { } are literal and their backslashed
// forms are the operators.
export function basicToExtended(bre) {
  let out = '';
  for (let i = 0; i < bre.length; i++) {
    const c = bre[i];
    if (c === '\\' && i + 1 < bre.length) {
      const n = bre[++i];
      out += '+?|(){}'.includes(n) ? n : '\\' + n;
      continue;
    }
    out += '+?|(){}'.includes(c) ? '\\' + c : c;
  }
  return out;
}

const CLASSES = { alpha: 'A-Za-z', digit: '0-9', alnum: 'A-Za-z0-9', upper: 'A-Z', lower: 'a-z', space: '\\s', blank: ' \\t', punct: '!-\\/:-@\\[-`{-~', xdigit: '0-9A-Fa-f' };
const posixClasses = (re) => re.replace(/\[:(\w+):\]/g, (m, c) => CLASSES[c] ?? m);

// base64 is GNU coreutils' base64: encode (wrapped at 76 columns unless
// -w), or -d to decode.
async function base64(p) {
  const fs = new FlagSet('base64', [{ name: 'decode', short: 'd', kind: 'bool' }, { name: 'wrap', short: 'w', kind: 'int', def: '76' },
    { name: 'ignore-garbage', short: 'i', kind: 'bool' }]);
  let pos;
  try { pos = fs.parse(p.args); } catch (e) {
    p.stderr.write(`base64: ${e.message}\nTry 'base64 --help' for more information.\n`);
    return 1;
  }
  if (pos.length > 1) { p.stderr.write(`base64: extra operand '${pos[1]}'\nTry 'base64 --help' for more information.\n`); return 1; }
  let text;
  if (pos.length === 1 && pos[0] !== '-') {
    text = p.c.readFile(pos[0]);
    if (text === null) { p.stderr.write(`base64: ${pos[0]}: No such file or directory\n`); return 1; }
  } else text = await readAll(p.stdin);
  if (fs.bool('decode')) {
    const clean = text.replace(/[\s]/g, '');
    try {
      p.stdout.write(dec.decode(b64decode(clean)));
      return 0;
    } catch {
      p.stderr.write('base64: invalid input\n');
      return 1;
    }
  }
  let e = b64encode(enc.encode(text));
  const w = fs.int('wrap');
  while (w > 0 && e.length > w) { p.stdout.write(e.slice(0, w) + '\n'); e = e.slice(w); }
  if (e) p.stdout.write(e + '\n');
  return 0;
}

async function cat(p) {
  if (!p.args.length || (p.args.length === 1 && p.args[0] === '-')) {
    if (p.stdin) for await (const c of p.stdin.chunks()) p.stdout.write(c);
    return 0;
  }
  let status = 0;
  for (const a of p.args) {
    const data = p.c.readFile(a);
    if (data === null) { p.stderr.write(`cat: ${a}: No such file or directory\n`); status = 1; continue; }
    p.stdout.write(data);
  }
  return status;
}

async function echo(p) {
  let args = p.args;
  let nl = true;
  if (args[0] === '-n') { nl = false; args = args.slice(1); }
  p.stdout.write(args.join(' ') + (nl ? '\n' : ''));
  return 0;
}

async function ls(p) {
  for (const n of [...p.c.files.keys()].sort()) p.stdout.write(n + '\n');
  return 0;
}

async function rm(p) {
  const force = p.args.includes('-f');
  let status = 0;
  for (const a of p.args) {
    if (a.startsWith('-')) continue;
    const n = a.replace(/^(\.\/)+/, '');
    if (!p.c.files.delete(n) && !force) { p.stderr.write(`rm: cannot remove '${a}': No such file or directory\n`); status = 1; }
  }
  return status;
}

export const tools = { grep, base64, cat, echo, ls, rm };
