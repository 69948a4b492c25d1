package kubeapi

import (
	"context"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
)

// patchTypes maps PATCH content types to kube patch types.
var patchTypes = map[string]string{
	"application/json-patch+json":            kube.JSONPatch,
	"application/merge-patch+json":           kube.MergePatch,
	"application/strategic-merge-patch+json": kube.StrategicPatch,
	"application/apply-patch+yaml":           kube.ApplyPatch,
}

func (h *Handler) servePatch(ctx context.Context, rq *request) *api.Response {
	r := rq.res
	pt, ok := patchTypes[api.MediaType(rq.Header.Get("Content-Type"))]
	if !ok {
		return statusResponse(kube.NewUnsupportedMediaType())
	}
	body := rq.Body
	if pt == kube.ApplyPatch {
		j, err := yamlToJSON(body)
		if err != nil {
			return statusResponse(kube.NewBadRequest(err.Error()))
		}
		body = j
	}
	o := kube.PatchOptions{WriteOptions: writeOptions(rq), FieldValidation: rq.Query.Get("fieldValidation")}
	if pt == kube.ApplyPatch {
		o.FieldManager = rq.Query.Get("fieldManager")
	}
	if _, ok := rq.Query["force"]; ok {
		f := boolParam(rq.Query, "force")
		o.Force = &f
	}
	if rq.sub == "scale" {
		out, err := h.reg.PatchScale(ctx, r, rq.ns, rq.name, pt, body, o)
		if err != nil {
			return statusResponse(err)
		}
		return jsonResponse(200, kube.EncodeObject(out, nil))
	}
	out, err := h.reg.Patch(ctx, r, rq.ns, rq.name, rq.sub, pt, body, o)
	if err != nil {
		return statusResponse(err)
	}
	code := 200
	if out.Created {
		code = 201
	}
	return encodedResponse(code, r, out)
}
