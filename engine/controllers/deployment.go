package controllers

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/rvplay/rvplay/engine/client"
	"github.com/rvplay/rvplay/engine/clock"
)

// deploymentController is kube-controller-manager's deployment
// controller: each Deployment gets a ReplicaSet per pod template
// (<deployment>-<pod-template-hash>, revision annotations, the
// Deployment's own annotations copied), which it scales as the strategy
// says (a rolling update within maxSurge and maxUnavailable, or Recreate),
// scaling proportionally when the Deployment is resized mid-rollout,
// keeping revisionHistoryLimit old ones; and its status (replicas,
// updatedReplicas, readyReplicas, availableReplicas, unavailableReplicas,
// terminatingReplicas, observedGeneration, the Available and Progressing
// conditions with kube's reasons and messages) is written through the
// status subresource. A rollback (kubectl rollout undo) is the template of
// an older ReplicaSet put back: that ReplicaSet becomes the new one again
// and takes the next revision.
//
// As kube's, it works on a copy of the Deployment from its informer and
// writes the status more than once in a sync without taking the answer's
// resourceVersion: a second write in the same sync gets 409 Conflict, and
// the Deployment is synced again after a short backoff.
type deploymentController struct {
	c               *client.Client
	deployments, rs *client.Store
	pods            *client.Store
	queue           *client.WorkQueue
	clock           clock.Clock
}

const deploymentKind = "Deployment"

func newDeploymentController(ctx context.Context, c *client.Client, f *client.InformerFactory) *deploymentController {
	dc := &deploymentController{c: c, deployments: f.ForResource(client.Deployments).Store, rs: f.ForResource(client.ReplicaSets).Store,
		pods: f.ForResource(client.Pods).Store, queue: client.NewWorkQueue(ctx, c.Clock), clock: c.Clock}
	dc.deployments.AddHandler(client.Handler{
		OnAdd:    func(o client.Object) { dc.queue.Add(o.Key()) },
		OnUpdate: func(_, o client.Object) { dc.queue.Add(o.Key()) },
		OnDelete: onDeleted(func(o client.Object) { dc.queue.Add(o.Key()) }),
	})
	dc.rs.AddHandler(client.Handler{OnAdd: dc.addReplicaSet, OnUpdate: dc.updateReplicaSet, OnDelete: onDeleted(dc.deleteReplicaSet)})
	dc.pods.AddHandler(client.Handler{OnDelete: onDeleted(dc.deletePod)})
	return dc
}

func (dc *deploymentController) run() { dc.queue.Work(dc.sync) }

func (dc *deploymentController) owner(ns string, ref *ownerRef) (client.Object, bool) {
	if ref == nil || ref.Kind != deploymentKind {
		return nil, false
	}
	d, ok := dc.deployments.Get(ns + "/" + ref.Name)
	if !ok || d.UID() != ref.UID {
		return nil, false
	}
	return d, true
}

// forReplicaSet are the Deployments that may adopt an orphan ReplicaSet.
func (dc *deploymentController) forReplicaSet(rs client.Object) []client.Object {
	var out []client.Object
	labels := labelsOf(rs)
	if len(labels) == 0 {
		return nil
	}
	for _, d := range dc.deployments.List() {
		if d.Namespace() != rs.Namespace() {
			continue
		}
		if sel := selectorOf(mapAt(d, "spec", "selector")); !sel.empty() && sel.matches(labels) {
			out = append(out, d)
		}
	}
	return out
}

func (dc *deploymentController) addReplicaSet(rs client.Object) {
	if beingDeleted(rs) {
		dc.deleteReplicaSet(rs)
		return
	}
	if d, ok := dc.owner(rs.Namespace(), controllerOf(rs)); ok {
		dc.queue.Add(d.Key())
		return
	}
	if controllerOf(rs) == nil {
		for _, d := range dc.forReplicaSet(rs) {
			dc.queue.Add(d.Key())
		}
	}
}

