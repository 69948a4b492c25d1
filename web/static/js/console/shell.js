// The part of a POSIX shell the console needs to take the articles'
// command lines as written: words with quotes and escapes, pipelines, `;`
// and `&&`, heredocs (`kubectl apply -f - <<EOF`), `<` and `>` files
// (`2>` for stderr, `2>&1` and `>&2` between the two), NAME=value prefixes
// and aliases. No variables, globs or subshells: a line
// that needs them gets an error saying so.

export class Incomplete extends Error {
  constructor(prompt = '> ') { super('incomplete input'); this.prompt = prompt; }
}

export class Unsupported extends Error {}

const OPERATOR_CHARS = ' \t\r\n|&;<>()`';
const isVarStart = (c) => c === '_' || c === '{' || /[A-Za-z]/.test(c || '');

class Lexer {
  constructor(input) { this.in = input; this.i = 0; this.pending = []; }

  next() {
    const s = this.in;
    for (;;) {
      const c = s[this.i];
      if (c === ' ' || c === '\t' || c === '\r') { this.i++; continue; }
      if (c === '\\' && s[this.i + 1] === '\n') { this.i += 2; continue; }
      if (c === '#') { while (this.i < s.length && s[this.i] !== '\n') this.i++; continue; }
      break;
    }
    if (this.i >= s.length) return { op: 'eof' };
    const c = s[this.i];
    const rest = s.slice(this.i);
    switch (c) {
      case '\n': this.i++; this.readHeredocs(); return { op: 'newline' };
      case '|':
        if (rest.startsWith('||')) throw new Unsupported('unsupported shell syntax: ||');
        this.i++; return { op: '|' };
      case '&':
        if (rest.startsWith('&&')) { this.i += 2; return { op: '&&' }; }
        throw new Unsupported('unsupported shell syntax: & (background jobs)');
      case ';': this.i++; return { op: ';' };
      case '<':
        if (rest.startsWith('<<-')) { this.i += 3; return { op: '<<-' }; }
        if (rest.startsWith('<<<')) throw new Unsupported('unsupported shell syntax: <<<');
        if (rest.startsWith('<<')) { this.i += 2; return { op: '<<' }; }
        this.i++; return { op: '<' };
      case '>':
        if (rest.startsWith('>>')) { this.i += 2; return { op: '>>', fd: 1 }; }
        if (rest.startsWith('>&')) { this.i += 2; return { op: '>&', fd: 1 }; }
        this.i++; return { op: '>', fd: 1 };
      case '(': case ')': case '`':
        throw new Unsupported(`unsupported shell syntax: ${c}`);
      default: {
        // A digit right before a redirection names the file descriptor.
        const m = /^([0-9])(>>|>&|>|<)/.exec(rest);
        if (m) {
          this.i += m[0].length;
          const fd = Number(m[1]);
          if (m[2] === '<' ? fd !== 0 : fd !== 1 && fd !== 2) throw new Unsupported(`unsupported shell syntax: ${m[0]} (the console has stdin, stdout and stderr)`);
          return { op: m[2], fd };
        }
        return this.word();
      }
    }
  }

  word() {
    const s = this.in;
    let b = '';
    let quoted = false;
    while (this.i < s.length) {
      const c = s[this.i];
      if (c === "'") {
        quoted = true;
        const end = s.indexOf("'", this.i + 1);
        if (end < 0) throw new Incomplete();
        b += s.slice(this.i + 1, end);
        this.i = end + 1;
      } else if (c === '"') {
        quoted = true;
        this.i++;
        let closed = false;
        while (this.i < s.length) {
          const d = s[this.i];
          if (d === '"') { this.i++; closed = true; break; }
          if (d === '\\' && this.i + 1 < s.length) {
            const e = s[this.i + 1];
            if (e === '"' || e === '\\' || e === '$' || e === '`') { b += e; this.i += 2; continue; }
            if (e === '\n') { this.i += 2; continue; }
          }
          if (d === '$' && isVarStart(s[this.i + 1])) throw new Unsupported('unsupported shell syntax: $ (shell variables)');
          b += d;
          this.i++;
        }
        if (!closed) throw new Incomplete();
      } else if (c === '\\') {
        if (this.i + 1 >= s.length) throw new Incomplete();
        if (s[this.i + 1] === '\n') { this.i += 2; continue; }
        quoted = true;
        b += s[this.i + 1];
        this.i += 2;
      } else if (c === '$' && (isVarStart(s[this.i + 1]) || s[this.i + 1] === '(')) {
        throw new Unsupported('unsupported shell syntax: $ (shell variables and substitutions)');
      } else if (OPERATOR_CHARS.includes(c)) {
        break;
      } else {
        b += c;
        this.i++;
      }
    }
    return { op: '', text: b, quoted };
  }

