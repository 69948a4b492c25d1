package classroom

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/httpapi"
)

// The classroom's refusals, each in the protocol of the path it refuses:
// etcd's error body on the etcd gateway's paths (/v3/...), a Kubernetes
// Status everywhere else, as kube-apiserver words them.

func statusResponse(se *kube.StatusError) *api.Response {
	resp := &api.Response{Status: se.Code(), Header: api.Header{
		"Content-Type":  {"application/json"},
		"Cache-Control": {"no-cache, private"},
	}, Body: append(se.JSON(), '\n')}
	if d := se.Status.Details; d != nil && d.RetryAfterSeconds > 0 {
		resp.Header.Set("Retry-After", strconv.Itoa(int(d.RetryAfterSeconds)))
	}
	return resp
}

// unauthorized answers a request to a guarded session without a valid
// token: kube-apiserver's authentication filter's 401, or etcd's answer to
// a token it does not know.
func unauthorized(path string) *api.Response {
	return session.Refuse(path, api.Refusal{Kind: api.Unauthenticated})
}

// forbiddenPath answers a principal whose role may not use method on path
// (a path outside the Kubernetes resources, as kube-apiserver's authorizer
// words a refusal of a non-resource URL).
func forbiddenPath(p api.Principal, method, path string) *api.Response {
	cause := fmt.Sprintf("User %q cannot %s path %q", p.ID, strings.ToLower(method), path)
	return session.Refuse(path, api.Refusal{Kind: api.Forbidden, Detail: cause})
}

func sessionNotFound(name string) *api.Response {
	return statusResponse(kube.NewNotFound("", "sessions", name))
}

// registryError answers an error of the registry on path.
func registryError(path, name string, err error) *api.Response {
	switch err {
	case ErrNotFound:
		return sessionNotFound(name)
	case ErrTooManyLoaded:
		return session.Refuse(path, api.Refusal{Kind: api.TooManyRequests, RetryAfter: 1})
	case ErrClosed:
		return session.Refuse(path, api.Refusal{Kind: api.Stopped, Detail: ErrClosed.Error()})
	}
	return session.Refuse(path, api.Refusal{Kind: api.Failed, Detail: err.Error()})
}

// rateLimited answers a client over its rate: etcd's "too many requests"
// on the gateway's paths, and elsewhere kube-apiserver's 429 for a request
// it sheds, with the time to wait (whole seconds, at least one, as
// Retry-After carries it) in Retry-After and details.retryAfterSeconds.
func rateLimited(path string, wait time.Duration) *api.Response {
	secs := max(1, int((wait+time.Second-1)/time.Second))
	return session.Refuse(path, api.Refusal{Kind: api.TooManyRequests, RetryAfter: secs})
}

// webSocketMethod: etcd's gateway serves its WebSockets (watch) as POSTs;
// Kubernetes watches are GETs, as the browser sends them.
func webSocketMethod(path string) string {
	if session.IsEtcdPath(path) {
		return http.MethodPost
	}
	return http.MethodGet
}

// webSocketStyle: a Kubernetes watch over a WebSocket is kube-apiserver's,
// one event a message with its trailing newline, and a watcher that stays
// behind is closed; etcd's watch stream sends each response without a
// newline and waits for a slow client, whose watchers catch up later.
func webSocketStyle(path string) httpapi.WebSocketStyle {
	if session.IsEtcdPath(path) {
		return httpapi.WebSocketStyle{}
	}
	return httpapi.WebSocketStyle{KeepNewline: true, CloseSlow: true}
}

// writeResponse writes a complete (not streaming) answer.
func writeResponse(w http.ResponseWriter, resp *api.Response) {
	h := w.Header()
	for k, v := range resp.Header {
		h[k] = v // api.Header keys are canonical; "Trailer:" keys are net/http's trailers
	}
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
}

// writeJSON answers v as JSON.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store") // it may carry credentials
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeStatus(w http.ResponseWriter, se *kube.StatusError) { writeResponse(w, statusResponse(se)) }

// success is kube-apiserver's Status for a completed operation that
// returns no object.
func success(name string) *kube.StatusError {
	return &kube.StatusError{Status: kube.Status{Kind: "Status", APIVersion: "v1", Status: "Success",
		Details: &kube.StatusDetails{Name: name, Kind: "sessions"}, Code: 200}}
}
