package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/clock"
)

// Step kinds: what a Reflector just did. Together they are the
// list-then-watch algorithm as a UI can show it.
const (
	StepList    = "list"    // a LIST page request (RV, limit, continue)
	StepListed  = "listed"  // a LIST page answered (items, list RV, continue)
	StepReplace = "replace" // the store was replaced with a complete state at RV
	// A relist found an object gone whose delete no watch delivered: its
	// handlers got a DeletedFinalStateUnknown; Key is the object's, RV the
	// last one the store knew it at.
	StepDeletedFinalStateUnknown = "deleted-final-state-unknown"
	StepWatch                    = "watch"              // a WATCH was opened from RV
	StepEvent                    = "event"              // ADDED/MODIFIED/DELETED applied; RV is the object's
	StepBookmark                 = "bookmark"           // a BOOKMARK advanced RV without an object change
	StepInitialEventsEnd         = "initial-events-end" // the watch-list's initial state is complete
	StepWatchClosed              = "watch-closed"       // the server ended the stream cleanly; resume from RV
	StepExpired                  = "expired"            // 410: RV no longer served; relist
	StepTooLarge                 = "too-large"          // 504: RV not reached yet; relist from ""
	StepFallback                 = "fallback"           // watch-list failed; use LIST then WATCH
	StepError                    = "error"              // something else failed; relist after backoff
	StepBackoff                  = "backoff"            // waiting before the next list-and-watch round
	StepDisconnected             = "disconnected"       // Disconnect closed the watch; waiting for Resume at RV
	StepResumed                  = "resumed"            // Resume: the next watch starts from RV
)

// Step is one observable step of a Reflector.
type Step struct {
	Seq     int
	Time    time.Time
	Kind    string
	RV      string // the resourceVersion this step used or produced
	Type    string // event type, for StepEvent
	Key     string // object key, for StepEvent
	Items   int    // items listed or replaced
	Initial bool   // event belongs to a watch-list's initial state (not progress)
	Request string // the request path and query, for StepList/StepWatch
	Wait    time.Duration
	Err     error
}

// MarshalJSON renders a step for a UI: times in RFC 3339, waits in
// milliseconds, errors as their message plus reason and code.
func (s Step) MarshalJSON() ([]byte, error) {
	type out struct {
		Seq     int    `json:"seq"`
		Time    string `json:"time"`
		Kind    string `json:"kind"`
		RV      string `json:"rv,omitempty"`
		Type    string `json:"type,omitempty"`
		Key     string `json:"key,omitempty"`
		Items   int    `json:"items,omitempty"`
		Initial bool   `json:"initial,omitempty"`
		Request string `json:"request,omitempty"`
		WaitMS  int64  `json:"waitMs,omitempty"`
		Error   string `json:"error,omitempty"`
		Reason  string `json:"reason,omitempty"`
		Code    int32  `json:"code,omitempty"`
	}
	o := out{Seq: s.Seq, Time: s.Time.UTC().Format(time.RFC3339Nano), Kind: s.Kind, RV: s.RV, Type: s.Type, Key: s.Key,
		Items: s.Items, Initial: s.Initial, Request: s.Request, WaitMS: s.Wait.Milliseconds()}
	if s.Err != nil {
		o.Error = s.Err.Error()
		if se, ok := AsStatus(s.Err); ok {
			o.Reason, o.Code = se.Reason(), se.Code()
		}
	}
	return json.Marshal(o)
}

func (s Step) String() string {
	out := fmt.Sprintf("#%d %s", s.Seq, s.Kind)
	if s.Type != "" {
		out += " " + s.Type
	}
	if s.Key != "" {
		out += " " + s.Key
	}
	if s.RV != "" {
		out += " rv=" + s.RV
	}
	if s.Kind == StepListed || s.Kind == StepReplace {
		out += " items=" + strconv.Itoa(s.Items)
	}
	if s.Initial {
		out += " (initial)"
	}
	if s.Request != "" {
		out += " " + s.Request
	}
	if s.Wait > 0 {
		out += " wait=" + s.Wait.String()
	}
	if s.Err != nil {
		out += " err=" + s.Err.Error()
	}
	return out
}

