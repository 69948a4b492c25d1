package lessontest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rvplay/rvplay/engine/api"
	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/clock"
	"github.com/rvplay/rvplay/engine/lesson"
)

// labClient is one of the lab's named clients: it keeps the object it last
// read, its last list, at most one open watch, a reflector and a
// controller, and a connection that can drop.
type labClient struct {
	r    *Runner
	name string
	c    *client.Client

	mu        sync.Mutex
	read      client.Object // the object it last read (or wrote)
	listRV    string
	listItems []client.Object
	listCont  string
	watch     *openWatch
	lastRV    string // where its last watch got to
	reflector *runningLoop
	refl      *client.Reflector

	down    bool
	up      chan struct{} // closed when the connection comes back
	streams map[*gatedStream]bool
}

type openWatch struct {
	w    *client.Watcher
	done chan struct{}
}

type runningLoop struct {
	cancel context.CancelFunc
	done   chan struct{}
}

func newLabClient(r *Runner, name string) *labClient {
	lc := &labClient{r: r, name: name, streams: map[*gatedStream]bool{}}
	lc.c = &client.Client{Handler: api.HandlerFunc(lc.send), UserAgent: api.LabUserAgent(name)}
	return lc
}

// send is the client's connection: while it is down, requests wait until
// it comes back.
func (lc *labClient) send(ctx context.Context, req *api.Request) *api.Response {
	lc.mu.Lock()
	up := lc.up
	down := lc.down
	lc.mu.Unlock()
	if down {
		select {
		case <-up:
		case <-ctx.Done():
			return &api.Response{Status: 503, Body: []byte(`{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"connection closed","code":503}`)}
		}
	}
	resp := lc.r.front.Serve(ctx, req)
	if resp.Stream != nil {
		gs := &gatedStream{Stream: resp.Stream, lc: lc, cut: make(chan struct{})}
		lc.mu.Lock()
		lc.streams[gs] = true
		lc.mu.Unlock()
		resp.Stream = gs
	}
	return resp
}

// gatedStream ends (cleanly, as a dropped connection looks to a watch
// decoder) when the client's connection drops.
type gatedStream struct {
	api.Stream
	lc   *labClient
	cut  chan struct{}
	once sync.Once
}

func (s *gatedStream) Next(ctx context.Context) ([]byte, error) {
	select {
	case <-s.cut:
		return nil, api.EOF
	default:
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-s.cut:
			cancel()
		case <-cctx.Done():
		}
	}()
	frame, err := s.Stream.Next(cctx)
	select {
	case <-s.cut:
		// the connection dropped: what was in flight is lost with it
		return nil, api.EOF
	default:
	}
	return frame, err
}

func (s *gatedStream) Close() {
	s.once.Do(func() {
		s.Stream.Close()
		s.lc.mu.Lock()
		delete(s.lc.streams, s)
		s.lc.mu.Unlock()
	})
}

// ReflectorSteps are the steps of the client's reflector so far (none
// before a startReflector), for tests that check what the lab shows.
func (lc *labClient) ReflectorSteps() []client.Step {
	lc.mu.Lock()
	refl := lc.refl
	lc.mu.Unlock()
	if refl == nil {
		return nil
	}
	return refl.Steps()
}

func (lc *labClient) disconnect() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.down {
		return
	}
	lc.down, lc.up = true, make(chan struct{})
	for s := range lc.streams {
		select {
		case <-s.cut:
		default:
			close(s.cut)
		}
	}
}

func (lc *labClient) reconnect() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.down {
		lc.down = false
		close(lc.up)
	}
}

func resourceOf(name string) (client.Resource, error) {
	g, v, p, ok := kubeResource(name)
	if !ok {
		return client.Resource{}, fmt.Errorf("unknown resource %q", name)
	}
	return client.Resource{Group: g, Version: v, Resource: p}, nil
}

func (lc *labClient) rc(a lesson.Action) (client.ResourceClient, error) {
	res, err := resourceOf(a.Resource)
	if err != nil {
		return client.ResourceClient{}, err
	}
	ns := a.Namespace
	if ns == "" && res.Resource != "namespaces" {
		ns = "default"
	}
	return lc.c.Resource(res).Namespace(ns), nil
}

// rv resolves an action's resourceVersion for a read or watch.
func (lc *labClient) rv(a lesson.Action) (string, error) {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	switch a.ResourceVersion {
	case "list":
		if lc.listRV == "" {
			return "", fmt.Errorf("client %s has no list yet", lc.name)
		}
		return lc.listRV, nil
	case "last":
		// what its last watch's stream delivered, as the record saw it:
		// the frames reached the client even if its goroutine has not
		// handled the last one yet
		if rv := lc.r.lastWatchRV(lc.name); rv != "" {
			return rv, nil
		}
		if lc.lastRV == "" {
			return "", fmt.Errorf("client %s has watched nothing yet", lc.name)
		}
		return lc.lastRV, nil
	case "item":
		// the oldest item: resuming from it replays what the list held
		var rvs []int
		for _, o := range lc.listItems {
			n, _ := strconv.Atoi(o.ResourceVersion())
			rvs = append(rvs, n)
		}
		if len(rvs) == 0 {
			return "", fmt.Errorf("client %s listed no items", lc.name)
		}
		sort.Ints(rvs)
		return strconv.Itoa(rvs[0]), nil
	}
	return a.ResourceVersion, nil
}

