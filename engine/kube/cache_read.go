package kube

import (
	"context"
	"strconv"
	"time"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Which reads the watch cache serves is kube-apiserver's delegator's
// decision (k8s.io/apiserver/pkg/storage/cacher/delegator.go and
// delegator/interface.go, with ConsistentListFromCache and
// ListFromCacheSnapshot on, as in 1.34 and later):
//
//   - a GET without resourceVersion reads the store; with one ("0" or N)
//     the cache, once it has reached N (it waits up to blockTimeout, then
//     answers 504 "Too large resource version" with a Retry-After of 1 s);
//   - a list with resourceVersion "0" the cache, whole (limit ignored);
//   - a list NotOlderThan N, or N without a limit, the cache, once it has
//     reached N;
//   - a consistent list (no resourceVersion) the cache, once it has reached
//     the store's current revision (KEP-2340); if it does not within
//     blockTimeout, the store;
//   - an exact revision (Exact, a limit with a resourceVersion, a continue
//     token) the cache if it still holds a snapshot of that revision, else
//     the store (which answers 410 once the revision is compacted);
//   - a list pinned to one name by its field selector reads one key: the
//     cache unless it asks for an exact revision.

// CompactRevKey is the etcd key kube-apiserver's compactor keeps its
// bookkeeping in (etcd3/compact.go): its value is the revision it last
// compacted to.
const CompactRevKey = "compact_rev_key"

// compactorPollPeriod is how often a cache reads the revision the
// compactor last compacted to, and drops its snapshots below it (kube's
// cacher compactor).
const compactorPollPeriod = 15 * time.Second

// listCached answers a list from the cache when kube-apiserver would
// (served true), or leaves it to the store.
func (reg *Registry) listCached(ctx context.Context, c *cacher, r *Resource, prefix string, m *matcher, q listQuery) (*List, bool, error) {
	switch {
	case q.withRev > 0:
		if !c.serves(q.withRev) {
			return nil, false, nil
		}
		if err := c.waitFresh(ctx, q.withRev); err != nil {
			return nil, true, err
		}
		if !c.serves(q.withRev) {
			return nil, false, nil
		}
		limit := q.limit
		if q.zero {
			limit = 0 // a continue token with "0": the rest, in one page
		}
		return c.list(r, m, prefix, q.startKey, q.withRev, limit), true, nil
	case q.consistent:
		if err := c.waitFresh(ctx, reg.kv.Rev()); err != nil {
			if ctx.Err() != nil {
				return nil, true, err
			}
			return nil, false, nil // the store answers a consistent read the cache could not
		}
	default:
		if err := c.waitFresh(ctx, q.minRV); err != nil {
			return nil, true, err
		}
	}
	limit := q.limit
	if q.any {
		limit = 0 // the cache ignores limit for "0": one page, no continue
	}
	return c.list(r, m, prefix, q.startKey, 0, limit), true, nil
}

// getListCached answers a list pinned to one name from the cache, as
// kube-apiserver's non-recursive GetList does, unless it asks for an exact
// revision.
func (reg *Registry) getListCached(ctx context.Context, c *cacher, r *Resource, ns, name string, m *matcher, q listQuery) (*List, bool, error) {
	if q.withRev > 0 {
		return nil, false, nil
	}
	min := q.minRV
	if q.consistent {
		min = reg.kv.Rev()
	}
	if err := c.waitFresh(ctx, min); err != nil {
		if q.consistent && ctx.Err() == nil {
			return nil, false, nil
		}
		return nil, true, err
	}
	o, rev := c.get(r.Key(ns, name))
	items := [][]byte{}
	if o != nil && (m.empty() || m.matchesAttrs(o.attributes(r))) {
		b, err := itemJSON(r, o.kv)
		if err != nil {
			return nil, true, err
		}
		items = append(items, b)
	}
	return newList(r, m, items, rev, "", 0), true, nil
}

// getFromCache is a GET with a resourceVersion: the object as the cache
// holds it once it has reached rv.
func (reg *Registry) getFromCache(ctx context.Context, c *cacher, key string, rv int64) (*mvcc.KeyValue, int64, error) {
	if err := c.waitFresh(ctx, rv); err != nil {
		return nil, 0, err
	}
	o, rev := c.get(key)
	if o == nil {
		return nil, rev, nil
	}
	return o.kv, rev, nil
}

// get is the object at key in the cache, and the cache's revision.
func (c *cacher) get(key string) (*cachedObject, int64) {
	c.cache.mu.RLock()
	defer c.cache.mu.RUnlock()
	return c.cache.objects[key], c.cache.rev
}

// list renders the objects under prefix from startKey as of rev (0: the
// cache's revision), limit of them at most (0: all), with a continue
// token pinned to that revision when more remain (kube's cacher GetList).
func (c *cacher) list(r *Resource, m *matcher, prefix, startKey string, rev, limit int64) *List {
	c.cache.mu.Lock()
	if rev == 0 {
		rev = c.cache.rev
	}
	objs := c.cache.listLocked(prefix, startKey, rev)
	c.cache.mu.Unlock()
	items := [][]byte{}
	var last string
	more := false
	for i, o := range objs {
		if !m.empty() && !m.matchesAttrs(o.attributes(r)) {
			continue
		}
		b, err := itemJSON(r, o.kv)
		if err != nil {
			continue
		}
		items = append(items, b)
		last = string(o.kv.Key)
		if limit > 0 && int64(len(items)) >= limit {
			more = i < len(objs)-1
			break
		}
	}
	var next string
	if more {
		next, _ = encodeContinue(last+"\x00", prefix, rev)
	}
	return newList(r, m, items, rev, next, int64(len(objs))-limit)
}

// serves reports whether the cache can answer a list at exactly rev: a
// revision it has not reached yet, or one it still holds a snapshot of.
func (c *cacher) serves(rev int64) bool {
	compacted := c.compactedRev()
	c.cache.mu.RLock()
	defer c.cache.mu.RUnlock()
	return c.cache.servesLocked(rev, compacted)
}

// compactedRev is the revision kube-apiserver's compactor last compacted
// to, as the cache last read it (every compactorPollPeriod): its
// snapshots below it are gone. A compaction made by hand (etcdctl) does
// not write the key: the cache keeps serving what it holds, as
// kube-apiserver's does.
func (c *cacher) compactedRev() int64 {
	now := c.reg.clock.Now()
	c.compactMu.Lock()
	defer c.compactMu.Unlock()
	if !c.compactReadAt.IsZero() && now.Sub(c.compactReadAt) < compactorPollPeriod {
		return c.compactRev
	}
	c.compactReadAt = now
	resp, err := c.reg.kv.Range(context.Background(), &mvcc.RangeRequest{Key: []byte(CompactRevKey)})
	if err == nil && len(resp.Kvs) == 1 {
		if rev, err := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64); err == nil && rev > c.compactRev {
			c.compactRev = rev
		}
	}
	return c.compactRev
}
