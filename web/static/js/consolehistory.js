// The console's command history, as a shell's ↑ and ↓ walk it: the
// newest command first, the line being typed kept as a draft to come back
// to, the same command twice in a row kept once. It survives a reload in
// storage (localStorage) under key, bounded to the last `limit` commands.

export class History {
  constructor(storage = null, key = '', limit = 200) {
    this.storage = storage;
    this.key = key;
    this.limit = limit;
    this.entries = [];
    try {
      const saved = JSON.parse(storage?.getItem(key) || '[]');
      if (Array.isArray(saved)) this.entries = saved.filter((e) => typeof e === 'string').slice(-limit);
    } catch { /* a damaged entry starts an empty history */ }
    this.pos = this.entries.length;
    this.draft = '';
  }

  add(command) {
    if (command.trim() && this.entries[this.entries.length - 1] !== command) {
      this.entries.push(command);
      if (this.entries.length > this.limit) this.entries.splice(0, this.entries.length - this.limit);
      try { this.storage?.setItem(this.key, JSON.stringify(this.entries)); } catch { /* storage full or denied: this page keeps it */ }
    }
    this.pos = this.entries.length;
    this.draft = '';
  }

  // back is ↑: the command before the one shown (null at the oldest);
  // current is what the input holds now.
  back(current) {
    if (this.pos === 0) return null;
    if (this.pos === this.entries.length) this.draft = current;
    return this.entries[--this.pos];
  }

  // forward is ↓: the next command, then the draft (null past it).
  forward() {
    if (this.pos >= this.entries.length) return null;
    this.pos++;
    return this.pos === this.entries.length ? this.draft : this.entries[this.pos];
  }
}