// Reflector keeps a Store in step with one resource the way client-go's
// reflector does: LIST (in pages of 500), Replace the store, then WATCH
// from the list's resourceVersion with bookmarks; when the server closes
// the stream cleanly it watches again from the last resourceVersion it
// saw; when that revision is gone (410 Expired/Gone, as HTTP error or as an
// in-stream ERROR event) it lists again. In WatchList mode the LIST is
// replaced by one watch with sendInitialEvents=true that streams the
// current state, marks its end with the k8s.io/initial-events-end bookmark
// and then carries on as the ordinary watch.
type Reflector struct {
	Name   string
	Client ResourceClient
	Store  *Store

	LabelSelector string
	FieldSelector string

	// PageSize is the LIST page size (client-go's pager: 500).
	PageSize int64
	// WatchList selects watch-list mode (default in client-go >= 0.35).
	// Set it before Run, or with SetWatchList while it runs.
	WatchList bool
	// Bookmarks asks for BOOKMARK events (allowWatchBookmarks), as
	// client-go's reflector always does. Set it before Run, or with
	// SetBookmarks while it runs.
	Bookmarks bool
	// MinWatchTimeout: each watch asks for timeoutSeconds in
	// [MinWatchTimeout, 2*MinWatchTimeout) (client-go: 5 minutes).
	MinWatchTimeout time.Duration

	// Backoff between list-and-watch rounds: BackoffInit doubling up to
	// BackoffMax, plus up to 100% jitter, reset after BackoffReset without
	// a round (client-go: 800ms, 30s, 2m).
	BackoffInit  time.Duration
	BackoffMax   time.Duration
	BackoffReset time.Duration

	// OnStep, if set, is called with every step, synchronously.
	OnStep func(Step)
	// MaxSteps bounds the step log kept for Steps (default 1000).
	MaxSteps int

	Clock clock.Clock
	Rand  func() float64

	mu            sync.Mutex
	lastSyncRV    string
	rvUnavailable bool
	paginated     bool
	seq           int
	steps         []Step
	backoffCur    time.Duration
	backoffAt     time.Time

	// Disconnect and Resume: held stops new watches until resumed is
	// closed; stopWatch ends the open one.
	held      bool
	resumed   chan struct{}
	stopWatch context.CancelFunc
}

// NewReflector returns a reflector for rc that fills store, with
// client-go's defaults (list+watch mode; set WatchList for watch-list).
func NewReflector(rc ResourceClient, store *Store) *Reflector {
	return &Reflector{
		Name:            rc.Resource().String(),
		Client:          rc,
		Store:           store,
		PageSize:        500,
		MinWatchTimeout: 5 * time.Minute,
		Bookmarks:       true,
		BackoffInit:     800 * time.Millisecond,
		BackoffMax:      30 * time.Second,
		BackoffReset:    2 * time.Minute,
		MaxSteps:        1000,
	}
}

func (r *Reflector) clock() clock.Clock {
	if r.Clock == nil {
		return clock.Real{}
	}
	return r.Clock
}

func (r *Reflector) rand() float64 {
	if r.Rand == nil {
		return randFloat()
	}
	return r.Rand()
}

func (r *Reflector) step(s Step) {
	r.mu.Lock()
	r.seq++
	s.Seq = r.seq
	s.Time = r.clock().Now()
	max := r.MaxSteps
	if max <= 0 {
		max = 1000
	}
	// Keep up to 2*max and trim to max at once: amortised O(1) per step.
	if len(r.steps) >= 2*max {
		r.steps = append(r.steps[:0:0], r.steps[len(r.steps)-max+1:]...)
	}
	r.steps = append(r.steps, s)
	cb := r.OnStep
	r.mu.Unlock()
	if cb != nil {
		cb(s)
	}
}

