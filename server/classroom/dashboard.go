package classroom

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/server/etcdstore"
)

// ClassPath is what the teacher's dashboard shows of a class (GET, the
// teacher's): everyone's presence, lesson progress and watches, the
// class's progress per lesson step and the misconceptions the detectors
// found, counted and named. The dashboard's page (/s/<id>/dashboard) polls
// it; the roster also comes live on the session channel.
const ClassPath = "/rvplay/v1/class"

// DashboardPath is the teacher's dashboard page, under the session.
const DashboardPath = "/dashboard"

// Class is the answer of GET ClassPath.
type Class struct {
	Kind    string `json:"kind"`
	Session string `json:"session"`
	// Revision and CompactRevision are the store's (0: never compacted):
	// a watch whose last resourceVersion is below Revision is behind.
	Revision        int64 `json:"revision"`
	CompactRevision int64 `json:"compactRevision"`
	// Now is the server's time of the answer: how long someone has been
	// on a step (Person.Since) is reckoned against it, not against the
	// teacher's computer's clock.
	Now time.Time `json:"now"`
	// ClusterCompaction is set when the session is stored on an etcd
	// cluster, whose compaction is the whole cluster's, an operator's: the
	// dashboard's compaction button says so instead of compacting.
	ClusterCompaction bool `json:"clusterCompaction,omitempty"`
	// Open is set for an open session (named on the server's command
	// line), which nobody joins: the dashboard offers no new join code.
	Open     bool             `json:"open,omitempty"`
	Settings session.Settings `json:"settings"`
	Push     *Push            `json:"push"`
	People   []ClassPerson    `json:"people"`
	Lessons  []ClassLesson    `json:"lessons"`
	// Detectors are the lesson engine's, in order: what Findings count.
	Detectors []*lesson.Detector `json:"detectors"`
	// Record says which exchanges the session's record still holds (its
	// sequence numbers); older ones were dropped.
	Record struct {
		Oldest uint64 `json:"oldest"`
		Last   uint64 `json:"last"`
	} `json:"record"`
}

// ClassPerson is one person on the dashboard.
type ClassPerson struct {
	Person
	// Passed lists the steps passed, per lesson.
	Passed map[string][]int `json:"passed"`
	// Findings counts what the detectors found in their exchanges, per
	// detector (misconceptions and practices alike).
	Findings map[string]int `json:"findings"`
	// Watches are their watches the record holds: every open one, and the
	// last few that ended, newest first.
	Watches []ClassWatch `json:"watches"`
}

// ClassWatch is one watch, from the session's record of exchanges and the
// watch's own record.
type ClassWatch struct {
	Seq      uint64    `json:"seq"`
	Started  time.Time `json:"started"`
	Protocol string    `json:"protocol"`
	// Client is the lab's client that watches ("R", "I", ...), else the
	// User-Agent's product (kubectl, ...).
	Client string `json:"client,omitempty"`
	Path   string `json:"path"`
	// From is where it started: the resourceVersion it sent, or etcd's
	// start_revision.
	From string `json:"from,omitempty"`
	// LastResourceVersion is the resourceVersion (etcd: revision) of the
	// last event or bookmark it got, or before any, the one it started
	// from (0: from "any", nothing yet); Behind how far that is below the
	// store's revision, for an open watch.
	LastResourceVersion int64  `json:"lastResourceVersion"`
	Behind              int64  `json:"behind"`
	Events              int64  `json:"events"`
	Bookmarks           int64  `json:"bookmarks"`
	Ended               bool   `json:"ended"`
	EndedBy             string `json:"endedBy,omitempty"`
	ErrorCode           int    `json:"errorCode,omitempty"`
	ErrorReason         string `json:"errorReason,omitempty"`
}

// ClassLesson is one lesson, class-wide.
type ClassLesson struct {
	Slug   string `json:"slug"`
	Number int    `json:"number"`
	// Here counts the people whose browser is in the lesson now.
	Here  int         `json:"here"`
	Steps []ClassStep `json:"steps"`
	// Findings counts what the detectors found while people were in the
	// lesson, per detector.
	Findings map[string]int `json:"findings"`
}

// ClassStep is one step of a lesson: how many passed it.
type ClassStep struct {
	N      int    `json:"n"`
	ID     string `json:"id"`
	Passed int    `json:"passed"`
}

// maxEndedWatches is how many ended watches of a person the dashboard
// shows; maxOpenWatches bounds the open ones.
const (
	maxEndedWatches = 3
	maxOpenWatches  = 20
)

