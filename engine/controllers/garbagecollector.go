package controllers

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/rvplay/rvplay/engine/client"
)

// garbageCollector is kube-controller-manager's garbage collector. It
// watches every resource that can be listed, watched and deleted (events
// aside, as kube's default ignores them), keeps a graph of owners and
// dependents from their ownerReferences, and:
//   - deletes an object whose owners are all gone (background
//     propagation: the owner went first), with the policy the object's own
//     finalizers ask for;
//   - for an owner deleted in the foreground (finalizer
//     "foregroundDeletion"), deletes its dependents, themselves in the
//     foreground when they have dependents, and removes the owner's
//     finalizer once no dependent that blocks it (blockOwnerDeletion) is
//     left, which deletes it;
//   - for an owner deleted with "orphan", removes the owner from its
//     dependents' ownerReferences, then its finalizer.
//
// Every decision is checked against the API (the graph may lag), and
// every change is a request of its own, with the object's UID (and
// resourceVersion) as a precondition.
type garbageCollector struct {
	c           *client.Client
	factory     *client.InformerFactory
	toDelete    *client.WorkQueue
	toOrphan    *client.WorkQueue
	rediscovery *client.WorkQueue // discovery read again when a definition changes

	mu        sync.Mutex
	nodes     map[string]*node          // by UID
	kinds     map[string]client.Mapping // apiVersion + "/" + kind
	monitored map[client.Resource]bool
}

// node is an object of the graph; a virtual one is an owner named by a
// reference and not (yet) seen.
type node struct {
	ref                objectRef
	observed           bool
	owners             []ownerRef
	dependents         map[string]bool
	beingDeleted       bool
	deletingDependents bool
}

type objectRef struct {
	APIVersion, Kind, Namespace, Name, UID string
}

func newGarbageCollector(ctx context.Context, c *client.Client, f *client.InformerFactory, mappings []client.Mapping) *garbageCollector {
	gc := &garbageCollector{c: c, factory: f, kinds: map[string]client.Mapping{}, monitored: map[client.Resource]bool{}, nodes: map[string]*node{},
		toDelete: client.NewWorkQueue(ctx, c.Clock), toOrphan: client.NewWorkQueue(ctx, c.Clock),
		rediscovery: client.NewWorkQueue(ctx, c.Clock)}
	gc.monitor(mappings)
	return gc
}

// monitor watches the resources of mappings not watched yet (the
// factory's Start runs their informers).
func (gc *garbageCollector) monitor(mappings []client.Mapping) {
	type watched struct {
		r client.Resource
		h client.Handler
	}
	var add []watched
	gc.mu.Lock()
	for _, m := range mappings {
		gc.kinds[m.APIVersion()+"/"+m.Kind] = m
		// kube's default ignored resources: Events, in both their APIs
		events := m.Resource.Resource == "events" && (m.Resource.Group == "" || m.Resource.Group == "events.k8s.io")
		if gc.monitored[m.Resource] || !m.Supports("delete", "list", "watch") || events {
			continue
		}
		gc.monitored[m.Resource] = true
		h := client.Handler{
			OnAdd:    func(o client.Object) { gc.observe(m, o) },
			OnUpdate: func(_, o client.Object) { gc.observe(m, o) },
			OnDelete: onDeleted(gc.forget),
		}
		if m.Resource.Group == "apiextensions.k8s.io" && m.Resource.Resource == "customresourcedefinitions" {
			h = client.Handler{
				OnAdd:    func(o client.Object) { gc.observe(m, o); gc.rediscovery.Add("") },
				OnUpdate: func(_, o client.Object) { gc.observe(m, o); gc.rediscovery.Add("") },
				OnDelete: h.OnDelete,
			}
		}
		add = append(add, watched{m.Resource, h})
	}
	gc.mu.Unlock()
	for _, w := range add { // a store's handler sees what it holds: not under gc.mu
		gc.factory.ForResource(w.r).AddHandler(w.h)
	}
}

// rediscover is the garbage collector's resync of its monitors (kube's
// GarbageCollector.Sync, which polls discovery every 30 seconds): here a
// CustomResourceDefinition created or changed reads discovery again, and
// the resources it serves from then on are watched too, so that their
// objects are collected like any other.
func (gc *garbageCollector) rediscover(string) error {
	ctx := gc.rediscovery.Context()
	mappings, err := client.NewMapper(gc.c).All(ctx)
	if err != nil {
		return err
	}
	gc.monitor(mappings)
	gc.factory.Start(ctx)
	return nil
}

