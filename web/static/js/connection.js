// Whether the lab can reach its session. Offline the engine lives in the
// page and is always there; on a server session every request and stream
// reports here: a network failure marks the session unreachable, and from
// then on a probe asks the server again with exponential back-off (as
// client-go's reflector backs off) until it answers. Every success marks it
// live again.
//
// States: 'loading', 'live', 'lost' (a request or stream failed; probing),
// 'error' (the engine could not start).

export class Backoff {
  // client-go's wait.Backoff for the reflector: 800 ms doubling to 30 s,
  // with jitter so that a class of browsers does not probe in lock step.
  constructor({ initial = 800, max = 30_000, factor = 2, jitter = 0.1, random = Math.random } = {}) {
    Object.assign(this, { initial, max, factor, jitter, random });
    this.reset();
  }

  reset() { this.current = 0; }

  next() {
    this.current = this.current ? Math.min(this.max, this.current * this.factor) : this.initial;
    return Math.round(this.current * (1 + this.jitter * this.random()));
  }
}

export class Connection extends EventTarget {
  // probe: async () => boolean (true when the server answered).
  // timers: {setTimeout, clearTimeout}, injectable for tests.
  constructor({ probe, backoff = new Backoff(), timers = globalThis } = {}) {
    super();
    this.state = 'loading';
    this.detail = '';
    this.probe = probe;
    this.backoff = backoff;
    this.timers = timers;
    this.timer = null;
    this.nextProbeIn = 0;
  }

  set(state, detail = '') {
    if (state === this.state && detail === this.detail) return;
    this.state = state;
    this.detail = detail;
    this.dispatchEvent(new CustomEvent('change', { detail: { state, detail } }));
  }

  // ok: a request or stream got an answer from the server.
  ok() {
    if (this.state === 'error') return;
    this.backoff.reset();
    if (this.timer) { this.timers.clearTimeout(this.timer); this.timer = null; }
    this.set('live');
  }

  // failed: a request or stream could not reach the server.
  failed(reason = '') {
    if (this.state === 'error') return;
    if (this.state !== 'lost') this.set('lost', reason);
    if (!this.timer && this.probe) this.schedule();
  }

  // schedule probes again after the back-off's next wait, and says how
  // long ('retry'): the header shows it, and each failed probe waits longer.
  schedule() {
    this.nextProbeIn = this.backoff.next();
    this.dispatchEvent(new CustomEvent('retry', { detail: { inMs: this.nextProbeIn } }));
    this.timer = this.timers.setTimeout(async () => {
      this.timer = null;
      let up = false;
      try { up = await this.probe(); } catch { up = false; }
      if (up) this.ok();
      else if (this.state === 'lost' && !this.timer) this.schedule();
    }, this.nextProbeIn);
  }
}
