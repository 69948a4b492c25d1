package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DeploymentController keeps each Deployment's status the way
// kube-controller-manager's deployment controller does, so that
// `kubectl rollout status` completes and lessons can watch generation and
// observedGeneration: an informer (Reflector + Store) on apps/v1
// deployments feeds a work queue of keys; each key is reconciled by writing
// status through the status subresource, retrying on 409 Conflict with a
// fresh read. Every status write moves the resourceVersion; the generation
// moves only with the spec.
//
// There are no ReplicaSets and no pods in the playground (there is no
// kubelet). The controller plays both: when it first sees a generation it
// writes observedGeneration, replicas and updatedReplicas at once, and the
// replicas become ready and available ReadyDelay later (a second status
// write), with the Available and Progressing conditions and the reasons and
// messages kube writes when no ReplicaSet is involved.
type DeploymentController struct {
	Client    *Client
	Namespace string // "" = all namespaces
	Store     *Store
	Reflector *Reflector

	// Backoff for status writes that conflict (client-go DefaultRetry).
	Backoff Backoff
	Retrier Retrier
	// FieldManager names the controller's status writes ("": kube derives
	// it from the User-Agent).
	FieldManager string
	// ReadyDelay is how long a new generation's replicas take to become
	// ready (default 1 s; negative: at once).
	ReadyDelay time.Duration
	// Clock drives ReadyDelay and requeues (default: the wall clock).
	Clock Clock

	// OnSync, if set, is told the outcome of every reconcile.
	OnSync func(SyncResult)

	queue workQueue

	mu       sync.Mutex
	rollouts map[string]rollout
	runCtx   context.Context
}

// rollout is what the controller remembers of a deployment's current
// generation: when it saw it, when its replicas are ready, which pod
// template it had.
type rollout struct {
	generation int64
	readyAt    time.Time
	template   string
}

// SyncResult is one reconcile of one deployment.
type SyncResult struct {
	Key                string
	Generation         int64
	ObservedGeneration int64 // after the sync
	Replicas           int64
	Available          int64
	Attempts           int    // status writes tried (0 = already up to date)
	ResourceVersion    string // of the written status, if written
	Err                error
}

func (s SyncResult) String() string {
	out := fmt.Sprintf("sync %s generation=%d observedGeneration=%d replicas=%d available=%d attempts=%d",
		s.Key, s.Generation, s.ObservedGeneration, s.Replicas, s.Available, s.Attempts)
	if s.ResourceVersion != "" {
		out += " rv=" + s.ResourceVersion
	}
	if s.Err != nil {
		out += " err=" + s.Err.Error()
	}
	return out
}

// DefaultReadyDelay is how long the playground's pretend pods take to
// become ready.
const DefaultReadyDelay = time.Second

// NewDeploymentController returns a controller for deployments in
// namespace ("" = all).
func NewDeploymentController(c *Client, namespace string) *DeploymentController {
	store := NewStore()
	rc := c.Resource(Deployments).Namespace(namespace)
	dc := &DeploymentController{
		Client:     c,
		Namespace:  namespace,
		Store:      store,
		Reflector:  NewReflector(rc, store),
		Backoff:    DefaultRetry,
		ReadyDelay: DefaultReadyDelay,
		rollouts:   map[string]rollout{},
	}
	dc.queue.init()
	store.AddHandler(Handler{
		OnAdd:    func(o Object) { dc.queue.add(o.Key()) },
		OnUpdate: func(_, o Object) { dc.queue.add(o.Key()) },
		OnDelete: func(o Object) { dc.queue.add(o.Key()) },
	})
	return dc
}

func (dc *DeploymentController) clock() Clock {
	if dc.Clock == nil {
		return RealClock{}
	}
	return dc.Clock
}

// Run starts the informer and reconciles queued deployments until ctx ends.
func (dc *DeploymentController) Run(ctx context.Context) {
	dc.mu.Lock()
	dc.runCtx = ctx
	dc.mu.Unlock()
	if dc.Reflector.Clock == nil {
		dc.Reflector.Clock = dc.Clock
	}
	if dc.Retrier.Sleep == nil {
		dc.Retrier.Sleep = dc.clock().Sleep
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		dc.Reflector.Run(ctx)
	}()
	defer wg.Wait()
	if !dc.Store.WaitForSync(ctx) {
		return
	}
	for {
		key, ok := dc.queue.get(ctx)
		if !ok {
			return
		}
		res := dc.Sync(ctx, key)
		dc.queue.done(key)
		if dc.OnSync != nil {
			dc.OnSync(res)
		}
		if res.Err != nil && ctx.Err() == nil && !IsNotFound(res.Err) {
			// Try again later, like a rate-limited requeue.
			dc.addAfter(key, 100*time.Millisecond)
		}
	}
}

