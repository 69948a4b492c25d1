package kube

import (
	"context"
	"errors"
	"fmt"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// decodeKV turns a stored key-value into an object whose resourceVersion
// is the key's mod_revision.
func decodeKV(kv *mvcc.KeyValue) (Object, error) {
	o, err := DecodeObject(kv.Value)
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %v", kv.Key, err)
	}
	meta(o)["resourceVersion"] = formatRV(kv.ModRevision)
	return o, nil
}

// storageBytes is what is stored: the object without resourceVersion.
func storageBytes(r *Resource, o Object) []byte {
	so, sr := r.storedForm(o)
	m := meta(so)
	rv, had := m["resourceVersion"]
	delete(m, "resourceVersion")
	b := sr.Encode(so)
	if had {
		m["resourceVersion"] = rv
	}
	return b
}

func (reg *Registry) get(ctx context.Context, key string, rev int64) (*mvcc.KeyValue, int64, error) {
	resp, err := reg.kv.Range(ctx, &mvcc.RangeRequest{Key: []byte(key), Revision: rev})
	if err != nil {
		return nil, 0, err
	}
	if len(resp.Kvs) == 0 {
		return nil, resp.Header.Revision, nil
	}
	return resp.Kvs[0], resp.Header.Revision, nil
}

func isCompacted(err error) bool {
	var me *mvcc.Error
	return errors.As(err, &me) && me.Message == mvcc.ErrCompacted.Message
}

func isFutureRev(err error) bool {
	var me *mvcc.Error
	return errors.As(err, &me) && me.Message == mvcc.ErrFutureRev.Message
}

func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return []byte{0}
}
