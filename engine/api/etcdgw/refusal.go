package etcdgw

import (
	"fmt"
	"strconv"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// Refuse words a transport's refusal (api.Refusal) as etcd's gateway would
// answer it: a body that cannot be read is a decoding error (grpc-gateway
// refuses it with InvalidArgument before calling the gRPC server), a body
// over the limit and a server out of memory for bodies are gRPC errors.
// A cross-origin request is refused with PermissionDenied; this differs
// from etcd, which serves it (with its CORS header, "*" by default). The
// server's own refusals are etcd's: an unknown token, permission denied,
// too many requests, server stopped, and a session that cannot be loaded
// is Unavailable.
func Refuse(r api.Refusal) *api.Response {
	switch r.Kind {
	case api.BodyTooLarge:
		resp := ErrorResponse(mvcc.ErrRequestTooLarge.Code, mvcc.ErrRequestTooLarge.Message)
		resp.Status = 413
		return resp
	case api.BodyBroken:
		return codeError(mvcc.CodeInvalidArgument, r.Detail)
	case api.BodyTimeout:
		return codeError(mvcc.CodeInvalidArgument, "request body not received within "+r.Detail)
	case api.Busy:
		resp := ErrorResponse(mvcc.ErrTooManyRequests.Code, mvcc.ErrTooManyRequests.Message)
		resp.Header["Retry-After"] = []string{"1"}
		return resp
	case api.CrossOrigin:
		return codeError(mvcc.CodePermissionDenied, fmt.Sprintf(
			"rvplay: a page from origin %q may not change this server's sessions", r.Detail))
	case api.Unauthenticated:
		return ErrorResponse(mvcc.ErrInvalidAuthToken.Code, mvcc.ErrInvalidAuthToken.Message)
	case api.Forbidden:
		return ErrorResponse(mvcc.ErrPermissionDenied.Code, mvcc.ErrPermissionDenied.Message)
	case api.TooManyRequests:
		resp := ErrorResponse(mvcc.ErrTooManyRequests.Code, mvcc.ErrTooManyRequests.Message)
		if r.RetryAfter > 0 {
			resp.Header["Retry-After"] = []string{strconv.Itoa(r.RetryAfter)}
		}
		return resp
	case api.Stopped:
		return ErrorResponse(mvcc.ErrStopped.Code, mvcc.ErrStopped.Message)
	case api.Failed:
		return ErrorResponse(mvcc.CodeUnavailable, r.Detail)
	}
	return codeError(mvcc.CodeUnknown, "request refused")
}
