// The Kubernetes REST API as the lab and the console use it.

export const RESOURCES = [
  { names: ['configmaps', 'configmap', 'cm'], resource: 'configmaps', kind: 'ConfigMap', group: '', version: 'v1', namespaced: true },
  { names: ['secrets', 'secret'], resource: 'secrets', kind: 'Secret', group: '', version: 'v1', namespaced: true },
  { names: ['pods', 'pod', 'po'], resource: 'pods', kind: 'Pod', group: '', version: 'v1', namespaced: true },
  { names: ['services', 'service', 'svc'], resource: 'services', kind: 'Service', group: '', version: 'v1', namespaced: true },
  { names: ['namespaces', 'namespace', 'ns'], resource: 'namespaces', kind: 'Namespace', group: '', version: 'v1', namespaced: false },
  { names: ['deployments', 'deployment', 'deploy'], resource: 'deployments', kind: 'Deployment', group: 'apps', version: 'v1', namespaced: true },
];

export function lookupResource(name) {
  const [base, group] = name.toLowerCase().split(/\.(.*)/s);
  return RESOURCES.find((r) => r.names.includes(base) && (!group || r.group === group));
}

export function resourceForKind(apiVersion, kind) {
  return RESOURCES.find((r) => r.kind === kind && (r.group ? `${r.group}/${r.version}` : r.version) === apiVersion);
}

export function collectionPath(r, ns) {
  const prefix = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  return r.namespaced && ns ? `${prefix}/namespaces/${ns}/${r.resource}` : `${prefix}/${r.resource}`;
}

export function itemPath(r, ns, name) {
  return `${collectionPath(r, ns)}/${encodeURIComponent(name)}`;
}

export const singular = (r) => r.kind.toLowerCase();

// parseStatus returns the Status object of an error body, or null.
export function parseStatus(body) {
  try {
    const s = JSON.parse(body);
    return s && s.kind === 'Status' ? s : null;
  } catch { return null; }
}

// kubectlError formats a failed response as kubectl prints it.
export function kubectlError(status, body) {
  const s = parseStatus(body);
  if (s) return `Error from server${s.reason ? ` (${s.reason})` : ''}: ${s.message || ''}`;
  if (status === 404) return 'Error from server (NotFound): the server could not find the requested resource';
  return `Error from server: the server responded with the status code ${status} but did not return more information`;
}

// age renders how long ago ts was, as kubectl's AGE column does.
export function age(ts, now = Date.now()) {
  if (!ts) return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return s % 60 ? `${m}m${s % 60}s` : `${m}m`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) return m % 60 ? `${h}h${m % 60}m` : `${h}h`;
  if (h < 48) return `${h}h`;
  const d = Math.floor(h / 24);
  return d < 8 && h % 24 ? `${d}d${h % 24}h` : `${d}d`;
}

// table renders rows as kubectl's column layout: left-aligned, three spaces apart.
export function table(rows) {
  const widths = [];
  for (const r of rows) r.forEach((c, i) => { widths[i] = Math.max(widths[i] || 0, String(c).length); });
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? String(c) : String(c).padEnd(widths[i] + 3))).join('')).join('\n');
}

export function columns(r, withNamespace) {
  const head = withNamespace ? ['NAMESPACE', 'NAME'] : ['NAME'];
  let extra = ['AGE'];
  let cells = (o) => [age(o.metadata?.creationTimestamp)];
  if (r.resource === 'configmaps') {
    extra = ['DATA', 'AGE'];
    cells = (o) => [Object.keys(o.data || {}).length + Object.keys(o.binaryData || {}).length, age(o.metadata?.creationTimestamp)];
  } else if (r.resource === 'secrets') {
    extra = ['TYPE', 'DATA', 'AGE'];
    cells = (o) => [o.type || 'Opaque', Object.keys(o.data || {}).length, age(o.metadata?.creationTimestamp)];
  } else if (r.resource === 'namespaces') {
    extra = ['STATUS', 'AGE'];
    cells = (o) => [o.status?.phase || 'Active', age(o.metadata?.creationTimestamp)];
  }
  return {
    header: [...head, ...extra],
    row: (o) => [...(withNamespace ? [o.metadata?.namespace || ''] : []), o.metadata?.name || '', ...cells(o)],
  };
}
