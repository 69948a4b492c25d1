package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/clock"
)

// replicaSetController is kube-controller-manager's replicaset controller:
// it keeps spec.replicas pods of each ReplicaSet's template running
// (creating them, in batches that double, from the template with the
// ReplicaSet as their controller; deleting the least useful first),
// adopts orphan pods its selector matches and releases its pods it no
// longer matches, and writes the status (replicas, fullyLabeledReplicas,
// readyReplicas, availableReplicas, terminatingReplicas,
// observedGeneration, a ReplicaFailure condition when pods cannot be
// created or deleted).
type replicaSetController struct {
	c            *client.Client
	rs, pods     *client.Store
	queue        *client.WorkQueue
	expectations *expectations
	clock        clock.Clock
}

// burstReplicas is kube-controller-manager's --concurrent-... burst: at
// most this many pods created or deleted in one sync.
const burstReplicas = 500

const replicaSetKind, appsV1 = "ReplicaSet", "apps/v1"

func newReplicaSetController(ctx context.Context, c *client.Client, f *client.InformerFactory) *replicaSetController {
	rc := &replicaSetController{c: c, rs: f.ForResource(client.ReplicaSets).Store, pods: f.ForResource(client.Pods).Store,
		queue: client.NewWorkQueue(ctx, c.Clock), expectations: newExpectations(c.Clock), clock: c.Clock}
	rc.rs.AddHandler(client.Handler{
		OnAdd:    func(o client.Object) { rc.queue.Add(o.Key()) },
		OnUpdate: func(_, o client.Object) { rc.queue.Add(o.Key()) },
		OnDelete: onDeleted(func(o client.Object) { rc.expectations.forget(o.Key()); rc.queue.Add(o.Key()) }),
	})
	rc.pods.AddHandler(client.Handler{OnAdd: rc.addPod, OnUpdate: rc.updatePod, OnDelete: onDeleted(rc.deletePod)})
	return rc
}

func (rc *replicaSetController) run() { rc.queue.Work(rc.sync) }

// owner is the ReplicaSet a controller reference names, if it is the
// one in the cache (same UID).
func (rc *replicaSetController) owner(ns string, ref *ownerRef) (client.Object, bool) {
	if ref == nil || ref.Kind != replicaSetKind {
		return nil, false
	}
	rs, ok := rc.rs.Get(ns + "/" + ref.Name)
	if !ok || rs.UID() != ref.UID {
		return nil, false
	}
	return rs, true
}

// matching are the ReplicaSets whose selector selects the pod (for an
// orphan, which one of them may adopt).
func (rc *replicaSetController) matching(p client.Object) []client.Object {
	var out []client.Object
	labels := labelsOf(p)
	for _, rs := range rc.rs.List() {
		if rs.Namespace() != p.Namespace() {
			continue
		}
		if sel := selectorOf(mapAt(rs, "spec", "selector")); !sel.empty() && sel.matches(labels) {
			out = append(out, rs)
		}
	}
	return out
}

func (rc *replicaSetController) addPod(p client.Object) {
	if beingDeleted(p) {
		rc.deletePod(p)
		return
	}
	if rs, ok := rc.owner(p.Namespace(), controllerOf(p)); ok {
		rc.expectations.creationObserved(rs.Key())
		rc.queue.Add(rs.Key())
		return
	}
	if controllerOf(p) == nil {
		for _, rs := range rc.matching(p) {
			rc.queue.Add(rs.Key())
		}
	}
}

func (rc *replicaSetController) updatePod(old, cur client.Object) {
	if old.ResourceVersion() == cur.ResourceVersion() {
		return
	}
	labelsChanged := fmt.Sprint(labelsOf(old)) != fmt.Sprint(labelsOf(cur))
	if beingDeleted(cur) {
		rc.deletePod(cur)
		if labelsChanged {
			rc.deletePod(old)
		}
		return
	}
	oldRef, curRef := controllerOf(old), controllerOf(cur)
	refChanged := fmt.Sprint(oldRef) != fmt.Sprint(curRef)
	if refChanged {
		if rs, ok := rc.owner(old.Namespace(), oldRef); ok {
			rc.queue.Add(rs.Key())
		}
	}
	if rs, ok := rc.owner(cur.Namespace(), curRef); ok {
		rc.queue.Add(rs.Key())
		// availability comes minReadySeconds after readiness
		if mrs := int64At(rs, "spec", "minReadySeconds"); mrs > 0 && !isPodReady(old) && isPodReady(cur) {
			rc.queue.AddAfter(rs.Key(), time.Duration(mrs)*time.Second+time.Second)
		}
		return
	}
	if curRef == nil && (labelsChanged || refChanged) {
		for _, rs := range rc.matching(cur) {
			rc.queue.Add(rs.Key())
		}
	}
}