func (dc *deploymentController) updateReplicaSet(old, cur client.Object) {
	if old.ResourceVersion() == cur.ResourceVersion() {
		return
	}
	oldRef, curRef := controllerOf(old), controllerOf(cur)
	refChanged := fmt.Sprint(oldRef) != fmt.Sprint(curRef)
	if refChanged {
		if d, ok := dc.owner(old.Namespace(), oldRef); ok {
			dc.queue.Add(d.Key())
		}
	}
	if d, ok := dc.owner(cur.Namespace(), curRef); ok {
		dc.queue.Add(d.Key())
		return
	}
	if curRef == nil && (refChanged || fmt.Sprint(labelsOf(old)) != fmt.Sprint(labelsOf(cur))) {
		for _, d := range dc.forReplicaSet(cur) {
			dc.queue.Add(d.Key())
		}
	}
}

func (dc *deploymentController) deleteReplicaSet(rs client.Object) {
	if d, ok := dc.owner(rs.Namespace(), controllerOf(rs)); ok {
		dc.queue.Add(d.Key())
	}
}

// deletePod: a Recreate rollout waits for the old pods to be gone.
func (dc *deploymentController) deletePod(p client.Object) {
	ref := controllerOf(p)
	if ref == nil || ref.Kind != replicaSetKind {
		return
	}
	rs, ok := dc.rs.Get(p.Namespace() + "/" + ref.Name)
	if !ok || rs.UID() != ref.UID {
		return
	}
	if d, ok := dc.owner(rs.Namespace(), controllerOf(rs)); ok && stringAt(d, "spec", "strategy", "type") == "Recreate" {
		dc.queue.Add(d.Key())
	}
}

// sync is syncDeployment.
func (dc *deploymentController) sync(key string) error {
	ctx := dc.queue.Context()
	cached, ok := dc.deployments.Get(key)
	if !ok {
		return nil
	}
	d := cached.DeepCopy()
	sel := selectorOf(mapAt(d, "spec", "selector"))
	if sel.empty() {
		if int64At(d, "status", "observedGeneration") < d.Generation() {
			d.SetNested(d.Generation(), "status", "observedGeneration")
			dc.updateStatus(ctx, d) //nolint:errcheck // kube ignores it too
		}
		return nil
	}
	rsList, err := dc.replicaSetsFor(ctx, d, sel)
	if err != nil {
		return err
	}
	if beingDeleted(d) {
		newRS, oldRSs, err := dc.allReplicaSetsAndSyncRevision(ctx, d, rsList, false)
		if err != nil {
			return err
		}
		return dc.syncStatus(ctx, append(oldRSs, newRS), newRS, d)
	}
	if err := dc.checkPausedConditions(ctx, d); err != nil {
		return err
	}
	if paused, _ := d.Nested("spec", "paused"); paused == true {
		return dc.syncScale(ctx, d, rsList)
	}
	scaling, err := dc.isScalingEvent(ctx, d, rsList)
	if err != nil {
		return err
	}
	if scaling {
		return dc.syncScale(ctx, d, rsList)
	}
	if stringAt(d, "spec", "strategy", "type") == "Recreate" {
		return dc.rolloutRecreate(ctx, d, rsList)
	}
	return dc.rolloutRolling(ctx, d, rsList)
}

// replicaSetsFor is getReplicaSetsForDeployment: the Deployment's
// ReplicaSets, adopting orphans its selector matches and releasing the
// ones it no longer matches.
func (dc *deploymentController) replicaSetsFor(ctx context.Context, d client.Object, sel labelSelector) ([]client.Object, error) {
	var candidates []client.Object
	for _, rs := range dc.rs.List() {
		if rs.Namespace() == d.Namespace() {
			candidates = append(candidates, rs.DeepCopy())
		}
	}
	return claim(ctx, dc.c, client.ReplicaSets, client.Deployments, d, appsV1, deploymentKind, sel, candidates)
}

func (dc *deploymentController) updateStatus(ctx context.Context, d client.Object) error {
	_, err := dc.c.Resource(client.Deployments).Namespace(d.Namespace()).UpdateStatus(ctx, d, client.WriteOptions{})
	return err
}

