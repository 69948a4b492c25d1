// Package remote is an api.Handler that sends each request to a session on
// the rvplay server, from the browser: fetch for plain requests and for
// streams that carry a body (etcd's /v3/watch), a WebSocket for Kubernetes
// watches (one event per message; WebSockets do not count against the six
// connections a browser keeps per host, which a lab's several watches would
// exhaust). engine/client runs over it unchanged, so the lab's Go clients
// are the same offline (over the in-page session) and on a server.
//
// A browser does not let a page set User-Agent, and a WebSocket carries no
// headers at all, yet the session names a client by its User-Agent (its
// record of exchanges, kube's field managers). So the User-Agent travels as
// api.BrowserUserAgentHeader on fetch and as a WebSocket subprotocol
// (api.UserAgentProtocol), and the server's transport restores it.
package remote

import (
	"bytes"
	"strings"

	"github.com/rvplay/rvplay/engine/api"
)

// IsKubeWatch reports a Kubernetes watch: a GET with ?watch=true (or 1), or
// a path under the deprecated /watch/ prefix.
func IsKubeWatch(req *api.Request) bool {
	if req.Method != "GET" {
		return false
	}
	switch req.Query.Get("watch") {
	case "true", "1":
		return true
	}
	return strings.Contains(req.Path, "/watch/")
}

// IsStream reports a request whose answer stays open: a Kubernetes watch
// or etcd's watch stream.
func IsStream(req *api.Request) bool {
	return IsKubeWatch(req) || req.Path == "/v3/watch" || req.Path == "/v3beta/watch"
}

// forbidden reports the request headers a page may not set (the fetch
// standard's list, as far as clients send them); fetch would drop them
// silently or refuse the request.
func forbidden(canonical string) bool {
	switch canonical {
	case "Accept-Charset", "Accept-Encoding", "Connection", "Content-Length", "Cookie", "Date", "Host",
		"Keep-Alive", "Origin", "Referer", "Te", "Trailer", "Transfer-Encoding", "Upgrade", "User-Agent":
		return true
	}
	return false
}

// Headers are the headers a fetch sends for req: what the page may set,
// and the User-Agent in UserAgentHeader.
func Headers(req *api.Request) map[string]string {
	out := map[string]string{}
	for k, v := range req.Header {
		if len(v) == 0 || forbidden(api.CanonicalKey(k)) {
			continue
		}
		out[k] = strings.Join(v, ", ")
	}
	if ua := req.Header.Get("User-Agent"); ua != "" {
		out[api.BrowserUserAgentHeader] = ua
	}
	return out
}

// lines cuts a byte stream into newline-terminated frames, as the server
// writes them (one JSON document per line), whatever the chunks.
type lines struct {
	buf []byte
}

// add appends a chunk and returns the complete frames it finished, each
// with its newline.
func (l *lines) add(chunk []byte) [][]byte {
	l.buf = append(l.buf, chunk...)
	var out [][]byte
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			break
		}
		frame := l.buf[:i+1]
		l.buf = l.buf[i+1:]
		if len(bytes.TrimSpace(frame)) > 0 {
			out = append(out, bytes.Clone(frame))
		}
	}
	if len(l.buf) == 0 {
		l.buf = nil
	}
	return out
}

// rest returns what is left when the stream ends (a last frame without its
// newline), if anything.
func (l *lines) rest() []byte {
	if len(bytes.TrimSpace(l.buf)) == 0 {
		return nil
	}
	return append(l.buf, '\n')
}
