package lessontest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/api/kubeapi"
	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/kube"
	"github.com/rvplay/rvplay/engine/lesson"
	"github.com/rvplay/rvplay/engine/mvcc"
	"github.com/rvplay/rvplay/engine/session"
)

// Runner is one in-process session with the lab around it: the record of
// exchanges, the lesson routes, session settings, the console and the
// lab's named clients, on a fake clock.
type Runner struct {
	Session  *session.Session
	Kube     *kube.Server
	Clock    *kube.FakeClock
	Recorder *Recorder
	Lessons  *lesson.Service

	front   api.Handler
	console *client.Client

	mu      sync.Mutex
	clients map[string]*labClient
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup

	ctrlStop func()

	compactEvery time.Duration
	compactNext  time.Time
	compactPrev  int64

	// Pace is how far the fake clock moves before each action that is not
	// a wait: a learner's click takes time, and a lagging watch cache or a
	// bookmark interval is measured against it.
	Pace time.Duration
}

// New opens a fresh session (revision 1) for the lessons of catalog.
func New(catalog *lesson.Catalog) (*Runner, error) {
	r := &Runner{Clock: kube.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)), clients: map[string]*labClient{}, Pace: time.Second}
	// NoControllers: the runner runs its own deployment controller and
	// takes the settings itself (its stand-ins, on the fake clock).
	sess, err := session.New("lesson", mvcc.NewMemoryBackend(), session.Options{NoControllers: true, Kube: func(name string, store *mvcc.Store) api.Handler {
		h := kubeapi.New(kubeapi.Options{Store: store, Kube: kube.Options{Clock: r.Clock}})
		r.Kube = h.Server()
		return h
	}})
	if err != nil {
		return nil, err
	}
	r.Session = sess
	r.Recorder = &Recorder{Next: sess, Clock: r.Clock.Now}
	r.Lessons = &lesson.Service{Catalog: catalog, Store: sess.Store, Handler: api.HandlerFunc(r.serve), Exchanges: r.Recorder.Exchanges}
	r.front = api.HandlerFunc(r.serve)
	r.console = &client.Client{Handler: r.front}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	r.startController()
	return r, nil
}

// Handler is the session as the lab sees it.
func (r *Runner) Handler() api.Handler { return r.front }

func (r *Runner) serve(ctx context.Context, req *api.Request) *api.Response {
	switch {
	case lesson.Handles(req.Path):
		return r.Lessons.Serve(ctx, req)
	case req.Path == lesson.SettingsPath:
		return r.settings(req)
	}
	return r.Recorder.Serve(ctx, req)
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
	r.Session.Close()
}

// Settings is the test's stand-in for the session settings
// (PUT /rvplay/v1/settings): durations as Go writes them.
type Settings struct {
	BookmarkInterval   string `json:"bookmarkInterval,omitempty"`
	CompactionInterval string `json:"compactionInterval,omitempty"`
	WatchCacheDelay    string `json:"watchCacheDelay,omitempty"`
	// Controllers is "running" (a session's default) or "paused".
	Controllers string `json:"controllers,omitempty"`
}

func (r *Runner) settings(req *api.Request) *api.Response {
	if req.Method != "PUT" {
		return &api.Response{Status: 405}
	}
	var s Settings
	if err := json.Unmarshal(req.Body, &s); err != nil {
		return &api.Response{Status: 400, Body: []byte(err.Error())}
	}
	if err := r.applySettings(s); err != nil {
		return &api.Response{Status: 400, Body: []byte(err.Error())}
	}
	return &api.Response{Status: 200}
}

func (r *Runner) applySettings(s Settings) error {
	parse := func(v string) (time.Duration, bool, error) {
		if v == "" {
			return 0, false, nil
		}
		d, err := time.ParseDuration(v)
		return d, true, err
	}
	if d, ok, err := parse(s.BookmarkInterval); err != nil {
		return err
	} else if ok {
		r.Kube.SetBookmarkInterval(d)
	}
	if d, ok, err := parse(s.WatchCacheDelay); err != nil {
		return err
	} else if ok {
		r.Kube.SetWatchCacheDelay(d)
	}
	if d, ok, err := parse(s.CompactionInterval); err != nil {
		return err
	} else if ok {
		r.setCompaction(d)
	}
	switch s.Controllers {
	case "":
	case "running":
		r.startController()
	case "paused":
		r.stopController()
	default:
		return fmt.Errorf("controllers: %q (running, paused)", s.Controllers)
	}
	return nil
}

