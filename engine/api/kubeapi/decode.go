package kubeapi

import (
	"encoding/json"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
)

// decodeBody reads a create or update body (of the scale subresource
// when scale): the wire formats are the transport's (YAML and protobuf
// become JSON here), the object's rules kube's (Resource.DecodeBody).
func (h *Handler) decodeBody(rq *request, r *kube.Resource, scale bool) (kube.Object, []string, error) {
	kind := r.Kind
	if scale {
		kind = "Scale"
	}
	body := rq.Body
	switch mt := api.MediaType(rq.Header.Get("Content-Type")); mt {
	case "", "application/json", "*/*":
	case "application/yaml":
		j, err := yamlToJSON(body)
		if err != nil {
			return nil, nil, kube.NewUnrecognizedBody(kind, err, body)
		}
		body = j
	case "application/vnd.kubernetes.protobuf":
		o, err := protobufToJSON(body)
		if err != nil {
			return nil, nil, kube.NewUnrecognizedBody(kind, err, body)
		}
		j, _ := json.Marshal(o)
		body = j
	case "application/cbor":
		return nil, nil, unsupportedFormat()
	default:
		return nil, nil, kube.NewUnsupportedMediaType()
	}
	if scale {
		return kube.DecodeScaleBody(body, rq.Query.Get("fieldValidation"))
	}
	return r.DecodeBody(body, rq.Query.Get("fieldValidation"))
}

func unsupportedFormat() error {
	se := kube.NewUnsupportedMediaType()
	se.Status.Message = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
	se.Status.Details = nil
	return se
}
