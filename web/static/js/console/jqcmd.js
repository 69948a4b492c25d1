// The jq command line as jq 1.6 has it: a filter, then the inputs read as a
// stream of JSON values (so `etcdctl watch -w json | jq` prints as events
// arrive), each result pretty (-c compact, -r raw strings, -j without
// newlines, -S sorted keys).

import { FlagSet } from './flags.js';
import { compile, format, parseJSON, JqError, CompileError, ParseError } from './jq.js';

const USAGE = '\nUse jq --help for help with command-line options,\nor see the jq manpage, or online docs  at https://stedolan.github.io/jq\n';

export async function jq(p) {
  const fs = new FlagSet('jq', [
    { name: 'raw-output', short: 'r', kind: 'bool' }, { name: 'join-output', short: 'j', kind: 'bool' },
    { name: 'compact-output', short: 'c', kind: 'bool' }, { name: 'sort-keys', short: 'S', kind: 'bool' },
    { name: 'ascii-output', short: 'a', kind: 'bool' }, { name: 'null-input', short: 'n', kind: 'bool' },
    { name: 'slurp', short: 's', kind: 'bool' }, { name: 'exit-status', short: 'e', kind: 'bool' },
    { name: 'monochrome-output', short: 'M', kind: 'bool' }, { name: 'color-output', short: 'C', kind: 'bool' },
    { name: 'tab', kind: 'bool' }, { name: 'indent', kind: 'int', def: '2' },
  ]);
  // --arg NAME VALUE takes two words, which pflag cannot say.
  const values = {};
  const vars = [];
  const rest = [];
  for (let i = 0; i < p.args.length; i++) {
    const a = p.args[i];
    if ((a === '--arg' || a === '--argjson') && i + 2 < p.args.length) {
      const name = p.args[i + 1], raw = p.args[i + 2];
      if (a === '--arg') values[name] = raw;
      else {
        try { values[name] = parseJSON(raw); } catch { p.stderr.write('jq: Invalid JSON text passed to --argjson' + USAGE); return 2; }
      }
      vars.push(name);
      i += 2;
      continue;
    }
    rest.push(a);
  }
  let pos;
  try { pos = fs.parse(rest); } catch (e) {
    p.stderr.write(`jq: Unknown option: ${e.message.replace(/^unknown (shorthand )?flag: /, '')}${USAGE}`);
    return 2;
  }
  let filter = '.';
  if (pos.length) { filter = pos[0]; pos = pos.slice(1); }
  let prog;
  try { prog = compile(filter, vars); } catch (e) {
    if (e instanceof CompileError) { p.stderr.write(`jq: error: ${e.message}\njq: 1 compile error\n`); return 3; }
    throw e;
  }
  const fmt = { indent: fs.int('indent'), compact: fs.bool('compact-output'), sortKeys: fs.bool('sort-keys'), ascii: fs.bool('ascii-output'), tab: fs.bool('tab') };
  if (fmt.indent === 0) fmt.compact = true;
  const raw = fs.bool('raw-output') || fs.bool('join-output');
  const sep = fs.bool('join-output') ? '' : '\n';
  let input = p.stdin;
  let name = '<stdin>';
  if (pos.length) {
    const data = p.c.readFile(pos[0]);
    if (data === null) { p.stderr.write(`jq: error: Could not open ${pos[0]}: No such file or directory\n`); return 2; }
    input = { async *chunks() { yield data; } };
    name = pos[0];
  }
  let status = 0;
  let last;
  let outputs = 0;
  const print = (r) => {
    outputs++;
    last = r;
    p.stdout.write((typeof r === 'string' && raw ? r : format(r, fmt)) + sep);
  };
  // jq's exit status is that of the last input.
  const run = (v, line) => {
    status = 0;
    try {
      for (const r of prog.run(v, values)) print(r);
    } catch (e) {
      for (const r of e.results || []) print(r);
      if (e instanceof JqError) p.stderr.write(`jq: error (at ${name}:${line}): ${e.message}\n`);
      else if (e instanceof CompileError) p.stderr.write(`jq: error: ${e.message}\n`);
      else throw e;
      status = 5;
    }
  };
  if (fs.bool('null-input')) run(null, 0);
  else {
    const reader = new ValueReader(input);
    const slurped = [];
    for (;;) {
      let got;
      try { got = await reader.next(); } catch (e) {
        if (e instanceof ParseError) { p.stderr.write(`parse error: ${e.message}\n`); return 2; }
        throw e;
      }
      if (!got) break;
      if (fs.bool('slurp')) slurped.push(got.value);
      else run(got.value, got.line);
    }
    if (fs.bool('slurp')) run(slurped, reader.line);
  }
  if (status === 0 && fs.bool('exit-status')) {
    if (!outputs) return 4;
    if (last === null || last === false) return 1;
  }
  return status;
}

// ValueReader reads a stream of JSON values as they arrive, counting lines
// as jq does for its error messages (the newlines up to the end of the
// line a value ends on).
class ValueReader {
  constructor(stdin) { this.it = stdin ? stdin.chunks()[Symbol.asyncIterator]() : null; this.buf = ''; this.i = 0; this.line = 0; this.done = !stdin; }

  async peek() {
    while (this.i >= this.buf.length) {
      if (this.done) return null;
      const r = await this.it.next();
      if (r.done) { this.done = true; return null; }
      this.buf = this.buf.slice(this.i) + r.value;
      this.i = 0;
    }
    return this.buf[this.i];
  }

  async take() {
    const c = await this.peek();
    if (c !== null) { this.i++; if (c === '\n') this.line++; }
    return c;
  }

  async next() {
    let text = '';
    let c;
    do { c = await this.take(); } while (c !== null && ' \t\n\r'.includes(c));
    if (c === null) return null;
    const scalar = !'{["'.includes(c);
    let depth = 0, inStr = false, esc = false;
    for (;;) {
      if (scalar) {
        const nx = await this.peek();
        text += c;
        if (nx === null || ' \t\r\n{["'.includes(nx)) {
          if (nx !== null && ' \t\r\n'.includes(nx)) await this.take();
          return { value: parseOrFail(text, nx === null), line: this.line };
        }
        c = await this.take();
        continue;
      }
      text += c;
      if (inStr) {
        if (esc) esc = false;
        else if (c === '\\') esc = true;
        else if (c === '"') inStr = false;
      } else if (c === '"') inStr = true;
      else if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') depth--;
      if (depth === 0 && !inStr) {
        const value = parseOrFail(text, false);
        for (;;) {
          const nx = await this.peek();
          if (nx === null || !' \t\r\n'.includes(nx)) break;
          await this.take();
          if (nx === '\n') break;
        }
        return { value, line: this.line };
      }
      c = await this.take();
      if (c === null) throw new ParseError(`Unfinished JSON term at EOF at line ${this.line + 1}, column ${text.length}`);
    }
  }
}

function parseOrFail(text, atEOF) {
  try { return parseJSON(text); } catch (e) {
    if (e instanceof ParseError && atEOF) throw new ParseError(e.message.replace('at line', 'at EOF at line'));
    throw e;
  }
}
