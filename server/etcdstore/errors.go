package etcdstore

import (
	"context"
	"errors"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// ErrClusterCompaction refuses a session's compaction: etcd compacts the
// whole cluster, every session's history with it.
var ErrClusterCompaction = &mvcc.Error{Code: mvcc.CodeFailedPrecondition,
	Message: "rvplay: this session is stored on an etcd cluster, where compaction is cluster-wide (every session's history): it is the operator's, automatic every --etcd-compaction-interval or with etcdctl compact, not a session's"}

// ErrClusterAlarm refuses raising or lifting an alarm from a session: the
// alarms are the cluster members'.
var ErrClusterAlarm = &mvcc.Error{Code: mvcc.CodeFailedPrecondition,
	Message: "rvplay: this session is stored on an etcd cluster, whose alarms belong to its members: an operator raises or lifts them (etcdctl alarm disarm), not a session"}

// known are the store's errors by etcd's text: the cluster answers with
// the same texts (rpctypes), so that a session on it fails as a session on
// the embedded engine does.
var known = func() map[string]*mvcc.Error {
	m := map[string]*mvcc.Error{}
	for _, e := range []*mvcc.Error{
		mvcc.ErrCompacted, mvcc.ErrFutureRev, mvcc.ErrEmptyKey, mvcc.ErrTooManyOps, mvcc.ErrDuplicateKey,
		mvcc.ErrKeyNotFound, mvcc.ErrValueProvided, mvcc.ErrLeaseProvided, mvcc.ErrLeaseNotFound,
		mvcc.ErrRequestTooLarge, mvcc.ErrInvalidSortOpt, mvcc.ErrStopped, mvcc.ErrNoSpace, mvcc.ErrCorrupt,
		mvcc.ErrTooManyRequests, mvcc.ErrInvalidAuthToken, mvcc.ErrPermissionDenied,
		mvcc.ErrLeaseExists, mvcc.ErrLeaseTTLTooLarge,
	} {
		m[e.Message] = e
	}
	return m
}()

// fromEtcd is an error of the cluster as the store's: one of the store's
// own when etcd's text is one of them, else an *mvcc.Error with etcd's
// code and text (the gateway answers it as etcd would); a request whose
// ctx ended fails with ctx.Err().
func fromEtcd(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	desc := rpctypes.ErrorDesc(err)
	if e, ok := known[desc]; ok {
		return e
	}
	code := codes.Unknown
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		code = ee.Code()
	} else if st, ok := status.FromError(err); ok {
		code = st.Code()
	}
	return &mvcc.Error{Code: mvcc.Code(code), Message: desc}
}
