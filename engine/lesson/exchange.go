package lesson

import (
	"net/url"
	"strings"
	"time"
)

// Exchange is one request a session answered and what came of it, as the
// session's record keeps it (GET /rvplay/v1/exchanges lists them). The
// fields are the facts a predicate or a misconception detector needs; the
// record fills them from the request and the answer, and for a watch keeps
// counting while its stream runs.
type Exchange struct {
	// Seq orders the record: a later request has a larger Seq.
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// Principal is the ID of who sent it (api.Principal.ID); "" offline
	// and on open sessions.
	Principal string `json:"principal,omitempty"`
	// Client names the lab's client that sent it ("A", "B", "R",
	// "console", "controller"); "" for anything else (kubectl, curl).
	Client    string `json:"client,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`

	Method      string     `json:"method"`
	Path        string     `json:"path"`
	Query       url.Values `json:"query,omitempty"`
	ContentType string     `json:"contentType,omitempty"`
	// KubectlCommand is the request's Kubectl-Command header, the kubectl
	// command that sent it ("kubectl rollout status").
	KubectlCommand string `json:"kubectlCommand,omitempty"`

	Status int `json:"status"`
	// Reason and Message are those of the Kubernetes Status answered (or of
	// the ERROR event that ended a watch); for the etcd gateway, Message
	// is etcd's error.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`

	// SentResourceVersion is metadata.resourceVersion of the object a
	// write sent ("" when the body had none).
	SentResourceVersion string `json:"sentResourceVersion,omitempty"`
	// ResourceVersion is the one answered: the object's, or the list's
	// metadata.resourceVersion. For the etcd gateway: header.revision.
	ResourceVersion string `json:"resourceVersion,omitempty"`

	// Key, RangeEnd and Revision are what an etcd request addressed (the
	// key decoded from base64; Revision is a range's "revision", the
	// start_revision of a watch, the revision of a compaction).
	Key      string `json:"key,omitempty"`
	RangeEnd string `json:"rangeEnd,omitempty"`
	Revision int64  `json:"revision,omitempty"`

	// Watch is set on a watch (Kubernetes ?watch=true or etcd /v3/watch).
	Watch *WatchRecord `json:"watch,omitempty"`
}

// WatchRecord is what a watch stream delivered, up to now.
type WatchRecord struct {
	Events    int `json:"events"`
	Bookmarks int `json:"bookmarks"`
	// InitialEventsEnd: the k8s.io/initial-events-end bookmark arrived.
	InitialEventsEnd bool `json:"initialEventsEnd,omitempty"`
	// LastResourceVersion is the resourceVersion of the last event or
	// bookmark (the one a client resumes from).
	LastResourceVersion string `json:"lastResourceVersion,omitempty"`
	Ended               bool   `json:"ended,omitempty"`
	// ErrorCode and ErrorReason are those of the ERROR event (Kubernetes)
	// or the compaction cancel (etcd: 410, "Expired") that ended it.
	ErrorCode   int    `json:"errorCode,omitempty"`
	ErrorReason string `json:"errorReason,omitempty"`
}

// API says which protocol an exchange spoke: "etcd", "control" or "kube".
func (e *Exchange) API() string {
	switch {
	case e.Path == "/v3" || strings.HasPrefix(e.Path, "/v3/") || strings.HasPrefix(e.Path, "/v3beta/"):
		return "etcd"
	case strings.HasPrefix(e.Path, "/rvplay/"):
		return "control"
	}
	return "kube"
}

// Who identifies the client for "the same client" rules: the lab's
// client name, else the user agent, each of one principal (on a class's
// session every student's lab has its own client B and reflector I).
func (e *Exchange) Who() string {
	if e.Client != "" {
		return "client:" + e.Principal + "|" + e.Client
	}
	return "agent:" + e.Principal + "|" + e.UserAgent
}

// Target is a Kubernetes request's resource, namespace, name and
// subresource, read from its path.
type Target struct {
	Group, Resource, Namespace, Name, Subresource string
}

// Target parses the path of a Kubernetes request; ok is false for paths
// that name no resource (discovery, etcd, control).
func (e *Exchange) Target() (t Target, ok bool) {
	if e.API() != "kube" {
		return t, false
	}
	parts := strings.Split(strings.Trim(e.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		t.Group = parts[1]
		parts = parts[3:]
	default:
		return t, false
	}
	if len(parts) >= 1 && parts[0] == "watch" { // the deprecated /watch/ paths
		parts = parts[1:]
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		t.Namespace = parts[1]
		parts = parts[2:]
	} else if len(parts) == 2 && parts[0] == "namespaces" {
		// the namespace object itself
		t.Resource, t.Name = "namespaces", parts[1]
		return t, true
	}
	if len(parts) == 0 {
		return t, false
	}
	t.Resource = parts[0]
	if len(parts) >= 2 {
		t.Name = parts[1]
	}
	if len(parts) >= 3 {
		t.Subresource = parts[2]
	}
	return t, true
}

// Verb is the Kubernetes verb (get, list, watch, create, update, patch,
// apply, delete, deletecollection) or the etcd operation (range, put,
// deleterange, txn, compaction, watch, lease) of the exchange.
func (e *Exchange) Verb() string {
	switch e.API() {
	case "etcd":
		p := strings.TrimPrefix(strings.TrimPrefix(e.Path, "/v3beta"), "/v3")
		switch p {
		case "/kv/range":
			return "range"
		case "/kv/put":
			return "put"
		case "/kv/deleterange":
			return "deleterange"
		case "/kv/txn":
			return "txn"
		case "/kv/compaction":
			return "compaction"
		case "/watch":
			return "watch"
		}
		if strings.HasPrefix(p, "/lease") {
			return "lease"
		}
		return ""
	case "control":
		return ""
	}
	t, _ := e.Target()
	switch e.Method {
	case "GET":
		if w := e.Query.Get("watch"); w == "true" || w == "1" || e.Watch != nil {
			return "watch"
		}
		if t.Name == "" {
			return "list"
		}
		return "get"
	case "POST":
		return "create"
	case "PUT":
		return "update"
	case "PATCH":
		if strings.HasPrefix(e.ContentType, "application/apply-patch") {
			return "apply"
		}
		return "patch"
	case "DELETE":
		if t.Name == "" {
			return "deletecollection"
		}
		return "delete"
	}
	return ""
}
