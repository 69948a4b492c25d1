package kubeapi

import (
	"context"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
)

// Request deadlines, as kube-apiserver sets them. Every request but a
// watch runs under --request-timeout (DefaultRequestTimeout), or the
// shorter timeout its ?timeout= asks for; a write also under the
// handlers' own bound of 34 s. A request whose deadline passes is answered
// 504, whatever became of its work: kube-apiserver answers at the deadline
// and lets the work go on ("the operation may still complete"); this
// handler answers when the work returns, which the bounds of engine/kube
// keep short, and the store's wait for a commit ends at the deadline.

// DefaultRequestTimeout is kube-apiserver's --request-timeout default.
const DefaultRequestTimeout = 60 * time.Second

// writeTimeoutUpperBound is kube-apiserver's requestTimeoutUpperBound: the
// create, update, patch and delete handlers' own deadline.
const writeTimeoutUpperBound = 34 * time.Second

// withDeadline returns ctx with rq's deadline, and whether rq is a write;
// a malformed ?timeout= is refused as kube-apiserver refuses it.
func (h *Handler) withDeadline(ctx context.Context, rq *request) (context.Context, context.CancelFunc, bool, *api.Response) {
	timeout := h.requestTimeout
	if v := rq.Query.Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return ctx, nil, false, statusResponse(kube.NewBadRequest("invalid timeout specified in the request URL - " + err.Error()))
		}
		if d > 0 && d < timeout {
			timeout = d
		}
	}
	write := false
	switch rq.Method {
	case "POST", "PUT", "PATCH", "DELETE":
		write = true
		timeout = min(timeout, writeTimeoutUpperBound)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return ctx, cancel, write, nil
}

// timedOut is the 504 of a request whose deadline passed: the finisher's
// words for a write, the timeout filter's for anything else.
func timedOut(ctx context.Context, write bool) *api.Response {
	if write {
		return statusResponse(kube.NewTimeout("request did not complete within requested timeout - "+ctx.Err().Error(), 0))
	}
	return statusResponse(kube.NewTimeout("request did not complete within the allotted timeout", 0))
}