func (gc *garbageCollector) run() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		gc.toOrphan.Work(gc.attemptToOrphan)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		gc.rediscovery.Work(gc.rediscover)
	}()
	gc.toDelete.Work(gc.attemptToDelete)
	wg.Wait()
}

// nodeLocked returns the node of uid, making a virtual one.
func (gc *garbageCollector) nodeLocked(uid string, ref objectRef) *node {
	n := gc.nodes[uid]
	if n == nil {
		n = &node{ref: ref, dependents: map[string]bool{}}
		gc.nodes[uid] = n
	}
	return n
}

// observe is the graph builder's add and update: the object's owners and
// state, and the work they call for.
func (gc *garbageCollector) observe(m client.Mapping, o client.Object) {
	uid := o.UID()
	ref := objectRef{APIVersion: m.APIVersion(), Kind: m.Kind, Namespace: o.Namespace(), Name: o.Name(), UID: uid}
	owners := ownerRefsOf(o)
	gc.mu.Lock()
	n := gc.nodeLocked(uid, ref)
	wasDeletingDependents := n.deletingDependents
	n.ref, n.observed = ref, true
	n.beingDeleted = beingDeleted(o)
	n.deletingDependents = n.beingDeleted && hasFinalizer(o, finalizerDeleteDependents)
	oldOwners := n.owners
	n.owners = owners
	var enqueue, unblocked []string
	for _, r := range oldOwners {
		if !hasOwner(owners, r.UID) || blocks(oldOwners, r.UID) && !blocks(owners, r.UID) {
			if on := gc.nodes[r.UID]; on != nil {
				if !hasOwner(owners, r.UID) {
					delete(on.dependents, uid)
				}
				if on.deletingDependents {
					unblocked = append(unblocked, r.UID)
				}
			}
		}
	}
	for _, r := range owners {
		on, known := gc.nodes[r.UID]
		if !known {
			ns := o.Namespace()
			if om, ok := gc.kinds[r.APIVersion+"/"+r.Kind]; ok && !om.Namespaced {
				ns = ""
			}
			on = gc.nodeLocked(r.UID, objectRef{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: ns, Name: r.Name, UID: r.UID})
			// an owner not seen: if it does not exist, this object is
			// garbage
			enqueue = append(enqueue, r.UID)
		}
		on.dependents[uid] = true
	}
	var deps []string
	if n.deletingDependents && !wasDeletingDependents {
		for d := range n.dependents {
			deps = append(deps, d)
		}
	}
	gc.mu.Unlock()
	if n.beingDeleted && hasFinalizer(o, finalizerOrphanDependents) {
		gc.toOrphan.Add(uid)
	}
	if n.deletingDependents {
		gc.toDelete.Add(uid)
	}
	for _, u := range append(append(enqueue, unblocked...), deps...) {
		gc.toDelete.Add(u)
	}
}

func hasOwner(refs []ownerRef, uid string) bool {
	for _, r := range refs {
		if r.UID == uid {
			return true
		}
	}
	return false
}

func blocks(refs []ownerRef, uid string) bool {
	for _, r := range refs {
		if r.UID == uid && r.BlockOwnerDeletion {
			return true
		}
	}
	return false
}

// forget is the graph builder's delete: the object's dependents may now
// be garbage, and an owner waiting for it may now go.
func (gc *garbageCollector) forget(o client.Object) {
	uid := o.UID()
	gc.mu.Lock()
	n := gc.nodes[uid]
	if n == nil {
		gc.mu.Unlock()
		return
	}
	var work []string
	for d := range n.dependents {
		work = append(work, d)
	}
	if len(n.dependents) == 0 {
		delete(gc.nodes, uid)
	} else {
		// the dependents still name it: a virtual node until they go
		n.observed, n.beingDeleted, n.deletingDependents = false, false, false
	}
	for _, r := range n.owners {
		if on := gc.nodes[r.UID]; on != nil {
			delete(on.dependents, uid)
			switch {
			case !on.observed && len(on.dependents) == 0:
				delete(gc.nodes, r.UID)
			case on.deletingDependents:
				work = append(work, r.UID)
			}
		}
	}
	gc.mu.Unlock()
	for _, u := range work {
		gc.toDelete.Add(u)
	}
}