func (rc *replicaSetController) deletePod(p client.Object) {
	if rs, ok := rc.owner(p.Namespace(), controllerOf(p)); ok {
		rc.expectations.deletionObserved(rs.Key(), p.Key())
		rc.queue.Add(rs.Key())
	}
}

// sync is syncReplicaSet.
func (rc *replicaSetController) sync(key string) error {
	ctx := rc.queue.Context()
	cached, ok := rc.rs.Get(key)
	if !ok {
		rc.expectations.forget(key)
		return nil
	}
	rs := cached.DeepCopy()
	needsSync := rc.expectations.satisfied(key)
	sel := selectorOf(mapAt(rs, "spec", "selector"))

	// its pods and the orphans, active ones only
	var active []client.Object
	for _, p := range rc.pods.List() {
		if p.Namespace() != rs.Namespace() || !isPodActive(p) {
			continue
		}
		if ref := controllerOf(p); ref == nil || ref.UID == rs.UID() {
			active = append(active, p)
		}
	}
	active, err := claim(ctx, rc.c, client.Pods, client.ReplicaSets, rs, appsV1, replicaSetKind, sel, active)
	if err != nil {
		return err
	}

	var manageErr error
	if needsSync && !beingDeleted(rs) {
		manageErr = rc.manageReplicas(ctx, active, rs)
	}
	now := rc.clock.Now()
	status := replicaSetStatus(rs, active, manageErr, now)
	updated, err := rc.updateStatus(ctx, rs, status)
	if err != nil {
		return err
	}
	if manageErr != nil {
		return manageErr
	}
	if mrs := int64At(updated, "spec", "minReadySeconds"); mrs > 0 && int64At(updated, "status", "readyReplicas") != int64At(updated, "status", "availableReplicas") {
		rc.queue.AddAfter(key, time.Duration(mrs)*time.Second)
	}
	return nil
}

func (rc *replicaSetController) manageReplicas(ctx context.Context, active []client.Object, rs client.Object) error {
	diff := len(active) - int(specReplicas(rs))
	key := rs.Key()
	pods := rc.c.Resource(client.Pods).Namespace(rs.Namespace())
	switch {
	case diff < 0:
		n := min(-diff, burstReplicas)
		rc.expectations.expectCreations(key, n)
		pod := podFromTemplate(rs)
		created, err := slowStartBatch(n, func() error {
			_, err := pods.Create(ctx, pod.DeepCopy(), client.WriteOptions{})
			if client.HasStatusCause(err, namespaceTerminatingCause) {
				return nil // nothing more can be created there
			}
			return err
		})
		for i := created; i < n; i++ {
			rc.expectations.creationObserved(key) // never sent: not to be seen
		}
		return err
	case diff > 0:
		n := min(diff, burstReplicas)
		victims := append([]client.Object(nil), active...)
		rankPodsForDeletion(victims, rc.clock.Now())
		victims = victims[:n]
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = p.Key()
		}
		rc.expectations.expectDeletions(key, keys)
		var first error
		for _, p := range victims {
			if err := pods.Delete(ctx, p.Name(), client.DeleteOptions{}); err != nil {
				rc.expectations.deletionObserved(key, p.Key())
				if !client.IsNotFound(err) && first == nil {
					first = err
				}
			}
		}
		return first
	}
	return nil
}

// slowStartInitialBatchSize is kube's: pods are created 1, then 2, 4, ...
// at a time, stopping at the first batch with a failure, so a quota that
// refuses them costs a few requests, not hundreds.
const slowStartInitialBatchSize = 1

func slowStartBatch(count int, fn func() error) (int, error) {
	done := 0
	for batch := min(count, slowStartInitialBatchSize); batch > 0; batch = min(2*batch, count-done) {
		for i := 0; i < batch; i++ {
			if err := fn(); err != nil {
				return done, err
			}
			done++
		}
	}
	return done, nil
}

