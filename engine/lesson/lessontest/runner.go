// Package lessontest replays lessons against an in-process session (its
// record of exchanges, settings, deployment controller and lesson routes)
// with the lab around it: the console and the lab's named clients, on a
// fake clock. Tests of the lessons (web/lessons) use it to prove that each
// step's solution passes its verify predicate and its traps do not.
package lessontest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
	"github.com/rvplay/rvplay/internal/jsconsole"
)

// Runner is one session and the lab around it.
type Runner struct {
	Session *session.Session
	Clock   *clock.Fake

	// Pace is how far the fake clock moves before each action that is not
	// a wait: a learner's click takes time, and a lagging watch cache, a
	// bookmark interval or the controller's ready delay is measured
	// against it.
	Pace time.Duration

	front   api.Handler
	console *client.Client
	js      *jsconsole.Console // the lab's console, started by the first command

	mu        sync.Mutex
	clients   map[string]*labClient
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	changed   chan struct{} // closed at the next change anyone may wait for
	ctrlPause bool

	compactEvery time.Duration
	compactNext  time.Time
	compactPrev  int64
}

// New opens a fresh session (revision 1) serving the lessons of catalog.
func New(catalog *lesson.Catalog) (*Runner, error) {
	r := &Runner{Clock: clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), clients: map[string]*labClient{},
		Pace: time.Second, changed: make(chan struct{})}
	// The session's own compactor stays off: serve runs the compaction
	// the settings ask for, from the default on, in step with the clock.
	settings := session.DefaultSettings()
	settings.CompactionInterval = 0
	sess, err := session.New("lesson", mvcc.NewMemoryBackend(), session.Options{Clock: r.Clock, Lessons: catalog, Settings: &settings})
	if err != nil {
		return nil, err
	}
	r.setCompaction(session.DefaultCompactionInterval)
	r.Session = sess
	r.front = api.HandlerFunc(r.serve)
	r.console = &client.Client{Handler: r.front}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.wg.Add(1)
	go func() { // every new exchange is a change
		defer r.wg.Done()
		for seq := uint64(0); sess.Record.Wait(r.ctx, seq); seq = sess.Record.Last() {
			r.notify()
		}
	}()
	return r, nil
}

// notify wakes whoever waits on Changed.
func (r *Runner) notify() {
	r.mu.Lock()
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// Changed returns a channel closed at the next change: a new exchange, an
// event a lab client's watch delivered, a reflector's step, an action.
func (r *Runner) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.changed
}

// Handler is the session as the lab sees it.
func (r *Runner) Handler() api.Handler { return r.front }

// serve is the session, except that the automatic compaction the
// settings ask for runs here in step with the fake clock (the session's
// compactor runs on a goroutine of its own, which a test cannot keep in
// step; its own tests cover it).
func (r *Runner) serve(ctx context.Context, req *api.Request) *api.Response {
	if req.Path == lesson.SettingsPath && req.Method == "PUT" {
		var m map[string]json.RawMessage
		if json.Unmarshal(req.Body, &m) == nil {
			if raw, ok := m["compactionInterval"]; ok {
				var s string
				_ = json.Unmarshal(raw, &s)
				d, err := time.ParseDuration(s)
				if err != nil {
					return &api.Response{Status: 400, Body: []byte("compactionInterval: " + string(raw))}
				}
				r.setCompaction(d)
				delete(m, "compactionInterval")
				req.Body, _ = json.Marshal(m)
			}
			if raw, ok := m["controllers"]; ok {
				var s string
				_ = json.Unmarshal(raw, &s)
				r.mu.Lock()
				r.ctrlPause = s == "paused"
				r.mu.Unlock()
			}
		}
	}
	return r.Session.Serve(ctx, req)
}

// Close stops every client and closes the session.
func (r *Runner) Close() {
	r.cancel()
	r.mu.Lock()
	for _, c := range r.clients {
		c.reconnect()
	}
	r.mu.Unlock()
	r.wg.Wait()
	r.mu.Lock()
	if r.js != nil {
		r.js.Close()
	}
	r.mu.Unlock()
	r.Session.Close()
}

