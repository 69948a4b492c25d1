package client

import (
	"encoding/json"
	"net/url"
	"time"
)

// Exchange is one request a Client sent and the answer it got: for a watch,
// the answer's head (the events are the Reflector's steps). Lessons show
// these in a client's log; a 409 is the exchange that carries it.
type Exchange struct {
	Method      string
	Path        string
	Query       url.Values
	RequestBody []byte
	// Status is the HTTP status; Body the answer (nil for an open watch).
	Status int
	Body   []byte
	// Watch is set when the answer is a stream that stays open.
	Watch    bool
	Start    time.Time
	Duration time.Duration
}

// StatusObject decodes the answer's body when it is a Status (every
// failed exchange, and a few successful ones such as a DELETE's).
func (e Exchange) StatusObject() (Status, bool) {
	if len(e.Body) == 0 || e.Body[0] != '{' {
		return Status{}, false
	}
	var st Status
	if err := json.Unmarshal(e.Body, &st); err != nil || st.Kind != "Status" {
		return Status{}, false
	}
	return st, true
}