func (dc *deploymentController) checkPausedConditions(ctx context.Context, d client.Object) error {
	if !hasProgressDeadline(d) {
		return nil
	}
	conds := listAt(d, "status", "conditions")
	cond := findCondition(conds, DeploymentProgressing)
	if cond != nil && cond["reason"] == ReasonTimedOut {
		return nil
	}
	pausedCond := cond != nil && cond["reason"] == ReasonPausedDeploy
	paused, _ := d.Nested("spec", "paused")
	now := dc.clock.Now()
	switch {
	case paused == true && !pausedCond:
		conds = setCondition(conds, newCondition(DeploymentProgressing, "Unknown", ReasonPausedDeploy, "Deployment is paused", now))
	case paused != true && pausedCond:
		conds = setCondition(conds, newCondition(DeploymentProgressing, "Unknown", ReasonResumedDeploy, "Deployment is resumed", now))
	default:
		return nil
	}
	d.SetNested(conds, "status", "conditions")
	return dc.updateStatus(ctx, d)
}

// allReplicaSetsAndSyncRevision is getAllReplicaSetsAndSyncRevision: the
// new ReplicaSet (created when create says so and it is missing) and the
// old ones.
func (dc *deploymentController) allReplicaSetsAndSyncRevision(ctx context.Context, d client.Object, rsList []client.Object, create bool) (client.Object, []client.Object, error) {
	old := findOldReplicaSets(d, rsList)
	newRS, err := dc.newReplicaSet(ctx, d, rsList, old, create)
	return newRS, old, err
}

// newReplicaSet is getNewReplicaSet.
func (dc *deploymentController) newReplicaSet(ctx context.Context, d client.Object, rsList, oldRSs []client.Object, create bool) (client.Object, error) {
	now := dc.clock.Now()
	rsc := dc.c.Resource(client.ReplicaSets).Namespace(d.Namespace())
	existing := findNewReplicaSet(d, rsList)
	newRevision := itoa(maxRevision(oldRSs) + 1)
	if existing != nil {
		rs := existing.DeepCopy()
		annotationsUpdated := setNewReplicaSetAnnotations(d, rs, newRevision, true)
		mrs := int64At(d, "spec", "minReadySeconds")
		if annotationsUpdated || int64At(rs, "spec", "minReadySeconds") != mrs {
			setOrDelete(rs, mrs, "spec", "minReadySeconds")
			return rsc.Update(ctx, rs, client.WriteOptions{})
		}
		needsUpdate := setDeploymentRevision(d, rs.Annotations()[RevisionAnnotation])
		if hasProgressDeadline(d) && conditionOf(d, DeploymentProgressing) == nil {
			conds := setCondition(listAt(d, "status", "conditions"), newCondition(DeploymentProgressing, "True", ReasonFoundNewRS,
				fmt.Sprintf("Found new replica set %q", rs.Name()), now))
			d.SetNested(conds, "status", "conditions")
			needsUpdate = true
		}
		if needsUpdate {
			if err := dc.updateStatus(ctx, d); err != nil {
				return nil, err
			}
		}
		return rs, nil
	}
	if !create {
		return nil, nil
	}

	var collisions *int64
	if n, ok := d.NestedInt64("status", "collisionCount"); ok {
		collisions = &n
	}
	template := client.Object(mapAt(d, "spec", "template")).DeepCopy()
	hash := PodTemplateHash(template, collisions)
	labels := stringMap(mapAt(template, "metadata", "labels"))
	labels[DefaultDeploymentUniqueLabelKey] = hash
	template.SetNested(toAnyMap(labels), "metadata", "labels")
	selector := client.Object(mapAt(d, "spec", "selector")).DeepCopy()
	ml := mapAt(selector, "matchLabels")
	if ml == nil {
		ml = map[string]any{}
	}
	ml[DefaultDeploymentUniqueLabelKey] = hash
	selector["matchLabels"] = ml
	rs := client.Object{"apiVersion": appsV1, "kind": replicaSetKind,
		"metadata": map[string]any{"name": generateReplicaSetName(d.Name(), hash), "namespace": d.Namespace(),
			"ownerReferences": []any{controllerRef(d, appsV1, deploymentKind).json()}, "labels": toAnyMap(labels)},
		"spec": map[string]any{"replicas": int64(0), "selector": map[string]any(selector), "template": map[string]any(template)}}
	setOrDelete(rs, int64At(d, "spec", "minReadySeconds"), "spec", "minReadySeconds")
	replicas := newRSNewReplicas(d, append(append([]client.Object(nil), oldRSs...), rs), rs)
	rs.SetNested(replicas, "spec", "replicas")
	setNewReplicaSetAnnotations(d, rs, newRevision, false)

	created, err := rsc.Create(ctx, rs, client.WriteOptions{})
	alreadyExists := false
	switch {
	case client.IsAlreadyExists(err):
		alreadyExists = true
		cur, ok := dc.rs.Get(d.Namespace() + "/" + rs.Name())
		if !ok {
			return nil, err
		}
		if ref := controllerOf(cur); ref != nil && ref.UID == d.UID() && EqualIgnoreHash(mapAt(d, "spec", "template"), mapAt(cur, "spec", "template")) {
			created, err = cur.DeepCopy(), nil
			break
		}
		// a hash collision: next time, another hash
		var n int64
		if collisions != nil {
			n = *collisions
		}
		d.SetNested(n+1, "status", "collisionCount")
		dc.updateStatus(ctx, d) //nolint:errcheck // the create's error is returned
		return nil, err
	case client.HasStatusCause(err, namespaceTerminatingCause):
		return nil, err
	case err != nil:
		if hasProgressDeadline(d) {
			msg := fmt.Sprintf("Failed to create new replica set %q: %v", rs.Name(), err)
			d.SetNested(setCondition(listAt(d, "status", "conditions"), newCondition(DeploymentProgressing, "False", ReasonFailedRSCreate, msg, now)), "status", "conditions")
			dc.updateStatus(ctx, d) //nolint:errcheck // the create's error is returned
		}
		return nil, err
	}
	needsUpdate := setDeploymentRevision(d, newRevision)
	if !alreadyExists && hasProgressDeadline(d) {
		d.SetNested(setCondition(listAt(d, "status", "conditions"), newCondition(DeploymentProgressing, "True", ReasonNewReplicaSet,
			fmt.Sprintf("Created new replica set %q", created.Name()), now)), "status", "conditions")
		needsUpdate = true
	}
	if needsUpdate {
		err = dc.updateStatus(ctx, d)
	}
	return created, err
}

