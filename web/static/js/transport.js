// One interface to a session, whether it lives in this page (the engine
// compiled to WebAssembly) or on the server (fetch + WebSocket):
//
//   request(method, path, {query, headers, body}) -> Promise<{status, headers, body}>
//   watch(path, query, onEvent, {method, body, headers, userAgent}) -> cancel()
//
// onEvent receives {type: 'open', status, body, via}, then {type: 'frame',
// data} for each message (one JSON document), then {type: 'end', reason,
// code}. Paths are the session's API paths ("/v3/kv/range",
// "/api/v1/namespaces/default/configmaps").
//
// A session names a client by its User-Agent (its record of exchanges,
// kube's default field managers). A page cannot set that header, so a
// client's userAgent travels as X-Rvplay-User-Agent on a fetch and as a
// WebSocket subprotocol, which the server restores (engine/api
// useragent.go); the engine in the page gets the header itself.
//
// A request that cannot reach a server session rejects with a NetworkError
// (never a bare "Failed to fetch"), and the transport tells its
// connection monitor (connection.js) about every success and failure.

export class NetworkError extends Error {
  constructor(cause) {
    super(`the server could not be reached (${cause?.message || cause})`);
    this.name = 'NetworkError';
  }
}

function queryString(query) {
  if (!query) return '';
  if (typeof query === 'string') return query.startsWith('?') ? query : (query ? '?' + query : '');
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') p.append(k, String(v));
  const s = p.toString();
  return s ? '?' + s : '';
}

function splitFrames(text, onFrame) {
  for (const line of text.split('\n')) if (line.trim() !== '') onFrame(line);
}

// loadEngine resolves with the engine's bridge (globalThis.rvplay). The lab
// page starts the engine from an inline script (lab.templ) so that it loads
// while the modules do; without that, it is started here.
export async function loadEngine(staticBase) {
  if (globalThis.__rvplayEngine) return globalThis.__rvplayEngine;
  if (!globalThis.Go) throw new Error('wasm_exec.js did not load');
  const ready = new Promise((resolve) => { globalThis.__rvplayReady = resolve; });
  const go = new globalThis.Go();
  const url = staticBase + 'wasm/rvplay.wasm';
  const r = await fetch(url);
  if (!r.ok) throw new Error(`engine not found (${r.status} ${url}); run scripts/build-wasm.sh`);
  const { instance } = await WebAssembly.instantiate(await r.arrayBuffer(), go.importObject);
  go.run(instance).then(() => console.error('rvplay engine exited'));
  return ready;
}

export function wasmTransport(bridge) {
  return {
    kind: 'wasm',
    async request(method, path, { query, headers, body, userAgent } = {}) {
      if (userAgent) headers = { ...headers, 'User-Agent': userAgent };
      const r = await bridge.request({ method, path: path + queryString(query), headers: headers || {}, body: body ?? '' });
      return { status: r.status, headers: r.headers, body: r.body };
    },
    watch(path, query, onEvent, { method = 'GET', body = '', headers = {}, userAgent } = {}) {
      if (userAgent) headers = { ...headers, 'User-Agent': userAgent };
      return bridge.watch({ method, path: path + queryString(query), headers, body }, (e) => {
        // A listener's exception must not unwind into the engine, where
        // it is a Go panic that stops the engine for the whole page.
        try {
          if (e.kind === 'open') onEvent({ type: 'open', status: e.status, body: e.body, via: 'wasm' });
          else if (e.kind === 'frame') splitFrames(e.data, (data) => onEvent({ type: 'frame', data }));
          else onEvent({ type: 'end', reason: e.reason });
        } catch (err) {
          console.error('a watch listener failed:', err);
        }
      });
    },
    reset: () => bridge.reset(),
  };
}

