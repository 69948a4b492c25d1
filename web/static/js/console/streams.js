// The streams between the stages of a pipeline: what one command writes,
// the next reads as it comes (so `kubectl get -w | grep x` and
// `etcdctl watch -w json | jq` print as events arrive).

// Pipe is a one-way byte stream of strings: write() from one command,
// chunks() (an async iterator) in the other.
export class Pipe {
  constructor() { this.buf = []; this.closed = false; this.wake = null; this.broken = false; }

  write(text) {
    if (this.broken || this.closed || !text) return;
    this.buf.push(text);
    this.notify();
  }

  close() { this.closed = true; this.notify(); }

  // breakPipe is the reader leaving: later writes are dropped (SIGPIPE).
  breakPipe() { this.broken = true; this.buf = []; this.notify(); }

  notify() { const w = this.wake; this.wake = null; if (w) w(); }

  async *chunks() {
    for (;;) {
      if (this.buf.length) { yield this.buf.shift(); continue; }
      if (this.closed || this.broken) return;
      await new Promise((resolve) => { this.wake = resolve; });
    }
  }
}

// StringSource is stdin from a heredoc or a file.
export class StringSource {
  constructor(text) { this.text = text; }
  async *chunks() { if (this.text) yield this.text; }
}

export async function readAll(stdin) {
  if (!stdin) return '';
  let s = '';
  for await (const c of stdin.chunks()) s += c;
  return s;
}

// lines yields complete lines (without the newline), and a last line that
// has none.
export async function* lines(stdin) {
  if (!stdin) return;
  let pending = '';
  for await (const c of stdin.chunks()) {
    pending += c;
    let i;
    while ((i = pending.indexOf('\n')) >= 0) {
      yield pending.slice(0, i);
      pending = pending.slice(i + 1);
    }
  }
  if (pending) yield pending;
}

// Buffer collects output (for > file).
export class Buffer {
  constructor() { this.text = ''; }
  write(t) { this.text += t; }
}
