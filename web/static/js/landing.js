// The landing page's server part: create a guarded session, join one with
// its code, and list the sessions this browser created or joined.
//
// The server hands a session's teacher token once, at creation; this
// browser keeps it (with the join code, for the projector) in localStorage,
// and proves it to GET /sessions to find which of its sessions still
// exist. A student's token is an HttpOnly cookie no script can read: the
// browser keeps only the session's name.

import { t, onLanguageChange } from './i18n.js';
import { ready } from './pagelang.js';

const STORE = 'rvplay.sessions';

const $ = (id) => document.querySelector(`[data-testid="${id}"]`);
const list = $('session-list');

function sessionURL(id) { return `/s/${encodeURIComponent(id)}/`; }

function remembered() {
  try {
    const v = JSON.parse(localStorage.getItem(STORE) || '[]');
    return Array.isArray(v) ? v.filter((s) => s && typeof s.id === 'string') : [];
  } catch { return []; }
}

function remember(entry) {
  const all = remembered().filter((s) => s.id !== entry.id);
  all.unshift(entry);
  localStorage.setItem(STORE, JSON.stringify(all));
}

function forget(id) {
  localStorage.setItem(STORE, JSON.stringify(remembered().filter((s) => s.id !== id)));
}

// api sends a JSON request and returns the decoded answer; a refusal
// throws with the server's message (a Kubernetes Status).
async function api(method, path, body, token) {
  const headers = {};
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  const r = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  let j = {};
  try { j = JSON.parse(text); } catch { /* not JSON */ }
  if (!r.ok) {
    const err = new Error(j.message || text || `HTTP ${r.status}`);
    err.status = r.status;
    throw err;
  }
  return j;
}

// item is one session of the list; role is the key of what this browser is to it.
function item(s, role) {
  const li = document.createElement('li');
  li.dataset.testid = 'session-item';
  li.dataset.session = s.id;
  const a = document.createElement('a');
  a.href = s.url || sessionURL(s.id);
  a.textContent = s.id;
  a.dataset.testid = 'session-link';
  const what = document.createElement('span');
  what.className = 'muted';
  what.textContent = ` ${t(role)}`;
  li.append(a, what);
  if (s.joinCode) {
    const code = document.createElement('code');
    code.textContent = s.joinCode;
    code.dataset.testid = 'session-code';
    code.title = t('landing.joincode');
    li.append(' ', code);
  }
  if (s.teacherToken) {
    const dash = document.createElement('a');
    dash.href = `${s.url || sessionURL(s.id)}dashboard`;
    dash.textContent = t('landing.dashboard');
    dash.dataset.testid = 'session-dashboard';
    li.append(' ', dash);
    const end = document.createElement('button');
    end.textContent = t('landing.end');
    end.title = t('landing.end.title');
    end.dataset.testid = 'session-end';
    end.addEventListener('click', async () => {
      if (!confirm(t('landing.end.confirm', { id: s.id }))) return;
      try {
        await api('DELETE', `/s/${encodeURIComponent(s.id)}`, undefined, s.teacherToken);
      } catch (err) {
        if (err.status !== 404) { $('session-error').textContent = t('landing.error.end', { id: s.id, message: err.message }); return; }
      }
      forget(s.id);
      refresh();
    });
    li.append(' ', end);
  }
  return li;
}

// refresh lists the sessions this browser created (checked against the
// server: an ended or expired one is forgotten), those it joined, and the
// server's open sessions.
async function refresh() {
  const items = [];
  const shown = new Set();
  for (const s of remembered()) {
    if (s.teacherToken) {
      let visible;
      try { visible = await api('GET', '/sessions', undefined, s.teacherToken); } catch { continue; }
      if (!visible.some((v) => v.id === s.id && v.role === 'teacher')) { forget(s.id); continue; }
      items.push(item(s, 'landing.role.teacher'));
    } else {
      items.push(item(s, 'landing.role.joined'));
    }
    shown.add(s.id);
  }
  try {
    for (const s of await api('GET', '/sessions')) {
      if (!shown.has(s.id)) items.push(item(s, 'landing.role.open'));
    }
  } catch { /* no server sessions here */ }
  list.replaceChildren(...items);
}

$('session-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  $('session-error').textContent = '';
  const name = e.target.elements.name.value.trim();
  try {
    const s = await api('POST', '/sessions', name ? { name } : {});
    remember({ id: s.id, url: s.url, joinCode: s.joinCode, teacherToken: s.teacherToken });
    $('created-where').textContent = `${location.origin}/?join=${s.id}`;
    $('created-code').textContent = s.joinCode;
    $('created-open').href = s.url;
    $('created-dashboard').href = `${s.url}dashboard`;
    $('created-kubeconfig').href = `${s.url}kubeconfig`;
    $('created-token').textContent = s.teacherToken;
    $('session-created').hidden = false;
    refresh();
  } catch (err) {
    $('session-error').textContent = t('landing.error.create', { message: err.message });
  }
});

$('join-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  $('join-error').textContent = '';
  const f = e.target.elements;
  const id = f.session.value.trim();
  try {
    const j = await api('POST', `/s/${encodeURIComponent(id)}/join`, { code: f.code.value, name: f.name.value });
    remember({ id, url: sessionURL(id), student: j.id });
    location.href = sessionURL(id);
  } catch (err) {
    $('join-error').textContent = t('landing.error.join', { message: err.message });
  }
});

// Signing in hands a token of the session to this browser as its cookie
// (POST /s/<id>/sign-in): a teacher's token is kept like a created
// session's, so the list finds the session again, and opens the dashboard;
// a student's opens the lab.
$('sign-in-form').addEventListener('submit', async (e) => {
  e.preventDefault();
  $('sign-in-error').textContent = '';
  const f = e.target.elements;
  const id = f.session.value.trim();
  const token = f.token.value.trim();
  try {
    const s = await api('POST', `/s/${encodeURIComponent(id)}/sign-in`, undefined, token);
    if (s.role === 'teacher') {
      const known = remembered().find((x) => x.id === s.id);
      remember({ ...known, id: s.id, url: s.url, teacherToken: token });
      location.href = `${s.url}dashboard`;
    } else {
      remember({ id: s.id, url: s.url, student: s.principal });
      location.href = s.url;
    }
  } catch (err) {
    $('sign-in-error').textContent = t('landing.error.signin', { message: err.message });
  }
});

// A guarded session's page sends a visitor without its token here, with
// ?join=<session>.
const joining = new URLSearchParams(location.search).get('join');
if (joining) {
  $('join-session').value = joining;
  $('join-code').focus();
}

// The list says its roles in the page's language: drawn once the page
// speaks it, and again in a language picked.
await ready;
refresh();
onLanguageChange(() => refresh());
