// lab load RATE SECONDS updates the ConfigMap "load" RATE times a second
// for SECONDS seconds, unconditionally, to see the lab under a stream of
// writes (the e2e tests use it to measure the page under load).

import { USER_AGENT } from './kubectl.js';

export async function lab(p) {
  if (p.args[0] !== 'load') { p.stderr.write('usage: lab load RATE SECONDS\n'); return 2; }
  const rate = Number(p.args[1] ?? 200), seconds = Number(p.args[2] ?? 3);
  if (!(rate > 0)) { p.stderr.write(`lab load: bad rate ${JSON.stringify(p.args[1])}\n`); return 2; }
  if (!(seconds > 0)) { p.stderr.write(`lab load: bad duration ${JSON.stringify(p.args[2])}\n`); return 2; }
  const t = p.c.transport;
  const path = '/api/v1/namespaces/default/configmaps';
  const body = (i) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'load' }, data: { i: String(i) } });
  const opts = (i) => ({ headers: { 'Content-Type': 'application/json' }, body: body(i), userAgent: USER_AGENT });
  const first = await t.request('POST', path, opts(0));
  if (first.status >= 300 && first.status !== 409) { p.stderr.write(`lab load: the API answered ${first.status}\n`); return 1; }
  const total = Math.round(rate * seconds);
  const start = performance.now();
  for (let i = 1; i <= total; i++) {
    if (p.signal.aborted) return 130;
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) {
      try { await p.c.sleep(wait, p.signal); } catch { return 130; }
    }
    const r = await t.request('PUT', path + '/load', opts(i));
    if (r.status >= 300) { p.stderr.write(`lab load: the API answered ${r.status}: ${r.body}\n`); return 1; }
  }
  const secs = (performance.now() - start) / 1000;
  p.stdout.write(`load: ${total} updates in ${secs.toFixed(2)}s (${(total / secs).toFixed(0)}/s)\n`);
  return 0;
}