// Steps returns the most recent steps (at most MaxSteps), oldest first.
func (r *Reflector) Steps() []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	max := r.MaxSteps
	if max <= 0 {
		max = 1000
	}
	steps := r.steps
	if len(steps) > max {
		steps = steps[len(steps)-max:]
	}
	return append([]Step(nil), steps...)
}

// SetWatchList switches watch-list mode for the next list-and-watch round.
func (r *Reflector) SetWatchList(on bool) {
	r.mu.Lock()
	r.WatchList = on
	r.mu.Unlock()
}

// SetBookmarks switches allowWatchBookmarks for the next watch.
func (r *Reflector) SetBookmarks(on bool) {
	r.mu.Lock()
	r.Bookmarks = on
	r.mu.Unlock()
}

// Modes reports whether the next round uses watch-list and bookmarks.
func (r *Reflector) Modes() (watchList, bookmarks bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.WatchList, r.Bookmarks
}

// Disconnect closes the open watch, as a dropped connection would, and
// holds the reflector there (it opens no new watch) until Resume. It
// keeps its store and the resourceVersion it reached, so Resume shows
// whether a watch from that revision still works: no event is missed if
// it does, and a 410 makes it relist if that revision was compacted
// meanwhile. Calling it while disconnected does nothing.
func (r *Reflector) Disconnect() {
	r.mu.Lock()
	if r.held {
		r.mu.Unlock()
		return
	}
	r.held = true
	r.resumed = make(chan struct{})
	stop := r.stopWatch
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// Resume lets a disconnected reflector watch again, from the
// resourceVersion it had reached.
func (r *Reflector) Resume() {
	r.mu.Lock()
	if r.held {
		r.held = false
		close(r.resumed)
	}
	r.mu.Unlock()
}

// Disconnected reports whether the reflector is held by Disconnect.
func (r *Reflector) Disconnected() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// watchContext returns the context for the next watch, which Disconnect
// cancels. While the reflector is held it reports that once and waits for
// Resume (or the end of ctx, which it returns as the error).
func (r *Reflector) watchContext(ctx context.Context) (context.Context, context.CancelFunc, error) {
	reported := false
	for {
		r.mu.Lock()
		if !r.held {
			wctx, cancel := context.WithCancel(ctx)
			r.stopWatch = cancel
			r.mu.Unlock()
			if reported {
				r.step(Step{Kind: StepResumed, RV: r.LastSyncResourceVersion()})
			}
			return wctx, cancel, nil
		}
		resumed, rv := r.resumed, r.lastSyncRV
		r.mu.Unlock()
		if !reported {
			r.step(Step{Kind: StepDisconnected, RV: rv})
			reported = true
		}
		select {
		case <-resumed:
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		}
	}
}

// endWatch releases the open watch's context.
func (r *Reflector) endWatch(cancel context.CancelFunc) {
	r.mu.Lock()
	r.stopWatch = nil
	r.mu.Unlock()
	cancel()
}

// LastSyncResourceVersion is the revision the reflector has caught up to.
func (r *Reflector) LastSyncResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastSyncRV
}

func (r *Reflector) setLastSyncRV(rv string) {
	r.mu.Lock()
	r.lastSyncRV = rv
	r.mu.Unlock()
	if r.Store != nil {
		r.Store.SetResourceVersion(rv)
	}
}

func (r *Reflector) setRVUnavailable(v bool) {
	r.mu.Lock()
	r.rvUnavailable = v
	r.mu.Unlock()
}

// relistResourceVersion is the RV for the next LIST: "0" at first (any
// state the cache has), then the last synced RV (not older than it), or ""
// (the latest) when that RV turned out to be expired or too large.
func (r *Reflector) relistResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rvUnavailable {
		return ""
	}
	if r.lastSyncRV == "" {
		return "0"
	}
	return r.lastSyncRV
}

