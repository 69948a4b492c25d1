// Package api is the transport-neutral shape of one request to a playground
// session and its answer. The etcd v3 JSON gateway and the Kubernetes REST
// API are written against it, so the same code serves net/http on the
// server (package server) and JavaScript calls in the browser (package
// wasm). It must not import net/http, syscall/js, SQLite or a websocket
// library: net/http alone would add megabytes to the WebAssembly build.
package api

import (
	"context"
	"io"
	"net/url"
	"strings"
)

// Request is one HTTP-like request addressed to a session. Path is relative
// to the session's base URL: "/v3/kv/range", "/api/v1/namespaces/default/configmaps".
type Request struct {
	Method string
	Path   string
	Query  url.Values
	Header Header
	Body   []byte
}

// Response is the answer. When Stream is set the response is long-lived (a
// watch): the transport sends Status, Header and Body (if any) at once, then
// every frame Stream yields until it returns io.EOF or the client goes away,
// and finally closes the Stream. Header belongs to the handler and may be
// shared by many responses: transports and other receivers read it and never
// modify it.
type Response struct {
	Status int
	Header Header
	Body   []byte
	Stream Stream
	// Revision is the store revision an etcd answer's header carries (0:
	// none), said by the API that made the answer for the session's record
	// of exchanges, which would otherwise read it back out of Body's JSON
	// on every request.
	Revision int64
}

// Stream yields the frames of a long-lived response, each a complete
// message (one JSON watch event or gateway result, newline-terminated).
type Stream interface {
	// Next blocks until the next frame, the end of the stream (io.EOF) or the
	// end of ctx (ctx.Err()).
	Next(ctx context.Context) ([]byte, error)
	// Close releases the stream; Next must not be called afterwards.
	Close()
}

// Receiver is implemented by a Stream that takes further messages from the
// client while it runs: etcd's /v3/watch accepts create, cancel and progress
// requests for as long as the stream is open. Transports that carry client
// messages (WebSocket, the browser bridge) hand each one to Receive; a
// refused message does not end the stream.
type Receiver interface {
	Receive(msg []byte) error
}

// Handler answers requests. It must be safe for concurrent use and must
// never panic on bad input: bad input gets an error in the protocol's own
// format.
type Handler interface {
	Serve(ctx context.Context, req *Request) *Response
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, req *Request) *Response

func (f HandlerFunc) Serve(ctx context.Context, req *Request) *Response { return f(ctx, req) }

// EOF is returned by Stream.Next at the end of a stream.
var EOF = io.EOF

// Header is a set of MIME header fields keyed by canonical name, like
// net/http's Header, without importing net/http.
type Header map[string][]string

// Get returns the first value of key, or "".
func (h Header) Get(key string) string {
	if v := h[CanonicalKey(key)]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// Set replaces the values of key.
func (h Header) Set(key, value string) { h[CanonicalKey(key)] = []string{value} }

// Add appends a value to key.
func (h Header) Add(key, value string) {
	k := CanonicalKey(key)
	h[k] = append(h[k], value)
}

// CanonicalKey returns the canonical form of a header name
// ("content-type" -> "Content-Type"), as net/textproto does.
func CanonicalKey(key string) string {
	b := []byte(key)
	upper := true
	for i, c := range b {
		if upper && 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		} else if !upper && 'A' <= c && c <= 'Z' {
			b[i] = c - 'A' + 'a'
		}
		upper = c == '-'
	}
	return string(b)
}

// MediaType returns the media type of a Content-Type or Accept value without
// parameters, lower-cased ("application/json; charset=utf-8" -> "application/json").
func MediaType(v string) string {
	if i := strings.IndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(strings.TrimSpace(v))
}
