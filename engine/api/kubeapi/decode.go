package kubeapi

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/kube/schema"
)

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

// knownKinds are the kinds a group-version registers, for kube's
// "cannot be handled as" vs "no kind is registered" messages.
func knownKind(apiVersion, kind string) bool {
	for _, r := range kube.Resources {
		if r.GroupVersion() == apiVersion && r.Kind == kind {
			return true
		}
	}
	return apiVersion == "autoscaling/v1" && kind == "Scale" || apiVersion == "v1" && (kind == "Status" || kind == "DeleteOptions")
}

// decodeBody decodes a create or update body into an object of r's kind
// with kube-apiserver's messages for every way it can be wrong. Unknown
// fields are dropped (fieldValidation Ignore and Warn, the latter with
// warnings) or refused (Strict).
func (h *Handler) decodeBody(rq *request, r *kube.Resource, scale bool) (kube.Object, []string, error) {
	kind, gv := r.Kind, r.GroupVersion()
	if scale {
		kind, gv = "Scale", "autoscaling/v1"
	}
	body := rq.Body
	switch mt := api.MediaType(rq.Header.Get("Content-Type")); mt {
	case "", "application/json", "*/*":
	case "application/yaml":
		j, err := yamlToJSON(body)
		if err != nil {
			return nil, nil, kube.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, err, summarize(body)))
		}
		body = j
	case "application/vnd.kubernetes.protobuf":
		o, err := protobufToJSON(body)
		if err != nil {
			return nil, nil, kube.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): %v (%s)", kind, err, summarize(body)))
		}
		j, _ := json.Marshal(o)
		body = j
	case "application/cbor":
		return nil, nil, unsupportedFormat()
	default:
		return nil, nil, kube.NewUnsupportedMediaType()
	}
	// kube first reads apiVersion and kind on their own; the full decode
	// below is done once, and the kind-only decode just for its message.
	o, decodeErr := kube.DecodeObject(body)
	bk, okKind := stringField(o, "kind")
	bv, okVersion := stringField(o, "apiVersion")
	if decodeErr != nil || o == nil || !okKind || !okVersion {
		var findKind struct {
			APIVersion string `json:"apiVersion,omitempty"`
			Kind       string `json:"kind,omitempty"`
		}
		if err := json.Unmarshal(body, &findKind); err != nil {
			return nil, nil, kube.NewBadRequest(fmt.Sprintf("the object provided is unrecognized (must be of type %s): couldn't get version/kind; json parse error: %v (%s)", kind, err, summarize(body)))
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
		if !knownKind(bv, bk) {
			return nil, nil, kube.NewBadRequest(fmt.Sprintf("no kind %q is registered for version %q in scheme \"pkg/api/legacyscheme/scheme.go:30\"", bk, bv))
		}
		ver := bv
		if i := strings.LastIndexByte(ver, '/'); i >= 0 {
			ver = ver[i+1:]
		}
		if bk == kind {
			return nil, nil, kube.NewBadRequest(fmt.Sprintf("the API version in the data (%s) does not match the expected API version (%s)", bv, gv))
		}
		group := ""
		if i := strings.IndexByte(gv, '/'); i >= 0 {
			group = gv[:i]
		}
		return nil, nil, kube.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: converting (%s.%s) to (%s.%s): unknown conversion",
			bk, ver, kind, ver, bk, internalPackage(group), kind))
	}
	cannot := func(msg string) error {
		ver := gv
		if i := strings.LastIndexByte(ver, '/'); i >= 0 {
			ver = ver[i+1:]
		}
		return kube.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %s", kind, ver, kind, msg))
	}
	if decodeErr != nil {
		return nil, nil, cannot(decodeErr.Error())
	}
	if o == nil {
		o = kube.Object{}
	}
	t := r.Schema()
	if scale {
		t = schema.ForGVK("autoscaling/v1", "Scale")
	}
	if msg := typeCheck(t, o); msg != "" {
		return nil, nil, cannot(msg)
	}
	var unknown []string
	if t != nil {
		unknown = schema.UnknownFields(t, o)
	}
	var warnings []string
	if len(unknown) > 0 {
		switch rq.Query.Get("fieldValidation") {
		case "Strict":
			return nil, nil, cannot(schema.StrictDecodingError(unknown))
		case "Ignore":
		default:
			for _, u := range unknown {
				warnings = append(warnings, schema.UnknownFieldWarning(u))
			}
		}
		if !scale {
			r.PruneUnknown(o)
		}
	}
	return o, warnings, nil
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