// rewatchResourceVersion is the RV a watch-list starts from.
func (r *Reflector) rewatchResourceVersion() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rvUnavailable {
		return ""
	}
	return r.lastSyncRV
}

// Run lists and watches until ctx ends, backing off between rounds.
func (r *Reflector) Run(ctx context.Context) {
	for ctx.Err() == nil {
		if err := r.ListAndWatch(ctx); err != nil && ctx.Err() == nil {
			r.step(Step{Kind: StepError, RV: r.LastSyncResourceVersion(), Err: err})
		}
		if ctx.Err() != nil {
			return
		}
		d := r.nextBackoff()
		r.step(Step{Kind: StepBackoff, RV: r.LastSyncResourceVersion(), Wait: d})
		if clock.Sleep(ctx, r.clock(), d) != nil {
			return
		}
	}
}

func (r *Reflector) nextBackoff() time.Duration {
	now := r.clock().Now()
	r.mu.Lock()
	if r.backoffCur == 0 || (r.BackoffReset > 0 && now.Sub(r.backoffAt) > r.BackoffReset) {
		r.backoffCur = r.BackoffInit
	} else {
		r.backoffCur *= 2
		if r.BackoffMax > 0 && r.backoffCur > r.BackoffMax {
			r.backoffCur = r.BackoffMax
		}
	}
	r.backoffAt = now
	cur := r.backoffCur
	r.mu.Unlock()
	return jitter(cur, 1.0, r.rand)
}

// ListAndWatch is one round: get a complete state (LIST, or the initial
// events of a watch-list), then follow the watch until it fails. A clean
// close of the stream is not a failure: the watch is reopened from the
// last resourceVersion. It returns nil when the round ended in a way that
// calls for a relist (410, other watch errors) and an error when the list
// itself failed.
func (r *Reflector) ListAndWatch(ctx context.Context) error {
	var w *Watcher
	var cancel context.CancelFunc
	if watchList, _ := r.Modes(); watchList {
		var err error
		w, cancel, err = r.watchList(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			r.step(Step{Kind: StepFallback, RV: r.LastSyncResourceVersion(), Err: err})
			w = nil
		} else if w == nil {
			return nil // ctx ended
		}
	}
	if w == nil {
		if err := r.list(ctx); err != nil {
			return err
		}
	}
	return r.watch(ctx, w, cancel)
}

func (r *Reflector) baseOptions() ListOptions {
	return ListOptions{LabelSelector: r.LabelSelector, FieldSelector: r.FieldSelector}
}

func (r *Reflector) request(opts ListOptions, watch bool) string {
	q := opts.Query()
	if watch {
		q.Set("watch", "true")
	}
	p := r.Client.Resource().Path(r.Client.NamespaceName(), "")
	if enc := q.Encode(); enc != "" {
		p += "?" + enc
	}
	return p
}

// list fetches a complete state in pages and replaces the store with it.
func (r *Reflector) list(ctx context.Context) error {
	opts := r.baseOptions()
	opts.ResourceVersion = r.relistResourceVersion()
	items, rv, err := r.pagedList(ctx, opts)
	if err != nil && (isExpired(err) || IsTooLargeResourceVersion(err)) {
		kind := StepExpired
		if IsTooLargeResourceVersion(err) {
			kind = StepTooLarge
		}
		r.step(Step{Kind: kind, RV: opts.ResourceVersion, Err: err})
		r.setRVUnavailable(true)
		opts.ResourceVersion = r.relistResourceVersion()
		items, rv, err = r.pagedList(ctx, opts)
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", r.Name, err)
	}
	r.replace(items, rv)
	return nil
}

