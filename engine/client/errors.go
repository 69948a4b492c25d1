package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Status reasons, as kube-apiserver spells them (metav1.StatusReason).
const (
	ReasonUnknown               = ""
	ReasonUnauthorized          = "Unauthorized"
	ReasonForbidden             = "Forbidden"
	ReasonNotFound              = "NotFound"
	ReasonAlreadyExists         = "AlreadyExists"
	ReasonConflict              = "Conflict"
	ReasonGone                  = "Gone"
	ReasonInvalid               = "Invalid"
	ReasonServerTimeout         = "ServerTimeout"
	ReasonTimeout               = "Timeout"
	ReasonTooManyRequests       = "TooManyRequests"
	ReasonBadRequest            = "BadRequest"
	ReasonMethodNotAllowed      = "MethodNotAllowed"
	ReasonNotAcceptable         = "NotAcceptable"
	ReasonRequestEntityTooLarge = "RequestEntityTooLarge"
	ReasonUnsupportedMediaType  = "UnsupportedMediaType"
	ReasonInternalError         = "InternalError"
	ReasonExpired               = "Expired"
	ReasonServiceUnavailable    = "ServiceUnavailable"

	// CauseResourceVersionTooLarge marks a 504 for a resourceVersion the
	// server has not reached yet.
	CauseResourceVersionTooLarge = "ResourceVersionTooLarge"
)

// knownReasons are the reasons the predicates trust on their own. A status
// with a reason outside this set (including the empty, unknown reason) is
// classified by its code alone, which is what apimachinery does.
var knownReasons = map[string]bool{
	ReasonUnauthorized: true, ReasonForbidden: true, ReasonNotFound: true,
	ReasonAlreadyExists: true, ReasonConflict: true, ReasonGone: true,
	ReasonInvalid: true, ReasonServerTimeout: true, ReasonTimeout: true,
	ReasonTooManyRequests: true, ReasonBadRequest: true, ReasonMethodNotAllowed: true,
	ReasonNotAcceptable: true, ReasonRequestEntityTooLarge: true,
	ReasonUnsupportedMediaType: true, ReasonInternalError: true,
	ReasonExpired: true, ReasonServiceUnavailable: true,
}

// Status is the Kubernetes Status object that carries every API error.
type Status struct {
	Kind       string         `json:"kind,omitempty"`
	APIVersion string         `json:"apiVersion,omitempty"`
	Status     string         `json:"status,omitempty"`
	Message    string         `json:"message,omitempty"`
	Reason     string         `json:"reason,omitempty"`
	Details    *StatusDetails `json:"details,omitempty"`
	Code       int32          `json:"code,omitempty"`
}

// StatusDetails names the object an error is about and lists its causes.
type StatusDetails struct {
	Name              string        `json:"name,omitempty"`
	Group             string        `json:"group,omitempty"`
	Kind              string        `json:"kind,omitempty"`
	UID               string        `json:"uid,omitempty"`
	Causes            []StatusCause `json:"causes,omitempty"`
	RetryAfterSeconds int32         `json:"retryAfterSeconds,omitempty"`
}

// StatusCause is one cause of an error; Type is sent as "reason".
type StatusCause struct {
	Type    string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Field   string `json:"field,omitempty"`
}

// StatusError is an error answered by the API server as a Status object:
// an HTTP error response, or an ERROR event inside a watch stream.
type StatusError struct {
	Status Status
}

func (e *StatusError) Error() string { return e.Status.Message }

// Reason, Code and Message are shortcuts into Status.
func (e *StatusError) Reason() string  { return e.Status.Reason }
func (e *StatusError) Code() int32     { return e.Status.Code }
func (e *StatusError) Message() string { return e.Status.Message }

// AsStatus returns the Status behind err, if err is (or wraps) a StatusError.
func AsStatus(err error) (*StatusError, bool) {
	var se *StatusError
	if errors.As(err, &se) && se != nil {
		return se, true
	}
	return nil, false
}

func reasonAndCode(err error) (string, int32) {
	if se, ok := AsStatus(err); ok {
		return se.Status.Reason, se.Status.Code
	}
	return ReasonUnknown, 0
}

// is reports whether err has the given reason, or has the given code and a
// reason the predicates do not know.
func is(err error, reason string, code int32) bool {
	r, c := reasonAndCode(err)
	if r == reason {
		return true
	}
	return !knownReasons[r] && c == code && code != 0
}

// IsNotFound: reason NotFound, or a 404 with an unknown reason.
func IsNotFound(err error) bool { return is(err, ReasonNotFound, 404) }

// IsConflict: reason Conflict, or a 409 with an unknown reason. An
// AlreadyExists 409 is not a conflict.
func IsConflict(err error) bool { return is(err, ReasonConflict, 409) }

