// Lesson texts: markdown (web/lessons/README.md says which) rendered
// safely with marked. The texts are the repository's own, but the renderer
// does not rely on that: raw HTML is shown as text, links go only to
// http(s), mailto, relative or in-page addresses, and images become their
// alt text. A ```console block becomes one line per command, each marked
// with data-command so that the lesson panel can put a Run button on it.

import { Marked } from '../vendor/marked-18.2.1.mjs';

const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHTML = (s) => String(s).replace(/[&<>"']/g, (c) => ESC[c]);

// safeHref keeps a link target only if it cannot run script.
export function safeHref(href) {
  const h = String(href || '').trim();
  if (/^(https?:|mailto:)/i.test(h)) return h;
  if (/^[a-z][a-z0-9+.-]*:/i.test(h)) return ''; // javascript:, data:, vbscript:, ...
  return h;
}

const marked = new Marked({
  gfm: true,
  renderer: {
    html({ text }) { return escapeHTML(text); },
    link({ href, title, tokens }) {
      const text = this.parser.parseInline(tokens);
      const safe = safeHref(href);
      if (!safe) return text;
      const ext = /^https?:/i.test(safe);
      return `<a href="${escapeHTML(safe)}"${title ? ` title="${escapeHTML(title)}"` : ''}${ext ? ' target="_blank" rel="noopener noreferrer"' : ''}>${text}</a>`;
    },
    image({ text }) { return escapeHTML(text); },
    // Inline code may break after = & / and , (a query such as
    // resourceVersion=7&resourceVersionMatch=Exact, a path, but not after
    // its leading /), never inside a name: <wbr> adds no character to what
    // is read or copied.
    codespan({ text }) { return `<code>${escapeHTML(text).replace(/(=|&amp;|,|(?<!^)\/)(?!$)/g, '$1<wbr>')}</code>`; },
    code({ text, lang }) {
      if ((lang || '').trim() === 'console') {
        const lines = text.split('\n').filter((l) => l.trim() !== '');
        return `<pre class="console-block"><code>${lines.map((l) => `<span class="command" data-command="${escapeHTML(l.trim())}">${escapeHTML(l)}</span>`).join('\n')}</code></pre>\n`;
      }
      return `<pre><code>${escapeHTML(text)}</code></pre>\n`;
    },
  },
});

// renderMarkdown answers HTML that is safe to insert.
export function renderMarkdown(md) {
  return marked.parse(String(md || ''));
}

// splitText cuts a lesson text at its marker lines: the title (the first
// "# " heading), the body, the hints in order, the "in a real cluster"
// note, the "on a class session" note (an introduction's: which numbers
// of the lesson stay the article's where a class shares one store); and reads its flags: "compares-revisions" (the text compares
// revision numbers, which on a server whose store is an etcd cluster jump
// when other sessions write).
export function splitText(md) {
  const out = { title: '', body: '', hints: [], realCluster: '', classNote: '', comparesRevisions: false };
  let section = 'body';
  const parts = { body: [], realCluster: [], classNote: [] };
  let hint = null;
  for (const line of String(md || '').replace(/\r\n/g, '\n').split('\n')) {
    const marker = line.trim();
    if (marker === '<!-- hint -->') { hint = []; out.hints.push(hint); section = 'hint'; continue; }
    if (marker === '<!-- real-cluster -->') { section = 'realCluster'; continue; }
    if (marker === '<!-- class -->') { section = 'classNote'; continue; }
    if (marker === '<!-- compares-revisions -->') { out.comparesRevisions = true; continue; }
    if (!out.title && section === 'body' && /^# /.test(line)) { out.title = line.slice(2).trim(); continue; }
    if (section === 'hint') hint.push(line);
    else parts[section].push(line);
  }
  out.body = parts.body.join('\n').trim();
  out.realCluster = parts.realCluster.join('\n').trim();
  out.classNote = parts.classNote.join('\n').trim();
  out.hints = out.hints.map((h) => h.join('\n').trim());
  return out;
}
