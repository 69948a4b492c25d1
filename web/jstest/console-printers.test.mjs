// The console's printers and languages on their own: the tabwriter
// kubectl's tables come from, YAML as kubectl (go-yaml v2) writes it,
// client-go's JSONPath and jq's filters the articles pipe etcdctl into.
// Whole command outputs are compared with the real tools in
// test/consolediff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tabwriter } from '../static/js/console/flags.js';
import { toYAML } from '../static/js/console/yaml.js';
import { parse, execute, JSONPathError } from '../static/js/console/jsonpath.js';
import { compile, parseJSON, format, CompileError, JqError } from '../static/js/console/jq.js';

test('tables: cells padded to the widest in their column, three spaces apart', () => {
  assert.equal(tabwriter('NAME\tDATA\tAGE\nkube-root-ca.crt\t1\t5s\n', { padding: 3 }),
    'NAME               DATA   AGE\nkube-root-ca.crt   1      5s\n');
});

test('YAML: keys sorted, strings quoted only where YAML would read another type', () => {
  assert.equal(toYAML({ b: '23', a: 'yes', c: '', d: 'a: b', l: '- x', m: ' lead', i: null, j: true, k: 1.5 }),
    'a: "yes"\nb: "23"\nc: ""\nd: \'a: b\'\ni: null\nj: true\nk: 1.5\nl: \'- x\'\nm: \' lead\'\n');
});

test('YAML: multi-line strings as literal blocks, empty collections inline, lists at the key\'s indent', () => {
  assert.equal(toYAML({ e: 'line1\nline2\n', f: [1, 'x'], g: {}, h: [] }), 'e: |\n  line1\n  line2\nf:\n- 1\n- x\ng: {}\nh: []\n');
});

test('JSONPath: ranges, filters and wildcards as client-go evaluates them', () => {
  const list = { items: [{ metadata: { name: 'a', labels: { t: 'web' } } }, { metadata: { name: 'b' } }] };
  const text = (tpl) => execute(parse(tpl), list);
  assert.equal(text('{.items[*].metadata.name}'), 'a b');
  assert.equal(text('{range .items[*]}{.metadata.name}{"\\n"}{end}'), 'a\nb\n');
  assert.equal(text('{.items[?(@.metadata.labels.t=="web")].metadata.name}'), 'a');
  assert.equal(text('{.items[-1:].metadata.name}'), 'b');
  assert.equal(text('{.items[0].metadata}'), '{"labels":{"t":"web"},"name":"a"}');
  assert.throws(() => parse('{.items[*}'), JSONPathError);
});

const jq = (filter, input) => compile(filter).run(parseJSON(input)).map((v) => format(v, { compact: true }));
const etcdJSON = '{"header":{"revision":"12"},"kvs":[{"key":"azE=","create_revision":6,"mod_revision":7,"version":2,"value":"djI="}],"count":1}';

test('jq: the articles\' filters over etcdctl -w json', () => {
  assert.deepEqual(jq('.kvs[].key|=@base64d', etcdJSON),
    ['{"header":{"revision":"12"},"kvs":[{"key":"k1","create_revision":6,"mod_revision":7,"version":2,"value":"djI="}],"count":1}']);
  assert.deepEqual(jq('.kvs[].value|=@base64d | .kvs[0].value', etcdJSON), ['"v2"']);
  assert.deepEqual(jq('.kvs[0].mod_revision', etcdJSON), ['7']);
  assert.deepEqual(jq('.header.revision', etcdJSON), ['"12"']);
  assert.deepEqual(jq('.kvs[] | {key: (.key|@base64d), mod_revision}', etcdJSON), ['{"key":"k1","mod_revision":7}']);
});

test('jq: errors are jq\'s words', () => {
  assert.throws(() => compile('.['), (e) => e instanceof CompileError && e.message.startsWith('syntax error, unexpected $end (Unix shell quoting issues?)'));
  assert.throws(() => compile('foo(1)'), (e) => e instanceof CompileError && e.message.startsWith('foo/1 is not defined'));
  assert.throws(() => jq('1/0', 'null'), (e) => e instanceof JqError && e.message === 'number (1) and number (0) cannot be divided because the divisor is zero');
});

test('jq: output indented by two spaces, numbers as jq 1.6 prints them', () => {
  assert.equal(format(parseJSON('{"a":[1,{"b":null}],"d":100000000000000000000}')), '{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ],\n  "d": 1e+20\n}');
});
