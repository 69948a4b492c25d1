// Both tools parse their command lines with spf13/pflag through cobra, so
// the console parses flags with pflag's rules and words its errors the same
// way: "--name value", "--name=value", "-n value", "-nvalue", "-n=value",
// booleans without a value, flags anywhere among the arguments, "--" ending
// them.
//
// A flag definition: {name, short, kind: 'bool'|'string'|'int'|'duration'|
// 'stringArray'|'stringSlice', def, usage, noOpt, explain}. explain marks a
// flag accepted for compatibility that has no effect in the lab: the key
// of the lab's string (i18n) the console notes once, saying why.

export class FlagError extends Error {}

const goQuote = (s) => JSON.stringify(s);

function parseGoInt(v) {
  // strconv.ParseInt(v, 0, 64): decimal, 0x, 0o, 0b and leading-0 octal.
  if (!/^[+-]?(0[xX][0-9a-fA-F_]+|0[oO]?[0-7_]+|0[bB][01_]+|[0-9_]+)$/.test(v)) return null;
  try {
    const neg = v.startsWith('-');
    let s = v.replace(/^[+-]/, '').replaceAll('_', '');
    if (/^0[0-7]+$/.test(s)) s = '0o' + s.slice(1);
    const n = BigInt(s);
    return Number(neg ? -n : n);
  } catch { return null; }
}

function parseGoBool(v) {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  return null;
}

const DURATION = /^([+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+|0)$/;

export class FlagSet {
  constructor(cmd, defs = []) {
    this.cmd = cmd;
    this.defs = [];
    this.byName = new Map();
    this.short = new Map();
    this.values = new Map();
    this.set = new Set();
    this.normalize = null;
    this.add(...defs);
  }

  add(...defs) {
    for (const d of defs) {
      withDefaults(d);
      this.defs.push(d);
      this.byName.set(d.name, d);
      if (d.short) this.short.set(d.short, d);
    }
  }

  // parse reads args and returns the positional arguments.
  parse(args) {
    const pos = [];
    for (let i = 0; i < args.length; i++) {
      const a = args[i];
      if (a === '--') return pos.concat(args.slice(i + 1));
      if (a.startsWith('--') && a.length > 2) {
        let [name, ...vs] = a.slice(2).split('=');
        let value = vs.join('=');
        const hasValue = vs.length > 0;
        if (this.normalize) name = this.normalize(name);
        const d = this.byName.get(name);
        if (!d) throw new FlagError(`unknown flag: --${name}`);
        if (!hasValue) {
          if (d.kind === 'bool') value = d.noOpt;
          else if (i + 1 < args.length) value = args[++i];
          else throw new FlagError(`flag needs an argument: --${name}`);
        }
        this.setValue(d, value);
      } else if (a.startsWith('-') && a.length > 1) {
        let shorts = a.slice(1);
        while (shorts.length) {
          const c = shorts[0];
          const d = this.short.get(c);
          if (!d) throw new FlagError(`unknown shorthand flag: '${c}' in -${shorts}`);
          let rest = shorts.slice(1);
          let value;
          if (rest.startsWith('=')) { value = rest.slice(1); rest = ''; } else if (d.kind === 'bool') value = d.noOpt;
          else if (rest) { value = rest; rest = ''; } else if (i + 1 < args.length) value = args[++i];
          else throw new FlagError(`flag needs an argument: '${c}' in -${shorts}`);
          this.setValue(d, value);
          shorts = rest;
        }
      } else {
        pos.push(a);
      }
    }
    return pos;
  }

  setValue(d, value) {
    const written = d.short ? `-${d.short}, --${d.name}` : `--${d.name}`;
    const bad = (err) => new FlagError(`invalid argument ${goQuote(value)} for ${goQuote(written)} flag: ${err}`);
    if (d.kind === 'bool' && parseGoBool(value) === null) throw bad(`strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`);
    if (d.kind === 'int' && parseGoInt(value) === null) throw bad(`strconv.ParseInt: parsing ${goQuote(value)}: invalid syntax`);
    if (d.kind === 'duration' && !DURATION.test(value)) throw bad(`time: invalid duration ${goQuote(value)}`);
    if (d.kind === 'stringArray') this.values.set(d.name, [...(this.values.get(d.name) || []), value]);
    else if (d.kind === 'stringSlice') {
      const prev = this.set.has(d.name) ? this.values.get(d.name) : [];
      this.values.set(d.name, [...prev, ...value.split(',')]);
    } else this.values.set(d.name, [value]);
    this.set.add(d.name);
  }

  changed(name) { return this.set.has(name); }

  str(name) {
    const v = this.values.get(name);
    if (v && v.length) return v[v.length - 1];
    return this.byName.get(name)?.def ?? '';
  }

  strs(name) { return this.values.get(name) || []; }
  bool(name) { return parseGoBool(this.str(name)) === true; }
  int(name) { return parseGoInt(this.str(name)) ?? 0; }

  // explanations are the notes (their keys) for the flags used that have
  // no effect in the lab, once each.
  explanations() {
    const out = [];
    for (const d of this.defs) if (d.explain && this.set.has(d.name) && !out.includes(d.explain)) out.push(d.explain);
    return out;
  }

  // names lists the flags that do something, for a note on what is supported.
  names() {
    return this.defs.filter((d) => !d.explain).map((d) => (d.short ? `-${d.short}/--${d.name}` : `--${d.name}`)).sort().join(', ');
  }
}

export function withDefaults(d) {
  if (d.kind === 'bool') {
    if (!d.noOpt) d.noOpt = 'true';
    if (d.def === undefined || d.def === '') d.def = 'false';
  }
  if (d.kind === 'int' && (d.def === undefined || d.def === '')) d.def = '0';
  if (d.def === undefined) d.def = '';
  return d;
}

// tabwriter is Go's text/tabwriter for one block: cells separated by
// tabs aligned to the widest cell plus padding, rounded up to tab stops
// when the padding character is a tab. etcdctl's usage (minwidth 0, tab
// width 8, padding 1, '\t') and kubectl describe (0, 8, 2, ' ') use it.
export function tabwriter(text, { minwidth = 0, tabwidth = 8, padding = 1, padchar = ' ' } = {}) {
  const lines = text.split('\n');
  const last = lines.pop(); // text ends with \n: an empty last element
  const cells = lines.map((l) => l.split('\t'));
  const widths = cells.map(() => []);
  // A column block is a run of consecutive lines that have a cell
  // (terminated by a tab) in that column.
  const maxCols = Math.max(0, ...cells.map((c) => c.length - 1));
  for (let col = 0; col < maxCols; col++) {
    let start = -1;
    for (let i = 0; i <= cells.length; i++) {
      const has = i < cells.length && cells[i].length - 1 > col;
      if (has && start < 0) start = i;
      if (!has && start >= 0) {
        let w = minwidth;
        for (let j = start; j < i; j++) w = Math.max(w, width(cells[j][col]) + padding);
        if (padchar === '\t') w = Math.ceil(w / tabwidth) * tabwidth;
        for (let j = start; j < i; j++) widths[j][col] = w;
        start = -1;
      }
    }
  }
  let out = '';
  cells.forEach((row, i) => {
    row.forEach((c, col) => {
      if (col === row.length - 1) { out += c; return; }
      const pad = widths[i][col] - width(c);
      out += c + (padchar === '\t' ? '\t'.repeat(Math.ceil(pad / tabwidth)) : padchar.repeat(Math.max(pad, 0)));
    });
    out += '\n';
  });
  return out + last;
}

// width counts runes, as tabwriter does.
export const width = (s) => [...s].length;