func setOrDelete(o client.Object, n int64, path ...string) {
	if n == 0 {
		m := mapAt(o, path[:len(path)-1]...)
		delete(m, path[len(path)-1])
		return
	}
	o.SetNested(n, path...)
}

// syncScale is sync: reconcile a scaling event (or a paused Deployment)
// by resizing ReplicaSets, no rollout.
func (dc *deploymentController) syncScale(ctx context.Context, d client.Object, rsList []client.Object) error {
	newRS, oldRSs, err := dc.allReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return err
	}
	if err := dc.scale(ctx, d, newRS, oldRSs); err != nil {
		return err
	}
	if paused, _ := d.Nested("spec", "paused"); paused == true {
		if err := dc.cleanup(ctx, oldRSs, d); err != nil {
			return err
		}
	}
	return dc.syncStatus(ctx, append(oldRSs, newRS), newRS, d)
}

// isScalingEvent: an active ReplicaSet was sized for another number of
// replicas than the Deployment wants.
func (dc *deploymentController) isScalingEvent(ctx context.Context, d client.Object, rsList []client.Object) (bool, error) {
	newRS, oldRSs, err := dc.allReplicaSetsAndSyncRevision(ctx, d, rsList, false)
	if err != nil {
		return false, err
	}
	for _, rs := range activeReplicaSets(append(oldRSs, newRS)) {
		if desired, ok := desiredReplicasAnnotation(rs); ok && desired != specReplicas(d) {
			return true, nil
		}
	}
	return false, nil
}