// httpTransport talks to a server session. conn (optional) is told ok()
// after every answer and failed(reason) when the server cannot be reached.
export function httpTransport(apiBase, conn = null) {
  const base = apiBase.replace(/\/$/, '');
  const health = {
    ok: () => conn?.ok(),
    failed: (why) => conn?.failed(why),
  };
  return {
    kind: 'http',
    async request(method, path, { query, headers, body, userAgent } = {}) {
      if (userAgent) headers = { ...headers, 'X-Rvplay-User-Agent': userAgent };
      const init = { method, headers: headers || {} };
      if (body !== undefined && body !== '' && method !== 'GET' && method !== 'HEAD') init.body = body;
      let r;
      let text;
      try {
        r = await fetch(base + path + queryString(query), init);
        text = await r.text();
      } catch (e) {
        health.failed(e.message);
        throw new NetworkError(e);
      }
      health.ok();
      return { status: r.status, headers: Object.fromEntries(r.headers.entries()), body: text };
    },
    watch(path, query, onEvent, { method = 'GET', body = '', headers = {}, transport, userAgent } = {}) {
      if (method === 'GET' && transport !== 'http' && typeof WebSocket !== 'undefined') {
        return wsWatch(base + path + queryString(query), onEvent, health, userAgent);
      }
      if (userAgent) headers = { ...headers, 'X-Rvplay-User-Agent': userAgent };
      return fetchWatch(base + path + queryString(query), { method, body, headers }, onEvent, health);
    },
  };
}

// A Kubernetes watch over a WebSocket: one event per message.
// userAgentProtocol is the subprotocol that carries a User-Agent:
// "user-agent.rvplay.dev." and the agent in unpadded base64url.
export function userAgentProtocol(ua) {
  const bytes = new TextEncoder().encode(ua);
  let bin = '';
  for (const b of bytes) bin += String.fromCharCode(b);
  return 'user-agent.rvplay.dev.' + btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

// A close without a close frame (1006) is the network or the server going
// away; every other code is the server's own decision.
function wsWatch(url, onEvent, health, userAgent) {
  const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
  const ws = userAgent ? new WebSocket(scheme + '//' + location.host + url, [userAgentProtocol(userAgent)])
    : new WebSocket(scheme + '//' + location.host + url);
  let ended = false;
  const end = (e) => { if (!ended) { ended = true; onEvent(e); } };
  ws.onopen = () => { health.ok(); onEvent({ type: 'open', status: 200, body: '', via: 'websocket' }); };
  ws.onmessage = (m) => {
    if (typeof m.data === 'string') splitFrames(m.data, (data) => onEvent({ type: 'frame', data }));
    else m.data.text().then((t) => splitFrames(t, (data) => onEvent({ type: 'frame', data })));
  };
  ws.onclose = (c) => {
    if (c.code === 1006) health.failed('connection lost');
    end({ type: 'end', reason: c.reason || (c.code === 1000 ? 'closed' : 'connection lost'), code: c.code });
  };
  return () => { end({ type: 'end', reason: 'canceled', code: 1000 }); ws.close(1000); };
}

// A streamed HTTP response read line by line (chunked watch, etcd /v3/watch).
function fetchWatch(url, { method, body, headers }, onEvent, health) {
  const ctl = new AbortController();
  let ended = false;
  const end = (e) => { if (!ended) { ended = true; onEvent(e); } };
  (async () => {
    try {
      const init = { method, headers, signal: ctl.signal };
      if (method !== 'GET' && body) init.body = body;
      const r = await fetch(url, init);
      health.ok();
      if (r.status !== 200) {
        onEvent({ type: 'open', status: r.status, body: await r.text(), via: 'http' });
        end({ type: 'end', reason: 'eof' });
        return;
      }
      onEvent({ type: 'open', status: 200, body: '', via: 'http' });
      const reader = r.body.getReader();
      const dec = new TextDecoder();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let i;
        while ((i = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, i);
          buf = buf.slice(i + 1);
          if (line.trim()) onEvent({ type: 'frame', data: line });
        }
      }
      if (buf.trim()) onEvent({ type: 'frame', data: buf });
      end({ type: 'end', reason: 'eof' });
    } catch (e) {
      if (!ctl.signal.aborted) health.failed(e.message);
      end({ type: 'end', reason: ctl.signal.aborted ? 'canceled' : 'connection lost' });
    }
  })();
  return () => { end({ type: 'end', reason: 'canceled' }); ctl.abort(); };
}
