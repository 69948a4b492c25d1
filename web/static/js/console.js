// The console: kubectl and etcdctl command lines as the articles write
// them, run against the lab's session (in this page or on the server)
// through its transport, printed as the real tools print them (checked
// byte for byte against the real kubectl, etcdctl and jq in
// test/consolediff).
//
//   const con = new Console({ transport, editor, fetch });
//   const cancel = con.run(input, { onOutput, onStreamLine, onStreaming, onNote, onClear, onExit });
//   con.continuation(input)   -> { complete, prompt, printed }   (heredocs, quotes, etcdctl txn)
//
// A prompt that is printed (etcdctl txn -i's "compares:") belongs in the
// output before the lines typed after it; the command, given those lines
// as typed input, does not print it again.
//
// onOutput(text, stream) gets whole lines of stdout or stderr; once a
// command streams (a watch, kubectl edit) onStreaming() is called and later
// lines go to onStreamLine(line, stream) if given. onNote(text) is the
// console's own remark (why a flag has no effect here, what to use instead)
// in the reader's language, with say() that says it again in the language
// current when called (i18n.js; the panel re-says its notes on a language
// switch), onExit(code) the exit status. What a command prints stays as
// the real tool prints it, in English, whatever the language. cancel() is Ctrl+C. No callback comes
// before run returns.
//
// editor: { text() -> Promise<string>, edit(text, signal) -> Promise<string|null> }
// (`-f -` without a heredoc reads text(); kubectl edit opens edit()).

import { parseScript, splitWords, Incomplete, Unsupported, shellQuote } from './console/shell.js';
import { Pipe, StringSource, Buffer } from './console/streams.js';
import { tools } from './console/tools.js';
import { etcdctl, txnStage, txnPrompts, txnSectionsDone } from './console/etcdctl.js';
import { kubectl } from './console/kubectl.js';
import { jq } from './console/jqcmd.js';
import { lab } from './console/lab.js';
import { t } from './i18n.js';
import { said } from './notice.js';

const BUILTINS = ['kubectl (k)', 'etcdctl', 'jq', 'grep', 'base64', 'cat', 'echo', 'alias', 'unalias', 'export', 'ls', 'rm', 'clear', 'help', 'lab load'];

