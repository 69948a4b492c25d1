package kube

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/rvplay/rvplay/engine/kube/schema"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// customResources is a registry's view of the CustomResourceDefinitions
// in its store: the Resources they serve, rebuilt for a definition only
// when it changes (a Resource caches its schema), as kube-apiserver's
// crdHandler keeps one storage per definition.
type customResources struct {
	mu     sync.Mutex
	stamp  string
	byName map[string]*definitionEntry
	served []*Resource
}

type definitionEntry struct {
	modRev    int64
	crd       Object
	resources []*Resource // one per served version, when established
}

// CustomResources returns the resources the established definitions
// serve (by definition name, then in the order of their versions) and a
// stamp that changes whenever they do, for caches of what is derived
// from them (discovery, OpenAPI).
func (reg *Registry) CustomResources(ctx context.Context) ([]*Resource, string, error) {
	defs, err := reg.readDefinitions(ctx)
	if err != nil {
		return nil, "", err
	}
	var gone []*Resource
	defer func() { reg.dropCaches(gone) }() // after c.mu is released
	c := &reg.custom
	c.mu.Lock()
	defer c.mu.Unlock()
	stamp := fmt.Sprint(len(defs))
	for _, kv := range defs {
		stamp += fmt.Sprintf(",%d", kv.ModRevision)
	}
	if stamp == c.stamp {
		return c.served, c.stamp, nil
	}
	byName := map[string]*definitionEntry{}
	var served []*Resource
	for _, kv := range defs {
		name := string(kv.Key[len(definitions.Prefix("")):])
		e := c.byName[name]
		if e == nil || e.modRev != kv.ModRevision {
			crd, err := decodeKV(kv)
			if err != nil {
				return nil, "", err
			}
			e = &definitionEntry{modRev: kv.ModRevision, crd: crd}
			if isEstablished(crd) {
				for _, v := range listOf(pathValue(crd, "spec", "versions")) {
					if vm, _ := v.(map[string]any); vm["served"] == true {
						e.resources = append(e.resources, newCustomResource(crd, vm))
					}
				}
			}
		}
		byName[name] = e
		served = append(served, e.resources...)
	}
	for name, old := range c.byName {
		if e := byName[name]; e == nil || !sameStorage(old.crd, e.crd) {
			gone = append(gone, old.resources...)
		}
	}
	c.stamp, c.byName, c.served = stamp, byName, served
	return served, stamp, nil
}

// sameStorage says whether kube-apiserver's crdHandler keeps a
// definition's storage (and its watch cache) across a change from a to
// b: the same definition (UID) with the same spec and accepted names, a
// change of its other status only. Deleted and created again, or changed,
// it is built anew.
func sameStorage(a, b Object) bool {
	return UID(a) == UID(b) && schema.JSONEqual(a["spec"], b["spec"]) &&
		schema.JSONEqual(pathValue(a, "status", "acceptedNames"), pathValue(b, "status", "acceptedNames"))
}

// dropCaches closes the watch caches that serve rs (their watchers end
// and watch again), so that the resources that replace them get their
// own.
func (reg *Registry) dropCaches(rs []*Resource) {
	if len(rs) == 0 {
		return
	}
	var old []*cacher
	reg.cachersMu.Lock()
	for _, r := range rs {
		if c := reg.cachers[cacheKey(r)]; c != nil && c.r == r {
			delete(reg.cachers, cacheKey(r))
			old = append(old, c)
		}
	}
	reg.cachersMu.Unlock()
	for _, c := range old {
		c.close()
	}
}

// versionsOf is the other served versions of r's definition (r a custom
// resource), as last read.
func (c *customResources) versionsOf(r *Resource) []*Resource {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*Resource
	for _, v := range c.served {
		if v != r && v.Group == r.Group && v.Resource == r.Resource {
			out = append(out, v)
		}
	}
	return out
}

// readDefinitions reads the stored definitions, in name order.
func (reg *Registry) readDefinitions(ctx context.Context) ([]*mvcc.KeyValue, error) {
	p := []byte(definitions.Prefix(""))
	resp, err := reg.kv.Range(ctx, &mvcc.RangeRequest{Key: p, RangeEnd: prefixEnd(p)})
	if err != nil {
		return nil, err
	}
	sort.Slice(resp.Kvs, func(i, j int) bool { return string(resp.Kvs[i].Key) < string(resp.Kvs[j].Key) })
	return resp.Kvs, nil
}

func (reg *Registry) definitionObjects(ctx context.Context) ([]Object, error) {
	kvs, err := reg.readDefinitions(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Object, 0, len(kvs))
	for _, kv := range kvs {
		o, err := decodeKV(kv)
		if err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	return out, nil
}