  // readHeredocs consumes the bodies of the heredocs opened on the line
  // just ended, in order.
  readHeredocs() {
    const s = this.in;
    while (this.pending.length) {
      const h = this.pending[0];
      let body = '';
      for (;;) {
        if (this.i >= s.length) throw new Incomplete();
        const end = s.indexOf('\n', this.i);
        let line;
        if (end < 0) { line = s.slice(this.i); this.i = s.length; } else { line = s.slice(this.i, end); this.i = end + 1; }
        if (h.stripTabs) line = line.replace(/^\t+/, '');
        if (line.replace(/\r$/, '') === h.delim) break;
        if (end < 0) throw new Incomplete();
        body += line + '\n';
      }
      h.target.heredoc = body;
      this.pending.shift();
    }
  }
}

const isAssignment = (w) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(w);

// parseScript reads a console input into pipelines of stages. An input a
// shell would continue on the next line throws Incomplete.
export function parseScript(input) {
  const l = new Lexer(input);
  const sc = { pipelines: [], andThen: [] };
  let cur = [];
  let st = null;
  const seps = [];
  let afterPipe = false;
  // stdout and stderr: '' (the terminal or the pipe), a file name, or
  // '&1' / '&2' for the other stream.
  const newStage = () => ({ args: [], quoted0: false, assigns: [], heredoc: null, stdinFile: '', stdout: '', appendOut: false, stderr: '', appendErr: false });
  for (;;) {
    const t = l.next();
    switch (t.op) {
      case '':
        if (!st) st = newStage();
        if (st.args.length === 0 && !t.quoted && isAssignment(t.text)) { st.assigns.push(t.text); break; }
        if (st.args.length === 0) st.quoted0 = t.quoted;
        st.args.push(t.text);
        break;
      case '|':
        if (!st) throw new Error("syntax error near unexpected token `|'");
        cur.push(st); st = null; afterPipe = true;
        break;
      case '&&': case ';': case 'newline': case 'eof': {
        if (st) { cur.push(st); st = null; afterPipe = false; }
        if (afterPipe) {
          if (t.op === 'newline' || t.op === 'eof') throw new Incomplete();
          throw new Error(`syntax error near unexpected token \`${t.op}'`);
        }
        if (cur.length) { sc.pipelines.push(cur); seps.push(t.op); cur = []; } else if (t.op === '&&' || t.op === ';') {
          throw new Error(`syntax error near unexpected token \`${t.op}'`);
        }
        if (t.op !== 'eof') break;
        if (l.pending.length) throw new Incomplete();
        if (seps.length && seps[seps.length - 1] === '&&') throw new Incomplete();
        for (let i = 0; i + 1 < sc.pipelines.length; i++) sc.andThen.push(seps[i] === '&&');
        return sc;
      }
      case '<<': case '<<-': {
        const w = l.next();
        if (w.op !== '') throw new Error(`syntax error near unexpected token \`${w.op === 'eof' ? 'newline' : w.op}'`);
        if (!st) st = newStage();
        l.pending.push({ delim: w.text, stripTabs: t.op === '<<-', target: st });
        break;
      }
      case '<': case '>': case '>>': {
        const w = l.next();
        if (w.op !== '') throw new Error(`syntax error near unexpected token \`${w.op === 'eof' ? 'newline' : w.op}'`);
        if (!st) st = newStage();
        if (t.op === '<') st.stdinFile = w.text;
        else if (t.fd === 2) { st.stderr = w.text; st.appendErr = t.op === '>>'; } else { st.stdout = w.text; st.appendOut = t.op === '>>'; }
        break;
      }
      case '>&': {
        const w = l.next();
        if (w.op !== '' || (w.text !== '1' && w.text !== '2')) throw new Unsupported('unsupported shell syntax: >& takes 1 or 2 (2>&1, >&2)');
        if (!st) st = newStage();
        if (Number(w.text) !== t.fd) {
          if (t.fd === 2) { st.stderr = '&1'; } else st.stdout = '&2';
        }
        break;
      }
    }
  }
}

// splitWords splits an alias's value into words, quoted as a command line.
export function splitWords(s) {
  const l = new Lexer(s);
  const out = [];
  for (;;) {
    const t = l.next();
    if (t.op === 'eof') return out;
    if (t.op !== '') throw new Error(`an alias may hold only one command (found ${t.op === 'newline' ? 'newline' : t.op})`);
    out.push(t.text);
  }
}

// shellQuote quotes s for bash's `alias` listing.
export const shellQuote = (s) => "'" + s.replaceAll("'", "'\\''") + "'";
