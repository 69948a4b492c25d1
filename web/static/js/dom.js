// Small DOM helpers. Object content is only ever inserted as text
// (textContent, attributes via setAttribute), never as HTML.

export function el(tag, attrs = {}, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// $ finds the page's own elements by id (data-testid belongs to the tests).
export const $ = (id) => document.getElementById(id);

// keyPath renders an etcd key so that it breaks only after a "/", never
// inside a name (not even at its hyphens): each segment unbreakable,
// a <wbr> after each "/". after names other places to break: a request's
// path and query (requestPath).
export function keyPath(key, after = KEY_BREAKS) {
  const frag = document.createDocumentFragment();
  const parts = splitKey(key, after);
  parts.forEach((p, i) => {
    frag.append(el('span', { class: 'seg', text: p }));
    if (i < parts.length - 1) frag.append(document.createElement('wbr'));
  });
  return frag;
}

const KEY_BREAKS = /(?<=\/)/;
// REQUEST_BREAKS: after each / (but the leading one), ? and &: a query's
// parameter stays whole with its value (resourceVersion=9).
export const REQUEST_BREAKS = /(?<=.[/?&])/;

// splitKey cuts a key after each "/" (the places a line may break), or
// after what after matches.
export function splitKey(key, after = KEY_BREAKS) {
  return String(key).split(after);
}

// Frame batches DOM work per animation frame: while events stream in, the
// page changes once per frame, not once per event. Work that must read
// layout after the writes (keeping a log scrolled to its end) runs last,
// so that a frame lays out once however many lists it changed.
export class Frame {
  constructor() { this.tasks = new Map(); this.after = new Map(); this.pending = false; }
  // schedule(key, fn): run fn on the next frame; a later schedule with the
  // same key replaces the earlier one.
  schedule(key, fn) {
    this.tasks.set(key, fn);
    if (!this.pending) {
      this.pending = true;
      requestAnimationFrame(() => this.flush());
    }
  }
  // afterWrites(key, fn): run fn in this frame after every write.
  afterWrites(key, fn) { this.after.set(key, fn); }
  flush() {
    this.pending = false;
    const tasks = [...this.tasks.values()];
    this.tasks.clear();
    for (const fn of tasks) {
      try { fn(); } catch (e) { console.error(e); }
    }
    const after = [...this.after.values()];
    this.after.clear();
    for (const fn of after) {
      try { fn(); } catch (e) { console.error(e); }
    }
  }
}

// RowList appends rows in batches and keeps at most max rows. It keeps the
// list scrolled to its end while the reader is there: whether they are is
// learned from their own scrolling, never by reading layout while writing.
export class RowList {
  constructor(container, frame, max = 400) {
    this.c = container; this.frame = frame; this.max = max; this.queue = [];
    this.key = Symbol('rows');
    this.scroller = container.closest('.scroll') || container;
    this.pinned = true;
    this.ours = false;
    // The scroller's size as the last layout left it (ResizeObserver's).
    this.size = null;
    this.scroller.addEventListener('scroll', () => {
      if (this.ours) { this.ours = false; return; }
      const s = this.scroller;
      // A scroll that reaches us after the scroller changed size is the
      // browser's (it cut scrollTop to a shorter content), not the reader's.
      if (this.size !== null && this.size !== `${s.clientWidth}x${s.clientHeight}`) return;
      this.pinned = s.scrollHeight - s.scrollTop - s.clientHeight < 24;
    }, { passive: true });
    // A new layout (presentation mode, a resized window) rewraps the rows:
    // a reader at the end stays there. Taken for the reader scrolling away,
    // it stopped the list following, and a lesson's Run seemed to do nothing.
    if (typeof ResizeObserver === 'function') {
      new ResizeObserver(() => {
        const s = this.scroller;
        this.size = `${s.clientWidth}x${s.clientHeight}`;
        if (this.pinned) this.toEnd();
      }).observe(this.scroller);
    }
  }
  toEnd() {
    const s = this.scroller;
    const end = s.scrollHeight - s.clientHeight;
    if (s.scrollTop < end - 1) { this.ours = true; s.scrollTop = end; }
  }
  push(row) {
    this.queue.push(row);
    this.frame.schedule(this.key, () => this.flush());
  }
  flush() {
    const frag = document.createDocumentFragment();
    for (const r of this.queue.splice(0)) frag.append(r);
    this.c.append(frag);
    let extra = this.c.childElementCount - this.max;
    while (extra-- > 0) this.c.firstElementChild.remove();
    if (this.pinned) {
      this.frame.afterWrites(this.key, () => this.toEnd());
    }
  }
}
