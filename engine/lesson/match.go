package lesson

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Match describes exchanges in the record. Every field that is set must
// hold; the zero Match matches any exchange.
type Match struct {
	// Who sent it: the lab's client name; a substring of the User-Agent
	// ("kubectl"); the principal's ID.
	Client    string `json:"client,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
	Principal string `json:"principal,omitempty"`
	// KubectlCommand is the kubectl command that sent it, exactly as real
	// kubectl's Kubectl-Command header names it ("kubectl rollout status").
	KubectlCommand string `json:"kubectlCommand,omitempty"`

	// API is "kube" or "etcd"; Verb as Exchange.Verb; Write: any of
	// create, update, patch, apply, delete (or etcd's put, deleterange,
	// txn).
	API   string `json:"api,omitempty"`
	Verb  string `json:"verb,omitempty"`
	Write bool   `json:"write,omitempty"`

	// What a Kubernetes request addressed ("-" for Subresource: none).
	Resource    string `json:"resource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	Subresource string `json:"subresource,omitempty"`

	// What an etcd request addressed: Key exactly, or any key under
	// KeyPrefix.
	Key       string `json:"key,omitempty"`
	KeyPrefix string `json:"keyPrefix,omitempty"`

	// The answer: an exact Status, or Success (2xx) / not; the Status
	// reason.
	Status  int    `json:"status,omitempty"`
	Success *bool  `json:"success,omitempty"`
	Reason  string `json:"reason,omitempty"`

	// Query parameters: "*" means set and not empty, "" means absent or
	// empty, anything else the exact value.
	Query map[string]string `json:"query,omitempty"`

	// SentResourceVersion: "none" (the written object carried none: an
	// unconditional write) or "some".
	SentResourceVersion string `json:"sentResourceVersion,omitempty"`

	// From, for a watch: where it started, relative to the same client's
	// earlier exchanges on the same path: "list" (its last list's
	// resourceVersion), "last" (where its previous watch got to: the
	// last event or bookmark it delivered), "item" (older than its last
	// list's resourceVersion: an item's, which replays history), "none"
	// (no resourceVersion, or "0").
	From string `json:"from,omitempty"`

	// PastRevision, for an etcd range: it read an earlier revision of
	// the store (revision > 0, below the current one) at which the key
	// existed.
	PastRevision bool `json:"pastRevision,omitempty"`

	// Found, for an etcd range: it found at least one key (counted in the
	// store at the revision it read, unless compacted since).
	Found bool `json:"found,omitempty"`

	// NoOp, for an update: it succeeded and answered the resourceVersion
	// it sent (nothing changed, no new revision).
	NoOp bool `json:"noOp,omitempty"`

	// Stale, for a get or list: it answered an object older than one an
	// earlier successful write in the record had already produced.
	Stale bool `json:"stale,omitempty"`

	// Watch conditions on what a watch delivered.
	Watch *WatchMatch `json:"watch,omitempty"`

	// Count (exchange predicate only): at least this many (default 1).
	Count int `json:"count,omitempty"`
}

// WatchMatch is a condition on a watch stream.
type WatchMatch struct {
	// Error: it ended with an ERROR of this code (410).
	Error int `json:"error,omitempty"`
	// Ended: the stream is over (or still open, when false).
	Ended *bool `json:"ended,omitempty"`
	// Events and Bookmarks: at least this many.
	Events    int `json:"events,omitempty"`
	Bookmarks int `json:"bookmarks,omitempty"`
	// InitialEventsEnd: the k8s.io/initial-events-end bookmark came (or not).
	InitialEventsEnd *bool `json:"initialEventsEnd,omitempty"`
}

func (m *Match) check() error {
	switch m.API {
	case "", "kube", "etcd", "control":
	default:
		return fmt.Errorf("api %q (kube, etcd)", m.API)
	}
	switch m.SentResourceVersion {
	case "", "none", "some":
	default:
		return fmt.Errorf("sentResourceVersion %q (none, some)", m.SentResourceVersion)
	}
	switch m.From {
	case "", "list", "last", "item", "none":
	default:
		return fmt.Errorf("from %q (list, last, item, none)", m.From)
	}
	if m.Count < 0 {
		return errors.New("count is not negative")
	}
	return nil
}

