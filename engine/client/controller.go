package client

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// DeploymentController is the smallest controller that shows the pattern:
// an informer (Reflector + Store) on apps/v1 deployments feeds a work
// queue of keys; each key is reconciled by writing status through the
// status subresource, retrying on 409 Conflict with a fresh read.
//
// It maintains status.observedGeneration = metadata.generation and the
// replica counts (replicas, updatedReplicas, readyReplicas,
// availableReplicas) = spec.replicas (default 1). There are no pods in the
// playground: the controller pretends every desired replica is created,
// updated, ready and available at once, which is enough to teach
// generation vs observedGeneration and conflicts on status writes.
type DeploymentController struct {
	Client    *Client
	Namespace string // "" = all namespaces
	Store     *Store
	Reflector *Reflector

	// Backoff for status writes that conflict (client-go DefaultRetry).
	Backoff Backoff
	Retrier Retrier
	// FieldManager names the controller's status writes.
	FieldManager string

	// OnSync, if set, is told the outcome of every reconcile.
	OnSync func(SyncResult)

	queue workQueue
}

// SyncResult is one reconcile of one deployment.
type SyncResult struct {
	Key                string
	Generation         int64
	ObservedGeneration int64 // after the sync
	Replicas           int64
	Attempts           int    // status writes tried (0 = already up to date)
	ResourceVersion    string // of the written status, if written
	Err                error
}

func (s SyncResult) String() string {
	out := fmt.Sprintf("sync %s generation=%d observedGeneration=%d replicas=%d attempts=%d", s.Key, s.Generation, s.ObservedGeneration, s.Replicas, s.Attempts)
	if s.ResourceVersion != "" {
		out += " rv=" + s.ResourceVersion
	}
	if s.Err != nil {
		out += " err=" + s.Err.Error()
	}
	return out
}

// NewDeploymentController returns a controller for deployments in
// namespace ("" = all).
func NewDeploymentController(c *Client, namespace string) *DeploymentController {
	store := NewStore()
	rc := c.Resource(Deployments).Namespace(namespace)
	dc := &DeploymentController{
		Client:       c,
		Namespace:    namespace,
		Store:        store,
		Reflector:    NewReflector(rc, store),
		Backoff:      DefaultRetry,
		FieldManager: "rvplay-deployment-controller",
	}
	dc.queue.init()
	store.AddHandler(Handler{
		OnAdd:    func(o Object) { dc.queue.add(o.Key()) },
		OnUpdate: func(_, o Object) { dc.queue.add(o.Key()) },
		OnDelete: func(o Object) { dc.queue.add(o.Key()) },
	})
	return dc
}

// Run starts the informer and reconciles queued deployments until ctx ends.
func (dc *DeploymentController) Run(ctx context.Context) {
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
			go func(k string) {
				if SleepContext(ctx, 100*time.Millisecond) == nil {
					dc.queue.add(k)
				}
			}(key)
		}
	}
}

func desiredReplicas(o Object) int64 {
	if n, ok := o.NestedInt64("spec", "replicas"); ok {
		return n
	}
	return 1
}

func statusUpToDate(o Object) bool {
	want := desiredReplicas(o)
	obs, _ := o.NestedInt64("status", "observedGeneration")
	if obs != o.Generation() {
		return false
	}
	for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
		if n, _ := o.NestedInt64("status", f); n != want {
			return false
		}
	}
	return true
}

func setStatus(o Object) {
	want := desiredReplicas(o)
	o.SetNested(o.Generation(), "status", "observedGeneration")
	for _, f := range []string{"replicas", "updatedReplicas", "readyReplicas", "availableReplicas"} {
		o.SetNested(want, "status", f)
	}
}

// Sync reconciles one deployment by key ("namespace/name"). The first
// attempt starts from the informer's copy; after a Conflict it re-reads
// the object from the API and tries again (RetryOnConflict).
func (dc *DeploymentController) Sync(ctx context.Context, key string) SyncResult {
	res := SyncResult{Key: key}
	cached, ok := dc.Store.Get(key)
	if !ok {
		return res // deleted: nothing to maintain
	}
	res.Generation = cached.Generation()
	res.ObservedGeneration, _ = cached.NestedInt64("status", "observedGeneration")
	res.Replicas = desiredReplicas(cached)
	if statusUpToDate(cached) {
		return res
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
			if statusUpToDate(cur) {
				return nil
			}
		}
		res.Attempts++
		setStatus(cur)
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
	return res
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