// scale resizes: the only active ReplicaSet to the full size; old ones
// to zero once the new one is saturated; otherwise every active one in
// proportion (a rolling update resized midway).
func (dc *deploymentController) scale(ctx context.Context, d, newRS client.Object, oldRSs []client.Object) error {
	if rs := activeOrLatest(newRS, oldRSs); rs != nil {
		if specReplicas(rs) == specReplicas(d) {
			return nil
		}
		_, _, err := dc.scaleReplicaSet(ctx, rs, specReplicas(d), d, false)
		return err
	}
	if isSaturated(d, newRS) {
		for _, old := range activeReplicaSets(oldRSs) {
			if _, _, err := dc.scaleReplicaSet(ctx, old, 0, d, false); err != nil {
				return err
			}
		}
		return nil
	}
	if !isRollingUpdate(d) {
		return nil
	}
	all := activeReplicaSets(append(append([]client.Object(nil), oldRSs...), newRS))
	allowed := int64(0)
	if specReplicas(d) > 0 {
		allowed = specReplicas(d) + maxSurge(d)
	}
	toAdd := allowed - replicaCount(all)
	switch {
	case toAdd > 0:
		sortBySize(all, true)
	case toAdd < 0:
		sortBySize(all, false)
	}
	added := int64(0)
	sizes := map[string]int64{}
	for _, rs := range all {
		if toAdd != 0 {
			p := proportion(rs, d, toAdd, added)
			sizes[rs.Name()] = specReplicas(rs) + p
			added += p
		} else {
			sizes[rs.Name()] = specReplicas(rs)
		}
	}
	for i, rs := range all {
		if i == 0 && toAdd != 0 {
			sizes[rs.Name()] = max(sizes[rs.Name()]+toAdd-added, 0)
		}
		if _, _, err := dc.scaleReplicaSet(ctx, rs, sizes[rs.Name()], d, true); err != nil {
			return err
		}
	}
	return nil
}

// activeOrLatest is FindActiveOrLatest: the only active ReplicaSet, or
// the newest when none is; nil when several are active.
func activeOrLatest(newRS client.Object, oldRSs []client.Object) client.Object {
	if newRS == nil && len(oldRSs) == 0 {
		return nil
	}
	sorted := append([]client.Object(nil), oldRSs...)
	byCreation(sorted)
	for i, j := 0, len(sorted)-1; i < j; i, j = i+1, j-1 {
		sorted[i], sorted[j] = sorted[j], sorted[i]
	}
	active := activeReplicaSets(append(append([]client.Object(nil), sorted...), newRS))
	switch len(active) {
	case 0:
		if newRS != nil {
			return newRS
		}
		return sorted[0]
	case 1:
		return active[0]
	}
	return nil
}

// sortBySize: larger first; among equals newer first when scaling up,
// older first when scaling down.
func sortBySize(rss []client.Object, newerFirst bool) {
	sort.SliceStable(rss, func(i, j int) bool {
		if specReplicas(rss[i]) != specReplicas(rss[j]) {
			return specReplicas(rss[i]) > specReplicas(rss[j])
		}
		if newerFirst {
			return createdBefore(rss[j], rss[i])
		}
		return createdBefore(rss[i], rss[j])
	})
}

// proportion is GetReplicaSetProportion.
func proportion(rs, d client.Object, toAdd, added int64) int64 {
	if rs == nil || specReplicas(rs) == 0 || toAdd == 0 || toAdd == added {
		return 0
	}
	fraction := replicaSetFraction(rs, d)
	allowed := toAdd - added
	if toAdd > 0 {
		return min(fraction, allowed)
	}
	return max(fraction, allowed)
}

func replicaSetFraction(rs, d client.Object) int64 {
	if specReplicas(d) == 0 {
		return -specReplicas(rs)
	}
	maxNow := specReplicas(d) + maxSurge(d)
	before, ok := nonNegativeAnnotation(rs, MaxReplicasAnnotation)
	if !ok || before == 0 {
		before = int64At(d, "status", "replicas")
		if before == 0 {
			return 0
		}
	}
	size := float64(specReplicas(rs)*maxNow) / float64(before)
	return int64(math.Round(size)) - specReplicas(rs)
}

