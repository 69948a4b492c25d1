package controllers

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/clock"
)

// namespaceController is kube-controller-manager's namespace controller:
// a namespace being deleted (Terminating) is emptied, pods first, then
// every other resource discovery lists as deletable (deletecollection with
// Background propagation), its status conditions saying how that went;
// once nothing is left it removes its finalizer "kubernetes" from
// spec.finalizers through the finalize subresource, which deletes the
// namespace. What remains (kept by finalizers) is looked at again later.
type namespaceController struct {
	c          *client.Client
	mapper     *client.Mapper
	namespaces *client.Store
	queue      *client.WorkQueue
	clock      clock.Clock
}

// finalizerEstimateSeconds is how long kube's namespace controller waits
// for content kept by finalizers before it looks again.
const finalizerEstimateSeconds = 15

func newNamespaceController(ctx context.Context, c *client.Client, f *client.InformerFactory) *namespaceController {
	nc := &namespaceController{c: c, mapper: client.NewMapper(c), namespaces: f.ForResource(client.Namespaces).Store,
		queue: client.NewWorkQueue(ctx, c.Clock), clock: c.Clock}
	enqueue := func(o client.Object) {
		if beingDeleted(o) {
			nc.queue.Add(o.Name())
		}
	}
	nc.namespaces.AddHandler(client.Handler{OnAdd: enqueue, OnUpdate: func(_, o client.Object) { enqueue(o) }})
	return nc
}

func (nc *namespaceController) run() { nc.queue.Work(nc.sync) }

// remainingError is ResourcesRemainingError: look again in a while.
type remainingError struct{ estimate int64 }

func (e *remainingError) Error() string {
	return fmt.Sprintf("some content remains in the namespace, estimate %d seconds before it is removed", e.estimate)
}

func (nc *namespaceController) sync(name string) error {
	err := nc.delete(nc.queue.Context(), name)
	if r, ok := err.(*remainingError); ok {
		nc.queue.AddAfter(name, time.Duration(r.estimate/2+1)*time.Second)
		return nil
	}
	return err
}

// delete is namespacedResourcesDeleter.Delete.
func (nc *namespaceController) delete(ctx context.Context, name string) error {
	nsc := nc.c.Resource(client.Namespaces)
	ns, err := nsc.Get(ctx, name, client.GetOptions{})
	if client.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if !beingDeleted(ns) {
		return nil
	}
	if ns, err = nc.retryOnConflict(ctx, ns, func(ns client.Object) (client.Object, error) {
		if stringAt(ns, "status", "phase") == "Terminating" {
			return ns, nil
		}
		ns.SetNested("Terminating", "status", "phase")
		return nsc.UpdateStatus(ctx, ns, client.WriteOptions{})
	}); err != nil {
		if client.IsNotFound(err) {
			return nil
		}
		return err
	}
	if len(listAt(ns, "spec", "finalizers")) == 0 {
		return nil
	}
	estimate, err := nc.deleteAllContent(ctx, ns)
	if err != nil {
		return err
	}
	if estimate > 0 {
		return &remainingError{estimate}
	}
	_, err = nc.retryOnConflict(ctx, ns, func(ns client.Object) (client.Object, error) {
		var keep []any
		for _, f := range listAt(ns, "spec", "finalizers") {
			if f != "kubernetes" {
				keep = append(keep, f)
			}
		}
		fin := ns.DeepCopy()
		fin.SetNested(keep, "spec", "finalizers")
		out, err := nsc.Update(ctx, fin, client.WriteOptions{}, "finalize")
		if client.IsNotFound(err) {
			return ns, nil
		}
		return out, err
	})
	if client.IsNotFound(err) {
		return nil
	}
	return err
}

