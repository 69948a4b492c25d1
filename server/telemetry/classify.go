package telemetry

import (
	"net/http"
	"strings"
)

// The protocols a request may speak, as the metrics label them.
const (
	ProtocolKube      = "kube"      // the Kubernetes API of a session
	ProtocolEtcd      = "etcd"      // the etcd v3 JSON gateway of a session (/v3/...)
	ProtocolRvplay    = "rvplay"    // a session's own control API (/rvplay/v1/...)
	ProtocolClassroom = "classroom" // sessions, joining, kubeconfigs
	ProtocolWeb       = "web"       // pages and static files
	ProtocolHealth    = "health"    // /healthz, /livez, /readyz
	ProtocolMetrics   = "metrics"   // /metrics
)

// etcdVerbs are the gateway's RPCs, by the last element of their path.
var etcdVerbs = map[string]bool{
	"range": true, "put": true, "deleterange": true, "txn": true, "compaction": true,
	"watch": true, "status": true, "alarm": true, "defragment": true,
}

// Classify names r for the metrics: its protocol, and its verb as that
// protocol's own metrics name it (kube-apiserver's GET, LIST, WATCH, POST,
// PUT, PATCH, APPLY, DELETE, DELETECOLLECTION; etcd's RPC, lower-case). The
// set of values is small and fixed, whatever paths clients send, so that
// no client can grow the metrics without bound.
func Classify(r *http.Request) (protocol, verb string) {
	p := r.URL.Path
	method := r.Method
	switch {
	case p == "/healthz" || p == "/livez" || p == "/readyz" ||
		strings.HasPrefix(p, "/healthz/") || strings.HasPrefix(p, "/livez/") || strings.HasPrefix(p, "/readyz/"):
		return ProtocolHealth, cleanMethod(method)
	case p == "/metrics":
		return ProtocolMetrics, cleanMethod(method)
	case p == "/sessions":
		return ProtocolClassroom, cleanMethod(method)
	case !strings.HasPrefix(p, "/s/"):
		return ProtocolWeb, cleanMethod(method)
	}
	// sub is the path within the session, "/" first (a slice of p, not a
	// copy: Classify runs more than once on every request).
	name, _, ok := strings.Cut(p[len("/s/"):], "/")
	sub := "/"
	if ok {
		sub = p[len("/s/")+len(name):]
	}
	switch {
	case !ok || sub == "/join" || sub == "/sign-in" || sub == "/kubeconfig" || sub == "/rvplay/v1/reset":
		return ProtocolClassroom, cleanMethod(method)
	case sub == "/" || sub == "/dashboard":
		return ProtocolWeb, cleanMethod(method)
	case sub == "/v3" || strings.HasPrefix(sub, "/v3/") || strings.HasPrefix(sub, "/v3beta/"):
		if v := sub[strings.LastIndexByte(sub, '/')+1:]; etcdVerbs[v] {
			return ProtocolEtcd, v
		}
		return ProtocolEtcd, "other"
	case strings.HasPrefix(sub, "/rvplay/"):
		return ProtocolRvplay, cleanMethod(method)
	}
	return ProtocolKube, kubeVerb(r, sub)
}

// cleanMethod keeps the methods HTTP defines and names the rest "other".
func cleanMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// kubeVerb is kube-apiserver's metrics verb of a request for path (within
// the session): the method, with a GET of a collection a LIST, a watch a
// WATCH, a server-side apply an APPLY and a DELETE of a collection a
// DELETECOLLECTION. Paths outside the resources (discovery, /version,
// /openapi) keep their method.
func kubeVerb(r *http.Request, path string) string {
	m := cleanMethod(r.Method)
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return m
	}
	watchPath := parts[0] == "watch"
	if watchPath {
		parts = parts[1:]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" && parts[2] != "status" && parts[2] != "finalize" {
		parts = parts[2:]
	}
	collection := len(parts) == 1
	switch m {
	case http.MethodGet:
		if watchPath || isWatch(r) {
			return "WATCH"
		}
		if collection {
			return "LIST"
		}
	case http.MethodPatch:
		if strings.HasPrefix(r.Header.Get("Content-Type"), "application/apply-patch") {
			return "APPLY"
		}
	case http.MethodDelete:
		if collection {
			return "DELETECOLLECTION"
		}
	}
	return m
}

// isWatch reports a watch asked for with ?watch=, which kube-apiserver
// reads as true unless it is "0" or "false".
func isWatch(r *http.Request) bool {
	v, ok := r.URL.Query()["watch"]
	if !ok || len(v) == 0 {
		return false
	}
	w := strings.ToLower(v[0])
	return w != "0" && w != "false"
}
