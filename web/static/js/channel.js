// The session channel of a lab on a server session
// (/s/<session>/rvplay/v1/channel, a WebSocket the session's cookie
// authenticates): the lab reports where its learner is (the lesson and
// step the lesson panel shows), a student's lab follows the teacher's
// pushes to a lesson step, and every lab reads the session's settings
// again when they change. The teacher's dashboard reads the same channel.
// The server's side is server/classroom/channel.go.

import { $ } from './dom.js';
import { t, lang } from './i18n.js';
import { said } from './notice.js';
import { Backoff } from './connection.js';

// ---- the pure parts ---------------------------------------------------------

// presenceOf reads where the lesson panel is from its data attributes.
export function presenceOf(dataset) {
  if (dataset?.view !== 'step' || !dataset.lesson) return { type: 'presence', lesson: '', step: 0 };
  return { type: 'presence', lesson: dataset.lesson, step: Number(dataset.step) || 0 };
}

// shouldApply says whether a lab applies push: one it has not applied yet
// (a reload, a second tab, a reconnection do not move the learner back).
export const shouldApply = (push, applied) => !!push && Number(push.id) > Number(applied || 0);

export const channelURL = (loc, apiBase) => `${loc.protocol === 'https:' ? 'wss' : 'ws'}://${loc.host}${apiBase}/rvplay/v1/channel`;

// ---- the connection ---------------------------------------------------------------

export function mountChannel(lab) {
  const { cfg } = lab;
  const appliedKey = `rvplay.push.${cfg.session}`;
  let ws = null;
  // A class's browsers reconnect after a restart with the lab's back-off
  // (800 ms doubling to 30 s, jittered), not all at once.
  const backoff = new Backoff();
  let ended = false;
  let welcomed = false;
  let last = '';
  let timer = null;
  let role = '';

  const applied = () => { try { return Number(localStorage.getItem(appliedKey)) || 0; } catch { return 0; } };
  const remember = (id) => { try { localStorage.setItem(appliedKey, String(id)); } catch { /* storage disabled */ } };

  function report(force) {
    const m = JSON.stringify(presenceOf($('lesson-panel')?.dataset));
    if (!force && m === last) return;
    if (ws?.readyState !== WebSocket.OPEN) return;
    last = m;
    ws.send(m);
  }

  function titleOf(slug) {
    const ref = lab.lessons?.lessons().find((l) => l.slug === slug);
    return ref?.titles?.[lang()] || ref?.titles?.en || slug;
  }

  const apply = lab.guard(async (push) => {
    if (!shouldApply(push, applied())) return;
    remember(push.id);
    await lab.ready;
    await lab.lessons.open(push.lesson, push.step);
    // A function, as said() is: the lesson's title too is said again in
    // the language the reader picks.
    lab.notice(() => (push.step ? t('channel.pushed', { lesson: titleOf(push.lesson), step: push.step }) : t('channel.pushed.intro', { lesson: titleOf(push.lesson) })));
  });

  function onMessage(e) {
    let m;
    try { m = JSON.parse(e.data); } catch { return; }
    switch (m.type) {
      case 'welcome':
        backoff.reset();
        role = m.you?.role || 'open';
        $('lab').dataset.channel = role;
        report(true);
        if (m.you?.role === 'student') apply(m.push);
        // A lab that was away may have missed a change of the settings.
        if (welcomed) lab.settings?.refresh();
        welcomed = true;
        break;
      case 'push':
        apply(m);
        break;
      case 'settings':
        lab.settings?.refresh();
        break;
      case 'reset':
        lab.notice(said('channel.reset'));
        lab.etcd_view?.readKeys().catch(() => {});
        lab.settings?.refresh();
        break;
      case 'ended':
        ended = true;
        lab.notice(said('channel.ended'), 'error');
        break;
      case 'error':
        console.warn('session channel:', m.message);
        break;
      default:
    }
  }

  function connect() {
    if (ended) return;
    ws = new WebSocket(channelURL(location, cfg.apiBase));
    ws.addEventListener('message', onMessage);
    ws.addEventListener('close', () => {
      $('lab').dataset.channel = '';
      last = '';
      if (ended) return;
      clearTimeout(timer);
      timer = setTimeout(connect, backoff.next());
    });
  }

  // Where the learner is: the lesson panel's attributes, a moment after
  // they change (one report for a step's several updates).
  let pending = null;
  new MutationObserver(() => {
    clearTimeout(pending);
    pending = setTimeout(() => report(false), 100);
  }).observe($('lesson-panel'), { attributes: true, attributeFilter: ['data-view', 'data-lesson', 'data-step'] });

  connect();
  // role is who the channel last welcomed ("student", "teacher", "open"
  // for an open session's anyone; "" before the first welcome): a person's
  // role in a session does not change while the channel is away.
  return { report, role: () => role, close: () => { ended = true; ws?.close(); } };
}