// retryOnConflict: on a conflict, read the namespace again and retry.
func (nc *namespaceController) retryOnConflict(ctx context.Context, ns client.Object, fn func(client.Object) (client.Object, error)) (client.Object, error) {
	for {
		out, err := fn(ns)
		if !client.IsConflict(err) {
			return out, err
		}
		if ns, err = nc.c.Resource(client.Namespaces).Get(ctx, ns.Name(), client.GetOptions{}); err != nil {
			return nil, err
		}
	}
}

type contentLeft struct {
	estimate   int64
	remaining  int
	finalizers map[string]int
}

// deleteAllContent deletes the namespace's pods, then (once they are
// gone) everything else, and returns how many seconds to wait for what
// remains.
func (nc *namespaceController) deleteAllContent(ctx context.Context, ns client.Object) (int64, error) {
	var errs []error
	conds := namespaceConditions{}
	mappings, err := nc.mapper.All(ctx)
	if err != nil {
		errs = append(errs, err)
		conds.discoveryErr = err.Error()
	}
	var deletable []client.Mapping
	for _, m := range mappings {
		if m.Namespaced && m.Supports("delete") {
			deletable = append(deletable, m)
		}
	}
	sort.Slice(deletable, func(i, j int) bool { return deletable[i].Resource.String() < deletable[j].Resource.String() })
	var estimate int64
	remaining := map[string]int{}
	finalizers := map[string]int{}
	note := func(m client.Mapping, left contentLeft, err error) {
		if err != nil {
			errs = append(errs, err)
			conds.contentErrs = append(conds.contentErrs, err.Error())
		}
		estimate = max(estimate, left.estimate)
		if left.remaining > 0 {
			remaining[m.Resource.Resource+"."+m.Resource.Group] = left.remaining
			for f, n := range left.finalizers {
				finalizers[f] += n
			}
		}
	}
	for _, m := range deletable {
		if m.Resource == client.Pods {
			left, err := nc.deleteContent(ctx, m, ns.Name())
			note(m, left, err)
			if left.remaining > 0 {
				conds.remaining, conds.finalizers = remaining, finalizers
				nc.updateConditions(ctx, ns, conds)
				return estimate, joinErrors(errs)
			}
		}
	}
	for _, m := range deletable {
		if m.Resource != client.Pods {
			left, err := nc.deleteContent(ctx, m, ns.Name())
			note(m, left, err)
		}
	}
	conds.remaining, conds.finalizers = remaining, finalizers
	nc.updateConditions(ctx, ns, conds)
	return estimate, joinErrors(errs)
}

func joinErrors(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	if len(msgs) == 1 {
		return errs[0]
	}
	return fmt.Errorf("[%s]", strings.Join(msgs, ", "))
}

// deleteContent is deleteAllContentForGroupVersionResource.
func (nc *namespaceController) deleteContent(ctx context.Context, m client.Mapping, ns string) (contentLeft, error) {
	rc := nc.c.Resource(m.Resource).Namespace(ns)
	opts := client.DeleteOptions{PropagationPolicy: "Background"}
	if m.Supports("deletecollection") {
		if err := rc.DeleteCollection(ctx, opts, client.ListOptions{}); err != nil {
			return contentLeft{}, err
		}
	} else if m.Supports("list") {
		l, err := rc.List(ctx, client.ListOptions{})
		if err != nil {
			return contentLeft{}, err
		}
		for _, o := range l.Items {
			if err := rc.Delete(ctx, o.Name(), opts); err != nil && !client.IsNotFound(err) {
				return contentLeft{}, err
			}
		}
	}
	if !m.Supports("list") {
		return contentLeft{}, nil
	}
	l, err := rc.List(ctx, client.ListOptions{})
	if err != nil {
		return contentLeft{}, err
	}
	if len(l.Items) == 0 {
		return contentLeft{}, nil
	}
	left := contentLeft{remaining: len(l.Items), finalizers: map[string]int{}}
	for _, o := range l.Items {
		for _, f := range listAt(o, "metadata", "finalizers") {
			left.finalizers[stringOf(f)]++
		}
	}
	if len(left.finalizers) > 0 {
		left.estimate = finalizerEstimateSeconds
		return left, nil
	}
	return left, fmt.Errorf("unexpected items still remain in namespace: %s for gvr: %s/%s, Resource=%s", ns, m.Resource.Group, m.Resource.Version, m.Resource.Resource)
}

