// The console speaks two voices: what kubectl, etcdctl and the shell
// print, byte for byte as the real tools print it (English), and the
// lab's own notes ("# ..."), in the reader's language. The same commands
// in English, Chinese and Korean print the same output; only the notes
// change, and a note is said again in the language current when asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { Catalog, useCatalog, t } from '../static/js/i18n.js';
import { Console } from '../static/js/console.js';

const load = (code) => JSON.parse(readFileSync(new URL(`../static/i18n/${code}.json`, import.meta.url), 'utf8'));
const en = new Catalog('en', load('en'));
const catalogs = { en, zh: new Catalog('zh', load('zh'), en), ko: new Catalog('ko', load('ko'), en) };

const CT = '/apis/stable.example.com/v1/namespaces/default/crontabs/daily';

// api answers as kube-apiserver does for one custom resource; etcd's
// gateway is not there (the console's etcdctl reports the failure).
function api() {
  let live = { apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: { name: 'daily', namespace: 'default', resourceVersion: '7' }, spec: { cronSpec: '0 1 * * *' } };
  const ok = (o) => ({ status: 200, body: JSON.stringify(o) });
  return {
    request: async (method, path, { body } = {}) => {
      if (path === '/api') return ok({ versions: ['v1'] });
      if (path === '/apis') return ok({ groups: [{ name: 'stable.example.com', preferredVersion: { groupVersion: 'stable.example.com/v1' } }] });
      if (path === '/api/v1') return ok({ resources: [] });
      if (path === '/apis/stable.example.com/v1') return ok({ resources: [{ name: 'crontabs', singularName: 'crontab', namespaced: true, kind: 'CronTab', verbs: ['get', 'update'] }] });
      if (path.startsWith('/v3/')) throw new Error('the server could not be reached (connection refused)');
      if (path !== CT) return { status: 404, body: JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' }) };
      if (method === 'PUT') {
        const o = JSON.parse(body);
        live = { ...o, metadata: { ...o.metadata, resourceVersion: String(Number(live.metadata.resourceVersion) + 1) } };
      }
      return ok(live);
    },
    watch: () => { throw new Error('no watch here'); },
  };
}

const edited = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: daily
spec:
  cronSpec: "0 2 * * *"
`;

// Each command prints tool output and makes the lab note something.
const session = [
  'kubectl replace -f -', // reads the editor: a note says so
  'kubectl get crontab daily -o yaml --kubeconfig=/tmp/k', // a connection flag: a note
  'kubectl get cm --frob', // kubectl's flag error, and what it accepts
  'kubectl rollout undo deploy/x', // kubectl's error, and what the lab has
  'etcdctl --endpoints=https://10.0.0.1:2379 get /registry --prefix --keys-only',
  'etcdctl member list',
  'helm install x',
  'kubectl get cm $NAME',
  'FOO=1 kubectl get crontab daily -o name',
  'kubectl get crontab,cm', // an error about what the console lacks comes with a note
  "kubectl get crontab daily -o go-template='{{.kind}}'",
  'kubectl rollout',
  'FOO=1',
  'kubectl get crontab daily -o yaml > manifests/daily.yaml',
  "echo 'unterminated",
];

async function transcript(code) {
  useCatalog(catalogs[code]);
  const con = new Console({ transport: api(), editor: { text: async () => edited, edit: async () => null } });
  const out = [];
  for (const input of session) {
    await new Promise((resolve) => {
      const r = { input, stdout: '', stderr: '', notes: [], says: [], code: null };
      con.run(input, {
        onOutput: (text, stream) => { r[stream] += text; },
        onNote: (text, say) => { r.notes.push(text); r.says.push(say); },
        onExit: (c) => { r.code = c; out.push(r); resolve(); },
      });
    });
  }
  return out;
}

test('in Chinese and Korean the tools print byte for byte what they print in English; only the notes are translated', async () => {
  const runs = { en: await transcript('en'), zh: await transcript('zh'), ko: await transcript('ko') };
  runs.en.forEach((r, i) => {
    assert.ok(r.notes.length > 0, `${r.input}: no note`);
    assert.ok(r.stdout || r.stderr, `${r.input}: no output`);
    for (const code of ['zh', 'ko']) {
      const o = runs[code][i];
      assert.deepEqual([o.stdout, o.stderr, o.code], [r.stdout, r.stderr, r.code], `${code}: ${r.input}`);
      assert.equal(o.notes.length, r.notes.length, `${code}: ${r.input}`);
      o.notes.forEach((n, j) => {
        assert.notEqual(n, r.notes[j], `${code}: ${r.input}: the note is English`);
        assert.doesNotMatch(n, /console\.(note|help)\./, `${code}: ${r.input}: a key, not a text`);
      });
    }
  });
  assert.equal(runs.en[0].stdout, 'crontab.stable.example.com/daily replaced\n');
  assert.equal(runs.en[0].notes[0], "-f - read the object in the lab's editor (type a heredoc after the command to give another)");
  assert.equal(runs.zh[0].notes[0], '-f - 读取了实验室编辑器中的对象（要提供别的对象，请在命令后输入 heredoc）');
  assert.equal(runs.ko[0].notes[0], '-f -로 실습실 편집기의 객체를 읽었습니다 (다른 객체를 주려면 명령 뒤에 heredoc을 입력하세요)');
  // What the note carries is filled in, whatever the language.
  assert.match(runs.zh[8].notes[0], /^FOO=1 /);
  assert.match(runs.ko[6].notes[0], /kubectl \(k\), etcdctl, jq/);
  // A note says itself again in the language current when asked: the
  // console panel does so on a language switch.
  useCatalog(catalogs.ko);
  assert.equal(runs.zh[0].says[0](), runs.ko[0].notes[0]);
  useCatalog(catalogs.en);
  assert.equal(runs.zh[1].says[0](), runs.en[1].notes[0]);
});

test('help is the console\'s own text: its prose is translated, the command lines it shows are not', async () => {
  const help = async (code) => {
    useCatalog(catalogs[code]);
    return new Promise((resolve) => {
      let text = '';
      new Console({ transport: api() }).run('help', { onOutput: (s) => { text += s; }, onExit: () => resolve(text) });
    });
  };
  const texts = { en: await help('en'), zh: await help('zh'), ko: await help('ko') };
  useCatalog(catalogs.en);
  assert.match(texts.en, /^The console runs kubectl and etcdctl against this lab's session/);
  const commandLines = (s) => s.split('\n').filter((l) => /^(etcdctl|kubectl|\.\.\.|alias) /.test(l)).map((l) => l.replace(/ {3}[(（].*$/, ''));
  for (const code of ['zh', 'ko']) {
    assert.notEqual(texts[code].split('\n')[0], texts.en.split('\n')[0]);
    assert.deepEqual(commandLines(texts[code]), commandLines(texts.en), code);
    assert.doesNotMatch(texts[code], /console\.help\./);
  }
  assert.match(texts.zh, /“停止”/);
  assert.match(texts.ko, /"중지"/);
});

test('every note and help text the console says is in every language', () => {
  const dir = new URL('../static/js/console/', import.meta.url);
  const src = readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => readFileSync(new URL(f, dir), 'utf8')).join('\n')
    + readFileSync(new URL('../static/js/console.js', import.meta.url), 'utf8');
  const keys = new Set([...src.matchAll(/'(console\.(?:note|help)\.\w+)'/g)].map((m) => m[1]));
  assert.ok(keys.size >= 30, `${keys.size} keys`);
  for (const code of ['en', 'zh', 'ko']) {
    for (const k of keys) assert.ok(catalogs[code].lookup(k) !== undefined, `${code}.json lacks "${k}"`);
  }
  useCatalog(catalogs.en);
  assert.equal(t('console.note.sudo'), 'sudo has no meaning in the lab; running the command as is');
});