export class Console {
  constructor({ transport, editor = null, fetch = null, now = () => Date.now(), sleep = null } = {}) {
    this.transport = transport;
    this.editor = editor;
    this.fetch = fetch;
    this.now = now;
    this.sleep = sleep || ((ms, signal) => new Promise((resolve, reject) => {
      const t = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => { clearTimeout(t); reject(new Error('interrupted')); }, { once: true });
    }));
    this.aliases = new Map([['k', 'kubectl']]);
    this.files = new Map();
    this.cache = { discovery: null, openapi: new Map() };
    this.running = new Set();
  }

  // continuation says whether input (the lines entered so far, joined by
  // newlines) is a whole command, and if not the prompt for the next line.
  continuation(input) {
    const nl = input.indexOf('\n');
    const first = nl < 0 ? input : input.slice(0, nl);
    const txn = txnStage(this, first);
    if (txn) {
      const n = nl < 0 ? 0 : txnSectionsDone(input.slice(nl + 1) + '\n');
      return n < 3 ? { complete: false, prompt: txnPrompts[n], printed: txn.interactive } : { complete: true, prompt: '' };
    }
    try { parseScript(input); } catch (e) { if (e instanceof Incomplete) return { complete: false, prompt: e.prompt }; }
    return { complete: true, prompt: '' };
  }

  // stopAll interrupts every running command (the lab's reset).
  stopAll() {
    const had = this.running.size;
    for (const c of this.running) c();
    this.running.clear();
    return had;
  }

  run(input, cb = {}) {
    const ac = new AbortController();
    const cancel = () => ac.abort();
    this.running.add(cancel);
    let streaming = false;
    const writer = (stream) => {
      let pending = '';
      return {
        write(text) {
          pending += text;
          const i = pending.lastIndexOf('\n');
          if (i < 0) return;
          const out = pending.slice(0, i + 1);
          pending = pending.slice(i + 1);
          emit(out, stream);
        },
        flush() { if (pending) { emit(pending, stream); pending = ''; } },
      };
    };
    const emit = (text, stream) => {
      if (streaming && cb.onStreamLine) {
        for (const line of text.split('\n').slice(0, text.endsWith('\n') ? -1 : undefined)) cb.onStreamLine(line, stream);
        return;
      }
      cb.onOutput?.(text, stream);
    };
    const stdout = writer('stdout');
    const stderr = writer('stderr');
    const out = {
      stdout, stderr,
      // A command notes with a key of the lab's strings and its params.
      note: (key, params) => cb.onNote?.(t(key, params), said(key, params)),
      clear: () => cb.onClear?.(),
      streaming: () => { if (!streaming) { stdout.flush(); stderr.flush(); streaming = true; cb.onStreaming?.(); } },
      signal: ac.signal,
    };
    // The command starts after run returns, so that no callback comes
    // before the caller holds cancel.
    Promise.resolve().then(() => this.exec(input, out)).then((code) => code, (e) => {
      stderr.write(`rvplay: internal error: ${e?.stack || e}\n`);
      return 70;
    }).then((code) => {
      stdout.flush();
      stderr.flush();
      this.running.delete(cancel);
      cb.onExit?.(code);
    });
    return cancel;
  }

  // exec runs a whole input and resolves with its exit status.
  async exec(input, out) {
    let typedStdin = null;
    const nl = input.indexOf('\n');
    if (nl >= 0 && txnStage(this, input.slice(0, nl))) {
      typedStdin = input.slice(nl + 1) + '\n';
      input = input.slice(0, nl);
    }
    let sc;
    try {
      sc = parseScript(input);
    } catch (e) {
      if (e instanceof Incomplete) {
        out.stderr.write('rvplay: unexpected end of input (an open quote, a heredoc without its end line, or a trailing | or &&)\n');
        out.note('console.note.incomplete');
        return 2;
      }
      out.stderr.write(`rvplay: ${e.message}\n`);
      if (e instanceof Unsupported) out.note('console.note.shellSyntax');
      return 2;
    }
    let status = 0;
    for (let i = 0; i < sc.pipelines.length; i++) {
      if (i > 0 && sc.andThen[i - 1] && status !== 0) continue;
      if (out.signal.aborted) return 130;
      const p = sc.pipelines[i];
      if (typedStdin !== null && p[0].heredoc === null) { p[0].heredoc = typedStdin; p[0].typed = true; }
      status = await this.pipeline(p, out);
    }
    return status;
  }

  // pipeline runs the stages concurrently, each stage's stdout feeding the
  // next one's stdin; its status is the last stage's.
  async pipeline(stages, out) {
    const n = stages.length;
    const pipes = Array.from({ length: n - 1 }, () => new Pipe());
    const files = [];
    const procs = [];
    for (let i = 0; i < n; i++) {
      const st = stages[i];
      let args;
      try { args = this.expandAliases(st); } catch (e) { out.stderr.write(`rvplay: ${e.message}\n`); return 2; }
      let stdin = i > 0 ? pipes[i - 1] : null;
      if (st.heredoc !== null) stdin = new StringSource(st.heredoc);
      else if (st.stdinFile) {
        const data = this.readFile(st.stdinFile);
        if (data === null) { out.stderr.write(`rvplay: ${st.stdinFile}: No such file or directory\n`); return 1; }
        stdin = new StringSource(data);
      }
      const toFile = (name, append) => {
        const buf = new Buffer();
        files.push(() => this.writeFile(name, buf.text, append));
        return buf;
      };
      let stdout = i < n - 1 ? pipes[i] : out.stdout;
      if (st.stdout === '&2') stdout = out.stderr;
      else if (st.stdout) stdout = toFile(st.stdout, st.appendOut);
      let stderr = out.stderr;
      if (st.stderr === '&1') stderr = stdout;
      else if (st.stderr) stderr = toFile(st.stderr, st.appendErr);
      procs.push({ c: this, args, assigns: st.assigns, stdin, typed: !!st.typed, stdout, stderr, out, signal: out.signal,
        note: out.note, streaming: out.streaming });
    }
    const codes = await Promise.all(procs.map(async (p, i) => {
      let code;
      try { code = await this.execOne(p); } catch (e) {
        p.stderr.write(`rvplay: internal error: ${e?.stack || e}\n`);
        code = 70;
      }
      if (i < n - 1) pipes[i].close();
      if (i > 0) pipes[i - 1].breakPipe();
      return code;
    }));
    for (const f of files) {
      const err = f();
      if (err) {
        out.stderr.write(`rvplay: ${err}\n`);
        out.note('console.note.fileNames');
        return 1;
      }
    }
    return codes[n - 1];
  }

  async execOne(p) {
    for (const a of p.assigns) {
      const [name, ...v] = a.split('=');
      const value = v.join('=');
      if (!p.args.length) {
        p.stderr.write(`rvplay: ${name}: shell variables are not supported\n`);
        p.note('console.note.shellSyntax');
        return 1;
      }
      if (!(name === 'ETCDCTL_API' && value === '3') && name !== 'KUBE_EDITOR' && name !== 'EDITOR') {
        p.note('console.note.envPrefix', { assignment: a });
      }
    }
    if (!p.args.length) return 0;
    const [name, ...args] = p.args;
    p.args = args;
    switch (name) {
      case 'kubectl': return kubectl(p);
      case 'etcdctl': return etcdctl(p);
      case 'jq': return jq(p);
      case 'lab': return lab(p);
      case 'alias': return this.alias(p);
      case 'unalias': return this.unalias(p);
      case 'export': return this.export(p);
      case 'clear': p.out.clear(); return 0;
      case 'help': p.stdout.write(help()); return 0;
      case 'sudo':
        p.note('console.note.sudo');
        if (!args.length) return 0;
        return this.execOne({ ...p, args, assigns: [] });
    }
    if (tools[name]) return tools[name](p);
    p.stderr.write(`rvplay: ${name}: command not found\n`);
    p.note('console.note.commandNotFound', { commands: BUILTINS.join(', ') });
    return 127;
  }

  // expandAliases replaces an unquoted command word that names an alias,
  // as bash does (not inside its own expansion).
  expandAliases(st) {
    let args = st.args;
    if (!args.length || st.quoted0) return args;
    const seen = new Set();
    while (this.aliases.has(args[0]) && !seen.has(args[0])) {
      seen.add(args[0]);
      args = [...splitWords(this.aliases.get(args[0])), ...args.slice(1)];
      if (!args.length) return args;
    }
    return args;
  }

  alias(p) {
    if (!p.args.length) {
      for (const n of [...this.aliases.keys()].sort()) p.stdout.write(`alias ${n}=${shellQuote(this.aliases.get(n))}\n`);
      return 0;
    }
    let status = 0;
    for (const a of p.args) {
      const i = a.indexOf('=');
      if (i < 0) {
        if (!this.aliases.has(a)) { p.stderr.write(`rvplay: alias: ${a}: not found\n`); status = 1; continue; }
        p.stdout.write(`alias ${a}=${shellQuote(this.aliases.get(a))}\n`);
        continue;
      }
      this.aliases.set(a.slice(0, i), a.slice(i + 1));
    }
    return status;
  }

  unalias(p) {
    let status = 0;
    for (const n of p.args) {
      if (n === '-a') { this.aliases.clear(); continue; }
      if (!this.aliases.delete(n)) { p.stderr.write(`rvplay: unalias: ${n}: not found\n`); status = 1; }
    }
    return status;
  }

  export(p) {
    for (const a of p.args) {
      if (a === 'ETCDCTL_API=3') continue;
      p.note('console.note.export', { assignment: a });
    }
    return 0;
  }

  // The console's files live in memory, one set per page: enough for the
  // articles' `kubectl get deploy x -o yaml > x.yaml`, an edit, and a
  // later `kubectl apply -f x.yaml` that meets a newer resourceVersion.
  readFile(name) {
    const n = cleanName(name);
    return this.files.has(n) ? this.files.get(n) : null;
  }

  writeFile(name, data, append) {
    const n = cleanName(name);
    if (n === '/dev/null') return null;
    if (n.includes('/')) return `${name}: the console's files have plain names (no directories)`;
    this.files.set(n, append ? (this.files.get(n) || '') + data : data);
    return null;
  }
}

