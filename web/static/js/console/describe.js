// kubectl describe, for the kinds the lab serves, laid out as kubectl's
// describers lay them out: lines of tab-separated cells through a
// tabwriter (minimum width 0, tab width 8, padding 2), nested levels two
// spaces deeper. Other kinds get kubectl's generic describer.

import { tabwriter } from './flags.js';
import { StatusError, NoResources, ToolError, isNotFound } from './kubectl.js';
import { targets } from './kubectl-write.js';

export const describeFlags = () => [{ name: 'filename', short: 'f', kind: 'stringArray' }, { name: 'recursive', short: 'R', kind: 'bool' },
  { name: 'kustomize', short: 'k', kind: 'string' }, { name: 'selector', short: 'l', kind: 'string' }, { name: 'all-namespaces', short: 'A', kind: 'bool' },
  { name: 'show-events', kind: 'bool', def: 'true' }, { name: 'chunk-size', kind: 'int', def: '500' }];

class D {
  constructor() { this.b = ''; }
  w(level, text) { this.b += '  '.repeat(level) + text; }
  toString() { return tabwriter(this.b, { minwidth: 0, tabwidth: 8, padding: 2, padchar: ' ' }); }

  labels(title, labels, initial = '', inner = '\t') {
    this.w(0, `${initial}${title}:${inner}`);
    const keys = Object.keys(labels || {}).sort();
    if (!keys.length) { this.b += '<none>\n'; return; }
    keys.forEach((k, i) => { if (i) this.w(0, initial + inner); this.w(0, `${k}=${labels[k]}\n`); });
  }

  // annotations leaves out the last applied configuration and folds long
  // or multi-line values, as kubectl does.
  annotations(title, anns) {
    this.w(0, `${title}:\t`);
    const keys = Object.keys(anns || {}).filter((k) => k !== 'kubectl.kubernetes.io/last-applied-configuration').sort();
    if (!keys.length) { this.b += '<none>\n'; return; }
    const max = 140;
    keys.forEach((k, i) => {
      if (i) this.w(0, '\t');
      const v = anns[k].replace(/\n$/, '');
      if (v.length + k.length + 2 > max || v.includes('\n')) {
        this.w(0, `${k}:\n`);
        for (const s of v.split('\n')) this.w(0, `\t  ${s.length > max - 2 ? s.slice(0, max - 2) + '...' : s}\n`);
      } else this.w(0, `${k}: ${v}\n`);
    });
  }
}

const none = (s) => (s ? s : '<none>');
const intOrString = (v) => (typeof v === 'string' ? v : typeof v === 'number' ? String(Math.trunc(v)) : '0');

