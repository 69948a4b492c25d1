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

// MarshalJSON renders an exchange for a UI: bodies as text, the query
// encoded, the Status' reason and message lifted out of a failed answer.
func (e Exchange) MarshalJSON() ([]byte, error) {
	type out struct {
		Kind        string `json:"kind"`
		Method      string `json:"method"`
		Path        string `json:"path"`
		Query       string `json:"query,omitempty"`
		RequestBody string `json:"requestBody,omitempty"`
		Status      int    `json:"status"`
		Reason      string `json:"reason,omitempty"`
		Message     string `json:"message,omitempty"`
		Body        string `json:"body,omitempty"`
		Watch       bool   `json:"watch,omitempty"`
		Time        string `json:"time"`
		DurationMS  int64  `json:"durationMs"`
	}
	o := out{Kind: "exchange", Method: e.Method, Path: e.Path, Query: e.Query.Encode(),
		RequestBody: string(e.RequestBody), Status: e.Status, Body: string(e.Body), Watch: e.Watch,
		Time: e.Start.UTC().Format(time.RFC3339Nano), DurationMS: e.Duration.Milliseconds()}
	if e.Status >= 300 {
		if st, ok := e.StatusObject(); ok {
			o.Reason, o.Message = st.Reason, st.Message
		}
	}
	return json.Marshal(o)
}