const cleanName = (n) => n.replace(/^(\.\/)+/, '');

// help is the console's own text, so its prose is the reader's language
// when it is printed (the command lines it shows are the tools'). It goes
// to stdout like any command's output, to a pipe or a file as well, so it
// stays as printed.
const help = () => `${t('console.help.intro')}

etcdctl get KEY [RANGE_END] [--prefix|--from-key] [--rev=N] [--limit=N] [--keys-only] [--count-only]
        [--print-value-only] [--sort-by=KEY|CREATE|MODIFY|VALUE|VERSION] [--order=ASCEND|DESCEND]
etcdctl put KEY VALUE [--prev-kv] [--ignore-value]       etcdctl del KEY [RANGE_END] [--prefix|--from-key] [--prev-kv]
etcdctl txn [-i]   ${t('console.help.txn')}
etcdctl watch KEY [RANGE_END] [--prefix] [--rev=N] [--prev-kv]   ${t('console.help.watch', { stop: t('console.stop') })}
etcdctl compaction REV [--physical]      etcdctl endpoint status
  -w simple|json|fields; -w table: ${t('console.help.table')}
  --endpoints, --cert, --key, --cacert: ${t('console.help.connection')}
kubectl get|describe|create|apply|replace|patch|scale|edit|label|annotate|delete|rollout status ...
  -o json|yaml|wide|name|jsonpath=...|custom-columns=..., -w, --watch-only, --output-watch-events,
  -n NS, -A, -l SELECTOR, --show-managed-fields, --server-side, --force-conflicts, --field-manager=NAME,
  -f FILE|URL|-   ${t('console.help.filename')}
  --type merge|json|strategic -p PATCH
  scale --replicas=N [--resource-version=RV] [--current-replicas=N]; get --raw '/api/v1/...?resourceVersion=N'
... | jq FILTER       ... | grep PATTERN       base64 -d      cat FILE      ... > FILE
alias e="etcdctl --endpoints ..."
lab load RATE SECONDS   ${t('console.help.load')}
`;
