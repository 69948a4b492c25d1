// The Kubernetes REST API as the lab's panels use it (the console has its
// own discovery, in console/kubectl.js, as kubectl does).

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