// replace fills the store with a complete state at rv and reports it,
// then each delete it could only infer (DeletedFinalStateUnknown).
func (r *Reflector) replace(objs []Object, rv string) {
	r.setRVUnavailable(false)
	gone := r.Store.Replace(objs, rv)
	r.setLastSyncRV(rv)
	r.step(Step{Kind: StepReplace, RV: rv, Items: len(objs)})
	for _, d := range gone {
		r.step(Step{Kind: StepDeletedFinalStateUnknown, Key: d.Key, RV: d.Obj.ResourceVersion()})
	}
}

// pagedList is client-go's pager: limit=PageSize unless the RV is a
// specific revision (a paged list at "N" would mean Exact N and could be
// 410; unpaged it means not-older-than N and is served from the cache).
// Continuation pages drop RV and RVM; a continuation that expired falls
// back to one unpaged list at the requested RV.
func (r *Reflector) pagedList(ctx context.Context, opts ListOptions) ([]Object, string, error) {
	pageSize := r.PageSize
	r.mu.Lock()
	paginated := r.paginated
	r.mu.Unlock()
	if !paginated && opts.ResourceVersion != "" && opts.ResourceVersion != "0" {
		pageSize = 0
	}
	requestedRV, requestedRVM := opts.ResourceVersion, opts.ResourceVersionMatch
	opts.Limit = pageSize
	var items []Object
	for {
		r.step(Step{Kind: StepList, RV: opts.ResourceVersion, Request: r.request(opts, false)})
		page, err := r.Client.List(ctx, opts)
		if err != nil {
			if !IsResourceExpired(err) || opts.Continue == "" {
				return nil, "", err
			}
			r.step(Step{Kind: StepExpired, RV: requestedRV, Err: err})
			opts.Limit, opts.Continue = 0, ""
			opts.ResourceVersion, opts.ResourceVersionMatch = requestedRV, requestedRVM
			r.step(Step{Kind: StepList, RV: opts.ResourceVersion, Request: r.request(opts, false)})
			page, err = r.Client.List(ctx, opts)
			if err != nil {
				return nil, "", err
			}
			r.step(Step{Kind: StepListed, RV: page.ResourceVersion, Items: len(page.Items)})
			return page.Items, page.ResourceVersion, nil
		}
		r.step(Step{Kind: StepListed, RV: page.ResourceVersion, Items: len(page.Items)})
		items = append(items, page.Items...)
		if page.Continue == "" {
			return items, page.ResourceVersion, nil
		}
		if requestedRV == "0" {
			// The server paginated an RV="0" list; keep paging later
			// relists too, as client-go does.
			r.mu.Lock()
			r.paginated = true
			r.mu.Unlock()
		}
		opts.Continue = page.Continue
		opts.ResourceVersion, opts.ResourceVersionMatch = "", ""
	}
}

func (r *Reflector) watchTimeout() *int64 {
	min := r.MinWatchTimeout
	if min <= 0 {
		min = 5 * time.Minute
	}
	s := int64(min.Seconds() * (r.rand() + 1.0))
	if s < 1 {
		s = 1
	}
	return &s
}

var errVeryShortWatch = errors.New("very short watch: Unexpected watch close - watch lasted less than a second and no items received")

