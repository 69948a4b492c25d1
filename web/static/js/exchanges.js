// A client's exchanges with the API server: the request log of a client
// card and the card's outcome, which says plainly what the last request
// got. A 409 shows its status, the Status message and the resourceVersion
// the client sent against the one the object has now.

import { el, RowList } from './dom.js';
import { t, onLanguageChange } from './i18n.js';
import { parseStatus } from './kube.js';

export const STATUS_TEXT = {
  0: 'no answer', 200: 'OK', 201: 'Created', 400: 'Bad Request', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed',
  409: 'Conflict', 410: 'Gone', 415: 'Unsupported Media Type', 422: 'Unprocessable Entity', 429: 'Too Many Requests',
  500: 'Internal Server Error', 503: 'Service Unavailable', 504: 'Gateway Timeout',
};

export const statusLine = (status) => `${status} ${STATUS_TEXT[status] || ''}`.trim();

// shortPath drops what every request of the lab shares (the API prefix and
// the default namespace), so that a narrow card still shows the object.
export function shortPath(path) {
  return path
    .replace(/^\/apis?\/(?:[^/]+\/)?v1\//, '')
    .replace(/^namespaces\/default\//, '');
}

// resourceVersionOf reads metadata.resourceVersion from a JSON body.
export function resourceVersionOf(body) {
  try { return JSON.parse(body)?.metadata?.resourceVersion || ''; } catch { return ''; }
}

// outcomeOf says what one exchange means to the learner:
//   {ok, status, line, reason, message, sentRV, currentRV, noop}
// sentRV is the resourceVersion in the request's body ('' when the client
// sent none: an unconditional update); currentRV the object's one now
// (from etcd, when the caller knows it). A 200 to a PUT whose
// resourceVersion did not move is kube-apiserver's no-op.
export function outcomeOf({ method, status, reqBody = '', respBody = '', currentRV = '' }) {
  const st = status >= 400 ? parseStatus(respBody) : null;
  const sentRV = method === 'PUT' || method === 'PATCH' ? resourceVersionOf(reqBody) : '';
  const gotRV = status < 300 ? resourceVersionOf(respBody) : '';
  return {
    ok: status > 0 && status < 300,
    status,
    line: statusLine(status),
    reason: st?.reason || '',
    message: st?.message || (status === 0 ? respBody : ''),
    sentRV,
    gotRV,
    currentRV: String(currentRV || ''),
    noop: method === 'PUT' && status === 200 && sentRV !== '' && sentRV === gotRV,
    // Only a body we know can show a missing resourceVersion.
    unconditional: method === 'PUT' && reqBody !== '' && sentRV === '',
  };
}

// ExchangeLog is one client's request log. Its exchanges are the requests
// as they were sent and answered, and stay; a note is the lab's remark
// between them and, given as a function (said), is said again in the
// language the reader picks, as the console's notes are.
export class ExchangeLog {
  constructor(list, frame, max = 60) {
    this.list = list;
    this.rows = new RowList(list, frame, max);
    this.says = new WeakMap(); // a note's row -> its say()
    onLanguageChange(() => frame.schedule(this.says, () => {
      for (const row of list.querySelectorAll('[data-testid="log-note"]')) {
        const say = this.says.get(row);
        if (say) row.textContent = say();
      }
    }));
  }

  clear() { this.list.replaceChildren(); }

  // note logs a step that is not a request (a retry's wait, a failed
  // attempt); a "run" note begins a run of requests (a retry loop's call).
  // text is a text, or a function that says it (said).
  note(text, kind = '') {
    const say = typeof text === 'function' ? text : null;
    const row = el('li', { class: kind ? `note ${kind}` : 'note', 'data-testid': 'log-note', text: say ? say() : text });
    if (say) this.says.set(row, say);
    this.rows.push(row);
  }

  // add logs one exchange: status first, so that a narrow card never cuts
  // it off, then method and path; the bodies fold out.
  add({ method, path, status, reqBody = '', respBody = '', note = '' }) {
    const ok = status > 0 && status < 300;
    const entry = el('li', { 'data-testid': 'exchange', 'data-status': status, 'data-method': method, class: ok ? 'ok' : 'fail' },
      el('details', {},
        el('summary', { title: `${method} ${path}` },
          el('b', { class: 'status', 'data-testid': 'exchange-status', text: statusLine(status) }), ' ',
          el('span', { class: 'method', text: method }), ' ',
          el('span', { class: 'path', text: shortPath(path) })),
        note ? el('div', { class: 'note', text: note }) : null,
        reqBody ? el('div', { class: 'body-label', text: 'request' }) : null,
        reqBody ? el('pre', { class: 'body', text: reqBody }) : null,
        el('div', { class: 'body-label', text: 'response' }),
        el('pre', { class: 'body', 'data-testid': 'exchange-body', text: respBody })));
    this.rows.push(entry);
    return entry;
  }
}

// renderOutcome fills a card's outcome box.
export function renderOutcome(box, o) {
  box.dataset.status = String(o.status);
  box.dataset.ok = String(o.ok);
  const parts = [el('b', { class: 'outcome-status', 'data-testid': 'outcome-status', text: o.reason && o.reason !== STATUS_TEXT[o.status] ? `${o.line} · ${o.reason}` : o.line })];
  if (o.message) parts.push(el('p', { class: 'outcome-message', 'data-testid': 'outcome-message', text: o.message }));
  if (o.status === 409 || (o.sentRV && o.currentRV && o.sentRV !== o.currentRV && !o.ok)) {
    parts.push(el('p', { class: 'outcome-rvs' },
      t('outcome.sent'), ' ', el('b', { 'data-testid': 'outcome-sent-rv', class: 'stale', text: o.sentRV || '–' }),
      ' ≠ ', t('outcome.current'), ' ', el('b', { 'data-testid': 'outcome-current-rv', text: o.currentRV || '?' })));
  } else if (o.noop) {
    parts.push(el('p', { class: 'outcome-note', text: t('outcome.noop', { rv: o.gotRV }) }));
  } else if (o.unconditional && o.ok) {
    parts.push(el('p', { class: 'outcome-note warn', text: t('outcome.norv') }));
  }
  // extra: a text, or a function saying it in the current language (said).
  if (o.extra) parts.push(el('p', { class: 'outcome-note', text: typeof o.extra === 'function' ? o.extra() : o.extra }));
  box.replaceChildren(...parts);
}