// ControllerUserAgent is the session's deployment controller's, as
// kube-controller-manager's.
const ControllerUserAgent = "kube-controller-manager/v1.35.0 (linux/amd64) kubernetes/rvplay/system:serviceaccount:kube-system:deployment-controller"

// startController runs the session's deployment controller, as a session
// does unless its settings pause it.
func (r *Runner) startController() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctrlStop != nil {
		return
	}
	c := &client.Client{Handler: r.front, UserAgent: ControllerUserAgent}
	dc := client.NewDeploymentController(c, "")
	dc.Reflector.Clock = stepClock{r.Clock}
	ctx, stop := context.WithCancel(r.ctx)
	done := make(chan struct{})
	r.ctrlStop = func() { stop(); <-done }
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(done)
		dc.Run(ctx)
	}()
}

func (r *Runner) stopController() {
	r.mu.Lock()
	stop := r.ctrlStop
	r.ctrlStop = nil
	r.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// setCompaction compacts every d of the fake clock, as kube-apiserver
// does: each tick to the revision seen at the previous tick. The ticks run
// in step, whenever the runner moves the clock.
func (r *Runner) setCompaction(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.compactEvery = d
	r.compactNext = r.Clock.Now().Add(d)
	r.compactPrev = r.Session.Store.Rev()
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
			r.Recorder.mu.Lock()
			r.Recorder.notifyLocked()
			r.Recorder.mu.Unlock()
		}
	}
	r.Clock.Set(end)
}

// Setup prepares the session for l as the lab does.
func (r *Runner) Setup(ctx context.Context, l *lesson.Lesson) *lesson.SetupResult {
	return r.Lessons.Setup(ctx, l)
}

// Verify evaluates step n (from 1) of l over the exchanges after since.
func (r *Runner) Verify(l *lesson.Lesson, n int, since int64) (lesson.Result, error) {
	out, err := r.Lessons.Verify(l.Slug, n, since, "")
	if err != nil {
		return lesson.Result{}, err
	}
	return out.Result, nil
}

// Do performs one action and returns what the console printed, if anything.
func (r *Runner) Do(ctx context.Context, a lesson.Action) (string, error) {
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
			Header: api.Header{"User-Agent": {"lab/" + LabUserAgent}}})
		if resp.Stream != nil {
			resp.Stream.Close()
		}
		return string(resp.Body), nil
	case "settings":
		var s Settings
		dec := json.NewDecoder(strings.NewReader(string(a.Settings)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&s); err != nil {
			return "", err
		}
		return "", r.applySettings(s)
	case "wait":
		d, err := a.WaitDuration()
		if err != nil {
			return "", err
		}
		return "", r.wait(d)
	}
	return "", fmt.Errorf("action %s: nothing to do", a.ID)
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

// WaitVerified evaluates step n of l over the exchanges after since until
// it passes or timeout ends, re-evaluating whenever the record changes
// (watches and the lab's background clients answer on goroutines of their
// own). It returns the last result.
func (r *Runner) WaitVerified(l *lesson.Lesson, n int, since int64, timeout time.Duration) (lesson.Result, error) {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		changed := r.Recorder.Changed()
		res, err := r.Verify(l, n, since)
		if err != nil || res.Passed {
			return res, err
		}
		select {
		case <-changed:
		case <-deadline.C:
			return res, nil
		}
	}
}

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

// wait lets d pass on the fake clock. When d covers the bookmark interval,
// every open watch of the lab's clients that asked for bookmarks gets one,
// as on a real server; wait returns once they have arrived, so that the next action
// (a stop, a resume) sees them, as a learner who waited would.
func (r *Runner) wait(d time.Duration) error {
	var expect map[int]int // record index -> bookmarks before
	if d >= r.Kube.BookmarkInterval() {
		expect = map[int]int{}
		for i, e := range r.Recorder.Exchanges() {
			if e.Client != "" && e.Watch != nil && !e.Watch.Ended && e.Query.Get("allowWatchBookmarks") == "true" {
				expect[i] = e.Watch.Bookmarks
			}
		}
	}
	r.step(d)
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	for {
		changed := r.Recorder.Changed()
		record := r.Recorder.Exchanges()
		done := true
		for i, before := range expect {
			if w := record[i].Watch; !w.Ended && w.Bookmarks <= before {
				done = false
			}
		}
		if done {
			return nil
		}
		select {
		case <-changed:
		case <-deadline.C:
			return fmt.Errorf("wait %v: the bookmarks of open watches did not come", d)
		}
	}
}
