package etcdgrpc

import (
	"context"
	"errors"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rvplay/rvplay/engine/mvcc"
)

// Errors of etcd's server that only this protocol gives (rpctypes' texts).
var (
	errUserEmpty        = &mvcc.Error{Code: mvcc.CodeInvalidArgument, Message: "etcdserver: user name is empty"}
	errAuthFailed       = &mvcc.Error{Code: mvcc.CodeInvalidArgument, Message: "etcdserver: authentication failed, invalid user ID or password"}
	errInvalidAuthToken = mvcc.ErrInvalidAuthToken
	errWatchCanceled    = &mvcc.Error{Code: mvcc.CodeCanceled, Message: "etcdserver: watch canceled"}
	errNoLeader         = &mvcc.Error{Code: mvcc.CodeUnavailable, Message: "etcdserver: no leader"}
)

// toStatus is etcd's togRPCError: the store's errors carry etcd's code and
// message already; a context's end is left to gRPC, which answers it as
// Canceled or DeadlineExceeded; anything else is Unknown with its text.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	var e *mvcc.Error
	if errors.As(err, &e) {
		return status.Error(codes.Code(e.Code), e.Message)
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, context.Canceled.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, context.DeadlineExceeded.Error())
	}
	return status.Error(codes.Unknown, err.Error())
}
