// The console panel: the output, the command line, and the queue that runs
// commands one after another as a shell does. The commands themselves are
// console.js's.

import { $, el, RowList } from './dom.js';
import { Console } from './console.js';
import { kubectlYAML, withoutManagedFields } from './clients.js';

export function mountConsole(lab) {
  const out = $('console-output');
  const rows = new RowList(out, lab.frame, 1000);
  const print = (text, cls = '') => rows.push(el('div', { class: 'line ' + cls, 'data-testid': 'console-line', text }));
  const con = new Console({
    transport: lab.transport, etcd: lab.etcd, print, toYAML: kubectlYAML, withoutManagedFields,
    clear: () => out.replaceChildren(), editorObject: () => lab.editor.object(), apply: (o, verb) => lab.editor.apply(o, verb),
    afterWrite: () => lab.afterWrite(),
  });

  let queue = Promise.resolve();
  // run queues one command line; the promise settles when it has run.
  function run(line) {
    lab.record({ op: 'cmd', line });
    const go = async () => {
      print('$ ' + line, 'cmd');
      try {
        await con.run(line);
      } catch (e) {
        print(`error: ${e.message}`, 'err');
      }
      if (/^\s*etcdctl\s+compact/.test(line)) await lab.etcd_view.learnCompaction().catch(() => {});
    };
    queue = queue.then(go, go);
    return queue;
  }

  $('console-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const input = $('console-input');
    const line = input.value;
    input.value = '';
    if (line.trim()) run(line);
  });
  $('console-input').addEventListener('keydown', (e) => {
    if (e.key === 'c' && e.ctrlKey && !e.target.value) {
      e.preventDefault();
      print(con.stopWatches() ? '^C' : '^C (no watch running)', 'muted');
    }
  });

  return { run, print, con, idle: () => queue, stopWatches: () => con.stopWatches(), clear: () => out.replaceChildren(), focus: () => $('console-input').focus() };
}
