package etcdgw

import (
	"fmt"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/mvcc"
)

// Refuse words a transport's refusal (api.Refusal) as etcd's gateway would
// answer it: a body that cannot be read is a decoding error (grpc-gateway
// refuses it with InvalidArgument before calling the gRPC server), a body
// over the limit and a server out of memory for bodies are gRPC errors.
// A cross-origin request is refused with PermissionDenied; this differs
// from etcd, which serves it (with its CORS header, "*" by default).
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
	}
	return codeError(mvcc.CodeUnknown, "request refused")
}