func (h *Handler) serveClass(w http.ResponseWriter, r *http.Request, info Session) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeStatus(w, kube.NewMethodNotSupported("rvplay", "class", strings.ToLower(r.Method)))
		return
	}
	c, ok := h.Registry.class(info.Name)
	if !ok {
		writeResponse(w, sessionNotFound(info.Name))
		return
	}
	l, release, err := h.Registry.Acquire(r.Context(), info.Name)
	if err != nil {
		writeResponse(w, registryError(ClassPath, info.Name, err))
		return
	}
	defer release()
	s := l.Session()
	h.Registry.tallyFindings(info.Name, s, false)
	findings, err := h.Registry.store.ClassFindingCounts(info.Name)
	if err != nil {
		writeResponse(w, registryError(ClassPath, info.Name, err))
		return
	}
	out := Class{Kind: "Class", Session: info.Name, Revision: s.Store.Rev(), CompactRevision: max(0, s.Store.CompactRev()), Now: c.now(),
		Open: !info.Guarded, Settings: s.Settings(), Push: c.lastPush(), Detectors: lesson.Detectors}
	out.Record.Oldest, out.Record.Last = s.Record.Oldest(), s.Record.Last()
	_, out.ClusterCompaction = s.Store.(*etcdstore.Store)

	people := map[string]*ClassPerson{}
	for _, p := range c.roster() {
		out.People = append(out.People, ClassPerson{Person: p, Passed: map[string][]int{}, Findings: map[string]int{}, Watches: []ClassWatch{}})
	}
	for i := range out.People {
		people[out.People[i].ID] = &out.People[i]
	}
	var progress []lesson.Progress
	if s.Lessons != nil {
		progress = s.Lessons.Progress("")
	}
	for _, pr := range progress {
		if p := people[pr.Principal]; p != nil {
			p.Passed[pr.Lesson] = pr.Steps
		}
	}
	byLesson := map[string]map[string]int{}
	for _, f := range findings {
		if p := people[f.Principal]; p != nil {
			p.Findings[f.Detector] += f.N
		}
		if byLesson[f.Lesson] == nil {
			byLesson[f.Lesson] = map[string]int{}
		}
		byLesson[f.Lesson][f.Detector] += f.N
	}
	addWatches(people, s, out.Revision)
	out.Lessons = classLessons(h.Registry.opts.Session.Lessons, out.People, progress, byLesson)
	writeJSON(w, http.StatusOK, out)
}

// addWatches adds each person's watches, from their own exchanges in the
// session's record.
func addWatches(people map[string]*ClassPerson, s *session.Session, rev int64) {
	for id, p := range people {
		record, _ := s.Record.Since(0, session.Filter{Principal: id, Watches: true}, 0)
		addWatchesOf(p, record, rev)
	}
}

// addWatchesOf adds p's open watches and the last few that ended, newest
// first, from record (theirs, oldest first).
func addWatchesOf(p *ClassPerson, record []session.Exchange, rev int64) {
	ended := 0
	for i := len(record) - 1; i >= 0; i-- {
		e := &record[i]
		sum := e.Watch.Summary()
		if sum.Ended && ended >= maxEndedWatches || !sum.Ended && len(p.Watches) >= maxOpenWatches+maxEndedWatches {
			continue
		}
		if sum.Ended {
			ended++
		}
		cw := ClassWatch{Seq: e.Seq, Started: e.Time, Protocol: e.Protocol, Client: clientOf(e.UserAgent), Path: e.Path,
			From: e.RVSent, LastResourceVersion: sum.LastRV, Events: sum.Events, Bookmarks: sum.Bookmarks,
			Ended: sum.Ended, EndedBy: sum.EndedBy, ErrorCode: sum.ErrorCode, ErrorReason: sum.ErrorReason}
		// A watch has seen the store up to where it started (a Kubernetes
		// watch from resourceVersion N, an etcd one from start_revision
		// N+1) until its first event or bookmark moves it.
		from, _ := strconv.ParseInt(e.RVSent, 10, 64)
		if e.Protocol == session.ProtocolEtcd {
			from = 0
			if e.RequestRevision > 0 {
				cw.From, from = strconv.FormatInt(e.RequestRevision, 10), e.RequestRevision-1
			}
		}
		if cw.LastResourceVersion == 0 && from > 0 {
			cw.LastResourceVersion = from
		}
		if !sum.Ended && cw.LastResourceVersion > 0 && cw.LastResourceVersion < rev {
			cw.Behind = rev - cw.LastResourceVersion
		}
		p.Watches = append(p.Watches, cw)
	}
}

// clientOf names a client by its User-Agent: the lab's client label, the
// browser (the lab's own panels: its etcd view, its watch panel), else the
// product ("kubectl/v1.32.0 (linux/amd64) ..." is kubectl).
func clientOf(ua string) string {
	if label, ok := api.LabClient(ua); ok {
		return label
	}
	product, _, _ := strings.Cut(ua, "/")
	if product == "Mozilla" {
		return "browser"
	}
	if len(product) > 32 {
		product = product[:32]
	}
	return product
}

// classLessons counts, per lesson of the catalog, who is in it, who passed
// each step, and what was found in it.
func classLessons(catalog *lesson.Catalog, people []ClassPerson, progress []lesson.Progress, found map[string]map[string]int) []ClassLesson {
	out := []ClassLesson{}
	if catalog == nil {
		return out
	}
	here := map[string]int{}
	for _, p := range people {
		if p.Connections > 0 && p.Role == api.RoleStudent.String() && p.Lesson != "" {
			here[p.Lesson]++
		}
	}
	passed := map[string]map[int]int{}
	for _, pr := range progress {
		if passed[pr.Lesson] == nil {
			passed[pr.Lesson] = map[int]int{}
		}
		for _, n := range pr.Steps {
			passed[pr.Lesson][n]++
		}
	}
	for _, l := range catalog.Lessons() {
		cl := ClassLesson{Slug: l.Slug, Number: l.Number, Here: here[l.Slug], Findings: found[l.Slug]}
		if cl.Findings == nil {
			cl.Findings = map[string]int{}
		}
		for i, st := range l.Steps {
			cl.Steps = append(cl.Steps, ClassStep{N: i + 1, ID: st.ID, Passed: passed[l.Slug][i+1]})
		}
		out = append(out, cl)
	}
	return out
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