func unsupportedFormat() error {
	se := kube.NewUnsupportedMediaType()
	se.Status.Message = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml"
	se.Status.Details = nil
	return se
}

// typeCheck reports the first value whose JSON type cannot decode into
// the declared field, as encoding/json reports it to kube.
func typeCheck(t *schema.Type, o map[string]any) string {
	if t == nil {
		return ""
	}
	return checkObject(t, o, t.Short)
}

func checkObject(t *schema.Type, o map[string]any, path string) string {
	if t == nil || t.Untyped || !t.IsObject() {
		return ""
	}
	for k, v := range o {
		f := t.Field(k)
		if f == nil {
			continue
		}
		if msg := checkValue(f.Type, v, path, k); msg != "" {
			return msg
		}
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case json.Number, float64, int64, int:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

func goType(r *schema.TypeRef) string {
	switch r.Kind {
	case schema.KindString:
		return "string"
	case schema.KindInteger:
		if r.Format == "int32" {
			return "int32"
		}
		return "int64"
	case schema.KindNumber:
		return "float64"
	case schema.KindBoolean:
		return "bool"
	case schema.KindBytes:
		return "[]uint8"
	case schema.KindList:
		return "[]" + goType(r.Elem)
	case schema.KindMap:
		return "map[string]" + goType(r.Elem)
	case schema.KindObject:
		if r.Named.Scalar == "string" {
			return "string"
		}
		return "v1." + r.Named.Short
	}
	return "interface {}"
}

// unmarshalFieldError is encoding/json's error for a value of the wrong
// JSON type. It is not inlined: checkValue would copy it into each of its
// nine checks.
//
//go:noinline
func unmarshalFieldError(v any, r *schema.TypeRef, parent, key string) string {
	return fmt.Sprintf("json: cannot unmarshal %s into Go struct field %s of type %s", jsonKind(v), parent+"."+key, goType(r))
}

// checkValue checks the value of field key of the object at parent; the
// path "parent.key" is only built when needed (an error, or an object to
// descend into), not for every field of every write.
func checkValue(r *schema.TypeRef, v any, parent, key string) string {
	if v == nil || r == nil {
		return ""
	}
	bad := func() string { return unmarshalFieldError(v, r, parent, key) }
	switch r.Kind {
	case schema.KindString, schema.KindBytes:
		if _, ok := v.(string); !ok {
			return bad()
		}
	case schema.KindInteger:
		n, ok := v.(json.Number)
		if !ok {
			if jsonKind(v) != "number" {
				return bad()
			}
			return ""
		}
		if _, err := n.Int64(); err != nil {
			return fmt.Sprintf("json: cannot unmarshal number %s into Go struct field %s of type %s", n, parent+"."+key, goType(r))
		}
	case schema.KindNumber:
		if jsonKind(v) != "number" {
			return bad()
		}
	case schema.KindBoolean:
		if _, ok := v.(bool); !ok {
			return bad()
		}
	case schema.KindList:
		l, ok := v.([]any)
		if !ok {
			return bad()
		}
		for _, e := range l {
			if msg := checkValue(r.Elem, e, parent, key); msg != "" {
				return msg
			}
		}
	case schema.KindMap:
		m, ok := v.(map[string]any)
		if !ok {
			return bad()
		}
		for _, e := range m {
			if msg := checkValue(r.Elem, e, parent, key); msg != "" {
				return msg
			}
		}
	case schema.KindObject:
		switch r.Named.Scalar {
		case "string", "quantity":
			if _, ok := v.(string); !ok && r.Named.Scalar == "string" {
				return bad()
			}
		case "intorstring":
			if k := jsonKind(v); k != "string" && k != "number" {
				return bad()
			}
		case "":
			if r.Named.Untyped {
				return ""
			}
			m, ok := v.(map[string]any)
			if !ok {
				return bad()
			}
			return checkObject(r.Named, m, parent+"."+key)
		}
	}
	return ""
}
