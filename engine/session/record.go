package session

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/lesson"
)

// MaxRecordedKey bounds the etcd key and range end an exchange keeps.
const MaxRecordedKey = 256

// Protocols an exchange spoke.
const (
	ProtocolKubernetes = "kubernetes"
	ProtocolEtcd       = "etcd"
	ProtocolRvplay     = "rvplay" // the session's own control API
)

// Exchange is one request a session served and its answer: who sent it
// (the principal the transport authenticated, the client's User-Agent),
// what it asked, what it got, the resourceVersion it carried and the one
// it met, and for a stream how it started and ended. Lessons check what a
// learner achieved against these, whatever the learner used: the lab's
// clients, the console, kubectl or curl.
type Exchange struct {
	Seq       uint64
	Time      time.Time
	Duration  time.Duration // until the answer (a stream's head)
	Principal api.Principal
	UserAgent string
	Protocol  string
	Method    string
	Path      string
	Query     url.Values
	// ContentType is the request's (a patch's type, server-side apply's).
	ContentType string
	// KubectlCommand is a Kubernetes request's Kubectl-Command header, the
	// kubectl command that sent it ("kubectl rollout status"; KEP-859): what
	// tells a rollout status from a get that reads the same object.
	KubectlCommand string
	// Key, RangeEnd and RequestRevision are what an etcd request
	// addressed: its key and range end (decoded from base64, at most
	// MaxRecordedKey bytes) and the revision it asked for (a range's
	// revision, a watch's start_revision, a compaction's revision).
	Key, RangeEnd   string
	RequestRevision int64
	Status          int
	// Reason and Message are a failed Kubernetes answer's Status reason and
	// message, or an etcd error's message.
	Reason  string
	Message string
	// RVSent is the resourceVersion the request carried: ?resourceVersion
	// of a read or watch, metadata.resourceVersion of a written object (""
	// for an unconditional update), a delete's precondition.
	RVSent string
	// RV is the resourceVersion the request met: the answer's (the written
	// or read object's, the list's), or for a 409 Conflict the object's
	// current one, against which RVSent was stale. For the etcd gateway:
	// the answer's header.revision.
	RV string
	// Revision is the store's revision when the answer was made.
	Revision int64
	// Watch is set for a stream (a Kubernetes or etcd watch).
	Watch *WatchRecord
}

// Verb is what the exchange did: the lesson engine's reading of it
// (lesson.Exchange.Verb: get, list, watch, create, update, patch, apply,
// delete, deletecollection; etcd's range, put, deleterange, txn,
// compaction, watch, lease), or for the session's own API its method.
func (e *Exchange) Verb() string {
	le := lessonExchange(e)
	if v := le.Verb(); v != "" {
		return v
	}
	return strings.ToLower(e.Method)
}

// Target is the resource, namespace, name and subresource a Kubernetes
// exchange addressed (ok false for other paths).
func (e *Exchange) Target() (lesson.Target, bool) {
	le := lessonExchange(e)
	return le.Target()
}

// WatchRecord is how a stream went: how it started (the Exchange's query
// says from where), what it sent, how it ended.
type WatchRecord struct {
	_                [0]func() // not comparable
	kube             bool      // a Kubernetes watch; false: etcd's
	events           atomic.Int64
	bookmarks        atomic.Int64
	initialEventsEnd atomic.Bool

	mu sync.Mutex
	// lastFrame is the stream's last frame (a Kubernetes watch's but an
	// ERROR), whose resourceVersion (etcd: header.revision) is read into
	// lastRV when the record is read or the stream ends: a class's 200
	// watchers each get every event, and finding its resourceVersion for
	// each of them was most of what the record cost per frame
	// (BenchmarkWatchFrameRecord). Streams never change a frame they
	// returned.
	lastFrame []byte
	lastRV    int64
	// bookmarkRV is the last bookmark's (etcd: progress notification's)
	// resourceVersion, initialEventsEndRV a watch-list's
	// k8s.io/initial-events-end one's: a lesson quotes the revision a
	// bookmark carried, which a later event's is not. Bookmarks come
	// every few seconds, not with every event, so they are read as they
	// pass.
	bookmarkRV         int64
	initialEventsEndRV int64
	ended              bool
	endTime            time.Time
	endedBy            string
	errCode            int
	errMsg             string
	errReason          string
}