// watch follows the stream w (or new watches from the last RV) until one
// fails. Clean closes reopen the watch; failures end the round. cancel
// releases w's context.
func (r *Reflector) watch(ctx context.Context, w *Watcher, cancel context.CancelFunc) error {
	// A watch is timed from its request, as client-go's: how long it
	// lasted must not depend on when this goroutine got to its stream.
	start := r.clock().Now()
	for ctx.Err() == nil {
		if w == nil {
			wctx, wcancel, err := r.watchContext(ctx)
			if err != nil {
				return nil
			}
			cancel = wcancel
			_, bookmarks := r.Modes()
			opts := r.baseOptions()
			opts.ResourceVersion = r.LastSyncResourceVersion()
			opts.AllowWatchBookmarks = bookmarks
			opts.TimeoutSeconds = r.watchTimeout()
			req := r.request(opts, true)
			start = r.clock().Now()
			w, err = r.Client.Watch(wctx, opts)
			if err != nil {
				r.endWatch(cancel)
				if ctx.Err() != nil {
					return nil
				}
				if r.Disconnected() {
					continue
				}
				if IsTooManyRequests(err) {
					r.step(Step{Kind: StepError, RV: opts.ResourceVersion, Request: req, Err: err})
					d := r.nextBackoff()
					r.step(Step{Kind: StepBackoff, Wait: d})
					if clock.Sleep(ctx, r.clock(), d) != nil {
						return nil
					}
					continue
				}
				// Reported here; the round ends and Run relists.
				r.noteWatchFailure(opts.ResourceVersion, err)
				return nil
			}
			r.step(Step{Kind: StepWatch, RV: opts.ResourceVersion, Request: req})
		}
		_, _, err := r.handleWatch(ctx, w, start, nil)
		w.Stop()
		w = nil
		r.endWatch(cancel)
		if ctx.Err() != nil {
			return nil
		}
		if r.Disconnected() {
			continue // watchContext reports it and waits for Resume
		}
		if err != nil {
			if IsTooManyRequests(err) {
				// Overloaded server: back off, then watch again from
				// the same RV (no relist).
				r.step(Step{Kind: StepError, RV: r.LastSyncResourceVersion(), Err: err})
				d := r.nextBackoff()
				r.step(Step{Kind: StepBackoff, Wait: d})
				if clock.Sleep(ctx, r.clock(), d) != nil {
					return nil
				}
				continue
			}
			r.noteWatchFailure(r.LastSyncResourceVersion(), err)
			return nil
		}
		r.step(Step{Kind: StepWatchClosed, RV: r.LastSyncResourceVersion()})
	}
	if cancel != nil {
		r.endWatch(cancel)
	}
	return nil
}

func (r *Reflector) noteWatchFailure(rv string, err error) {
	switch {
	case isExpired(err):
		r.step(Step{Kind: StepExpired, RV: rv, Err: err})
	case IsTooLargeResourceVersion(err):
		r.step(Step{Kind: StepTooLarge, RV: rv, Err: err})
	default:
		r.step(Step{Kind: StepError, RV: rv, Err: err})
	}
}

// handleWatch applies w's events. With initial != nil it is collecting a
// watch-list's initial state into that map and returns at the
// initial-events-end bookmark with its RV; otherwise events go to the store
// and advance the last synced RV. It returns nil when the server closed
// the stream cleanly.
func (r *Reflector) handleWatch(ctx context.Context, w *Watcher, start time.Time, initial map[string]Object) (string, bool, error) {
	count := 0
	for {
		var ev Event
		var ok bool
		select {
		case <-ctx.Done():
			return "", false, ctx.Err()
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			if err := w.Err(); err != nil {
				return "", false, err
			}
			if count == 0 && r.clock().Now().Sub(start) < time.Second {
				return "", false, errVeryShortWatch
			}
			return "", false, nil
		}
		rv := ev.Object.ResourceVersion()
		switch ev.Type {
		case Error:
			return "", false, ev.Err
		case Bookmark:
			if initial != nil && ev.IsInitialEventsEnd() {
				r.step(Step{Kind: StepInitialEventsEnd, RV: rv, Items: len(initial)})
				return rv, true, nil
			}
			if initial == nil && rv != "" {
				r.setLastSyncRV(rv)
			}
			r.step(Step{Kind: StepBookmark, RV: rv, Initial: initial != nil})
			count++
			continue
		case Added, Modified, Deleted:
			if initial != nil {
				if ev.Type == Deleted {
					delete(initial, ev.Object.Key())
				} else {
					initial[ev.Object.Key()] = ev.Object
				}
			} else {
				switch ev.Type {
				case Added:
					r.Store.Add(ev.Object)
				case Modified:
					r.Store.Update(ev.Object)
				case Deleted:
					r.Store.Delete(ev.Object)
				}
			}
		default:
			r.step(Step{Kind: StepError, RV: rv, Err: fmt.Errorf("unexpected watch event type %q", ev.Type)})
			continue
		}
		count++
		// Initial events of a watch-list are not progress: they carry
		// each object's own (older, unordered) RV. The bookmark ends them.
		if initial == nil && rv != "" {
			r.setLastSyncRV(rv)
		}
		r.step(Step{Kind: StepEvent, Type: ev.Type, Key: ev.Object.Key(), RV: rv, Initial: initial != nil})
	}
}