func (gc *garbageCollector) resource(ref objectRef) (client.ResourceClient, bool) {
	gc.mu.Lock()
	m, ok := gc.kinds[ref.APIVersion+"/"+ref.Kind]
	gc.mu.Unlock()
	if !ok {
		return client.ResourceClient{}, false
	}
	ns := ref.Namespace
	if !m.Namespaced {
		ns = ""
	}
	return gc.c.Resource(m.Resource).Namespace(ns), true
}

func (gc *garbageCollector) snapshot(uid string) (node, []string, bool) {
	gc.mu.Lock()
	defer gc.mu.Unlock()
	n := gc.nodes[uid]
	if n == nil {
		return node{}, nil, false
	}
	deps := make([]string, 0, len(n.dependents))
	for d := range n.dependents {
		deps = append(deps, d)
	}
	return *n, deps, true
}

// virtualDelete: an object the graph has but the API has not; its
// dependents are processed as for a deleted owner.
func (gc *garbageCollector) virtualDelete(uid string) {
	gc.mu.Lock()
	n := gc.nodes[uid]
	var work []string
	if n != nil && !n.observed {
		for d := range n.dependents {
			work = append(work, d)
		}
		if len(n.dependents) == 0 {
			delete(gc.nodes, uid)
		}
	}
	gc.mu.Unlock()
	for _, u := range work {
		gc.toDelete.Add(u)
	}
}

// attemptToDelete is attemptToDeleteItem.
func (gc *garbageCollector) attemptToDelete(uid string) error {
	ctx := gc.toDelete.Context()
	n, deps, ok := gc.snapshot(uid)
	if !ok {
		return nil
	}
	if n.beingDeleted && !n.deletingDependents {
		return nil
	}
	rc, ok := gc.resource(n.ref)
	if !ok {
		return nil
	}
	latest, err := rc.Get(ctx, n.ref.Name, client.GetOptions{})
	if client.IsNotFound(err) || err == nil && latest.UID() != uid {
		gc.virtualDelete(uid)
		return nil
	}
	if err != nil {
		return err
	}
	if n.deletingDependents {
		return gc.processDeletingDependents(ctx, uid, n.ref)
	}
	owners := ownerRefsOf(latest)
	if len(owners) == 0 {
		return nil
	}
	var solid, dangling, waiting []ownerRef
	for _, r := range owners {
		owner, gone, err := gc.ownerOf(ctx, r, n.ref.Namespace)
		if err != nil {
			return err
		}
		switch {
		case gone:
			dangling = append(dangling, r)
		case beingDeleted(owner) && hasFinalizer(owner, finalizerDeleteDependents):
			waiting = append(waiting, r)
		default:
			solid = append(solid, r)
		}
	}
	switch {
	case len(solid) > 0:
		if len(dangling) == 0 && len(waiting) == 0 {
			return nil
		}
		var uids []string
		for _, r := range append(dangling, waiting...) {
			uids = append(uids, r.UID)
		}
		return gc.patch(ctx, rc, n.ref, releasePatch(uid, uids...))
	case len(waiting) > 0 && len(deps) > 0:
		return gc.delete(ctx, rc, n.ref, latest, "Foreground")
	}
	policy := "Background"
	switch {
	case hasFinalizer(latest, finalizerOrphanDependents):
		policy = "Orphan"
	case hasFinalizer(latest, finalizerDeleteDependents):
		policy = "Foreground"
	}
	return gc.delete(ctx, rc, n.ref, latest, policy)
}

// ownerOf is isDangling: the owner as the API has it, or gone (absent,
// or another object of the same name).
func (gc *garbageCollector) ownerOf(ctx context.Context, r ownerRef, ns string) (client.Object, bool, error) {
	rc, ok := gc.resource(objectRef{APIVersion: r.APIVersion, Kind: r.Kind, Namespace: ns})
	if !ok {
		return nil, false, nil // an unknown kind is not a reason to delete
	}
	o, err := rc.Get(ctx, r.Name, client.GetOptions{})
	switch {
	case client.IsNotFound(err):
		return nil, true, nil
	case err != nil:
		return nil, false, err
	case o.UID() != r.UID:
		return nil, true, nil
	}
	return o, false, nil
}

