// kubectl apply and kubectl edit send strategic merge patches they compute
// on the client: apply a three-way patch (the last applied configuration,
// the file, the live object), edit a two-way one. Which lists merge by key
// (containers by name, ports by containerPort...) and which are replaced
// whole comes from the session's OpenAPI, as kubectl reads it.

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

export function deepEqual(a, b) {
  if (a === b) return true;
  if (kind(a) !== kind(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMap(a)) {
    const ka = Object.keys(a), kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}

// PatchSchema is the strategic merge metadata of one type (from an
// OpenAPI v3 document); null means none: every list is replaced.
export class PatchSchema {
  constructor(schemas, node) { this.schemas = schemas; this.node = node; }

  resolve(n) {
    for (let i = 0; i < 10 && n; i++) {
      if (n.$ref) { n = this.schemas[n.$ref.replace('#/components/schemas/', '')]; continue; }
      if (Array.isArray(n.allOf) && n.allOf.length === 1) { n = n.allOf[0]; continue; }
      break;
    }
    return n;
  }

  // field returns [subschema, strategy, mergeKey] of a field.
  field(key) {
    const f = this.node?.properties?.[key];
    if (!f) {
      if (isMap(this.node?.additionalProperties)) return [new PatchSchema(this.schemas, this.resolve(this.node.additionalProperties)), '', ''];
      return [null, '', ''];
    }
    const r = this.resolve(f);
    const strategy = f['x-kubernetes-patch-strategy'] || r?.['x-kubernetes-patch-strategy'] || '';
    const mergeKey = f['x-kubernetes-patch-merge-key'] || r?.['x-kubernetes-patch-merge-key'] || '';
    return [new PatchSchema(this.schemas, r), strategy, mergeKey];
  }

  items() { return new PatchSchema(this.schemas, this.resolve(this.node?.items)); }
}

const field = (s, key) => (s ? s.field(key) : [null, '', '']);
const mk = (v) => String(v);

// diffMaps is the strategic merge diff of two maps.
function diffMaps(original, modified, s, o) {
  const patch = {};
  for (const key of Object.keys(modified).sort()) {
    const mv = modified[key];
    if (!Object.hasOwn(original, key)) {
      if (!o.ignoreChangesAndAdditions) patch[key] = mv;
      continue;
    }
    const ov = original[key];
    if (kind(ov) !== kind(mv)) {
      if (!o.ignoreChangesAndAdditions) patch[key] = mv;
      continue;
    }
    if (isMap(ov)) {
      const [sub, strategy] = field(s, key);
      if (strategy === 'replace') {
        if (!o.ignoreChangesAndAdditions && !deepEqual(ov, mv)) patch[key] = mv;
        continue;
      }
      const p = diffMaps(ov, mv, sub, o);
      if (Object.keys(p).length) patch[key] = p;
    } else if (Array.isArray(ov)) {
      const [sub, strategy, mergeKey] = field(s, key);
      if (strategy.includes('merge')) {
        const [add, del, order] = diffLists(ov, mv, sub?.items() ?? null, mergeKey, o);
        if (add.length) patch[key] = add;
        if (del.length) patch['$deleteFromPrimitiveList/' + key] = del;
        if (order.length) patch['$setElementOrder/' + key] = order;
        continue;
      }
      if (!o.ignoreChangesAndAdditions && !deepEqual(ov, mv)) patch[key] = mv;
    } else if (!o.ignoreChangesAndAdditions && !deepEqual(ov, mv)) patch[key] = mv;
  }
  if (!o.ignoreDeletions) for (const key of Object.keys(original)) if (!Object.hasOwn(modified, key)) patch[key] = null;
  return patch;
}

function diffLists(original, modified, s, mergeKey, o) {
  let patchList = [], deleteList = [], setOrder = [];
  const all = [...original, ...modified];
  if (all.length && all.every(isMap) && mergeKey) {
    const sortByKey = (l) => [...l].sort((a, b) => (mk(a[mergeKey]) < mk(b[mergeKey]) ? -1 : mk(a[mergeKey]) > mk(b[mergeKey]) ? 1 : 0));
    const os = sortByKey(original), ms = sortByKey(modified);
    let oi = 0, mi = 0;
    while (oi < os.length || mi < ms.length) {
      const oe = os[oi], me = ms[mi];
      const okv = oe ? mk(oe[mergeKey]) : '', mkv = me ? mk(me[mergeKey]) : '';
      if (oe && me && okv === mkv) {
        const p = diffMaps(oe, me, s, o);
        if (Object.keys(p).length) { p[mergeKey] = me[mergeKey]; patchList.push(p); }
        oi++; mi++;
      } else if (!oe || (me && okv > mkv)) {
        if (!o.ignoreChangesAndAdditions) patchList.push(me);
        mi++;
      } else {
        if (!o.ignoreDeletions) deleteList.push({ $patch: 'delete', [mergeKey]: oe[mergeKey] });
        oi++;
      }
    }
    const pos = new Map(modified.map((e, i) => [mk(e[mergeKey]), i]));
    patchList.sort((a, b) => pos.get(mk(a[mergeKey])) - pos.get(mk(b[mergeKey])));
    const orderSame = original.length === modified.length && original.every((e, i) => mk(e[mergeKey]) === mk(modified[i][mergeKey]));
    patchList = [...patchList, ...deleteList];
    deleteList = [];
    if ((!o.ignoreChangesAndAdditions && (patchList.length || !orderSame)) || (!o.ignoreDeletions && patchList.length)) {
      setOrder = modified.map((e) => ({ [mergeKey]: e[mergeKey] }));
    }
    return [patchList, deleteList, setOrder];
  }
  // Lists of scalars merged as sets.
  const has = (l, v) => l.some((e) => deepEqual(e, v));
  if (!o.ignoreChangesAndAdditions) patchList = modified.filter((e) => !has(original, e));
  if (!o.ignoreDeletions) deleteList = original.filter((e) => !has(modified, e));
  if ((!o.ignoreDeletions && deleteList.length) || (!o.ignoreChangesAndAdditions && !deepEqual(original, modified))) setOrder = modified;
  return [patchList, deleteList, setOrder];
}

// mergePatches lays one patch over another (deltas over deletions).
function mergePatches(base, over) {
  const out = structuredClone(base);
  for (const [k, v] of Object.entries(over)) {
    const bv = out[k];
    if (!Object.hasOwn(out, k)) out[k] = v;
    else if (isMap(bv) && isMap(v)) out[k] = mergePatches(bv, v);
    else if (Array.isArray(bv) && Array.isArray(v) && !k.startsWith('$setElementOrder/')) out[k] = [...v, ...bv];
    else out[k] = v;
  }
  return out;
}

// threeWayPatch is CreateThreeWayMergePatch with overwrite: the changes
// from current to modified (no deletions), plus the deletions from
// original to modified.
export function threeWayPatch(original, modified, current, s) {
  const delta = diffMaps(current, modified, s, { ignoreDeletions: true });
  const deletions = diffMaps(original, modified, s, { ignoreChangesAndAdditions: true });
  return mergePatches(deletions, delta);
}

// twoWayPatch is CreateTwoWayMergePatch.
export const twoWayPatch = (original, modified, s) => diffMaps(original, modified, s, {});