function rfc1123z(ts) {
  const d = new Date(ts);
  if (Number.isNaN(d.getTime())) return '<unknown>';
  const days = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
  const p = (n) => String(n).padStart(2, '0');
  return `${days[d.getUTCDay()]}, ${p(d.getUTCDate())} ${months[d.getUTCMonth()]} ${d.getUTCFullYear()} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

// humanDuration is apimachinery's HumanDuration (engine/duration in Go).
export function humanDuration(ms) {
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) return h % 24 ? `${Math.floor(h / 24)}d${h % 24}h` : `${Math.floor(h / 24)}d`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  const y = Math.floor(h / 24 / 365);
  if (h < 24 * 365 * 8) { const dy = Math.floor(h / 24) % 365; return dy ? `${y}y${dy}d` : `${y}y`; }
  return `${y}y`;
}

export async function kubectlDescribe(k) {
  let ts;
  try { ts = await describeTargets(k); } catch (e) { return k.fail(e); }
  let status = 0;
  for (let i = 0; i < ts.length; i++) {
    const t = ts[i];
    let o = t.live;
    if (!o) {
      try { o = await k.getObject(t.r.path(t.ns, t.name)); } catch (e) { if (!(e instanceof StatusError)) throw e; k.fail(e); status = 1; continue; }
    }
    if (i > 0) k.stdout.write('\n\n');
    let out;
    switch (t.r.groupResource) {
      case 'configmaps': out = await describeConfigMap(k, o); break;
      case 'secrets': out = describeSecret(o); break;
      case 'namespaces': out = describeNamespace(o); break;
      case 'deployments.apps': out = await describeDeployment(k, t.r, o); break;
      case 'pods': out = await describePod(k, t.r, o); break;
      default: out = await describeGeneric(k, t.r, o);
    }
    k.stdout.write(out);
  }
  return status;
}

async function describeTargets(k) {
  if (k.fs.strs('filename').length || (k.pos[0] || '').includes('/')) return targets(k);
  const d = await k.discover(k.wantedTypes());
  if (!k.pos.length) throw new ToolError('You must specify the type of resource to describe. Use "kubectl api-resources" for a complete list of supported resources.\n');
  const [r, names] = k.typeArgs(d, k.pos);
  const ns = k.fs.bool('all-namespaces') ? '' : k.nsFor(r);
  if (names.length) return names.map((name) => ({ r, ns, name }));
  const q = {};
  if (k.fs.str('selector')) q.labelSelector = k.fs.str('selector');
  const l = await k.getObject(r.path(ns), q);
  const ts = (l.items || []).map((it) => ({ r, ns: it.metadata.namespace || '', name: it.metadata.name, live: it }));
  if (!ts.length) throw new NoResources(ns ? `No resources found in ${ns} namespace.` : 'No resources found');
  return ts;
}

// events lists the events about an object, as kubectl's searchEvents.
async function events(k, o, kind) {
  if (!k.fs.bool('show-events')) return null;
  const md = o.metadata || {};
  const sel = [`involvedObject.kind=${kind}`, `involvedObject.name=${md.name}`];
  if (md.namespace) sel.push(`involvedObject.namespace=${md.namespace}`);
  if (md.uid) sel.push(`involvedObject.uid=${md.uid}`);
  const path = md.namespace ? `/api/v1/namespaces/${md.namespace}/events` : '/api/v1/events';
  try {
    return (await k.getObject(path, { fieldSelector: sel.join(','), limit: '500' })).items || [];
  } catch (e) { if (e instanceof StatusError) return null; throw e; }
}

function describeEvents(k, d, evs) {
  if (!evs.length) { d.w(0, 'Events:\t<none>\n'); return; }
  const ts = (e, f) => Date.parse(e[f] || '') || 0;
  evs.sort((a, b) => ts(a, 'lastTimestamp') - ts(b, 'lastTimestamp'));
  d.w(0, 'Events:\n  Type\tReason\tAge\tFrom\tMessage\n');
  d.w(1, '----\t------\t----\t----\t-------\n');
  const now = k.c.now();
  const since = (t) => (t ? humanDuration(now - t) : '<unknown>');
  for (const e of evs) {
    const first = e.eventTime ? since(ts(e, 'eventTime')) : since(ts(e, 'firstTimestamp'));
    const interval = (e.count || 0) > 1 ? `${since(ts(e, 'lastTimestamp'))} (x${e.count} over ${first})` : first;
    const source = e.source?.component || e.reportingComponent || '';
    let msg = (e.message || '').trim();
    if (e.involvedObject?.fieldPath) msg = `${e.involvedObject.fieldPath}: ${msg}`;
    d.w(1, `${e.type || ''}\t${e.reason || ''}\t${interval}\t${source}\t${msg}\n`);
  }
}

const b64len = (s) => { const n = Math.floor(s.length / 4) * 3; return n - (s.slice(-2).match(/=/g) || []).length; };

async function describeConfigMap(k, o) {
  const d = new D();
  d.w(0, `Name:\t${o.metadata.name}\n`);
  d.w(0, `Namespace:\t${o.metadata.namespace}\n`);
  d.labels('Labels', o.metadata.labels);
  d.annotations('Annotations', o.metadata.annotations);
  d.w(0, '\nData\n====\n');
  for (const key of Object.keys(o.data || {}).sort()) { d.w(0, `${key}:\n----\n`); d.w(0, `${o.data[key]}\n`); d.w(0, '\n'); }
  d.w(0, '\nBinaryData\n====\n');
  for (const key of Object.keys(o.binaryData || {}).sort()) d.w(0, `${key}: ${b64len(o.binaryData[key])} bytes\n`);
  d.w(0, '\n');
  const evs = await events(k, o, 'ConfigMap');
  if (evs) describeEvents(k, d, evs);
  return d.toString();
}

function describeSecret(o) {
  const d = new D();
  d.w(0, `Name:\t${o.metadata.name}\n`);
  d.w(0, `Namespace:\t${o.metadata.namespace}\n`);
  d.labels('Labels', o.metadata.labels);
  d.annotations('Annotations', o.metadata.annotations);
  d.w(0, `\nType:\t${o.type || ''}\n`);
  d.w(0, '\nData\n====\n');
  for (const key of Object.keys(o.data || {}).sort()) d.w(0, `${key}:\t${b64len(o.data[key])} bytes\n`);
  return d.toString();
}

function describeNamespace(o) {
  const d = new D();
  d.w(0, `Name:\t${o.metadata.name}\n`);
  d.labels('Labels', o.metadata.labels);
  d.annotations('Annotations', o.metadata.annotations);
  d.w(0, `Status:\t${o.status?.phase || ''}\n`);
  return d.toString();
}

// selectorString renders a label selector as labels.Selector.String().
function selectorString(sel = {}) {
  const parts = Object.keys(sel.matchLabels || {}).map((k) => `${k}=${sel.matchLabels[k]}`);
  for (const e of sel.matchExpressions || []) {
    const vals = [...(e.values || [])].sort().join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${vals})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${vals})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push('!' + e.key);
  }
  return parts.sort().join(',');
}

async function describeDeployment(k, r, o) {
  const d = new D();
  const st = o.status || {};
  d.w(0, `Name:\t${o.metadata.name}\n`);
  d.w(0, `Namespace:\t${o.metadata.namespace}\n`);
  d.w(0, `CreationTimestamp:\t${rfc1123z(o.metadata.creationTimestamp)}\n`);
  d.labels('Labels', o.metadata.labels);
  d.annotations('Annotations', o.metadata.annotations);
  d.w(0, `Selector:\t${selectorString(o.spec?.selector)}\n`);
  d.w(0, `Replicas:\t${o.spec?.replicas ?? 0} desired | ${st.updatedReplicas || 0} updated | ${st.replicas || 0} total | ${st.availableReplicas || 0} available | ${st.unavailableReplicas || 0} unavailable\n`);
  d.w(0, `StrategyType:\t${o.spec?.strategy?.type || ''}\n`);
  d.w(0, `MinReadySeconds:\t${o.spec?.minReadySeconds || 0}\n`);
  const ru = o.spec?.strategy?.rollingUpdate;
  if (ru) d.w(0, `RollingUpdateStrategy:\t${intOrString(ru.maxUnavailable)} max unavailable, ${intOrString(ru.maxSurge)} max surge\n`);
  describePodTemplate(d, o.spec?.template);
  if ((st.conditions || []).length) {
    d.w(0, 'Conditions:\n  Type\tStatus\tReason\n');
    d.w(1, '----\t------\t------\n');
    for (const c of st.conditions) d.w(1, `${c.type} \t${c.status}\t${c.reason || ''}\n`);
  }
  const evs = await events(k, o, r.kind);
  if (evs) describeEvents(k, d, evs);
  return d.toString();
}

function describePodTemplate(d, tpl) {
  d.w(0, 'Pod Template:\n');
  if (!tpl) { d.w(1, '<unset>'); return; }
  d.labels('  Labels', tpl.metadata?.labels);
  if (Object.keys(tpl.metadata?.annotations || {}).length) d.annotations('  Annotations', tpl.metadata.annotations);
  const spec = tpl.spec || {};
  if (spec.serviceAccountName) d.w(1, `Service Account:\t${spec.serviceAccountName}\n`);
  if ((spec.initContainers || []).length) describeContainers(d, 'Init Containers', spec.initContainers, null, '  ');
  describeContainers(d, 'Containers', spec.containers || [], null, '  ');
  describeVolumes(d, spec, '  ');
  if (spec.priorityClassName) d.w(1, `Priority Class Name:\t${spec.priorityClassName}\n`);
  d.labels('  Node-Selectors', spec.nodeSelector);
  describeTolerations(d, '  Tolerations', spec);
}

function describeContainers(d, label, cs, statuses, space) {
  d.w(0, `${space}${label}:${cs.length ? '' : ' <none>'}\n`);
  const nameIndent = space ? ' ' : '';
  for (const c of cs) {
    const status = statuses?.get(c.name);
    d.w(1, `${nameIndent}${c.name}:\n`);
    if (status) d.w(2, `Container ID:\t${status.containerID || ''}\n`);
    d.w(2, `Image:\t${c.image || ''}\n`);
    if (status) d.w(2, `Image ID:\t${status.imageID || ''}\n`);
    const ports = (c.ports || []).map((p) => [`${p.containerPort || 0}/${p.protocol || ''}`, `${p.hostPort || 0}/${p.protocol || ''}`].map((s) => (p.name ? `${s} (${p.name})` : s)));
    const ps = ports.map((p) => p[0]).join(', '), hps = ports.map((p) => p[1]).join(', ');
    if (ps.includes(',')) d.w(2, `Ports:\t${ps}\n`); else d.w(2, `Port:\t${none(ps)}\n`);
    if (hps.includes(',')) d.w(2, `Host Ports:\t${hps}\n`); else d.w(2, `Host Port:\t${none(hps)}\n`);
    for (const [f, title] of [['command', 'Command'], ['args', 'Args']]) {
      if ((c[f] || []).length) {
        d.w(2, `${title}:\n`);
        for (const a of c[f]) for (const line of String(a).split('\n')) d.w(3, `${line}\n`);
      }
    }
    if (status) describeContainerState(d, status);
    for (const [f, title] of [['limits', 'Limits'], ['requests', 'Requests']]) {
      const m = c.resources?.[f] || {};
      if (Object.keys(m).length) {
        d.w(2, `${title}:\n`);
        for (const key of Object.keys(m).sort()) d.w(3, `${key}:\t${intOrString(m[key])}\n`);
      }
    }
    if (!(c.env || []).length) d.w(2, 'Environment:\t<none>\n');
    else {
      d.w(2, 'Environment:\n');
      for (const e of c.env) {
        const vf = e.valueFrom;
        if (vf) {
          if (vf.configMapKeyRef) d.w(3, `${e.name}:\t<set to the key '${vf.configMapKeyRef.key}' of config map '${vf.configMapKeyRef.name}'>\tOptional: ${vf.configMapKeyRef.optional === true}\n`);
          else if (vf.secretKeyRef) d.w(3, `${e.name}:\t<set to the key '${vf.secretKeyRef.key}' in secret '${vf.secretKeyRef.name}'>\tOptional: ${vf.secretKeyRef.optional === true}\n`);
          else if (vf.fieldRef) d.w(3, `${e.name}:\t (${vf.fieldRef.apiVersion || ''}:${vf.fieldRef.fieldPath})\n`);
          continue;
        }
        String(e.value || '').split('\n').forEach((s, i) => d.w(3, i === 0 ? `${e.name}:\t${s}\n` : `\t${s}\n`));
      }
    }
    const mounts = [...(c.volumeMounts || [])].sort((a, b) => (a.mountPath < b.mountPath ? -1 : a.mountPath > b.mountPath ? 1 : 0));
    if (!mounts.length) d.w(2, 'Mounts:\t<none>\n');
    else {
      d.w(2, 'Mounts:\n');
      for (const m of mounts) {
        const flags = [m.readOnly ? 'ro' : 'rw'];
        if (m.subPath) flags.push(`path=${JSON.stringify(m.subPath)}`);
        d.w(3, `${m.mountPath} from ${m.name} (${flags.join(',')})\n`);
      }
    }
  }
}

function describeContainerState(d, status) {
  const s = status.state || {};
  if (s.running) { d.w(2, 'State:\tRunning\n'); d.w(3, `Started:\t${rfc1123z(s.running.startedAt)}\n`); } else if (s.terminated) {
    d.w(2, 'State:\tTerminated\n');
    if (s.terminated.reason) d.w(3, `Reason:\t${s.terminated.reason}\n`);
    d.w(3, `Exit Code:\t${s.terminated.exitCode || 0}\n`);
  } else {
    d.w(2, 'State:\tWaiting\n');
    if (s.waiting?.reason) d.w(3, `Reason:\t${s.waiting.reason}\n`);
  }
  d.w(2, `Ready:\t${status.ready ? 'True' : 'False'}\n`);
  d.w(2, `Restart Count:\t${status.restartCount || 0}\n`);
}

function describeVolumes(d, spec, space) {
  const vols = spec.volumes || [];
  if (!vols.length) { d.w(0, `${space}Volumes:\t<none>\n`); return; }
  d.w(0, `${space}Volumes:\n`);
  for (const v of vols) {
    d.w(0, space);
    d.w(1, `${v.name}:\n`);
    if (v.configMap) {
      d.w(2, 'Type:\tConfigMap (a volume populated by a ConfigMap)\n');
      d.w(2, `Name:\t${v.configMap.name}\n`);
      d.w(2, `Optional:\t${v.configMap.optional === true}\n`);
    } else if (v.secret) {
      d.w(2, 'Type:\tSecret (a volume populated by a Secret)\n');
      d.w(2, `SecretName:\t${v.secret.secretName}\n`);
      d.w(2, `Optional:\t${v.secret.optional === true}\n`);
    } else if (v.emptyDir) {
      d.w(2, "Type:\tEmptyDir (a temporary directory that shares a pod's lifetime)\n");
      d.w(2, `Medium:\t${v.emptyDir.medium || ''}\n`);
      d.w(2, `SizeLimit:\t${v.emptyDir.sizeLimit ? intOrString(v.emptyDir.sizeLimit) : '<unset>'}\n`);
    } else d.w(2, 'Type:\t<unknown>\n');
  }
}

function describeTolerations(d, title, spec) {
  const tols = spec.tolerations || [];
  d.w(0, `${title}:\t`);
  if (!tols.length) { d.b += '<none>\n'; return; }
  tols.forEach((t, i) => {
    if (i) d.w(0, '\t');
    let s = t.key || '';
    if (t.value) s += '=' + t.value;
    if (t.effect) s += ':' + t.effect;
    if (t.operator === 'Exists' && !t.value) s = t.key || t.effect ? s + ' op=Exists' : 'op=Exists';
    if (t.tolerationSeconds !== undefined) s += ` for ${t.tolerationSeconds}s`;
    d.w(0, s + '\n');
  });
}

async function describePod(k, r, o) {
  const d = new D();
  const spec = o.spec || {}, st = o.status || {};
  d.w(0, `Name:\t${o.metadata.name}\n`);
  d.w(0, `Namespace:\t${o.metadata.namespace}\n`);
  if (spec.priority !== undefined) d.w(0, `Priority:\t${spec.priority}\n`);
  if (spec.priorityClassName) d.w(0, `Priority Class Name:\t${spec.priorityClassName}\n`);
  if (spec.serviceAccountName) d.w(0, `Service Account:\t${spec.serviceAccountName}\n`);
  d.w(0, spec.nodeName ? `Node:\t${spec.nodeName}/${st.hostIP || ''}\n` : 'Node:\t<none>\n');
  if (st.startTime) d.w(0, `Start Time:\t${rfc1123z(st.startTime)}\n`);
  d.labels('Labels', o.metadata.labels);
  d.annotations('Annotations', o.metadata.annotations);
  d.w(0, `Status:\t${st.phase || ''}\n`);
  if (st.reason) d.w(0, `Reason:\t${st.reason}\n`);
  if (st.message) d.w(0, `Message:\t${st.message}\n`);
  d.w(0, `IP:\t${st.podIP || ''}\n`);
  if (!(st.podIPs || []).length) d.w(0, 'IPs:\t<none>\n');
  else { d.w(0, 'IPs:\n'); for (const ip of st.podIPs) d.w(1, `IP:\t${ip.ip}\n`); }
  for (const ref of o.metadata.ownerReferences || []) if (ref.controller) d.w(0, `Controlled By:\t${ref.kind}/${ref.name}\n`);
  const statuses = new Map((st.containerStatuses || []).map((s) => [s.name, s]));
  describeContainers(d, 'Containers', spec.containers || [], statuses, '');
  if ((st.conditions || []).length) {
    d.w(0, 'Conditions:\n  Type\tStatus\n');
    for (const c of st.conditions) d.w(1, `${c.type} \t${c.status} \n`);
  }
  describeVolumes(d, spec, '');
  d.w(0, `QoS Class:\t${st.qosClass || 'BestEffort'}\n`);
  d.labels('Node-Selectors', spec.nodeSelector);
  describeTolerations(d, 'Tolerations', spec);
  const evs = await events(k, o, r.kind);
  if (evs) describeEvents(k, d, evs);
  return d.toString();
}

// camelToWords is kubectl's smartLabelFor: apiVersion -> API Version.
function camelToWords(f) {
  const words = f.split(/(?=[A-Z])/);
  return words.map((w) => (['API', 'URL', 'UID', 'OSB', 'GUID'].includes(w.toUpperCase()) ? w.toUpperCase() : w[0].toUpperCase() + w.slice(1))).join(' ');
}

// describeGeneric is kubectl's describer for kinds without their own.
async function describeGeneric(k, r, o) {
  const d = new D();
  d.w(0, `Name:\t${o.metadata.name}\n`);
  d.w(0, `Namespace:\t${o.metadata.namespace || ''}\n`);
  d.labels('Labels', o.metadata.labels);
  d.annotations('Annotations', o.metadata.annotations);
  const skip = new Set(['.metadata.name', '.metadata.namespace', '.metadata.labels', '.metadata.annotations', '.metadata.managedFields']);
  const content = (level, c, prefix) => {
    for (const key of Object.keys(c).sort()) {
      const path = `${prefix}.${key}`;
      if (skip.has(path)) continue;
      const v = c[key];
      if (v && typeof v === 'object' && !Array.isArray(v)) { d.w(level, `${camelToWords(key)}:\n`); content(level + 1, v, path); } else if (Array.isArray(v)) {
        d.w(level, `${camelToWords(key)}:\n`);
        for (const e of v) { if (e && typeof e === 'object') content(level + 1, e, path); else d.w(level + 1, `${e}\n`); }
      } else d.w(level, `${camelToWords(key)}:\t${v}\n`);
    }
  };
  content(0, o, '');
  const evs = await events(k, o, r.kind);
  if (evs) describeEvents(k, d, evs);
  return d.toString();
}

export { isNotFound };
