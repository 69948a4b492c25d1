// Lesson texts: split at their markers and rendered without a way to
// run script.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { renderMarkdown, splitText, safeHref } from '../static/js/markdown.js';

test('raw HTML in a lesson text is shown as text', () => {
  const html = renderMarkdown('Hello <script>alert(1)</script> <img src=x onerror=alert(1)>\n\n<div onclick="x()">block</div>');
  assert.doesNotMatch(html, /<script|<img|<div/i); // every tag it wrote is escaped text
  assert.doesNotMatch(html.replace(/&lt;[^]*?&gt;/g, ''), /onerror|onclick/);
  assert.match(html, /&lt;script&gt;/);
});

test('links cannot run script; images become their alt text', () => {
  const html = renderMarkdown('[a](javascript:alert(1)) [b](https://kubernetes.io/docs/) [c](#lesson=x/2) ![pic](http://evil/x.png)');
  assert.doesNotMatch(html, /javascript:|<img/i);
  assert.match(html, /<a href="https:\/\/kubernetes.io\/docs\/" target="_blank" rel="noopener noreferrer">b<\/a>/);
  assert.match(html, /<a href="#lesson=x\/2">c<\/a>/);
  assert.match(html, /pic/);
  for (const bad of ['javascript:x', 'JaVaScRiPt:x', ' data:text/html,x', 'vbscript:x']) assert.equal(safeHref(bad), '', bad);
});

test('a console block is one marked line per command', () => {
  const html = renderMarkdown('```console\netcdctl put k1 v1\netcdctl get k1 -w json\n```');
  assert.match(html, /<span class="command" data-command="etcdctl put k1 v1">etcdctl put k1 v1<\/span>/);
  assert.match(html, /data-command="etcdctl get k1 -w json"/);
  const q = renderMarkdown('```console\nkubectl get cm -o jsonpath=\'{.items[*].metadata.name}\' "<b>"\n```');
  assert.doesNotMatch(q, /<b>/);
});

test('a text splits into title, body, progressive hints and the real-cluster note', () => {
  const md = '# Title\n\nBody one.\n\n<!-- hint -->\nFirst hint.\n\n<!-- hint -->\nSecond hint.\n\n<!-- real-cluster -->\nIn production...\n';
  const s = splitText(md);
  assert.equal(s.title, 'Title');
  assert.equal(s.body, 'Body one.');
  assert.deepEqual(s.hints, ['First hint.', 'Second hint.']);
  assert.equal(s.realCluster, 'In production...');
  assert.equal(s.comparesRevisions, false);
});

test('a text that compares revision numbers says so by a flag line, which is not shown', () => {
  const s = splitText('# Title\n\n<!-- compares-revisions -->\nThe store is at revision 7.\n');
  assert.equal(s.comparesRevisions, true);
  assert.equal(s.body, 'The store is at revision 7.');
});

test('an introduction\'s class note is a section of its own, apart from the body read offline', () => {
  const md = '# Lesson\n\nWhat it teaches.\n\n<!-- class -->\nThe events\' 9 to 11 are the article\'s.\n\n<!-- real-cluster -->\nIn production...\n';
  const s = splitText(md);
  assert.equal(s.body, 'What it teaches.');
  assert.equal(s.classNote, 'The events\' 9 to 11 are the article\'s.');
  assert.equal(s.realCluster, 'In production...');
  assert.equal(splitText('# T\n\nBody.\n').classNote, '');
});

test('every text of lesson 1 has a title and renders', () => {
  for (const n of ['00', '01', '02', '03', '04', '05']) {
    const md = readFileSync(new URL(`../lessons/01-etcd-revisions/en/${n}.md`, import.meta.url), 'utf8');
    const s = splitText(md);
    assert.ok(s.title, `${n}.md title`);
    assert.ok(renderMarkdown(s.body).length > 0);
  }
});

test('inline code breaks only after = & , and a path\'s inner /, never inside a name', () => {
  assert.equal(renderMarkdown('`"N"` + `resourceVersionMatch=Exact`'), '<p><code>&quot;N&quot;</code> + <code>resourceVersionMatch=<wbr>Exact</code></p>\n');
  assert.equal(renderMarkdown('`resourceVersion=7&resourceVersionMatch=NotOlderThan`'), '<p><code>resourceVersion=<wbr>7&amp;<wbr>resourceVersionMatch=<wbr>NotOlderThan</code></p>\n');
  assert.equal(renderMarkdown('`/registry/deployments/`'), '<p><code>/registry/<wbr>deployments/</code></p>\n');
  assert.equal(renderMarkdown('`k1-ada-x3k9q`'), '<p><code>k1-ada-x3k9q</code></p>\n');
  assert.equal(renderMarkdown('`a<b>`'), '<p><code>a&lt;b&gt;</code></p>\n');
});
