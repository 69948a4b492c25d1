package kube

import (
	"context"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Get reads one object. rv "" reads the latest state, "0" the watch cache
// (possibly stale), "N" the latest state provided the store is at N or
// later (else 504).
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
	minRV, err := parseRV(rv)
	if err != nil {
		return nil, NewBadRequest("invalid resource version: " + err.Error())
	}
	readRev := int64(0)
	if rv == "0" {
		readRev = reg.cacheRev()
	}
	kv, cur, err := reg.getCached(ctx, r.Key(ns, name), readRev)
	if err != nil {
		return nil, err
	}
	if minRV > cur {
		return nil, NewTooLargeResourceVersion(minRV, cur, 0)
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
