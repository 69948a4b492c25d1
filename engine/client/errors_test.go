package client

import (
	"fmt"
	"testing"
)

func statusErr(reason string, code int32) error {
	return &StatusError{Status: Status{Kind: "Status", Reason: reason, Code: code}}
}

// The predicates classify by reason first and fall back to the code only
// for reasons they do not know, as apimachinery's do.
func TestPredicatesFollowApimachinery(t *testing.T) {
	cases := []struct {
		name string
		err  error
		pred func(error) bool
		want bool
	}{
		{"Conflict reason", statusErr(ReasonConflict, 409), IsConflict, true},
		{"AlreadyExists 409 is not a conflict", statusErr(ReasonAlreadyExists, 409), IsConflict, false},
		{"unknown-reason 409 is a conflict", statusErr("", 409), IsConflict, true},
		{"unrecognised-reason 409 is a conflict", statusErr("Whatever", 409), IsConflict, true},
		{"AlreadyExists reason", statusErr(ReasonAlreadyExists, 409), IsAlreadyExists, true},
		{"AlreadyExists needs the reason", statusErr("", 409), IsAlreadyExists, false},
		{"NotFound reason", statusErr(ReasonNotFound, 404), IsNotFound, true},
		{"unknown-reason 404", statusErr("", 404), IsNotFound, true},
		{"Expired is ResourceExpired", statusErr(ReasonExpired, 410), IsResourceExpired, true},
		{"Expired is not Gone", statusErr(ReasonExpired, 410), IsGone, false},
		{"Gone reason", statusErr(ReasonGone, 410), IsGone, true},
		{"unknown-reason 410 is Gone", statusErr("", 410), IsGone, true},
		{"unknown-reason 410 is not Expired", statusErr("", 410), IsResourceExpired, false},
		{"plain error is nothing", fmt.Errorf("boom"), IsConflict, false},
		{"nil is nothing", nil, IsNotFound, false},
		{"wrapped conflict", fmt.Errorf("update: %w", statusErr(ReasonConflict, 409)), IsConflict, true},
		{"any 429 is TooManyRequests", statusErr("", 429), IsTooManyRequests, true},
	}
	for _, c := range cases {
		if got := c.pred(c.err); got != c.want {
			t.Errorf("%s: got %v want %v", c.name, got, c.want)
		}
	}
}

func TestTooLargeResourceVersionIsRecognisedByCauseOrLegacyMessage(t *testing.T) {
	byCause := &StatusError{Status: Status{Reason: ReasonTimeout, Code: 504, Message: "Timeout: Too large resource version: 900, current: 850",
		Details: &StatusDetails{Causes: []StatusCause{{Type: CauseResourceVersionTooLarge, Message: "Too large resource version"}}}}}
	byMessage := &StatusError{Status: Status{Reason: ReasonTimeout, Code: 504, Message: "Timeout: Too large resource version: 9"}}
	otherTimeout := &StatusError{Status: Status{Reason: ReasonTimeout, Code: 504, Message: "Timeout: slow"}}
	notTimeout := &StatusError{Status: Status{Reason: ReasonInternalError, Code: 500, Message: "Too large resource version"}}
	for _, c := range []struct {
		err  error
		want bool
	}{{byCause, true}, {byMessage, true}, {otherTimeout, false}, {notTimeout, false}} {
		if got := IsTooLargeResourceVersion(c.err); got != c.want {
			t.Errorf("%v: got %v want %v", c.err, got, c.want)
		}
	}
}

func TestErrorFromResponseDecodesStatusAndSynthesizesOtherwise(t *testing.T) {
	body := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"foo\" not found","reason":"NotFound","details":{"name":"foo","kind":"configmaps"},"code":404}`
	err := errorFromResponse("GET", 404, []byte(body))
	se, ok := AsStatus(err)
	if !ok || se.Reason() != ReasonNotFound || se.Code() != 404 || se.Message() != `configmaps "foo" not found` || se.Status.Details.Kind != "configmaps" {
		t.Fatalf("decoded %#v", err)
	}
	if !IsAlreadyExists(errorFromResponse("POST", 409, []byte("nope"))) {
		t.Error("non-Status 409 on POST should read as AlreadyExists")
	}
	if !IsConflict(errorFromResponse("PUT", 409, []byte("nope"))) {
		t.Error("non-Status 409 on PUT should read as Conflict")
	}
	if !IsGone(errorFromResponse("GET", 410, nil)) {
		t.Error("non-Status 410 should read as Gone")
	}
}
