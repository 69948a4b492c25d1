package kube

import (
	"context"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Get reads one object. rv "" reads the latest state (the store), "0" the
// watch cache (possibly stale), "N" the latest state provided it is at N
// or later: the cache waits for N (up to blockTimeout), the store answers
// at once; past it, 504.
func (reg *Registry) Get(ctx context.Context, r *Resource, ns, name, rv string) (Object, error) {
	kv, err := reg.getKV(ctx, r, ns, name, rv)
	if err != nil {
		return nil, err
	}
	return decodeKV(kv)
}

// getKV is the read of Get and GetJSON.
func (reg *Registry) getKV(ctx context.Context, r *Resource, ns, name, rv string) (*mvcc.KeyValue, error) {
	if err := reg.bootstrap(ctx); err != nil {
		return nil, err
	}
	c := reg.cacherFor(r)
	minRV, err := parseRV(rv)
	if err != nil {
		if c != nil {
			return nil, err // kube's cacher parses it first: a plain error, a 500
		}
		return nil, NewBadRequest("invalid resource version: " + err.Error())
	}
	var kv *mvcc.KeyValue
	var cur int64
	if c != nil && rv != "" {
		kv, _, err = reg.getFromCache(ctx, c, r.Key(ns, name), minRV)
		if err != nil {
			return nil, err
		}
	} else {
		readRev := int64(0)
		if rv == "0" {
			readRev = reg.anyRev()
		}
		kv, cur, err = reg.get(ctx, r.Key(ns, name), readRev)
		if err != nil && readRev != 0 && isCompacted(err) {
			kv, cur, err = reg.get(ctx, r.Key(ns, name), 0)
		}
		if err != nil {
			return nil, err
		}
		if minRV > cur {
			return nil, NewTooLargeResourceVersion(minRV, cur, 0)
		}
		kv = r.served(kv) // the cache holds r's version already
	}
	if kv == nil {
		return nil, NewNotFound(r.Group, r.Resource, name)
	}
	return kv, nil
}

// GetJSON is Get answering the object's JSON as kube-apiserver encodes it.
func (reg *Registry) GetJSON(ctx context.Context, r *Resource, ns, name, rv string) ([]byte, error) {
	kv, err := reg.getKV(ctx, r, ns, name, rv)
	if err != nil {
		return nil, err
	}
	if b, ok := spliceRV(kv.Value, formatRV(kv.ModRevision), false); ok {
		return b, nil
	}
	o, err := decodeKV(kv)
	if err != nil {
		return nil, err
	}
	return r.Encode(o), nil
}