func (gc *garbageCollector) patch(ctx context.Context, rc client.ResourceClient, ref objectRef, p map[string]any) error {
	b, _ := json.Marshal(p)
	_, err := rc.Patch(ctx, ref.Name, client.StrategicMergePatch, b, client.PatchOptions{})
	if client.IsNotFound(err) {
		return nil
	}
	return err
}

// delete is deleteObject: preconditioned on the UID and the
// resourceVersion read; a conflict with the same owners is retried
// without the resourceVersion.
func (gc *garbageCollector) delete(ctx context.Context, rc client.ResourceClient, ref objectRef, latest client.Object, policy string) error {
	pre := &client.Preconditions{UID: ref.UID, ResourceVersion: latest.ResourceVersion()}
	err := rc.Delete(ctx, ref.Name, client.DeleteOptions{Preconditions: pre, PropagationPolicy: policy})
	if client.IsConflict(err) {
		live, lerr := rc.Get(ctx, ref.Name, client.GetOptions{})
		if client.IsNotFound(lerr) {
			return nil
		}
		if lerr == nil && live.UID() == ref.UID && live.ResourceVersion() != latest.ResourceVersion() &&
			jsonEqual(mapAt(live, "metadata")["ownerReferences"], mapAt(latest, "metadata")["ownerReferences"]) {
			err = rc.Delete(ctx, ref.Name, client.DeleteOptions{Preconditions: &client.Preconditions{UID: ref.UID}, PropagationPolicy: policy})
		}
	}
	if client.IsNotFound(err) {
		return nil
	}
	return err
}

// processDeletingDependents: an owner deleted in the foreground goes
// once no dependent blocks it; until then its blocking dependents are
// deleted.
func (gc *garbageCollector) processDeletingDependents(ctx context.Context, uid string, ref objectRef) error {
	gc.mu.Lock()
	var blocking []string
	if n := gc.nodes[uid]; n != nil {
		for d := range n.dependents {
			if dn := gc.nodes[d]; dn != nil && blocks(dn.owners, uid) {
				if !dn.deletingDependents {
					blocking = append(blocking, d)
				} else {
					blocking = append(blocking, "")
				}
			}
		}
	}
	gc.mu.Unlock()
	if len(blocking) == 0 {
		return gc.removeFinalizer(ctx, ref, finalizerDeleteDependents)
	}
	for _, d := range blocking {
		if d != "" {
			gc.toDelete.Add(d)
		}
	}
	return nil
}

// attemptToOrphan: the owner's dependents no longer name it, then its
// "orphan" finalizer goes.
func (gc *garbageCollector) attemptToOrphan(uid string) error {
	ctx := gc.toOrphan.Context()
	n, deps, ok := gc.snapshot(uid)
	if !ok {
		return nil
	}
	var first error
	for _, d := range deps {
		dn, _, ok := gc.snapshot(d)
		if !ok || !dn.observed {
			continue
		}
		rc, ok := gc.resource(dn.ref)
		if !ok {
			continue
		}
		if err := gc.patch(ctx, rc, dn.ref, releasePatch(d, uid)); err != nil && first == nil {
			first = err
		}
	}
	if first != nil {
		return first
	}
	return gc.removeFinalizer(ctx, n.ref, finalizerOrphanDependents)
}

// removeFinalizer takes one finalizer off the object with a merge patch
// preconditioned on the resourceVersion read, retrying conflicts
// (client-go's DefaultBackoff).
func (gc *garbageCollector) removeFinalizer(ctx context.Context, ref objectRef, finalizer string) error {
	rc, ok := gc.resource(ref)
	if !ok {
		return nil
	}
	return client.Retrier{Clock: gc.c.Clock}.RetryOnConflict(ctx, client.DefaultBackoff, func() error {
		o, err := rc.Get(ctx, ref.Name, client.GetOptions{})
		if client.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		var keep []any
		found := false
		for _, f := range listAt(o, "metadata", "finalizers") {
			if f == finalizer {
				found = true
				continue
			}
			keep = append(keep, f)
		}
		if !found {
			return nil
		}
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": o.ResourceVersion(), "finalizers": keep}})
		_, err = rc.Patch(ctx, ref.Name, client.MergePatch, b, client.PatchOptions{})
		if client.IsNotFound(err) {
			return nil
		}
		return err
	})
}

// The garbage collector's finalizers (metav1's).
const (
	finalizerOrphanDependents = "orphan"
	finalizerDeleteDependents = "foregroundDeletion"
)