// setCompaction compacts every d of the fake clock, as kube-apiserver
// does: each tick notes the store's revision and compacts to the one the
// previous tick noted.
func (r *Runner) setCompaction(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.compactEvery = d
	r.compactNext = r.Clock.Now().Add(d)
	r.compactPrev = 0
}

// step moves the fake clock by d, running the compaction ticks due.
func (r *Runner) step(d time.Duration) {
	end := r.Clock.Now().Add(d)
	for {
		r.mu.Lock()
		every, next := r.compactEvery, r.compactNext
		r.mu.Unlock()
		if every <= 0 || next.After(end) {
			break
		}
		r.Clock.Set(next)
		r.mu.Lock()
		prev := r.compactPrev
		r.compactPrev = r.Session.Store.Rev()
		r.compactNext = next.Add(every)
		r.mu.Unlock()
		if prev > r.Session.Store.CompactRev() {
			_, _ = r.Session.Store.Compact(r.ctx, &mvcc.CompactionRequest{Revision: prev})
			r.notify()
		}
	}
	r.Clock.Set(end)
}

// Setup prepares the session for l as the lab does, through the
// runner's front (so that its settings reach serve).
func (r *Runner) Setup(ctx context.Context, l *lesson.Lesson) *lesson.SetupResult {
	svc := &lesson.Service{Catalog: r.Session.Lessons.Catalog, Store: r.Session.Store, Handler: r.front, Exchanges: r.Session.Lessons.Exchanges}
	res := svc.Setup(ctx, l)
	r.settle()
	return res
}

// Verify evaluates step n (from 1) of l over the exchanges after since.
func (r *Runner) Verify(l *lesson.Lesson, n int, since int64) (lesson.Result, error) {
	out, err := r.Session.Lessons.Verify(l, l.Slug, n, since, "")
	if err != nil {
		return lesson.Result{}, err
	}
	return out.Result, nil
}

// LastSeq is the Seq of the newest exchange in the session's record.
func (r *Runner) LastSeq() int64 { return int64(r.Session.Record.Last()) }

// Exchanges is the session's record.
func (r *Runner) Exchanges() []session.Exchange {
	all, _ := r.Session.Record.Since(0, session.Filter{}, 0)
	return all
}

// Do performs one action and returns what the console printed, if anything.
func (r *Runner) Do(ctx context.Context, a lesson.Action) (string, error) {
	defer r.notify()
	r.settle()
	if a.Kind() != "wait" && r.Pace > 0 {
		r.step(r.Pace)
	}
	switch a.Kind() {
	case "run":
		return r.runCommand(ctx, a.Run, a.Stdin)
	case "client":
		return "", r.client(a.Client).do(ctx, a)
	case "compact":
		// the lab's compaction button: etcd's compaction at the head
		body := fmt.Sprintf(`{"revision":"%d"}`, r.Session.Store.Rev())
		resp := r.console.Do(ctx, &api.Request{Method: "POST", Path: "/v3/kv/compaction", Body: []byte(body),
			Header: api.Header{"User-Agent": {api.LabUserAgent("lab")}}})
		if resp.Stream != nil {
			resp.Stream.Close()
		}
		return string(resp.Body), nil
	case "settings":
		resp := r.front.Serve(ctx, &api.Request{Method: "PUT", Path: lesson.SettingsPath, Body: a.Settings,
			Header: api.Header{"Content-Type": {"application/json"}}})
		if resp.Status != 200 {
			return string(resp.Body), fmt.Errorf("settings %s: %d %s", a.Settings, resp.Status, resp.Body)
		}
		return string(resp.Body), nil
	case "wait":
		d, err := a.WaitDuration()
		if err != nil {
			return "", err
		}
		return "", r.wait(d)
	}
	return "", fmt.Errorf("action %s: nothing to do", a.ID)
}