// How a stream ended.
const (
	EndedByServer = "server" // the server ended it: timeoutSeconds, after an ERROR, the session closing
	EndedByClient = "client" // the client went away or canceled
)

// WatchSummary is a WatchRecord read at one moment.
type WatchSummary struct {
	// Events counts ADDED, MODIFIED and DELETED events (etcd: responses
	// that carried events); Bookmarks the BOOKMARKs (etcd: progress
	// notifications).
	Events    int64
	Bookmarks int64
	// InitialEventsEnd: a watch-list's k8s.io/initial-events-end bookmark
	// was sent, at InitialEventsEndRV (the revision its state is complete
	// at).
	InitialEventsEnd   bool
	InitialEventsEndRV int64
	// LastRV is the resourceVersion (etcd: revision) of the last frame;
	// BookmarkRV of the last bookmark (etcd: progress notification).
	LastRV     int64
	BookmarkRV int64
	Ended      bool
	// EndedBy is EndedByServer or EndedByClient; EndTime when.
	EndedBy string
	EndTime time.Time
	// Error is the ERROR event that ended a Kubernetes watch (410 Expired,
	// ...), or an etcd watch's cancel reason (compaction).
	ErrorCode    int
	ErrorReason  string
	ErrorMessage string
}

// Summary reads the record.
func (w *WatchRecord) Summary() WatchSummary {
	s := WatchSummary{Events: w.events.Load(), Bookmarks: w.bookmarks.Load(),
		InitialEventsEnd: w.initialEventsEnd.Load()}
	w.mu.Lock()
	w.settleLocked()
	s.LastRV, s.BookmarkRV, s.InitialEventsEndRV = w.lastRV, w.bookmarkRV, w.initialEventsEndRV
	s.Ended, s.EndedBy, s.EndTime = w.ended, w.endedBy, w.endTime
	s.ErrorCode, s.ErrorReason, s.ErrorMessage = w.errCode, w.errReason, w.errMsg
	w.mu.Unlock()
	return s
}

func (w *WatchRecord) saw(f []byte) {
	w.mu.Lock()
	w.lastFrame = f
	w.mu.Unlock()
}

// sawBookmark notes a bookmark, the last frame too.
func (w *WatchRecord) sawBookmark(f []byte, initialEventsEnd bool) {
	rv := w.frameRV(f)
	w.mu.Lock()
	w.lastFrame = f
	if rv > 0 {
		w.bookmarkRV = rv
		if initialEventsEnd {
			w.initialEventsEndRV = rv
		}
	}
	w.mu.Unlock()
}

// settleLocked reads the last frame's resourceVersion into lastRV and
// lets the frame go.
func (w *WatchRecord) settleLocked() {
	if rv := w.frameRV(w.lastFrame); rv > 0 {
		w.lastRV = rv
	}
	w.lastFrame = nil
}

// frameRV is a frame's resourceVersion: the digits after its first
// "resourceVersion" (etcd's "revision"; more than 18, which no store's
// revision reaches, are none), or 0.
func (w *WatchRecord) frameRV(f []byte) int64 {
	key := revisionKey
	if w.kube {
		key = rvMember
	}
	i := bytes.Index(f, key)
	if i < 0 {
		return 0
	}
	var rv int64
	for n, c := range f[i+len(key):] {
		if c < '0' || c > '9' {
			break
		}
		if n == 18 {
			return 0
		}
		rv = rv*10 + int64(c-'0')
	}
	return rv
}

func (w *WatchRecord) end(by string, at time.Time) {
	w.mu.Lock()
	w.settleLocked()
	if !w.ended {
		w.ended, w.endedBy, w.endTime = true, by, at
	}
	w.mu.Unlock()
}

