// A lab as a file or a link: the history of operations, replayed
// deterministically into a fresh store. Replaying belongs to the offline
// lab only: a share link or a lab file opened on a server session opens
// the offline lab with it, and never writes into the live session.

import { $, el } from './dom.js';
import { t } from './i18n.js';
import { said } from './notice.js';
import { History, encodeShare, decodeShare } from './history.js';

// offlineURL is where a shared history replays: the offline lab's address
// with the history in the fragment.
export function offlineURL(labHref, base, code) {
  const u = new URL(labHref, base);
  u.hash = 'h=' + code;
  return u.toString();
}

export const shareCode = (hash) => hash.match(/^#h=(.+)$/)?.[1] || '';

export function mountLabFile(lab) {
  const { cfg } = lab;
  const server = cfg.mode === 'server';

  async function exportFile() {
    const blob = new Blob([lab.history.exportJSON()], { type: 'application/json' });
    const a = el('a', { href: URL.createObjectURL(blob), download: `rvplay-lab-${new Date().toISOString().replace(/[:.]/g, '-')}.json` });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }

  // importOps replays ops into a fresh lab; label (said) names where they
  // came from, in the notice's language of the moment as the rest of it.
  async function importOps(ops, label) {
    await lab.resetLab();
    lab.history.replace(ops);
    lab.notice(() => t('notice.replaying', { n: ops.length, label: label() }));
    await lab.replay(ops);
    const rev = lab.revisions.head;
    lab.notice(() => t('notice.replayed', { n: ops.length, label: label(), rev }));
    $('lab').dataset.replayed = String(ops.length);
  }

  async function importFile(file) {
    try {
      const ops = History.parse(await file.text());
      if (server) { location.assign(offlineURL(cfg.labHref, location.href, await encodeShare(ops))); return; }
      // The lab saved in this browser may still be replaying: its last
      // operations would land in the imported lab's fresh store.
      await lab.restored;
      await importOps(ops, said('label.file', { name: file.name }));
    } catch (e) {
      lab.notice(said('notice.importfailed', { message: e.message }), 'error');
    }
  }

  async function share() {
    const url = offlineURL(cfg.labHref, location.href, await encodeShare(lab.history.ops));
    $('share-row').hidden = false;
    const input = $('share-link');
    input.value = url;
    input.select();
    try {
      await navigator.clipboard.writeText(url);
      lab.notice(said('share.copied'));
    } catch {
      lab.notice(said('share.ready'));
    }
  }

  // redirectShared sends a share link opened on a server session to the
  // offline lab (before the session is touched); true when it did.
  function redirectShared() {
    const code = shareCode(location.hash);
    if (!server || !code) return false;
    location.replace(offlineURL(cfg.labHref, location.href, code));
    return true;
  }

  // restore replays a share link, or else the lab saved in this browser.
  async function restore() {
    const code = shareCode(location.hash);
    if (code && !server) {
      try {
        const ops = await decodeShare(code);
        await importOps(ops, said('label.sharelink'));
        lab.history.replaceState(location.pathname + location.search, ops);
      } catch (e) {
        lab.notice(said('notice.sharefailed', { message: e.message }), 'error');
      }
      return;
    }
    if (server) return;
    const ops = lab.history.load();
    if (!ops.length) return;
    lab.notice(said('notice.restoring', { n: ops.length }));
    await lab.replay(ops);
    lab.notice(said('notice.restored', { n: ops.length, rev: lab.revisions.head }));
    $('lab').dataset.replayed = String(ops.length);
  }

  // A share link pasted into this tab changes only the fragment: a server
  // session sends it to the offline lab, the offline lab starts over with it.
  window.addEventListener('hashchange', () => {
    if (!shareCode(location.hash)) return;
    if (!redirectShared()) location.reload();
  });
  $('export').addEventListener('click', lab.guard(exportFile));
  $('import').addEventListener('click', () => $('import-file').click());
  $('import-file').addEventListener('change', (e) => { if (e.target.files[0]) importFile(e.target.files[0]); e.target.value = ''; });
  $('share').addEventListener('click', lab.guard(share));
  return { exportFile, importFile, importOps, share, restore, redirectShared };
}
