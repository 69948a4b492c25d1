// Keyboard shortcuts (the help dialog lists them).

import { $ } from './dom.js';

// shortcut maps a key press to the name of its command, or ''.
export function shortcut(e) {
  if (e.ctrlKey || e.metaKey || e.altKey) return '';
  // Shift+1 is "!" on US layouts; accept the physical key too.
  if (e.shiftKey && e.code === 'Digit1') return 'put-a';
  if (e.shiftKey && e.code === 'Digit2') return 'put-b';
  return {
    '?': 'help', 1: 'get-a', 2: 'get-b', '!': 'put-a', '@': 'put-b', 3: 'update', r: 'reflector', w: 'watch',
    c: 'compact', t: 'travel', e: 'edit', '/': 'console', l: 'lessons', p: 'present',
  }[e.key] || '';
}

export function mountKeys(lab) {
  const commands = {
    help: () => lab.header.help(),
    'get-a': () => lab.clients.get('a'),
    'get-b': () => lab.clients.get('b'),
    'put-a': () => lab.clients.put('a'),
    'put-b': () => lab.clients.put('b'),
    update: () => lab.clients.update(),
    reflector: () => lab.reflector.key(),
    watch: () => lab.watches.start(),
    compact: () => lab.etcd_view.compact(),
    travel: () => $('time-travel').focus(),
    edit: () => lab.editor.focus(),
    console: () => lab.console.focus(),
    lessons: () => lab.header.showLessons(),
    present: () => lab.header.present(),
  };
  document.addEventListener('keydown', (e) => {
    const tgt = e.target;
    const typing = tgt instanceof HTMLInputElement || tgt instanceof HTMLTextAreaElement || tgt instanceof HTMLSelectElement || tgt.isContentEditable;
    if (e.key === 'Escape') {
      if (!$('help-overlay').hidden) { lab.header.help(false); e.preventDefault(); return; }
      if (!$('settings-overlay').hidden) { lab.settings.open(false); e.preventDefault(); return; }
      if (typing) tgt.blur();
      return;
    }
    if (typing) return;
    const name = shortcut(e);
    if (name) {
      e.preventDefault();
      lab.guard(commands[name])();
    }
  });
}
