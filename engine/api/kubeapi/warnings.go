package kubeapi

import (
	"context"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
)

// serveWarned answers a request about a resource with the warnings its
// handling recorded (kube's WithWarningRecorder filter: a CEL rule
// ratcheted, kube.AddWarning), whatever the answer, after those of its
// body's decoding.
func (h *Handler) serveWarned(ctx context.Context, rq *request) *api.Response {
	ctx, warnings := kube.WithWarnings(ctx)
	return withWarnings(h.serveResource(ctx, rq), warnings.List())
}