// MarshalJSON renders an exchange for /rvplay/v1/exchanges.
func (e Exchange) MarshalJSON() ([]byte, error) {
	type principal struct {
		_    [0]func() // not comparable: no equality code to link
		ID   string    `json:"id"`
		Name string    `json:"name,omitempty"`
		Role string    `json:"role"`
	}
	type watch struct {
		_                [0]func()
		Events           int64  `json:"events"`
		Bookmarks        int64  `json:"bookmarks"`
		InitialEventsEnd bool   `json:"initialEventsEnd,omitempty"`
		EndRV            string `json:"initialEventsEndResourceVersion,omitempty"`
		LastRV           string `json:"lastResourceVersion,omitempty"`
		BookmarkRV       string `json:"bookmarkResourceVersion,omitempty"`
		Ended            bool   `json:"ended"`
		EndedBy          string `json:"endedBy,omitempty"`
		EndTime          string `json:"endTime,omitempty"`
		ErrorCode        int    `json:"errorCode,omitempty"`
		ErrorReason      string `json:"errorReason,omitempty"`
		ErrorMessage     string `json:"errorMessage,omitempty"`
	}
	type out struct {
		_          [0]func() // not comparable: no equality code to link
		Seq        uint64    `json:"seq"`
		Time       string    `json:"time"`
		DurationMS float64   `json:"durationMs"`
		Principal  principal `json:"principal"`
		UserAgent  string    `json:"userAgent,omitempty"`
		Protocol   string    `json:"protocol"`
		Verb       string    `json:"verb"`
		Method     string    `json:"method"`
		Path       string    `json:"path"`
		Query      string    `json:"query,omitempty"`
		CType      string    `json:"contentType,omitempty"`
		KubectlCmd string    `json:"kubectlCommand,omitempty"`
		Key        string    `json:"key,omitempty"`
		RangeEnd   string    `json:"rangeEnd,omitempty"`
		ReqRev     int64     `json:"requestRevision,omitempty"`
		Status     int       `json:"status"`
		Reason     string    `json:"reason,omitempty"`
		Message    string    `json:"message,omitempty"`
		RVSent     string    `json:"resourceVersionSent,omitempty"`
		RV         string    `json:"resourceVersion,omitempty"`
		Revision   int64     `json:"revision"`
		Watch      *watch    `json:"watch,omitempty"`
	}
	o := out{Seq: e.Seq, Time: e.Time.UTC().Format(time.RFC3339Nano),
		DurationMS: float64(e.Duration) / float64(time.Millisecond),
		Principal:  principal{ID: e.Principal.ID, Name: e.Principal.Name, Role: e.Principal.Role.String()},
		UserAgent:  e.UserAgent, Protocol: e.Protocol, Verb: e.Verb(), Method: e.Method, Path: e.Path,
		Query: e.Query.Encode(), CType: e.ContentType, KubectlCmd: e.KubectlCommand, Key: e.Key, RangeEnd: e.RangeEnd, ReqRev: e.RequestRevision, Status: e.Status, Reason: e.Reason, Message: e.Message,
		RVSent: e.RVSent, RV: e.RV, Revision: e.Revision}
	if e.Watch != nil {
		s := e.Watch.Summary()
		w := &watch{Events: s.Events, Bookmarks: s.Bookmarks, InitialEventsEnd: s.InitialEventsEnd,
			Ended: s.Ended, EndedBy: s.EndedBy, ErrorCode: s.ErrorCode, ErrorReason: s.ErrorReason, ErrorMessage: s.ErrorMessage}
		w.LastRV, w.BookmarkRV, w.EndRV = revisionText(s.LastRV), revisionText(s.BookmarkRV), revisionText(s.InitialEventsEndRV)
		if s.Ended {
			w.EndTime = s.EndTime.UTC().Format(time.RFC3339Nano)
		}
		o.Watch = w
	}
	return json.Marshal(o)
}

// revisionText is a revision as a resourceVersion, "" for none (0).
func revisionText(rev int64) string {
	if rev <= 0 {
		return ""
	}
	return strconv.FormatInt(rev, 10)
}
