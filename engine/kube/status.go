package kube

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Status is metav1.Status. The field order is the one Go's encoder gives
// kube-apiserver's struct, so that error bodies are byte-compatible.
type Status struct {
	Kind       string         `json:"kind"`
	APIVersion string         `json:"apiVersion"`
	Metadata   ListMeta       `json:"metadata"`
	Status     string         `json:"status,omitempty"`
	Message    string         `json:"message,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Details    *StatusDetails `json:"details,omitempty"`
	Code       int32          `json:"code,omitempty"`
}

// ListMeta is metav1.ListMeta.
type ListMeta struct {
	ResourceVersion    string `json:"resourceVersion,omitempty"`
	Continue           string `json:"continue,omitempty"`
	RemainingItemCount *int64 `json:"remainingItemCount,omitempty"`
}

// StatusDetails is metav1.StatusDetails.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is metav1.StatusCause; the cause type's JSON key is "reason".
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// Status reasons (metav1.StatusReason).
const (
	ReasonNotFound              = "NotFound"
	ReasonAlreadyExists         = "AlreadyExists"
	ReasonConflict              = "Conflict"
	ReasonGone                  = "Gone"
	ReasonExpired               = "Expired"
	ReasonInvalid               = "Invalid"
	ReasonBadRequest            = "BadRequest"
	ReasonTimeout               = "Timeout"
	ReasonMethodNotAllowed      = "MethodNotAllowed"
	ReasonNotAcceptable         = "NotAcceptable"
	ReasonUnsupportedMediaType  = "UnsupportedMediaType"
	ReasonRequestEntityTooLarge = "RequestEntityTooLarge"
	ReasonInternalError         = "InternalError"
	ReasonForbidden             = "Forbidden"
	ReasonUnauthorized          = "Unauthorized"
	ReasonTooManyRequests       = "TooManyRequests"
	ReasonServiceUnavailable    = "ServiceUnavailable"
)

// Cause types (metav1.CauseType).
const (
	CauseFieldValueInvalid       = "FieldValueInvalid"
	CauseFieldValueRequired      = "FieldValueRequired"
	CauseFieldValueForbidden     = "FieldValueForbidden"
	CauseFieldValueNotSupported  = "FieldValueNotSupported"
	CauseFieldValueDuplicate     = "FieldValueDuplicate"
	CauseFieldValueTooLong       = "FieldValueTooLong"
	CauseFieldValueTypeInvalid   = "FieldValueTypeInvalid"
	CauseFieldValueTooMany       = "FieldValueTooMany"
	CauseFieldManagerConflict    = "FieldManagerConflict"
	CauseResourceVersionTooLarge = "ResourceVersionTooLarge"
)

// StatusError is an error that reaches the client as a Status.
type StatusError struct{ Status Status }

func (e *StatusError) Error() string { return e.Status.Message }

// Code is the HTTP status code of e.
func (e *StatusError) Code() int { return int(e.Status.Code) }

// JSON is e's Status as kube-apiserver encodes it.
func (e *StatusError) JSON() []byte {
	b, _ := json.Marshal(e.Status)
	return b
}

// newStatusError is not inlined: an error is the cold path, and inlined
// into its 90 callers the Status literal costs bytes in the WebAssembly
// build.
//
//go:noinline
func newStatusError(code int32, reason, msg string, d *StatusDetails) *StatusError {
	return &StatusError{Status{Kind: "Status", APIVersion: "v1", Status: "Failure",
		Message: msg, Reason: reason, Details: d, Code: code}}
}

// AsStatus turns any error into the Status kube-apiserver would send: a
// StatusError as it is, anything else as a reason-less 500 with the error's
// text (responsewriters.ErrorToAPIStatus).
func AsStatus(err error) *StatusError {
	if se, ok := err.(*StatusError); ok {
		return se
	}
	return newStatusError(500, "", err.Error(), nil)
}

// qualifiedResource is GroupResource.String(): "configmaps", "deployments.apps".
func qualifiedResource(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// NewNotFound is errors.NewNotFound.
func NewNotFound(group, resource, name string) *StatusError {
	return newStatusError(404, ReasonNotFound,
		fmt.Sprintf("%s %q not found", qualifiedResource(group, resource), name),
		&StatusDetails{Name: name, Group: group, Kind: resource})
}

// NewAlreadyExists is errors.NewAlreadyExists.
func NewAlreadyExists(group, resource, name string) *StatusError {
	return newStatusError(409, ReasonAlreadyExists,
		fmt.Sprintf("%s %q already exists", qualifiedResource(group, resource), name),
		&StatusDetails{Name: name, Group: group, Kind: resource})
}

// OptimisticLockErrorMsg is the cause of a Conflict on a stale resourceVersion.
const OptimisticLockErrorMsg = "the object has been modified; please apply your changes to the latest version and try again"

// NewConflict is errors.NewConflict.
func NewConflict(group, resource, name, cause string) *StatusError {
	return newStatusError(409, ReasonConflict,
		fmt.Sprintf("Operation cannot be fulfilled on %s %q: %s", qualifiedResource(group, resource), name, cause),
		&StatusDetails{Name: name, Group: group, Kind: resource})
}

// NewBadRequest is errors.NewBadRequest.
//
//go:noinline
func NewBadRequest(msg string) *StatusError {
	return newStatusError(400, ReasonBadRequest, msg, nil)
}

// NewExpired is errors.NewResourceExpired.
func NewExpired(msg string) *StatusError {
	return newStatusError(410, ReasonExpired, msg, nil)
}

// NewInternalError is errors.NewInternalError.
func NewInternalError(err error) *StatusError {
	return newStatusError(500, ReasonInternalError, "Internal error occurred: "+err.Error(),
		&StatusDetails{Causes: []StatusCause{{Message: err.Error()}}})
}

// NewTimeout is errors.NewTimeoutError.
func NewTimeout(msg string, retryAfter int32) *StatusError {
	return newStatusError(504, ReasonTimeout, "Timeout: "+msg, &StatusDetails{RetryAfterSeconds: retryAfter})
}

// NewTooLargeResourceVersion is storage.NewTooLargeResourceVersionError.
func NewTooLargeResourceVersion(rv, current int64, retryAfter int32) *StatusError {
	e := NewTimeout(fmt.Sprintf("Too large resource version: %d, current: %d", rv, current), retryAfter)
	e.Status.Details.Causes = []StatusCause{{Type: CauseResourceVersionTooLarge, Message: "Too large resource version"}}
	return e
}

// TooManyRequestsMsg is kube-apiserver's text when it sheds a request
// (filters/maxinflight.go).
const TooManyRequestsMsg = "Too many requests, please try again later."

// NewTooManyRequests is errors.NewTooManyRequests with kube-apiserver's
// words and its Retry-After of 1 s: the answer to a watch beyond a cap.
// (kube-apiserver's in-flight filter writes the same words as plain text;
// its watch cache, refusing a watch while it initialises, writes this
// Status, which clients decode as TooManyRequests.)
func NewTooManyRequests() *StatusError {
	return newStatusError(429, ReasonTooManyRequests, TooManyRequestsMsg, &StatusDetails{RetryAfterSeconds: 1})
}

// NewMethodNotSupported is errors.NewMethodNotSupported.
func NewMethodNotSupported(group, resource, action string) *StatusError {
	return newStatusError(405, ReasonMethodNotAllowed,
		fmt.Sprintf("%s is not supported on resources of kind %q", action, qualifiedResource(group, resource)),
		&StatusDetails{Group: group, Kind: resource})
}

// NewForbidden is errors.NewForbidden: resource "" (with group "") is a
// refusal that concerns no resource, such as a path outside the API.
func NewForbidden(group, resource, name, cause string) *StatusError {
	var msg string
	switch {
	case resource == "" && group == "":
		msg = "forbidden: " + cause
	case name == "":
		msg = fmt.Sprintf("%s is forbidden: %s", qualifiedResource(group, resource), cause)
	default:
		msg = fmt.Sprintf("%s %q is forbidden: %s", qualifiedResource(group, resource), name, cause)
	}
	return newStatusError(403, ReasonForbidden, msg, &StatusDetails{Name: name, Group: group, Kind: resource})
}

// NewUnauthorized is errors.NewUnauthorized; kube-apiserver's
// authentication filter sends it with the reason "Unauthorized".
func NewUnauthorized(reason string) *StatusError {
	if reason == "" {
		reason = "not authorized"
	}
	return newStatusError(401, ReasonUnauthorized, reason, nil)
}

// NewServiceUnavailable is errors.NewServiceUnavailable.
func NewServiceUnavailable(reason string) *StatusError {
	return newStatusError(503, ReasonServiceUnavailable, reason, nil)
}

// NewUnsupportedMediaType is the 415 kube-apiserver sends for a body type
// it cannot decode.
func NewUnsupportedMediaType() *StatusError {
	return newStatusError(415, ReasonUnsupportedMediaType, "415: Unsupported Media Type", &StatusDetails{})
}

// NewNotAcceptable is the 406 kube-apiserver sends when no entry of a
// request's Accept header names a representation it serves
// (negotiation.NewNotAcceptableError).
func NewNotAcceptable() *StatusError {
	return newStatusError(406, ReasonNotAcceptable,
		"only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf", nil)
}

// NewRequestEntityTooLarge is errors.NewRequestEntityTooLargeError.
func NewRequestEntityTooLarge(limit int) *StatusError {
	return newStatusError(413, ReasonRequestEntityTooLarge,
		fmt.Sprintf("Request entity too large: limit is %d", limit), nil)
}

// NewGenericInvalid is what a Status without details becomes on the client
// side (NewGenericServerResponse) — kube-apiserver sends it for a failed
// JSON-patch test operation.
func NewGenericInvalid() *StatusError {
	return newStatusError(422, ReasonInvalid, "the server rejected our request due to an error in our request", &StatusDetails{})
}

// FieldError is field.Error: one validation failure.
type FieldError struct {
	Type   string // CauseFieldValue*
	Field  string
	Value  any // rendered as kube does; noValue for none
	Detail string
}

// noValue marks a field error without a value.
type noValueT struct{}

// fieldErrorType is field.ErrorType's String().
func fieldErrorType(t string) string {
	switch t {
	case CauseFieldValueRequired:
		return "Required value"
	case CauseFieldValueForbidden:
		return "Forbidden"
	case CauseFieldValueNotSupported:
		return "Unsupported value"
	case CauseFieldValueDuplicate:
		return "Duplicate value"
	case CauseFieldValueTooLong:
		return "Too long"
	case CauseFieldValueTooMany:
		return "Too many"
	case CauseFieldValueInvalid, CauseFieldValueTypeInvalid:
		return "Invalid value"
	}
	return ""
}

// body is field.Error.ErrorBody: "<Type>[: <value>][: <detail>]".
func (e FieldError) body() string {
	s := fieldErrorType(e.Type)
	switch e.Type {
	case CauseFieldValueRequired, CauseFieldValueForbidden, CauseFieldValueTooLong:
		// these carry no value
	default:
		if _, ok := e.Value.(noValueT); !ok {
			s += ": " + renderValue(e.Value)
		}
	}
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// renderValue renders a field error value as kube ≥1.34 does: strings
// quoted, numbers and booleans plain, anything else as JSON.
func renderValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return fmt.Sprintf("%q", x)
	case int, int32, int64, bool, json.Number:
		return fmt.Sprint(x)
	case float64:
		return fmt.Sprint(x)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func (e FieldError) String() string { return e.Field + ": " + e.body() }

// NewInvalid is errors.NewInvalid: kind is "Kind" or "Kind.group".
func NewInvalid(group, kind, name string, errs []FieldError) *StatusError {
	causes := make([]StatusCause, 0, len(errs))
	msgs := make([]string, 0, len(errs))
	for _, e := range errs {
		causes = append(causes, StatusCause{Type: e.Type, Message: e.body(), Field: e.Field})
		msgs = append(msgs, e.String())
	}
	qk := kind
	if group != "" {
		qk = kind + "." + group
	}
	msg := fmt.Sprintf("%s %q is invalid", qk, name)
	switch len(msgs) {
	case 0:
	case 1:
		msg += ": " + msgs[0]
	default:
		msg += ": [" + strings.Join(msgs, ", ") + "]"
	}
	return newStatusError(422, ReasonInvalid, msg, &StatusDetails{Name: name, Group: group, Kind: kind, Causes: causes})
}

// SuccessStatus is the Status kube-apiserver answers a delete with when the
// resource does not return the deleted object.
func SuccessStatus(group, resource, name, uid string) *Status {
	return &Status{Kind: "Status", APIVersion: "v1", Status: "Success",
		Details: &StatusDetails{Name: name, Group: group, Kind: resource, UID: uid}}
}
