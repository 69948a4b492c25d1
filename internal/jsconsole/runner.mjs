// Runs the lab's console under Node for Go tests (jsconsole.go): host.mjs
// with its messages as JSON lines on stdin (from Go) and stdout (to Go).
//
// Usage: node runner.mjs [NOW_RFC3339]
import { createInterface } from 'node:readline';
import { startHost } from './host.mjs';

const receive = startHost((o) => process.stdout.write(JSON.stringify(o) + '\n'), process.argv[2] ? Date.parse(process.argv[2]) : null);
createInterface({ input: process.stdin })
  .on('line', (line) => receive(JSON.parse(line)))
  .on('close', () => process.exit(0));