// addAfter queues key again after d on the controller's clock.
func (dc *DeploymentController) addAfter(key string, d time.Duration) {
	dc.mu.Lock()
	ctx := dc.runCtx
	dc.mu.Unlock()
	if ctx == nil {
		return // Sync called outside Run: the caller decides
	}
	tc, ok := dc.clock().(TimerClock)
	if !ok {
		go func() {
			if dc.clock().Sleep(ctx, d) == nil {
				dc.queue.add(key)
			}
		}()
		return
	}
	// The timer is armed here, before the caller goes on, so that a test
	// moving a fake clock next cannot overtake it.
	t := tc.NewTimer(d)
	go func() {
		defer t.Stop()
		select {
		case <-t.C():
			dc.queue.add(key)
		case <-ctx.Done():
		}
	}()
}

func desiredReplicas(o Object) int64 {
	if n, ok := o.NestedInt64("spec", "replicas"); ok {
		return n
	}
	return 1
}

// rolloutOf returns what the controller knows of o's generation, starting
// a new rollout (replicas not ready until ReadyDelay from now) when the
// generation is new to it, and whether o's pod template changed with it.
func (dc *DeploymentController) rolloutOf(o Object, now time.Time) (rollout, bool) {
	key, gen := o.Key(), o.Generation()
	tmpl, _ := o.Nested("spec", "template")
	tb, _ := json.Marshal(tmpl)
	dc.mu.Lock()
	r, known := dc.rollouts[key]
	if known && r.generation >= gen {
		// This generation, or a stale copy of an older one.
		dc.mu.Unlock()
		return r, false
	}
	delay := max(dc.ReadyDelay, 0)
	changed := known && r.template != string(tb)
	r = rollout{generation: gen, readyAt: now.Add(delay), template: string(tb)}
	dc.rollouts[key] = r
	dc.mu.Unlock()
	if delay > 0 {
		dc.addAfter(key, delay)
	}
	return r, changed
}

// Sync reconciles one deployment by key ("namespace/name"). The first
// attempt starts from the informer's copy; after a Conflict it re-reads
// the object from the API and tries again (RetryOnConflict).
func (dc *DeploymentController) Sync(ctx context.Context, key string) SyncResult {
	res := SyncResult{Key: key}
	cached, ok := dc.Store.Get(key)
	if !ok {
		dc.mu.Lock()
		delete(dc.rollouts, key)
		dc.mu.Unlock()
		return res // deleted: nothing to maintain
	}
	rc := dc.Client.Resource(Deployments).Namespace(cached.Namespace())
	cur := cached.DeepCopy()
	res.Err = dc.Retrier.RetryOnConflict(ctx, dc.Backoff, func() error {
		if res.Attempts > 0 {
			fresh, err := rc.Get(ctx, cur.Name(), GetOptions{})
			if err != nil {
				return err
			}
			cur = fresh
		}
		// Readiness belongs to the generation being written: a re-read
		// after a conflict may have brought a newer one.
		now := dc.clock().Now()
		ro, templateChanged := dc.rolloutOf(cur, now)
		next, changed := DeploymentStatus(cur, !now.Before(ro.readyAt), templateChanged, now)
		if !changed {
			return nil
		}
		res.Attempts++
		cur.SetNested(next, "status")
		out, err := rc.UpdateStatus(ctx, cur, WriteOptions{FieldManager: dc.FieldManager})
		if err != nil {
			return err
		}
		cur = out
		res.ResourceVersion = out.ResourceVersion()
		return nil
	})
	res.Generation = cur.Generation()
	res.ObservedGeneration, _ = cur.NestedInt64("status", "observedGeneration")
	res.Replicas = desiredReplicas(cur)
	res.Available, _ = cur.NestedInt64("status", "availableReplicas")
	return res
}

// Deployment condition types, reasons and messages, as
// kube-controller-manager writes them when no ReplicaSet is involved.
const (
	DeploymentAvailable   = "Available"
	DeploymentProgressing = "Progressing"

	ReasonMinimumReplicasAvailable   = "MinimumReplicasAvailable"
	ReasonMinimumReplicasUnavailable = "MinimumReplicasUnavailable"
	ReasonNewReplicaSetAvailable     = "NewReplicaSetAvailable"
	ReasonReplicaSetUpdated          = "ReplicaSetUpdated"
	ReasonDeploymentPaused           = "DeploymentPaused"
)