// podFromTemplate is controller.GetPodFromTemplate: the template's labels,
// annotations, finalizers and spec, named <owner>- plus a random suffix,
// controlled by the owner.
func podFromTemplate(rs client.Object) client.Object {
	tmplMeta := mapAt(rs, "spec", "template", "metadata")
	md := map[string]any{"generateName": rs.Name() + "-",
		"ownerReferences": []any{controllerRef(rs, appsV1, replicaSetKind).json()}}
	for _, f := range []string{"labels", "annotations", "finalizers"} {
		if v, ok := tmplMeta[f]; ok {
			md[f] = v
		}
	}
	spec, _ := rs.Nested("spec", "template", "spec")
	return client.Object{"apiVersion": "v1", "kind": "Pod", "metadata": md, "spec": spec}.DeepCopy()
}

// replicaSetStatus is calculateStatus.
func replicaSetStatus(rs client.Object, active []client.Object, manageErr error, now time.Time) map[string]any {
	tmplLabels := stringMap(mapAt(rs, "spec", "template", "metadata", "labels"))
	mrs := int64At(rs, "spec", "minReadySeconds")
	var fully, ready, available int64
	for _, p := range active {
		pl := labelsOf(p)
		all := true
		for k, v := range tmplLabels {
			if pl[k] != v {
				all = false
			}
		}
		if all {
			fully++
		}
		if isPodReady(p) {
			ready++
			if isPodAvailable(p, mrs, now) {
				available++
			}
		}
	}
	st := map[string]any{}
	for k, v := range mapAt(rs, "status") {
		st[k] = v
	}
	conds := listAt(rs, "status", "conditions")
	failure := conditionOf(rs, "ReplicaFailure")
	switch {
	case manageErr != nil && failure == nil:
		reason := "FailedCreate"
		if len(active) > int(specReplicas(rs)) {
			reason = "FailedDelete"
		}
		conds = append(withoutCondition(conds, "ReplicaFailure"), map[string]any{"type": "ReplicaFailure", "status": "True",
			"lastTransitionTime": rfc3339(now), "reason": reason, "message": manageErr.Error()})
	case manageErr == nil && failure != nil:
		conds = withoutCondition(conds, "ReplicaFailure")
	}
	setOrDrop(st, "conditions", conds)
	st["replicas"] = int64(len(active))
	setCount(st, "fullyLabeledReplicas", fully)
	setCount(st, "readyReplicas", ready)
	setCount(st, "availableReplicas", available)
	// DeploymentReplicaSetTerminatingReplicas (beta, on in 1.36); pods
	// here are deleted at once (they are never scheduled), so none is
	// ever terminating.
	st["terminatingReplicas"] = int64(0)
	return st
}

func withoutCondition(conds []any, typ string) []any {
	out := make([]any, 0, len(conds))
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == typ {
			continue
		}
		out = append(out, c)
	}
	return out
}

// setCount writes an omitempty count: zero is no field.
func setCount(st map[string]any, name string, n int64) {
	if n == 0 {
		delete(st, name)
		return
	}
	st[name] = n
}

func setOrDrop(st map[string]any, name string, l []any) {
	if len(l) == 0 {
		delete(st, name)
		return
	}
	st[name] = l
}

// updateStatus is updateReplicaSetStatus: nothing when the counts and the
// observed generation are current, else a status write with one GET and
// retry after a failure.
func (rc *replicaSetController) updateStatus(ctx context.Context, rs client.Object, status map[string]any) (client.Object, error) {
	cur := mapAt(rs, "status")
	same := true
	for _, f := range []string{"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas", "terminatingReplicas"} {
		a, aok := rs.NestedInt64("status", f)
		b, bok := client.Object(status).NestedInt64(f)
		if a != b || (f == "terminatingReplicas" && aok != bok) {
			same = false
		}
	}
	if same && rs.Generation() == int64At(rs, "status", "observedGeneration") && jsonEqual(cur["conditions"], status["conditions"]) {
		return rs, nil
	}
	status["observedGeneration"] = rs.Generation()
	rsc := rc.c.Resource(client.ReplicaSets).Namespace(rs.Namespace())
	for i := 0; ; i++ {
		rs.SetNested(status, "status")
		out, err := rsc.UpdateStatus(ctx, rs, client.WriteOptions{})
		if err == nil {
			return out, nil
		}
		if i >= 1 { // statusUpdateRetries
			return nil, err
		}
		if rs, err = rsc.Get(ctx, rs.Name(), client.GetOptions{}); err != nil {
			return nil, err
		}
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// namespaceTerminatingCause is v1.NamespaceTerminatingCause: a create in
// a namespace being deleted.
const namespaceTerminatingCause = "NamespaceTerminating"
