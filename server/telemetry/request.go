package telemetry

import (
	"context"
	"net"
	"net/http"
)

// Request is what the server learns about one request while serving it.
// Handler creates it; package classroom fills in Session, Principal and
// Client. A request's own goroutine writes it; Handler reads it when the
// request has ended.
type Request struct {
	// Protocol and Verb name the request for the metrics (Classify).
	Protocol, Verb string
	// Session is the id of the session the request reaches, if any.
	Session string
	// Principal is the id of the authenticated person ("teacher", or a
	// student's id); empty when the request carries no valid credentials.
	Principal string
	// Client is whom per-client limits count the request against: a
	// person of a guarded session ("<session>/<principal>"), so that a
	// class behind one NAT address does not share one budget, or else the
	// remote address.
	Client string
}

type requestKey struct{}

// From returns the Request ctx carries, or nil.
func From(ctx context.Context) *Request {
	r, _ := ctx.Value(requestKey{}).(*Request)
	return r
}

// Names is r's protocol and verb as the Handler named them (Classify, once
// a request), or Classify's names for a request that did not go through
// it.
func Names(r *http.Request) (protocol, verb string) {
	if ri := From(r.Context()); ri != nil {
		return ri.Protocol, ri.Verb
	}
	return Classify(r)
}

// ClientOf is whom per-client limits count r against: its Request's
// Client if someone set it, else r's remote address (without the port).
func ClientOf(r *http.Request) string {
	if ri := From(r.Context()); ri != nil && ri.Client != "" {
		return ri.Client
	}
	return RemoteHost(r)
}

// RemoteHost is the address r comes from, without the port.
func RemoteHost(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
