package labapi

import (
	"encoding/json"
	"time"

	"github.com/rvplay/rvplay/engine/client"
)

// step is the JSON of every step a client reports: its exchanges (request
// and answer), its informers' reflector steps, and its retry attempts.
// Fields that do not apply to a kind are left out.
type step struct {
	_        [0]func() // not comparable: no equality code to link
	Client   string    `json:"client"`
	Informer string    `json:"informer,omitempty"`
	Seq      int64     `json:"seq"`
	Time     string    `json:"time"`
	Kind     string    `json:"kind"`

	// kind "exchange"
	Method      string `json:"method,omitempty"`
	Path        string `json:"path,omitempty"`
	Query       string `json:"query,omitempty"`
	RequestBody string `json:"requestBody,omitempty"`
	Status      int    `json:"status,omitempty"`
	Body        string `json:"body,omitempty"`
	Watch       bool   `json:"watch,omitempty"`
	DurationMS  *int64 `json:"durationMs,omitempty"`
	// RVSent is the resourceVersion the request carried (query or
	// metadata), RV the one the answer carries.
	RVSent string `json:"rvSent,omitempty"`

	// reflector steps
	RV      string `json:"rv,omitempty"`
	Type    string `json:"type,omitempty"`
	Key     string `json:"key,omitempty"`
	Items   *int   `json:"items,omitempty"`
	Initial bool   `json:"initial,omitempty"`
	Request string `json:"request,omitempty"`

	// retries: the attempt's number; waits (backoff) in milliseconds
	Attempt int     `json:"attempt,omitempty"`
	WaitMS  float64 `json:"waitMs,omitempty"`

	// failures: the error and, for a Status, its reason, message and code
	Error   string `json:"error,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	Code    int32  `json:"code,omitempty"`
}

func (c *labClient) emit(s step) {
	c.mu.Lock()
	c.seq++
	s.Seq = c.seq
	c.mu.Unlock()
	s.Client = c.id
	if s.Time == "" {
		s.Time = c.hub.clock.Now().UTC().Format(time.RFC3339Nano)
	}
	if c.hub.onStep == nil {
		return
	}
	b, err := json.Marshal(s)
	if err != nil {
		return
	}
	c.hub.onStep(b)
}

func (s *step) setErr(err error) {
	if err == nil {
		return
	}
	s.Error = err.Error()
	if se, ok := client.AsStatus(err); ok {
		s.Reason, s.Message, s.Code = se.Reason(), se.Message(), se.Code()
	}
}

// exchange reports a request and its answer (Client.OnExchange).
func (c *labClient) exchange(e client.Exchange) {
	d := e.Duration.Milliseconds()
	s := step{Kind: "exchange", Method: e.Method, Path: e.Path, Query: e.Query.Encode(),
		RequestBody: string(e.RequestBody), Status: e.Status, Body: string(e.Body), Watch: e.Watch,
		DurationMS: &d, Time: e.Start.UTC().Format(time.RFC3339Nano)}
	s.RVSent = e.Query.Get("resourceVersion")
	if s.RVSent == "" && len(e.RequestBody) > 0 {
		s.RVSent = metadataRV(e.RequestBody)
	}
	if e.Status >= 300 {
		if st, ok := e.StatusObject(); ok {
			s.Reason, s.Message, s.Code = st.Reason, st.Message, st.Code
		}
	} else if len(e.Body) > 0 {
		s.RV = metadataRV(e.Body)
	}
	c.emit(s)
}

// reflectorStep reports one step of an informer's reflector.
func (c *labClient) reflectorStep(informer string, r client.Step) {
	s := step{Informer: informer, Kind: r.Kind, RV: r.RV, Type: r.Type, Key: r.Key, Initial: r.Initial,
		Request: r.Request, Time: r.Time.UTC().Format(time.RFC3339Nano)}
	if r.Kind == client.StepListed || r.Kind == client.StepReplace || r.Kind == client.StepInitialEventsEnd {
		n := r.Items
		s.Items = &n
	}
	if r.Wait > 0 {
		s.WaitMS = float64(r.Wait) / float64(time.Millisecond)
	}
	s.setErr(r.Err)
	c.emit(s)
}

// metadataRV reads metadata.resourceVersion of a JSON object (or list).
func metadataRV(body []byte) string {
	var o struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	if json.Unmarshal(body, &o) != nil {
		return ""
	}
	return o.Metadata.ResourceVersion
}
