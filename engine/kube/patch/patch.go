// Package patch applies the three PATCH formats of the Kubernetes API to a
// stored object: JSON patch (RFC 6902) and JSON merge patch (RFC 7386) with
// gopkg.in/evanphx/json-patch.v4, the library and major version that
// kube-apiserver uses (v5 links a second copy of encoding/json: 106 KB gzip
// of the WebAssembly build), and strategic merge patch (kube's own format,
// driven by the patch strategies in package schema). Server-side apply is
// in package apply.
//
// Everything works on JSON bytes: original is the stored object, the
// result is the patched object, still to be decoded, validated and stored
// by the caller (who also checks a resourceVersion the patch may set). It
// is pure and must not import net/http, syscall/js or k8s.io/*.
package patch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// Content types of PATCH requests.
const (
	JSONPatchType           = "application/json-patch+json"
	MergePatchType          = "application/merge-patch+json"
	StrategicMergePatchType = "application/strategic-merge-patch+json"
	ApplyPatchType          = "application/apply-patch+yaml"
)

// MaxJSONPatchOperations is kube's limit on operations in one JSON patch.
const MaxJSONPatchOperations = 10000

// Error is a patch that cannot be applied; it carries what the REST layer
// needs for kube's Status: Code and Reason, and Message. For Code 422
// (Reason Invalid) kube answers the generic text with empty details:
// {"message":"the server rejected our request due to an error in our
// request","reason":"Invalid","details":{},"code":422}; Cause keeps the
// underlying reason for logs and the lab UI.
type Error struct {
	Code    int
	Reason  string
	Message string
	Cause   error
}

func (e *Error) Error() string {
	if e.Cause != nil && e.Cause.Error() != e.Message {
		return e.Message + " (" + e.Cause.Error() + ")"
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// GenericInvalidMessage is kube's message for a patch that does not apply.
const GenericInvalidMessage = "the server rejected our request due to an error in our request"

func badRequest(msg string, cause error) *Error {
	return &Error{Code: 400, Reason: "BadRequest", Message: msg, Cause: cause}
}

func invalid(cause error) *Error {
	return &Error{Code: 422, Reason: "Invalid", Message: GenericInvalidMessage, Cause: cause}
}

// SupportedTypes is the list kube prints in its 415 answer.
var SupportedTypes = []string{JSONPatchType, MergePatchType, StrategicMergePatchType, ApplyPatchType}

// JSONPatch applies an RFC 6902 patch. As in kube-apiserver, "replace" of a
// missing object member adds it (json-patch v4 does). A patch that is not a
// JSON array of operations is 400 ("error decoding patch: …", as with
// kube's default fieldValidation); more than
// MaxJSONPatchOperations is 413; an operation that does not apply (a
// failing "test", a missing path) is 422 with kube's generic message.
func JSONPatch(original, patchJSON []byte) ([]byte, error) {
	if err := checkDecodes(patchJSON, "[]handlers.jsonPatchOp", '['); err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(patchJSON)
	if err != nil {
		return nil, badRequest(err.Error(), err)
	}
	if len(p) > MaxJSONPatchOperations {
		return nil, &Error{Code: 413, Reason: "RequestEntityTooLarge",
			Message: fmt.Sprintf("Request entity too large: The allowed maximum operations in a JSON patch is %d, got %d", MaxJSONPatchOperations, len(p))}
	}
	out, err := p.Apply(original)
	if err != nil {
		return nil, invalid(err)
	}
	return out, nil
}

// MergePatch applies an RFC 7386 JSON merge patch: objects merge, null
// deletes, everything else (lists included) replaces. A body that is not a
// JSON object is 400 "error decoding patch: …" (kube's answer with the
// default fieldValidation).
func MergePatch(original, patchJSON []byte) ([]byte, error) {
	if err := checkDecodes(patchJSON, "map[string]interface {}", '{'); err != nil {
		return nil, err
	}
	out, err := jsonpatch.MergePatch(original, patchJSON)
	if errors.Is(err, jsonpatch.ErrBadJSONPatch) {
		return nil, badRequest(err.Error(), err)
	}
	if err != nil {
		return nil, &Error{Code: 500, Message: err.Error(), Cause: err}
	}
	return out, nil
}

// checkDecodes answers a patch body that is not JSON of the right shape
// as kube does with the default fieldValidation (Warn) and with Strict,
// which decode the body first: 400 "error decoding patch: <error>", the
// error naming kube's Go type.
func checkDecodes(b []byte, goType string, open byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return badRequest("error decoding patch: "+err.Error(), err)
	}
	kind := ""
	switch v.(type) {
	case map[string]any:
		kind = "object"
	case []any:
		kind = "array"
	case string:
		kind = "string"
	case float64:
		kind = "number"
	case bool:
		kind = "bool"
	case nil:
		return nil // null decodes into anything
	}
	if (open == '{' && kind != "object") || (open == '[' && kind != "array") {
		msg := fmt.Sprintf("json: cannot unmarshal %s into Go value of type %s", kind, goType)
		return badRequest("error decoding patch: "+msg, errors.New(msg))
	}
	return nil
}

func decodeObject(b []byte) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}