// matches reports whether st.Exchanges[i] matches m.
func (m *Match) matches(st *State, i int) bool {
	e := &st.Exchanges[i]
	if m.Client != "" && e.Client != m.Client {
		return false
	}
	if m.UserAgent != "" && !strings.Contains(strings.ToLower(e.UserAgent), strings.ToLower(m.UserAgent)) {
		return false
	}
	if m.Principal != "" && e.Principal != m.Principal {
		return false
	}
	if m.KubectlCommand != "" && e.KubectlCommand != m.KubectlCommand {
		return false
	}
	if m.API != "" && e.API() != m.API {
		return false
	}
	if m.Verb != "" && e.Verb() != m.Verb {
		return false
	}
	if m.Write {
		switch e.Verb() {
		case "create", "update", "patch", "apply", "delete", "deletecollection", "put", "deleterange", "txn":
		default:
			return false
		}
	}
	if m.Resource != "" || m.Namespace != "" || m.Name != "" || m.Subresource != "" {
		t, ok := e.Target()
		if !ok || (m.Resource != "" && t.Resource != m.Resource) || (m.Namespace != "" && t.Namespace != m.Namespace) ||
			(m.Name != "" && t.Name != m.Name) {
			return false
		}
		if (m.Subresource == "-" && t.Subresource != "") || (m.Subresource != "" && m.Subresource != "-" && t.Subresource != m.Subresource) {
			return false
		}
	}
	if m.Key != "" && e.Key != m.Key {
		return false
	}
	if m.KeyPrefix != "" && !strings.HasPrefix(e.Key, m.KeyPrefix) {
		return false
	}
	if m.Status != 0 && e.Status != m.Status {
		return false
	}
	if m.Success != nil && (e.Status >= 200 && e.Status < 300) != *m.Success {
		return false
	}
	if m.Reason != "" && e.Reason != m.Reason {
		return false
	}
	for k, want := range m.Query {
		got := e.Query.Get(k)
		switch want {
		case "*":
			if got == "" {
				return false
			}
		default:
			if got != want {
				return false
			}
		}
	}
	switch m.SentResourceVersion {
	case "none":
		if e.SentResourceVersion != "" && e.SentResourceVersion != "0" {
			return false
		}
	case "some":
		if e.SentResourceVersion == "" || e.SentResourceVersion == "0" {
			return false
		}
	}
	if m.From != "" && watchStart(st.Exchanges, i) != m.From {
		return false
	}
	if m.PastRevision && !readPastRevision(st, e) {
		return false
	}
	if m.Found && !rangeFound(st, e) {
		return false
	}
	if m.NoOp && !(e.Status == 200 && e.SentResourceVersion != "" && e.ResourceVersion == e.SentResourceVersion) {
		return false
	}
	if m.Stale && !staleRead(st.Exchanges, i) {
		return false
	}
	if m.Watch != nil && !m.Watch.matches(e.Watch) {
		return false
	}
	return true
}

func (w *WatchMatch) matches(r *WatchRecord) bool {
	if r == nil {
		return false
	}
	if w.Error != 0 && r.ErrorCode != w.Error {
		return false
	}
	if w.Ended != nil && r.Ended != *w.Ended {
		return false
	}
	if r.Events < w.Events || r.Bookmarks < w.Bookmarks {
		return false
	}
	if w.InitialEventsEnd != nil && r.InitialEventsEnd != *w.InitialEventsEnd {
		return false
	}
	return true
}

// watchStart classifies where the watch exchanges[i] started (see
// Match.From), or "" if it is no watch or nothing earlier explains it.
// An etcd watch counts from start_revision-1, the revision it resumes after.
func watchStart(exchanges []Exchange, i int) string {
	e := &exchanges[i]
	if e.Verb() != "watch" {
		return ""
	}
	rv := watchResourceVersion(e)
	if rv <= 0 {
		return "none"
	}
	who, path := e.Who(), e.Path
	var prevWatch, prevList *Exchange
	for j := i - 1; j >= 0 && (prevWatch == nil || prevList == nil); j-- {
		p := &exchanges[j]
		if p.Who() != who || p.Path != path || p.Status < 200 || p.Status > 299 {
			continue
		}
		switch p.Verb() {
		case "watch":
			if prevWatch == nil && prevList == nil {
				prevWatch = p
			}
		case "list", "range":
			if prevList == nil {
				prevList = p
			}
		}
	}
	if prevWatch != nil && prevWatch.Watch != nil {
		last := parseRV(prevWatch.Watch.LastResourceVersion)
		if last == 0 {
			last = watchResourceVersion(prevWatch)
		}
		if rv == last && last > 0 {
			return "last"
		}
	}
	if prevList != nil {
		listRV := parseRV(prevList.ResourceVersion)
		switch {
		case rv == listRV:
			return "list"
		case rv < listRV:
			return "item"
		}
	}
	return ""
}

// watchResourceVersion is the revision a watch resumes after.
func watchResourceVersion(e *Exchange) int64 {
	if e.API() == "etcd" {
		if e.Revision > 0 {
			return e.Revision - 1
		}
		return 0
	}
	return parseRV(e.Query.Get("resourceVersion"))
}

func parseRV(s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// staleRead: a successful get or list answered a resourceVersion older
// than an earlier successful write to the same object (or, for a list,
// to any object on its path) had produced.
func staleRead(exchanges []Exchange, i int) bool {
	e := &exchanges[i]
	v := e.Verb()
	if (v != "get" && v != "list") || e.Status != 200 {
		return false
	}
	got := parseRV(e.ResourceVersion)
	t, ok := e.Target()
	if !ok || got == 0 {
		return false
	}
	for j := 0; j < i; j++ {
		w := &exchanges[j]
		switch w.Verb() {
		case "create", "update", "patch", "apply":
		default:
			continue
		}
		if w.Status < 200 || w.Status > 299 {
			continue
		}
		wt, _ := w.Target()
		if wt.Resource != t.Resource || (t.Namespace != "" && wt.Namespace != t.Namespace) || (t.Name != "" && wt.Name != t.Name) {
			continue
		}
		if parseRV(w.ResourceVersion) > got {
			return true
		}
	}
	return false
}
