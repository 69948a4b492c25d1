//go:build js

package kubeapi

import (
	"context"

	"github.com/rvplay/rvplay/engine/api"
)

// serveWarned is serveResource: the browser's build evaluates no CEL
// rules, the only thing that warns from inside a write
// (engine/kube/warnings.go), so it carries no recorder.
func (h *Handler) serveWarned(ctx context.Context, rq *request) *api.Response {
	return h.serveResource(ctx, rq)
}