func (lc *labClient) do(ctx context.Context, a lesson.Action) error {
	switch a.Do {
	case "disconnect":
		lc.disconnect()
		return nil
	case "reconnect":
		lc.reconnect()
		return nil
	case "stopWatch":
		lc.stopWatch()
		return nil
	case "stopReflector":
		lc.stopLoop(&lc.reflector)
		return nil
	}
	rc, err := lc.rc(a)
	if err != nil {
		return err
	}
	switch a.Do {
	case "get":
		rv, err := lc.rv(a)
		if err != nil {
			return err
		}
		o, err := rc.Get(ctx, a.Name, client.GetOptions{ResourceVersion: rv})
		if err == nil {
			lc.setRead(o)
		}
		return ignoreAPIError(err)
	case "list":
		rv, err := lc.rv(a)
		if err != nil {
			return err
		}
		opts := client.ListOptions{ResourceVersion: rv, ResourceVersionMatch: a.ResourceVersionMatch, Limit: a.Limit}
		if a.Continue == "last" {
			lc.mu.Lock()
			opts.Continue = lc.listCont
			lc.mu.Unlock()
		}
		l, err := rc.List(ctx, opts)
		if err == nil {
			lc.mu.Lock()
			lc.listRV, lc.listItems, lc.listCont = l.ResourceVersion, l.Items, l.Continue
			lc.mu.Unlock()
		}
		return ignoreAPIError(err)
	case "update":
		obj, err := lc.edited(a)
		if err != nil {
			return err
		}
		var sub []string
		if a.Subresource != "" {
			sub = append(sub, a.Subresource)
		}
		o, err := rc.Update(ctx, obj, client.WriteOptions{}, sub...)
		if err == nil {
			lc.setRead(o)
		}
		return ignoreAPIError(err)
	case "create":
		var obj client.Object
		if err := json.Unmarshal(a.Object, &obj); err != nil {
			return err
		}
		o, err := rc.Create(ctx, obj, client.WriteOptions{})
		if err == nil {
			lc.setRead(o)
		}
		return ignoreAPIError(err)
	case "delete":
		return ignoreAPIError(rc.Delete(ctx, a.Name, client.DeleteOptions{}))
	case "patch":
		pt := map[string]client.PatchType{"merge": client.MergePatch, "json": client.JSONPatch, "strategic": client.StrategicMergePatch}[a.PatchType]
		if pt == "" {
			return fmt.Errorf("patch type %q", a.PatchType)
		}
		var sub []string
		if a.Subresource != "" {
			sub = append(sub, a.Subresource)
		}
		o, err := rc.Patch(ctx, a.Name, pt, a.Patch, client.PatchOptions{FieldManager: a.FieldManager}, sub...)
		if err == nil {
			lc.setRead(o)
		}
		return ignoreAPIError(err)
	case "apply":
		var obj client.Object
		if err := json.Unmarshal(a.Object, &obj); err != nil {
			return err
		}
		o, err := rc.Apply(ctx, obj, a.FieldManager, a.Force)
		if err == nil {
			lc.setRead(o)
		}
		return ignoreAPIError(err)
	case "watch":
		return lc.startWatch(ctx, rc, a)
	case "retryOnConflict":
		backoff := client.DefaultRetry
		if a.Backoff == "DefaultBackoff" {
			backoff = client.DefaultBackoff
		}
		getRV := ""
		if a.Read == "cache" {
			getRV = "0"
		}
		retrier := client.Retrier{Clock: stepClock{lc.r.Clock}}
		err := retrier.RetryOnConflict(ctx, backoff, func() error {
			o, err := rc.Get(ctx, a.Name, client.GetOptions{ResourceVersion: getRV})
			if err != nil {
				return err
			}
			lc.setRead(o)
			obj, err := lc.edited(lesson.Action{Set: a.Set})
			if err != nil {
				return err
			}
			o, err = rc.Update(ctx, obj, client.WriteOptions{})
			if err == nil {
				lc.setRead(o)
			}
			return err
		})
		return ignoreAPIError(err)
	case "startReflector":
		store := client.NewStore()
		refl := client.NewReflector(rc, store)
		refl.WatchList = a.WatchList
		refl.Clock = stepClock{lc.r.Clock}
		// Return once it is following a watch, as the lab shows it: a
		// learner disconnects a reflector that is already watching.
		watching := make(chan struct{})
		var once sync.Once
		refl.OnStep = func(s client.Step) {
			lc.r.notify()
			if (s.Kind == client.StepWatch && !a.WatchList) || (s.Kind == client.StepReplace && a.WatchList) {
				once.Do(func() { close(watching) })
			}
		}
		lc.mu.Lock()
		lc.refl = refl
		lc.mu.Unlock()
		lc.startLoop(&lc.reflector, refl.Run)
		select {
		case <-watching:
			return nil
		case <-time.After(10 * time.Second):
			return fmt.Errorf("client %s: the reflector is not watching after 10s", lc.name)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return fmt.Errorf("client %s: operation %q", lc.name, a.Do)
}

// ignoreAPIError: a Status answer (409, 410, ...) is an outcome the lesson
// shows, not a failure of the action.
func ignoreAPIError(err error) error {
	if _, ok := client.AsStatus(err); ok {
		return nil
	}
	return err
}

func (lc *labClient) setRead(o client.Object) {
	lc.mu.Lock()
	lc.read = o
	lc.mu.Unlock()
}

// edited is the client's last read copy with a.Set applied.
func (lc *labClient) edited(a lesson.Action) (client.Object, error) {
	lc.mu.Lock()
	read := lc.read
	lc.mu.Unlock()
	if read == nil {
		return nil, fmt.Errorf("client %s has read nothing to update", lc.name)
	}
	obj := read.DeepCopy()
	for path, v := range a.Set {
		obj.SetNested(v, strings.Split(path, ".")...)
	}
	if a.ResourceVersion == "drop" {
		delete(obj.Metadata(), "resourceVersion")
	}
	return obj, nil
}

func (lc *labClient) startWatch(ctx context.Context, rc client.ResourceClient, a lesson.Action) error {
	lc.stopWatch()
	rv, err := lc.rv(a)
	if err != nil {
		return err
	}
	// Without the watch cache, a watch from below the store's compaction
	// is certain to end with its 410 (etcd refuses the revisions from
	// rv+1): the action returns once it has, as the learner's click shows
	// the 410 at once, so that what a verdict reads next does not depend
	// on when this watch's goroutine ran (a trap's two such watches, R's
	// and S's, ended in either order).
	n, _ := strconv.ParseInt(rv, 10, 64)
	expired := !lc.r.Session.Settings().WatchCache && n > 0 && n+1 < lc.r.Session.Store.CompactRev()
	w, err := rc.Watch(lc.r.ctx, client.ListOptions{ResourceVersion: rv, ResourceVersionMatch: a.ResourceVersionMatch,
		AllowWatchBookmarks: a.AllowWatchBookmarks, SendInitialEvents: a.SendInitialEvents})
	if err != nil {
		return ignoreAPIError(err)
	}
	ow := &openWatch{w: w, done: make(chan struct{})}
	lc.mu.Lock()
	lc.watch = ow
	lc.lastRV = rv
	lc.mu.Unlock()
	lc.r.wg.Add(1)
	go func() {
		defer lc.r.wg.Done()
		defer close(ow.done)
		for ev := range w.ResultChan() {
			lc.r.notify()
			if ev.Type == client.Error {
				continue
			}
			if rv := ev.Object.ResourceVersion(); rv != "" {
				lc.mu.Lock()
				lc.lastRV = rv
				lc.mu.Unlock()
			}
		}
	}()
	if expired {
		<-ow.done
	}
	return nil
}

func (lc *labClient) stopWatch() {
	lc.mu.Lock()
	ow := lc.watch
	lc.watch = nil
	lc.mu.Unlock()
	if ow != nil {
		ow.w.Stop()
		<-ow.done
	}
}

func (lc *labClient) startLoop(slot **runningLoop, run func(context.Context)) {
	lc.stopLoop(slot)
	ctx, cancel := context.WithCancel(lc.r.ctx)
	l := &runningLoop{cancel: cancel, done: make(chan struct{})}
	lc.mu.Lock()
	*slot = l
	lc.mu.Unlock()
	lc.r.wg.Add(1)
	go func() {
		defer lc.r.wg.Done()
		defer close(l.done)
		run(ctx)
	}()
}

func (lc *labClient) stopLoop(slot **runningLoop) {
	lc.mu.Lock()
	l := *slot
	*slot = nil
	lc.mu.Unlock()
	if l != nil {
		l.cancel()
		<-l.done
	}
}

// Reflector is the client's reflector, for tests that look at its steps.
func (lc *labClient) Reflector() *client.Reflector {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.refl
}

// stepClock is a reflector's clock in tests: the session's fake time (so a
// watch lasts as long as the learner's clicks say), and backoff waits that
// end at once (no test waits for a reflector's 800 ms).
type stepClock struct{ fake *clock.Fake }

func (c stepClock) Now() time.Time { return c.fake.Now() }

func (c stepClock) NewTimer(time.Duration) clock.Timer { return clock.Fired(c.fake.Now()) }

// kubeResource resolves kubectl's resource names (deployment, deploy,
// deployments, configmap, cm, ...).
func kubeResource(name string) (group, version, plural string, ok bool) {
	name = strings.ToLower(name)
	for _, res := range []struct{ group, version, plural, kind string }{
		{"apps", "v1", "deployments", "deployment"},
		{"", "v1", "configmaps", "configmap"},
		{"", "v1", "pods", "pod"},
		{"", "v1", "namespaces", "namespace"},
	} {
		if name == res.plural || name == res.kind || (name == "deploy" && res.plural == "deployments") || (name == "cm" && res.plural == "configmaps") {
			return res.group, res.version, res.plural, true
		}
	}
	return "", "", "", false
}