// IsAlreadyExists: reason AlreadyExists only.
func IsAlreadyExists(err error) bool {
	r, _ := reasonAndCode(err)
	return r == ReasonAlreadyExists
}

// IsResourceExpired: reason Expired only (kube-apiserver's 410 for a
// compacted or too old resourceVersion).
func IsResourceExpired(err error) bool {
	r, _ := reasonAndCode(err)
	return r == ReasonExpired
}

// IsGone: reason Gone, or a 410 with an unknown reason. An Expired 410 is
// not Gone; reflectors therefore test IsResourceExpired || IsGone.
func IsGone(err error) bool { return is(err, ReasonGone, 410) }

// IsInvalid: reason Invalid, or a 422 with an unknown reason.
func IsInvalid(err error) bool { return is(err, ReasonInvalid, 422) }

// IsBadRequest: reason BadRequest, or a 400 with an unknown reason.
func IsBadRequest(err error) bool { return is(err, ReasonBadRequest, 400) }

// IsTimeout: reason Timeout, or a 504 with an unknown reason.
func IsTimeout(err error) bool { return is(err, ReasonTimeout, 504) }

// IsInternalError: reason InternalError, or a 500 with an unknown reason.
func IsInternalError(err error) bool { return is(err, ReasonInternalError, 500) }

// IsTooManyRequests: reason TooManyRequests or any 429.
func IsTooManyRequests(err error) bool {
	r, c := reasonAndCode(err)
	return r == ReasonTooManyRequests || c == 429
}

// HasStatusCause reports whether err's details list a cause of that type.
func HasStatusCause(err error, causeType string) bool {
	se, ok := AsStatus(err)
	if !ok || se.Status.Details == nil {
		return false
	}
	for _, c := range se.Status.Details.Causes {
		if c.Type == causeType {
			return true
		}
	}
	return false
}

// IsTooLargeResourceVersion reports a read or watch at a resourceVersion
// the server has not reached: the ResourceVersionTooLarge cause, or, as
// older servers sent it, a Timeout whose cause or message says
// "Too large resource version". client-go's reflector relists from the
// latest state ("") when it sees this.
func IsTooLargeResourceVersion(err error) bool {
	if HasStatusCause(err, CauseResourceVersionTooLarge) {
		return true
	}
	if !IsTimeout(err) {
		return false
	}
	se, _ := AsStatus(err)
	if se.Status.Details != nil {
		for _, c := range se.Status.Details.Causes {
			if c.Message == "Too large resource version" {
				return true
			}
		}
	}
	return strings.Contains(se.Status.Message, "Too large resource version")
}

// isExpired is the reflector's test for "the resourceVersion is gone".
func isExpired(err error) bool { return IsResourceExpired(err) || IsGone(err) }

// errorFromResponse turns a non-2xx answer into a StatusError. A body that
// is not a Status gets a synthesized one, as client-go does, so that the
// predicates still classify it by code.
func errorFromResponse(method string, code int, body []byte) error {
	var st Status
	if err := json.Unmarshal(body, &st); err == nil && st.Kind == "Status" {
		if st.Code == 0 {
			st.Code = int32(code)
		}
		return &StatusError{Status: st}
	}
	reason, msg := ReasonUnknown, ""
	switch code {
	case 400:
		reason, msg = ReasonBadRequest, "the server rejected our request for an unknown reason"
	case 401:
		reason, msg = ReasonUnauthorized, "the server has asked for the client to provide credentials"
	case 403:
		reason, msg = ReasonForbidden, "the server does not allow access to the requested resource"
	case 404:
		reason, msg = ReasonNotFound, "the server could not find the requested resource"
	case 405:
		reason, msg = ReasonMethodNotAllowed, "the server does not allow this method on the requested resource"
	case 409:
		if method == "POST" {
			reason, msg = ReasonAlreadyExists, "the server reported a conflict"
		} else {
			reason, msg = ReasonConflict, "the server reported a conflict"
		}
	case 410:
		msg = "the requested resource is gone"
	case 422:
		reason, msg = ReasonInvalid, "the server rejected our request due to an error in our request"
	case 429:
		reason, msg = ReasonTooManyRequests, "the server has received too many requests and has asked us to try again later"
	case 504:
		reason, msg = ReasonTimeout, "the server was unable to return a response in the time allotted, but may still be processing the request"
	default:
		if code >= 500 {
			reason, msg = ReasonInternalError, "an error on the server has prevented the request from succeeding"
		} else {
			msg = fmt.Sprintf("the server responded with the status code %d but did not return more information", code)
		}
	}
	if text := strings.TrimSpace(string(body)); text != "" && len(text) < 1024 {
		msg = msg + " (" + text + ")"
	}
	return &StatusError{Status: Status{Kind: "Status", APIVersion: "v1", Status: "Failure",
		Message: msg, Reason: reason, Code: int32(code)}}
}
