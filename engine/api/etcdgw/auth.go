package etcdgw

import (
	"bytes"
	"context"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// The permissions of a guarded session's roles, checked where etcd's auth
// store checks a user's (IsPutPermitted, IsDeleteRangePermitted,
// IsAdminPermitted), and refused with etcd's own
// "etcdserver: permission denied". The teacher is etcd's root. A student is
// a user whose role grants readwrite on every key except kube-apiserver's
// prefix, /registry/, which (as in a real cluster, where only the API
// server writes there) students change through the Kubernetes API only;
// and compaction, a maintenance operation, is root's. Reads and watches
// are free. Who the principal is, the transport has established (see
// api.Principal); a request without one is the teacher's.

// registryPrefix is where kube-apiserver keeps its objects, and
// registryEnd the end of that prefix's range.
var (
	registryPrefix = []byte("/registry/")
	registryEnd    = []byte("/registry0")
)

func mayAdmin(ctx context.Context) bool { return api.PrincipalFrom(ctx).Role >= api.RoleTeacher }

// authorizeCompaction: compaction, like the other maintenance operations
// that change the member (raising or lifting an alarm, defragmenting), is
// teacher-only.
func authorizeCompaction(ctx context.Context) error {
	if !mayAdmin(ctx) {
		return mvcc.ErrPermissionDenied
	}
	return nil
}

// authorizeWrite checks a put (end nil) or a delete of [key, end).
func authorizeWrite(ctx context.Context, key, end []byte) error {
	if !mayAdmin(ctx) && touchesRegistry(key, end) {
		return mvcc.ErrPermissionDenied
	}
	return nil
}

// authorizeTxn checks every write of both branches, nested txns included,
// whichever branch the compares would choose: etcd checks them all.
func authorizeTxn(ctx context.Context, r *mvcc.TxnRequest) error {
	if mayAdmin(ctx) {
		return nil
	}
	return txnTouchesRegistry(r)
}

func txnTouchesRegistry(r *mvcc.TxnRequest) error {
	for _, ops := range [][]mvcc.RequestOp{r.Success, r.Failure} {
		for i := range ops {
			op := &ops[i]
			switch {
			case op.Put != nil && touchesRegistry(op.Put.Key, nil),
				op.DeleteRange != nil && touchesRegistry(op.DeleteRange.Key, op.DeleteRange.RangeEnd):
				return mvcc.ErrPermissionDenied
			case op.Txn != nil:
				if err := txnTouchesRegistry(op.Txn); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// touchesRegistry reports whether the key range [key, end) in etcd's
// encoding (end empty: key alone; end "\x00": every key from key on)
// overlaps /registry/.
func touchesRegistry(key, end []byte) bool {
	if len(end) == 0 {
		return bytes.HasPrefix(key, registryPrefix)
	}
	if bytes.Compare(key, registryEnd) >= 0 {
		return false
	}
	if len(end) == 1 && end[0] == 0 {
		return true
	}
	return bytes.Compare(end, registryPrefix) > 0 && bytes.Compare(end, key) > 0
}