// settle waits, while the session's controller runs, until it has caught
// up with every Deployment (observedGeneration = generation), so that the
// timers it arms as it syncs (its ready delay) exist before the clock
// moves on, as they would by the time a learner clicks again.
func (r *Runner) settle() {
	r.mu.Lock()
	paused := r.ctrlPause
	r.mu.Unlock()
	if paused {
		return
	}
	_ = r.waitUntil(10*time.Second, func() bool {
		resp, err := r.Session.Store.Range(context.Background(), &mvcc.RangeRequest{Key: []byte("/registry/deployments/"), RangeEnd: []byte("/registry/deployments0")})
		if err != nil {
			return true
		}
		for _, kv := range resp.Kvs {
			var o struct {
				Metadata struct {
					Generation int64 `json:"generation"`
				} `json:"metadata"`
				Status struct {
					ObservedGeneration int64 `json:"observedGeneration"`
				} `json:"status"`
			}
			if json.Unmarshal(kv.Value, &o) == nil && o.Status.ObservedGeneration < o.Metadata.Generation {
				return false
			}
		}
		return true
	})
}

// waitUntil re-checks cond at every change until it holds or timeout ends.
func (r *Runner) waitUntil(timeout time.Duration, cond func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		changed := r.Changed()
		if cond() {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("not after %v", timeout)
		}
	}
}

// wait lets d pass on the fake clock. When d covers the bookmark interval,
// every open watch of the lab's clients that asked for bookmarks gets one,
// as on a real server; wait returns once they have arrived, so that the
// next action (a stop, a resume) sees them, as a learner who waited would.
func (r *Runner) wait(d time.Duration) error {
	expect := map[uint64]int64{} // seq -> bookmarks before
	if d >= r.Session.Settings().BookmarkInterval {
		for _, e := range r.Exchanges() {
			if _, lab := api.LabClient(e.UserAgent); lab && e.Watch != nil && e.Query.Get("allowWatchBookmarks") == "true" {
				if s := e.Watch.Summary(); !s.Ended {
					expect[e.Seq] = s.Bookmarks
				}
			}
		}
	}
	r.step(d)
	err := r.waitUntil(10*time.Second, func() bool {
		for _, e := range r.Exchanges() {
			if before, ok := expect[e.Seq]; ok {
				if s := e.Watch.Summary(); !s.Ended && s.Bookmarks <= before {
					return false
				}
			}
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("wait %v: the bookmarks of open watches did not come: %w", d, err)
	}
	return nil
}

// WaitVerified evaluates step n of l over the exchanges after since until
// it passes or timeout ends, re-evaluating at every change (watches, the
// controller and the lab's reflectors work on goroutines of their own).
// It returns the last result.
func (r *Runner) WaitVerified(l *lesson.Lesson, n int, since int64, timeout time.Duration) (lesson.Result, error) {
	var res lesson.Result
	var err error
	_ = r.waitUntil(timeout, func() bool {
		res, err = r.Verify(l, n, since)
		return err != nil || res.Passed
	})
	return res, err
}

func (r *Runner) client(name string) *labClient {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.clients[name]
	if c == nil {
		c = newLabClient(r, name)
		r.clients[name] = c
	}
	return c
}

// Client returns the lab client called name, for tests that look inside.
func (r *Runner) Client(name string) *labClient { return r.client(name) }

// ClientNames lists the lab clients used so far.
func (r *Runner) ClientNames() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for n := range r.clients {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// lastWatchRV is where client's latest watch got to: the resourceVersion
// of the last event or bookmark it delivered, else the one it started from.
func (r *Runner) lastWatchRV(name string) string {
	all := r.Exchanges()
	for i := len(all) - 1; i >= 0; i-- {
		e := &all[i]
		if label, _ := api.LabClient(e.UserAgent); label != name || e.Watch == nil {
			continue
		}
		if s := e.Watch.Summary(); s.LastRV > 0 {
			return fmt.Sprint(s.LastRV)
		}
		return e.Query.Get("resourceVersion")
	}
	return ""
}