// watchList gets the complete state through a watch with
// sendInitialEvents=true and returns that watch, positioned after the
// initial-events-end bookmark, for the caller to follow, with the function
// that releases its context. It retries (from "" when the RV expired or was
// too large) until it gets the bookmark; any other failure is returned so
// the caller can fall back to LIST. A nil watch and error: ctx ended.
func (r *Reflector) watchList(ctx context.Context) (*Watcher, context.CancelFunc, error) {
	for ctx.Err() == nil {
		wctx, cancel, err := r.watchContext(ctx)
		if err != nil {
			return nil, nil, nil
		}
		_, bookmarks := r.Modes()
		opts := r.baseOptions()
		opts.ResourceVersion = r.rewatchResourceVersion()
		opts.ResourceVersionMatch = "NotOlderThan"
		send := true
		opts.SendInitialEvents = &send
		opts.AllowWatchBookmarks = bookmarks
		opts.TimeoutSeconds = r.watchTimeout()
		req := r.request(opts, true)
		start := r.clock().Now()
		w, err := r.Client.Watch(wctx, opts)
		if err != nil {
			r.endWatch(cancel)
			if ctx.Err() != nil {
				return nil, nil, nil
			}
			if r.Disconnected() || r.retryWatchList(ctx, opts.ResourceVersion, err) {
				continue
			}
			return nil, nil, err
		}
		r.step(Step{Kind: StepWatch, RV: opts.ResourceVersion, Request: req})
		initial := map[string]Object{}
		rv, done, err := r.handleWatch(ctx, w, start, initial)
		if ctx.Err() != nil {
			w.Stop()
			r.endWatch(cancel)
			return nil, nil, nil
		}
		if r.Disconnected() {
			w.Stop()
			r.endWatch(cancel)
			continue // watchContext reports it and waits for Resume
		}
		if err != nil {
			w.Stop()
			r.endWatch(cancel)
			if r.retryWatchList(ctx, opts.ResourceVersion, err) {
				continue
			}
			return nil, nil, err
		}
		if !done {
			// The stream ended before the initial state was complete:
			// start the watch-list again.
			w.Stop()
			r.endWatch(cancel)
			r.step(Step{Kind: StepWatchClosed, RV: opts.ResourceVersion})
			continue
		}
		objs := make([]Object, 0, len(initial))
		for _, k := range sortedKeys(initial) {
			objs = append(objs, initial[k])
		}
		r.replace(objs, rv)
		return w, cancel, nil
	}
	return nil, nil, nil
}

// retryWatchList decides whether a failed watch-list is retried (after
// 429, or from "" after 410/too-large) rather than falling back to LIST.
func (r *Reflector) retryWatchList(ctx context.Context, rv string, err error) bool {
	switch {
	case IsTooManyRequests(err):
		r.step(Step{Kind: StepError, RV: rv, Err: err})
		d := r.nextBackoff()
		r.step(Step{Kind: StepBackoff, Wait: d})
		return clock.Sleep(ctx, r.clock(), d) == nil
	case isExpired(err) || IsTooLargeResourceVersion(err):
		r.noteWatchFailure(rv, err)
		r.setRVUnavailable(true)
		return true
	}
	return false
}