// scaleReplicaSet resizes rs (and its replica annotations) through the
// main endpoint; forceUpdate writes the annotations even when the size
// stays.
func (dc *deploymentController) scaleReplicaSet(ctx context.Context, rs client.Object, scale int64, d client.Object, force bool) (bool, client.Object, error) {
	if !force && specReplicas(rs) == scale {
		return false, rs, nil
	}
	sizeChanged := specReplicas(rs) != scale
	maxR := specReplicas(d) + maxSurge(d)
	if !sizeChanged && !replicasAnnotationsNeedUpdate(rs, specReplicas(d), maxR) {
		return false, rs, nil
	}
	cp := rs.DeepCopy()
	cp.SetNested(scale, "spec", "replicas")
	setReplicasAnnotations(cp, specReplicas(d), maxR)
	out, err := dc.c.Resource(client.ReplicaSets).Namespace(cp.Namespace()).Update(ctx, cp, client.WriteOptions{})
	if err != nil {
		return false, nil, err
	}
	return sizeChanged, out, nil
}

// cleanup is cleanupDeployment: old ReplicaSets beyond
// revisionHistoryLimit, oldest revision first, those scaled to zero and
// observed so.
func (dc *deploymentController) cleanup(ctx context.Context, oldRSs []client.Object, d client.Object) error {
	if !hasRevisionHistoryLimit(d) {
		return nil
	}
	var alive []client.Object
	for _, rs := range oldRSs {
		if rs != nil && !beingDeleted(rs) {
			alive = append(alive, rs)
		}
	}
	diff := int64(len(alive)) - int64At(d, "spec", "revisionHistoryLimit")
	if diff <= 0 {
		return nil
	}
	byCreation(alive)
	sort.SliceStable(alive, func(i, j int) bool {
		ri, oki := revisionOf(alive[i])
		rj, okj := revisionOf(alive[j])
		if !oki || !okj || ri == rj {
			return false
		}
		return ri < rj
	})
	for _, rs := range alive[:diff] {
		if int64At(rs, "status", "replicas") != 0 || specReplicas(rs) != 0 || rs.Generation() > int64At(rs, "status", "observedGeneration") || beingDeleted(rs) {
			continue
		}
		if err := dc.c.Resource(client.ReplicaSets).Namespace(rs.Namespace()).Delete(ctx, rs.Name(), client.DeleteOptions{}); err != nil && !client.IsNotFound(err) {
			return err
		}
	}
	return nil
}

// syncStatus is syncDeploymentStatus.
func (dc *deploymentController) syncStatus(ctx context.Context, all []client.Object, newRS, d client.Object) error {
	st := dc.calculateStatus(all, newRS, d)
	if sameStatus(d, st) {
		return nil
	}
	d.SetNested(st, "status")
	return dc.updateStatus(ctx, d)
}

func sameStatus(d client.Object, st map[string]any) bool {
	a, _ := json.Marshal(mapAt(d, "status"))
	b, _ := json.Marshal(st)
	return string(a) == string(b)
}

// calculateStatus: the counts from the ReplicaSets, the conditions the
// Deployment has with Available set from them.
func (dc *deploymentController) calculateStatus(all []client.Object, newRS, d client.Object) map[string]any {
	available := statusCount(all, "availableReplicas")
	unavailable := max(replicaCount(all)-available, 0)
	st := map[string]any{}
	setCount(st, "observedGeneration", d.Generation())
	setCount(st, "replicas", statusCount(all, "replicas"))
	setCount(st, "updatedReplicas", statusCount([]client.Object{newRS}, "replicas"))
	setCount(st, "readyReplicas", statusCount(all, "readyReplicas"))
	setCount(st, "availableReplicas", available)
	setCount(st, "unavailableReplicas", unavailable)
	if n, ok := terminatingCount(all); ok {
		st["terminatingReplicas"] = n
	}
	if cc, ok := d.Nested("status", "collisionCount"); ok {
		st["collisionCount"] = cc
	}
	l := deepCopyList(listAt(d, "status", "conditions"))
	now := dc.clock.Now()
	if available >= specReplicas(d)-maxUnavailable(d) {
		l = setCondition(l, newCondition(DeploymentAvailable, "True", ReasonMinimumReplicasAvailable, "Deployment has minimum availability.", now))
	} else {
		l = setCondition(l, newCondition(DeploymentAvailable, "False", ReasonMinimumReplicasUnavailable, "Deployment does not have minimum availability.", now))
	}
	setOrDrop(st, "conditions", l)
	return st
}

