// The console's shell: the command lines the articles write (quotes,
// pipes, heredocs, files), what it continues on the next line, and what
// it refuses with a reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseScript, splitWords, Incomplete, Unsupported, shellQuote } from '../static/js/console/shell.js';
import { Console } from '../static/js/console.js';

const stages = (input) => parseScript(input).pipelines.map((p) => p.map((s) => s.args));

test('words are split as bash splits them: quotes, escapes, comments', () => {
  assert.deepEqual(stages(`kubectl get cm -o jsonpath='{.items[*].metadata.name}'`), [[['kubectl', 'get', 'cm', '-o', 'jsonpath={.items[*].metadata.name}']]]);
  assert.deepEqual(stages(`etcdctl put k "a \\"b\\" c" # the value`), [[['etcdctl', 'put', 'k', 'a "b" c']]]);
  assert.deepEqual(stages(`echo a\\ b 'it'"'"'s'`), [[['echo', 'a b', "it's"]]]);
  assert.deepEqual(stages('kubectl get cm \\\n  -o name'), [[['kubectl', 'get', 'cm', '-o', 'name']]]);
});

test('pipelines, ; and && make the script; && skips after a failure', () => {
  const sc = parseScript('etcdctl get k -w json | jq .count && echo ok; echo done');
  assert.deepEqual(sc.pipelines.map((p) => p.map((s) => s.args[0])), [['etcdctl', 'jq'], ['echo'], ['echo']]);
  assert.deepEqual(sc.andThen, [true, false]);
});

test('a heredoc is the stage\'s stdin; <<- strips tabs; the delimiter may be quoted', () => {
  const [[st]] = parseScript("kubectl apply -f - <<'EOF'\nkind: ConfigMap\n  x: $HOME\nEOF").pipelines;
  assert.equal(st.heredoc, 'kind: ConfigMap\n  x: $HOME\n');
  const [[t]] = parseScript('cat <<-END\n\tindented\n\tEND').pipelines;
  assert.equal(t.heredoc, 'indented\n');
});

test('files: < reads, > and >> write, 2> takes stderr, 2>&1 and >&2 join the streams', () => {
  const [[a]] = parseScript('kubectl get cm x -o yaml > x.yaml').pipelines;
  assert.deepEqual([a.stdout, a.appendOut], ['x.yaml', false]);
  const [[b]] = parseScript('echo more >> x.yaml').pipelines;
  assert.deepEqual([b.stdout, b.appendOut], ['x.yaml', true]);
  const [[c]] = parseScript('kubectl replace -f - < x.yaml').pipelines;
  assert.equal(c.stdinFile, 'x.yaml');
  const [[d]] = parseScript('kubectl get cm nope 2>/dev/null').pipelines;
  assert.deepEqual([d.stdout, d.stderr], ['', '/dev/null']);
  const [[e]] = parseScript('kubectl get cm nope 2>&1').pipelines;
  assert.equal(e.stderr, '&1');
  const [[f]] = parseScript('echo oops >&2').pipelines;
  assert.equal(f.stdout, '&2');
});

test('NAME=value before a command is an assignment, after it a word', () => {
  const [[st]] = parseScript('ETCDCTL_API=3 etcdctl get k A=1').pipelines;
  assert.deepEqual(st.assigns, ['ETCDCTL_API=3']);
  assert.deepEqual(st.args, ['etcdctl', 'get', 'k', 'A=1']);
});

test('an open quote, heredoc, trailing | or && continues on the next line', () => {
  for (const input of ["echo 'a", 'echo "a', 'cat <<EOF\nline', 'cat <<EOF', 'echo a |', 'echo a &&', 'echo a \\']) {
    assert.throws(() => parseScript(input), (e) => e instanceof Incomplete && e.prompt === '> ', input);
  }
});

test('variables, substitutions, globs-free syntax the console lacks say so', () => {
  const refused = {
    'echo $HOME': 'unsupported shell syntax: $ (shell variables and substitutions)',
    'echo "$HOME"': 'unsupported shell syntax: $ (shell variables)',
    'kubectl get cm $(echo x)': 'unsupported shell syntax: $ (shell variables and substitutions)',
    'echo `date`': 'unsupported shell syntax: `',
    'kubectl get cm || true': 'unsupported shell syntax: ||',
    'etcdctl watch k &': 'unsupported shell syntax: & (background jobs)',
    'echo a 3>x': 'unsupported shell syntax: 3> (the console has stdin, stdout and stderr)',
  };
  for (const [input, message] of Object.entries(refused)) {
    assert.throws(() => parseScript(input), (e) => e instanceof Unsupported && e.message === message, input);
  }
  assert.throws(() => parseScript('| jq .'), { message: "syntax error near unexpected token `|'" });
  assert.throws(() => parseScript('echo a;;'), { message: "syntax error near unexpected token `;'" });
});

test('an alias holds one command; alias prints values quoted as bash does', () => {
  assert.deepEqual(splitWords("kubectl get -o 'custom-columns=N:.metadata.name'"), ['kubectl', 'get', '-o', 'custom-columns=N:.metadata.name']);
  assert.throws(() => splitWords('kubectl get cm | jq .'), { message: 'an alias may hold only one command (found |)' });
  assert.equal(shellQuote("it's"), "'it'\\''s'");
});

test('etcdctl txn typed at the console asks for compares, then success and failure requests', () => {
  const con = new Console({ transport: null });
  assert.deepEqual(con.continuation('etcdctl txn'), { complete: false, prompt: 'compares:', printed: false });
  assert.deepEqual(con.continuation('etcdctl txn -i'), { complete: false, prompt: 'compares:', printed: true });
  assert.equal(con.continuation('etcdctl txn -i\nmod("k") > "0"').prompt, 'compares:');
  assert.equal(con.continuation('etcdctl txn -i\nmod("k") > "0"\n').prompt, 'success requests (get, put, del):');
  assert.equal(con.continuation('etcdctl txn -i\nmod("k") > "0"\n\nput k v\n').prompt, 'failure requests (get, put, del):');
  assert.deepEqual(con.continuation('etcdctl txn -i\nmod("k") > "0"\n\nput k v\n\n'), { complete: true, prompt: '' });
  // A heredoc or a pipe feeds it instead: one line is the whole command.
  assert.deepEqual(con.continuation("etcdctl txn <<'EOF'\n\n\n\nEOF"), { complete: true, prompt: '' });
  assert.deepEqual(con.continuation('echo | etcdctl txn'), { complete: true, prompt: '' });
  assert.deepEqual(con.continuation('kubectl get cm'), { complete: true, prompt: '' });
});
