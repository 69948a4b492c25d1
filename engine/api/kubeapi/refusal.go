package kubeapi

import (
	"errors"
	"fmt"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
)

// Refuse words a transport's refusal (api.Refusal) as a Status, the way
// kube-apiserver's filters answer such requests: 413 for a body over the
// limit, 429 with Retry-After when it sheds load, 504 Timeout for a request
// that did not complete in time, 403 Forbidden. A body that cannot be read
// is a 400 BadRequest here; kube-apiserver answers it with a reason-less
// 500 (the read error is not a Status), which would blame the server. The
// server's own refusals are its filters': 401 from authentication, 403
// from the authorizer (Detail is the reason), 429 with Retry-After, 503
// for a session that is closing, 500 for one that cannot be loaded.
func Refuse(r api.Refusal) *api.Response {
	switch r.Kind {
	case api.BodyTooLarge:
		return statusResponse(kube.NewRequestEntityTooLarge(int(r.Limit)))
	case api.BodyBroken:
		return statusResponse(kube.NewBadRequest("the request body could not be read: " + r.Detail))
	case api.BodyTimeout:
		return statusResponse(kube.NewTimeout("the request body was not received within "+r.Detail, 0))
	case api.Busy:
		return statusResponse(kube.NewTooManyRequests())
	case api.CrossOrigin:
		return statusResponse(&kube.StatusError{Status: kube.Status{Kind: "Status", APIVersion: "v1",
			Status: "Failure", Reason: kube.ReasonForbidden, Code: 403,
			Message: fmt.Sprintf("forbidden: a page from origin %q may not change this server's sessions", r.Detail)}})
	case api.Unauthenticated:
		return statusResponse(kube.NewUnauthorized("Unauthorized"))
	case api.Forbidden:
		return statusResponse(kube.NewForbidden("", "", "", r.Detail))
	case api.TooManyRequests:
		se := kube.NewTooManyRequests()
		if r.RetryAfter > 0 {
			se.Status.Details.RetryAfterSeconds = int32(r.RetryAfter)
		}
		return statusResponse(se)
	case api.Stopped:
		return statusResponse(kube.NewServiceUnavailable(r.Detail))
	case api.Failed:
		return statusResponse(kube.NewInternalError(errors.New(r.Detail)))
	}
	return statusResponse(kube.NewBadRequest("request refused"))
}
