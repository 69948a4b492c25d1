package kube

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rvplay/rvplay/engine/kube/schema"
)

// A request body as kube-apiserver's decoder reads it: the kind and
// apiVersion it declares against the URL's, the JSON types of its values
// against the schema (encoding/json into kube's Go types), and the fields
// the schema does not declare (fieldValidation). The transport turns YAML
// and protobuf into JSON before; what is left is the same for every wire
// format.

// DecodeBody reads the JSON body of a create or an update of r, with
// kube-apiserver's messages for every way it can be wrong. Unknown fields
// are dropped, with a warning each when fieldValidation is "Warn" or ""
// (the default), silently when it is "Ignore"; "Strict" refuses them.
// It returns the object and the warnings.
func (r *Resource) DecodeBody(body []byte, fieldValidation string) (Object, []string, error) {
	kind, gv := r.Kind, r.GroupVersion()
	// kube first reads apiVersion and kind on their own; the full decode
	// below is done once, and the kind-only decode just for its message.
	o, decodeErr := DecodeObject(body)
	bk, okKind := stringField(o, "kind")
	bv, okVersion := stringField(o, "apiVersion")
	if decodeErr != nil || o == nil || !okKind || !okVersion {
		var findKind struct {
			APIVersion string `json:"apiVersion,omitempty"`
			Kind       string `json:"kind,omitempty"`
		}
		if err := json.Unmarshal(body, &findKind); err != nil {
			return nil, nil, NewUnrecognizedBody(kind, fmt.Errorf("couldn't get version/kind; json parse error: %v", err), body)
		}
		bk, bv = findKind.Kind, findKind.APIVersion
	}
	if bk == "" {
		bk = kind
	}
	if bv == "" {
		bv = gv
	}
	if bk != kind || bv != gv {
		if r.Custom() {
			// custom resources are decoded unstructured: the version must
			// be the URL's, the kind is then validated
			if bv != gv {
				return nil, nil, NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", bv, gv))
			}
			return nil, nil, NewInvalid(r.Group, bk, Name(o), []FieldError{{Type: CauseFieldValueInvalid, Field: "kind", Value: bk, Detail: "must be " + kind}})
		}
		if !knownKind(bv, bk) {
			return nil, nil, NewBadRequest(fmt.Sprintf("no kind %q is registered for version %q in scheme \"pkg/api/legacyscheme/scheme.go:30\"", bk, bv))
		}
		ver := bv
		if i := strings.LastIndexByte(ver, '/'); i >= 0 {
			ver = ver[i+1:]
		}
		if bk == kind {
			return nil, nil, NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", bv, gv))
		}
		group := ""
		if i := strings.IndexByte(gv, '/'); i >= 0 {
			group = gv[:i]
		}
		return nil, nil, NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
			bk, ver, kind, ver, bk, internalPackage(group), kind))
	}
	cannot := func(msg string) error {
		ver := gv
		if i := strings.LastIndexByte(ver, '/'); i >= 0 {
			ver = ver[i+1:]
		}
		return NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", kind, ver, kind, msg))
	}
	if decodeErr != nil {
		return nil, nil, cannot(decodeErr.Error())
	}
	if o == nil {
		o = Object{}
	}
	t := r.Schema()
	if t == nil {
		return o, nil, nil
	}
	if !r.Custom() {
		// a custom resource's types are its schema's to validate
		if msg := schema.TypeError(t, o); msg != "" {
			return nil, nil, cannot(msg)
		}
	}
	if fieldValidation == "Strict" {
		if unknown := schema.UnknownFields(t, o); len(unknown) > 0 {
			return nil, nil, cannot(schema.StrictDecodingError(unknown))
		}
		return o, nil, nil
	}
	unknown := schema.PruneUnknownFields(t, o)
	if fieldValidation == "Ignore" {
		return o, nil, nil
	}
	var warnings []string
	for _, u := range unknown {
		warnings = append(warnings, schema.UnknownFieldWarning(u))
	}
	return o, warnings, nil
}

// DecodeScaleBody is DecodeBody for an update of a scale subresource: an
// autoscaling/v1 Scale.
func DecodeScaleBody(body []byte, fieldValidation string) (Object, []string, error) {
	return scaleResource.DecodeBody(body, fieldValidation)
}

// NewUnrecognizedBody is kube's 400 for a body its decoders cannot read
// as an object of kind at all (malformed JSON, YAML or protobuf).
func NewUnrecognizedBody(kind string, err error, body []byte) *StatusError {
	return NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, err, summarize(body)))
}

// summarize is kube's summarizeData: the start of a body for messages.
func summarize(b []byte) string {
	const max = 30
	switch {
	case len(b) == 0:
		return "<empty>"
	case b[0] == '{':
		if len(b) > max {
			return string(b[:max]) + " ..."
		}
		return string(b)
	default:
		if len(b) > max {
			return hex.EncodeToString(b[:max]) + " ..."
		}
		return hex.EncodeToString(b)
	}
}

// internalPackage names the Go package of kube's internal types in
// conversion messages.
func internalPackage(group string) string {
	if group == "" {
		return "core"
	}
	return strings.Split(group, ".")[0]
}

// knownKind reports whether a group-version registers kind, for kube's
// "cannot be handled as" vs "no kind is registered" messages.
func knownKind(apiVersion, kind string) bool {
	for _, r := range Resources {
		if r.GroupVersion() == apiVersion && r.Kind == kind {
			return true
		}
	}
	return apiVersion == "autoscaling/v1" && kind == "Scale" || apiVersion == "v1" && (kind == "Status" || kind == "DeleteOptions")
}

// stringField reads a string member; ok is false when it is present with
// another type.
func stringField(o map[string]any, k string) (string, bool) {
	v, present := o[k]
	if !present || v == nil {
		return "", true
	}
	s, ok := v.(string)
	return s, ok
}
