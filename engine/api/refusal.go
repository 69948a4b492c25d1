package api

// A Refusal is a request that a transport or the server in front of the
// sessions answers itself, before any session sees it: its body was too
// large, broken or too slow to arrive, the server had no memory left to
// read it, a browser sent it from a page of another origin, its client is
// not authenticated or not allowed, is over its rate, or the session
// cannot serve now. The protocol of the request's path words the answer
// (package session's Refuse): etcd's error body on the gateway's paths, a
// Kubernetes Status elsewhere.
type Refusal struct {
	Kind RefusalKind
	// Limit is the limit the body exceeded, in bytes (BodyTooLarge).
	Limit int64
	// Detail says what was wrong: the read error (BodyBroken), the time
	// the body had to arrive ("30s", BodyTimeout), the origin (CrossOrigin),
	// what the client may not do (Forbidden), why the session cannot serve
	// (Stopped, Failed).
	Detail string
	// RetryAfter is when the client may try again, in whole seconds
	// (TooManyRequests).
	RetryAfter int
}

// RefusalKind is why a transport refused a request.
type RefusalKind int

const (
	// BodyTooLarge: the body is longer than the transport accepts (413).
	BodyTooLarge RefusalKind = iota + 1
	// BodyBroken: the body ended before its declared length, or its chunked
	// encoding is malformed (400). Nothing was done.
	BodyBroken
	// BodyTimeout: the body did not arrive within the time allowed.
	BodyTimeout
	// Busy: the memory the server sets aside for request bodies is taken
	// by others; the client should retry shortly (429, Retry-After).
	Busy
	// CrossOrigin: a browser sent a state-changing request from a page
	// this server does not trust (403).
	CrossOrigin
	// Unauthenticated: the request carries no valid credentials (401).
	Unauthenticated
	// Forbidden: the client may not do what it asks (403).
	Forbidden
	// TooManyRequests: the client, or the server, is over a limit; the
	// client may retry after RetryAfter (429).
	TooManyRequests
	// Stopped: the session is closing (503).
	Stopped
	// Failed: the server could not bring the session up (500).
	Failed
)
