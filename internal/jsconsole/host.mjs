// The lab's console (web/static/js/console.js) with its session behind
// messages, for Go tests (jsconsole.go): the console's transport sends each
// request and watch to Go, which answers them from an api.Handler in its
// own process, as the engine in the page answers the lab. runner.mjs
// carries the messages over a Node process's stdin and stdout; under
// WebAssembly (link_js.go) the Go test and this module share one Node.
//
// from Go:  {"op":"run","id":1,"input":"kubectl get cm","editorText":"...","now":"..."}
//           {"op":"cancel","id":1}                  Ctrl+C
//           {"op":"edited","id":1,"text":"..."}     what the editor saved (null: canceled)
//           {"op":"response","rid":1,"status":200,"headers":{},"body":"..."}
//           {"op":"open","wid":1,"status":200,"body":""} {"op":"frame","wid":1,"data":"..."}
//           {"op":"end","wid":1,"reason":"eof"}
// to Go:    {"id":1,"type":"output","stream":"stdout","text":"..."}
//           {"id":1,"type":"streaming"} {"id":1,"type":"note","text":"..."}
//           {"id":1,"type":"edit","text":"..."} {"id":1,"type":"exit","code":0}
//           {"type":"request","rid":1,"method":"GET","path":"/api","query":"","headers":{},"body":""}
//           {"type":"watch","wid":1,...} {"type":"unwatch","wid":1}
import { readFileSync } from 'node:fs';
import { Console } from '../../web/static/js/console.js';
import { Catalog, useCatalog } from '../../web/static/js/i18n.js';

// The console's notes are the lab's strings: in English here, as a page in
// English says them.
useCatalog(new Catalog('en', JSON.parse(readFileSync(new URL('../../web/static/i18n/en.json', import.meta.url), 'utf8'))));

function queryString(q) {
  if (!q) return '';
  if (typeof q === 'string') return q.replace(/^\?/, '');
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null && v !== '') p.append(k, String(v));
  return p.toString();
}

const withAgent = (headers, userAgent) => (userAgent ? { ...(headers || {}), 'User-Agent': userAgent } : { ...(headers || {}) });

// startHost starts a console that sends its messages with send(object)
// and returns receive(object) for Go's. now (ms since the epoch, or null
// for the wall clock) is the time the console reads until a run says.
export function startHost(send, now = null) {
  const pending = new Map();
  const watchers = new Map();
  let nextRID = 0, nextWID = 0;

  const transport = {
    kind: 'pipe',
    request(method, p, { query, headers, body, userAgent } = {}) {
      const rid = ++nextRID;
      return new Promise((resolve) => {
        pending.set(rid, resolve);
        send({ type: 'request', rid, method, path: p, query: queryString(query), headers: withAgent(headers, userAgent), body: body ?? '' });
      });
    },
    watch(p, query, onEvent, { method = 'GET', body = '', headers = {}, userAgent } = {}) {
      const wid = ++nextWID;
      watchers.set(wid, onEvent);
      send({ type: 'watch', wid, method, path: p, query: queryString(query), headers: withAgent(headers, userAgent), body: body ?? '' });
      return () => {
        if (!watchers.has(wid)) return;
        watchers.delete(wid);
        send({ type: 'unwatch', wid });
        onEvent({ type: 'end', reason: 'canceled' });
      };
    },
  };

  let editorText = '';
  const edits = new Map();
  let current = 0;
  const con = new Console({
    transport,
    now: () => (now === null ? Date.now() : now),
    sleep: () => Promise.resolve(),
    editor: {
      text: async () => editorText,
      edit: (text) => new Promise((resolve) => { const id = current; edits.set(id, resolve); send({ id, type: 'edit', text }); }),
    },
  });

  const cancels = new Map();

  return function receive(m) {
    switch (m.op) {
      case 'run': {
        current = m.id;
        editorText = m.editorText ?? '';
        if (m.now) now = Date.parse(m.now);
        cancels.set(m.id, con.run(m.input, {
          onOutput: (text, stream) => send({ id: m.id, type: 'output', stream, text }),
          onStreaming: () => send({ id: m.id, type: 'streaming' }),
          onNote: (text) => send({ id: m.id, type: 'note', text }),
          onExit: (code) => { cancels.delete(m.id); send({ id: m.id, type: 'exit', code }); },
        }));
        break;
      }
      case 'cancel': cancels.get(m.id)?.(); break;
      case 'edited': edits.get(m.id)?.(m.text); edits.delete(m.id); break;
      case 'response': pending.get(m.rid)?.({ status: m.status, headers: m.headers || {}, body: m.body }); pending.delete(m.rid); break;
      case 'open': watchers.get(m.wid)?.({ type: 'open', status: m.status, body: m.body || '' }); break;
      case 'frame': watchers.get(m.wid)?.({ type: 'frame', data: m.data }); break;
      case 'end': { const w = watchers.get(m.wid); watchers.delete(m.wid); w?.({ type: 'end', reason: m.reason }); break; }
    }
  };
}