// namespaceConditions is namespaceConditionUpdater: what went wrong, as
// the five deletion conditions.
type namespaceConditions struct {
	discoveryErr string
	contentErrs  []string
	remaining    map[string]int
	finalizers   map[string]int
}

var namespaceConditionTypes = []struct{ typ, okReason, okMessage string }{
	{"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered", "All resources successfully discovered"},
	{"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions", "All legacy kube types successfully parsed"},
	{"NamespaceDeletionContentFailure", "ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
	{"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
	{"NamespaceFinalizersRemaining", "ContentHasNoFinalizers", "All content-preserving finalizers finished"},
}

func (c namespaceConditions) failures() map[string][2]string {
	out := map[string][2]string{}
	if c.discoveryErr != "" {
		out["NamespaceDeletionDiscoveryFailure"] = [2]string{"DiscoveryFailed", c.discoveryErr}
	}
	if len(c.contentErrs) > 0 {
		msgs := append([]string(nil), c.contentErrs...)
		sort.Strings(msgs)
		out["NamespaceDeletionContentFailure"] = [2]string{"ContentDeletionFailed",
			fmt.Sprintf("Failed to delete all resource types, %d remaining: %v", len(msgs), strings.Join(msgs, ", "))}
	}
	if len(c.remaining) > 0 {
		var parts []string
		for r, n := range c.remaining {
			parts = append(parts, fmt.Sprintf("%s has %d resource instances", r, n))
		}
		sort.Strings(parts)
		out["NamespaceContentRemaining"] = [2]string{"SomeResourcesRemain", "Some resources are remaining: " + strings.Join(parts, ", ")}
	}
	if len(c.finalizers) > 0 {
		var parts []string
		for f, n := range c.finalizers {
			parts = append(parts, fmt.Sprintf("%s in %d resource instances", f, n))
		}
		sort.Strings(parts)
		out["NamespaceFinalizersRemaining"] = [2]string{"SomeFinalizersRemain", "Some content in the namespace has finalizers remaining: " + strings.Join(parts, ", ")}
	}
	return out
}

// updateConditions writes the conditions when they changed (failures
// ignored: the next sync writes them again).
func (nc *namespaceController) updateConditions(ctx context.Context, ns client.Object, c namespaceConditions) {
	fail := c.failures()
	conds := deepCopyList(listAt(ns, "status", "conditions"))
	changed := false
	now := rfc3339(nc.clock.Now())
	for _, ct := range namespaceConditionTypes {
		status, reason, message := "False", ct.okReason, ct.okMessage
		if f, ok := fail[ct.typ]; ok {
			status, reason, message = "True", f[0], f[1]
		}
		old := findCondition(conds, ct.typ)
		switch {
		case old == nil:
			conds = append(conds, map[string]any{"type": ct.typ, "status": status, "lastTransitionTime": now, "reason": reason, "message": message})
			changed = true
		case old["status"] != status || old["reason"] != reason || old["message"] != message:
			if old["status"] != status {
				old["lastTransitionTime"] = now
			}
			old["status"], old["reason"], old["message"] = status, reason, message
			changed = true
		}
	}
	if !changed {
		return
	}
	// As kube's, the write's answer is not kept: the finalize that may
	// follow sends the resourceVersion read before, gets 409 Conflict,
	// and reads the namespace again.
	cp := ns.DeepCopy()
	cp.SetNested(conds, "status", "conditions")
	nc.c.Resource(client.Namespaces).UpdateStatus(ctx, cp, client.WriteOptions{}) //nolint:errcheck // written again next time
}