// DeploymentStatus computes the status the controller writes for o: all
// desired replicas updated, and ready and available once ready (before
// that, those that were available stay so unless the pod template
// changed, which replaces up to maxUnavailable of them). It reports
// whether that differs from o's status.
func DeploymentStatus(o Object, ready, templateChanged bool, now time.Time) (map[string]any, bool) {
	desired := desiredReplicas(o)
	old, _ := o.Nested("status")
	oldStatus, _ := old.(map[string]any)
	prevAvail, _ := o.NestedInt64("status", "availableReplicas")
	maxUnavailable := maxUnavailable(o, desired)
	avail := desired
	if !ready {
		avail = min(prevAvail, desired)
		if templateChanged {
			avail = min(avail, max(desired-maxUnavailable, 0))
		}
	}
	st := map[string]any{}
	setCount := func(name string, n int64) {
		if n != 0 { // kube's DeploymentStatus fields are omitempty
			st[name] = n
		}
	}
	setCount("observedGeneration", o.Generation())
	setCount("replicas", desired)
	setCount("updatedReplicas", desired)
	setCount("readyReplicas", avail)
	setCount("availableReplicas", avail)
	setCount("unavailableReplicas", desired-avail)
	if v, ok := oldStatus["collisionCount"]; ok {
		st["collisionCount"] = v
	}

	conds, _ := oldStatus["conditions"].([]any)
	ts := now.UTC().Truncate(time.Second).Format(time.RFC3339)
	if avail >= desired-maxUnavailable {
		conds = setCondition(conds, DeploymentAvailable, "True", ReasonMinimumReplicasAvailable, "Deployment has minimum availability.", ts)
	} else {
		conds = setCondition(conds, DeploymentAvailable, "False", ReasonMinimumReplicasUnavailable, "Deployment does not have minimum availability.", ts)
	}
	name := o.Name()
	paused, _ := o.Nested("spec", "paused")
	switch {
	case paused == true:
		conds = setCondition(conds, DeploymentProgressing, "Unknown", ReasonDeploymentPaused, "Deployment is paused", ts)
	case avail == desired:
		conds = setCondition(conds, DeploymentProgressing, "True", ReasonNewReplicaSetAvailable, "Deployment "+strconv.Quote(name)+" has successfully progressed.", ts)
	default:
		conds = setCondition(conds, DeploymentProgressing, "True", ReasonReplicaSetUpdated, "Deployment "+strconv.Quote(name)+" is progressing.", ts)
	}
	st["conditions"] = conds

	a, _ := json.Marshal(oldStatus)
	b, _ := json.Marshal(st)
	return st, !bytes.Equal(a, b)
}

// setCondition is kube's SetDeploymentCondition: an unchanged status and
// reason leave the condition alone; a changed reason with the same status
// keeps lastTransitionTime; the new condition goes last.
func setCondition(conds []any, typ, status, reason, message, now string) []any {
	var cur map[string]any
	out := make([]any, 0, len(conds)+1)
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m != nil && m["type"] == typ {
			cur = m
			continue
		}
		out = append(out, c)
	}
	if cur != nil && cur["status"] == status && cur["reason"] == reason {
		return conds
	}
	c := map[string]any{"type": typ, "status": status, "lastUpdateTime": now, "lastTransitionTime": now,
		"reason": reason, "message": message}
	if cur != nil && cur["status"] == status {
		c["lastTransitionTime"] = cur["lastTransitionTime"]
	}
	return append(out, c)
}

// maxUnavailable resolves spec.strategy.rollingUpdate.maxUnavailable
// (default 25%, rounded down) as kube's deployment util does: 0 for
// Recreate or 0 replicas, and at least 1 when maxSurge resolves to 0 too.
func maxUnavailable(o Object, desired int64) int64 {
	if t, _ := o.NestedString("spec", "strategy", "type"); t == "Recreate" || desired == 0 {
		return 0
	}
	unavail := intOrPercent(o, "maxUnavailable", "25%", desired, false)
	surge := intOrPercent(o, "maxSurge", "25%", desired, true)
	if unavail == 0 && surge == 0 {
		unavail = 1
	}
	return min(unavail, desired)
}

func intOrPercent(o Object, field, def string, total int64, roundUp bool) int64 {
	v, ok := o.Nested("spec", "strategy", "rollingUpdate", field)
	if !ok {
		v = def
	}
	switch x := v.(type) {
	case string:
		pct, err := strconv.ParseFloat(strings.TrimSuffix(x, "%"), 64)
		if err != nil || !strings.HasSuffix(x, "%") {
			return 0
		}
		f := pct * float64(total) / 100
		if roundUp {
			return int64(math.Ceil(f))
		}
		return int64(math.Floor(f))
	default:
		n, _ := toInt64(x)
		return n
	}
}

// workQueue hands out keys one at a time; a key added while queued is
// not duplicated, and one added while being processed is queued again
// after it is done (client-go workqueue semantics, without rate limits).
type workQueue struct {
	mu         sync.Mutex
	order      []string
	dirty      map[string]bool
	processing map[string]bool
	signal     chan struct{}
}

func (q *workQueue) init() {
	q.dirty = map[string]bool{}
	q.processing = map[string]bool{}
	q.signal = make(chan struct{}, 1)
}

func (q *workQueue) add(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.dirty[key] {
		return
	}
	q.dirty[key] = true
	if q.processing[key] {
		return
	}
	q.order = append(q.order, key)
	q.wake()
}

func (q *workQueue) wake() {
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

func (q *workQueue) get(ctx context.Context) (string, bool) {
	for {
		q.mu.Lock()
		if len(q.order) > 0 {
			key := q.order[0]
			q.order = q.order[1:]
			delete(q.dirty, key)
			q.processing[key] = true
			if len(q.order) > 0 {
				q.wake()
			}
			q.mu.Unlock()
			return key, true
		}
		q.mu.Unlock()
		select {
		case <-q.signal:
		case <-ctx.Done():
			return "", false
		}
	}
}

func (q *workQueue) done(key string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.processing, key)
	if q.dirty[key] {
		q.order = append(q.order, key)
		q.wake()
	}
}