// syncRolloutStatus: the status during a rollout, with the Progressing
// condition: complete, progressing or timed out against
// progressDeadlineSeconds.
func (dc *deploymentController) syncRolloutStatus(ctx context.Context, all []client.Object, newRS, d client.Object) error {
	st := dc.calculateStatus(all, newRS, d)
	conds := listOf(st["conditions"])
	if !hasProgressDeadline(d) {
		conds = withoutCondition(conds, DeploymentProgressing)
	}
	cur := conditionOf(d, DeploymentProgressing)
	complete := int64At(client.Object(st), "replicas") == int64At(client.Object(st), "updatedReplicas") && cur != nil && cur["reason"] == ReasonNewRSAvailable
	now := dc.clock.Now()
	name := func(format, deployment string) string {
		if newRS != nil {
			return fmt.Sprintf("ReplicaSet %q "+format, newRS.Name())
		}
		return fmt.Sprintf("Deployment %q "+format, deployment)
	}
	if hasProgressDeadline(d) && !complete {
		st["conditions"] = conds
		switch {
		case deploymentComplete(d, st):
			conds = setCondition(conds, newCondition(DeploymentProgressing, "True", ReasonNewRSAvailable, name("has successfully progressed.", d.Name()), now))
		case deploymentProgressing(d, st):
			c := newCondition(DeploymentProgressing, "True", ReasonReplicaSetUpdated, name("is progressing.", d.Name()), now)
			if cur != nil {
				if cur["status"] == "True" {
					c["lastTransitionTime"] = cur["lastTransitionTime"]
				}
				conds = withoutCondition(conds, DeploymentProgressing)
			}
			conds = setCondition(conds, c)
		case deploymentTimedOut(d, st, now):
			conds = setCondition(conds, newCondition(DeploymentProgressing, "False", ReasonTimedOut, name("has timed out progressing.", d.Name()), now))
		}
	}
	if failure := replicaFailure(all, newRS); failure != nil {
		conds = setCondition(conds, failure)
	} else {
		conds = withoutCondition(conds, DeploymentReplicaFailure)
	}
	setOrDrop(st, "conditions", conds)
	if sameStatus(d, st) {
		dc.requeueStuck(d, st)
		return nil
	}
	d.SetNested(st, "status")
	return dc.updateStatus(ctx, d)
}

// replicaFailure is getReplicaFailures: the new ReplicaSet's
// ReplicaFailure condition, else an old one's.
func replicaFailure(all []client.Object, newRS client.Object) map[string]any {
	for _, rs := range append([]client.Object{newRS}, all...) {
		if rs == nil {
			continue
		}
		if c := conditionOf(rs, "ReplicaFailure"); c != nil {
			return map[string]any{"type": DeploymentReplicaFailure, "status": c["status"], "lastUpdateTime": c["lastTransitionTime"],
				"lastTransitionTime": c["lastTransitionTime"], "reason": c["reason"], "message": c["message"]}
		}
	}
	return nil
}

// requeueStuck is requeueStuckDeployment: a rollout that shows no
// progress is synced again when its progress deadline passes.
func (dc *deploymentController) requeueStuck(d client.Object, st map[string]any) {
	cur := conditionOf(d, DeploymentProgressing)
	if !hasProgressDeadline(d) || cur == nil || deploymentComplete(d, st) || cur["reason"] == ReasonTimedOut {
		return
	}
	from, _ := time.Parse(time.RFC3339, stringOf(cur["lastUpdateTime"]))
	after := from.Add(time.Duration(int64At(d, "spec", "progressDeadlineSeconds")) * time.Second).Sub(dc.clock.Now())
	if after < time.Second {
		dc.queue.AddRateLimited(d.Key())
		return
	}
	dc.queue.AddAfter(d.Key(), after+time.Second)
}
