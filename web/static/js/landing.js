// The landing page's server part: list the sessions and open or create one.

const form = document.getElementById('session-form');
const list = document.getElementById('session-list');
const errorEl = document.querySelector('[data-testid="session-error"]');

function sessionURL(name) { return `/s/${encodeURIComponent(name)}/`; }

async function refresh() {
  try {
    const r = await fetch('/sessions');
    if (!r.ok) return;
    const j = await r.json();
    const items = Array.isArray(j) ? j : j.sessions || j.items || [];
    list.replaceChildren(...items.map((s) => {
      const name = typeof s === 'string' ? s : s.name;
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = sessionURL(name);
      a.textContent = name;
      a.dataset.testid = 'session-link';
      li.append(a);
      return li;
    }));
  } catch { /* no server sessions here */ }
}

form.addEventListener('submit', async (e) => {
  e.preventDefault();
  errorEl.textContent = '';
  const name = form.elements.name.value.trim();
  try {
    const r = await fetch('/sessions', {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(name ? { name } : {}),
    });
    const text = await r.text();
    let j = {};
    try { j = JSON.parse(text); } catch { /* not JSON */ }
    // An existing session is fine: open it.
    if (!r.ok && !(r.status === 409 && name)) throw new Error(j.message || text || `HTTP ${r.status}`);
    location.href = sessionURL(j.name || name);
  } catch (err) {
    errorEl.textContent = `could not open the session: ${err.message}`;
  }
});

refresh();
