// The console panel: the output, the command line with its history and
// continuation lines (heredocs, quotes, etcdctl txn), and the queue that
// runs commands one after another as a shell does. What the commands do
// is console.js's.

import { $, el, RowList } from './dom.js';
import { History } from './consolehistory.js';
import { onLanguageChange } from './i18n.js';

export function mountConsole(lab) {
  const out = $('console-output');
  const input = $('console-input');
  const prompt = $('console-prompt');
  const stop = $('console-stop');
  const rows = new RowList(out, lab.frame, 1000);
  // Each line keeps its newline, so that the output's text (a copy, a
  // search) reads as the terminal's.
  const line = (text, cls) => el('div', { class: 'line ' + cls, 'data-testid': 'console-line', text: text.endsWith('\n') ? text : text + '\n' });
  const print = (text, cls = '') => rows.push(line(text, cls));
  // A note ("# ...") is the lab's remark beside the commands' output, not
  // part of it: it is said again in the language the reader picks, as the
  // notice line and the panels are, where a terminal would leave its
  // scrollback alone. A learner who switches language to understand a hint
  // needs it in that language, and the note has no reader other than them
  // (no pipe, no file). What commands printed stays as printed: the tools'
  // output is English as the real tools print it, and help's text went to
  // stdout, as any output, in the language of the moment.
  const says = new WeakMap(); // a note's row -> its say()
  const note = (text, say) => {
    const row = line('# ' + text, 'muted');
    row.dataset.note = '';
    says.set(row, say);
    rows.push(row);
  };
  onLanguageChange(() => lab.frame.schedule('console-notes', () => {
    for (const row of out.querySelectorAll('[data-note]')) row.textContent = `# ${says.get(row)()}\n`;
  }));
  const printLines = (text, cls) => {
    for (const line of text.replace(/\n$/, '').split('\n')) print(line, cls);
  };
  // The commands (about 75 KB gzip of modules) load beside the engine,
  // not before the lab is interactive; a command typed before they are
  // here waits for them.
  let con = null;
  const loading = import('./console.js').then(({ Console }) => {
    con = new Console({
      transport: lab.transport,
      editor: { text: async () => lab.editor.text(), edit: (text, signal) => lab.editor.edit(text, signal) },
    });
    return con;
  });
  const history = new History(globalThis.localStorage, 'rvplay.console.history');

  // The command running in the foreground, and the streams still running
  // in the background (a watch): Ctrl+C stops them all.
  let foreground = null;
  const streams = new Set();
  const showStop = () => { stop.hidden = streams.size === 0; };
  function interrupt() {
    foreground?.();
    for (const cancel of streams) cancel();
    streams.clear();
    showStop();
  }

  // exec runs one whole input. It resolves once the command has exited,
  // or once it streams: a watch goes on printing while the next command
  // runs, as if it had been started with &.
  async function exec(text) {
    const con = await loading;
    return new Promise((resolve) => {
      let streaming = false;
      let compacted = false;
      const cancel = con.run(text, {
        onOutput: (t, stream) => {
          if (/^compacted revision \d+$/m.test(t)) compacted = true;
          printLines(t, stream === 'stderr' ? 'err' : '');
        },
        onNote: note,
        onClear: () => out.replaceChildren(),
        onStreaming: () => {
          streaming = true;
          if (foreground === cancel) foreground = null;
          streams.add(cancel);
          showStop();
          resolve();
        },
        onExit: () => {
          if (foreground === cancel) foreground = null;
          if (streaming) { streams.delete(cancel); showStop(); }
          lab.afterWrite();
          if (compacted) lab.etcd_view.learnCompaction().catch(() => {});
          resolve();
        },
      });
      if (!streaming) foreground = cancel;
    });
  }

  let queue = Promise.resolve();
  // A transcript echoes a command's lines as a terminal shows them typed:
  // the first after "$ ", the next ones after "> ", or bare after a prompt
  // the command prints (etcdctl txn -i's "compares:"), which shows as soon
  // as it is due. enter(line) returns the continuation after that line.
  function transcript() {
    const lines = [];
    let prefix = '$ ';
    let printed = '';
    return (line) => {
      print(prefix + line, 'cmd');
      lines.push(line);
      const c = con ? con.continuation(lines.join('\n')) : { complete: true, prompt: '' };
      if (c.complete) return c;
      prefix = c.prompt === '> ' ? '> ' : '';
      if (c.printed && c.prompt !== printed) print(c.prompt);
      printed = c.printed ? c.prompt : '';
      return c;
    };
  }
  const echo = (text) => { const t = transcript(); text.split('\n').forEach(t); };
  // run queues one command (its continuation lines joined by newlines);
  // the promise settles when it has run or started to stream. What the
  // learner typed was echoed as it was entered.
  function run(text, { typed = false } = {}) {
    lab.record({ op: 'cmd', line: text });
    const go = async () => {
      await loading.catch(() => {}); // the echo's prompts are the parser's
      if (!typed) echo(text);
      await exec(text);
    };
    queue = queue.then(go, go);
    return queue;
  }

  // The lines typed so far of a command that is not complete yet, and a
  // command of several lines recalled from the history.
  let pending = [];
  let typing = transcript();
  let recalled = null;
  function enter(line) {
    pending.push(line);
    const c = typing(line);
    const text = pending.join('\n');
    if (!c.complete) {
      prompt.textContent = c.prompt === '> ' ? '>' : c.printed ? '' : c.prompt;
      return;
    }
    pending = [];
    typing = transcript();
    prompt.textContent = '$';
    if (!text.trim()) return;
    history.add(text);
    run(text, { typed: true });
  }

  // Whether a line ends its command (a heredoc's first line does not) is
  // for the commands' parser to say, so a line entered before the commands
  // have loaded waits for them, and the lines after it wait their turn.
  let waiting = null;
  function enterLine(line) {
    if (con && !waiting) { enter(line); return; }
    const w = (waiting ?? loading).then(() => enter(line), () => enter(line));
    waiting = w;
    w.then(() => { if (waiting === w) waiting = null; });
  }

  $('console-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const line = input.value;
    input.value = '';
    const whole = recalled && !pending.length && line === recalled.split('\n')[0] ? recalled : null;
    recalled = null;
    if (whole) whole.split('\n').forEach(enterLine);
    else enterLine(line);
  });
  // A pasted heredoc arrives as lines, each entered in turn; the last one
  // stays in the input for Enter.
  input.addEventListener('paste', (e) => {
    const text = e.clipboardData?.getData('text/plain') || '';
    if (!text.includes('\n')) return;
    e.preventDefault();
    const lines = (input.value.slice(0, input.selectionStart) + text + input.value.slice(input.selectionEnd)).replace(/\r\n?/g, '\n').split('\n');
    input.value = lines.pop();
    for (const l of lines) enterLine(l);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'c' && e.ctrlKey && input.selectionStart === input.selectionEnd) {
      e.preventDefault();
      const typed = [...pending, input.value].filter((l) => l !== '');
      if (typed.length) {
        print((pending.length ? '' : '$ ') + input.value + '^C', 'cmd');
        pending = [];
        typing = transcript();
        prompt.textContent = '$';
        input.value = '';
        return;
      }
      print('^C', 'muted');
      interrupt();
    } else if ((e.key === 'ArrowUp' || e.key === 'ArrowDown') && !e.shiftKey && !e.altKey) {
      if (pending.length) return;
      const next = e.key === 'ArrowUp' ? history.back(input.value) : history.forward();
      if (next === null) return;
      e.preventDefault();
      // A command of several lines (a heredoc, a txn) shows as its first
      // line; Enter on that line as recalled runs all of it.
      recalled = next.includes('\n') ? next : null;
      input.value = next.split('\n')[0];
      input.setSelectionRange(input.value.length, input.value.length);
    }
  });
  stop.addEventListener('click', () => { print('^C', 'muted'); interrupt(); input.focus(); });

  return {
    run, print,
    idle: () => queue,
    stopWatches: () => { interrupt(); con?.stopAll(); },
    clear: () => out.replaceChildren(),
    focus: () => input.focus(),
  };
}
